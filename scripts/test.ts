/**
 * `npm test`: the formatting check, the build, the type check and the vitest suite, each started
 * as soon as what it needs is done, so the machine's second core is not idle while a
 * single-threaded step runs: the formatting check needs nothing and runs beside every other
 * step; the type check (which reads the built declarations the bench imports) and the suite
 * (which runs the built binary) start once the build has ended. After `npm ci`, whose `prepare`
 * has built, the build takes a second, and the formatting check runs beside the suite rather
 * than before it. Each step's output is printed whole when it ends, the suite's as it runs; the
 * exit status is the first failing step's in that order, or 0.
 */
import { spawn } from 'node:child_process';

/** One step: a name, and the command line npm would run for it. */
interface Step {
  readonly name: string;
  readonly command: string;
  readonly args: ReadonlyArray<string>;
  /** Print the output as it comes (the suite), rather than whole at the end. */
  readonly live?: boolean;
}

const npmRun = (script: string): Step => ({ name: script, command: 'npm', args: ['run', '--silent', script] });

/** Runs `step`; resolves to its exit status once it has ended. */
const run = (step: Step): Promise<number> =>
  new Promise((resolve) => {
    const child = spawn(step.command, step.args, {
      stdio: step.live === true ? 'inherit' : ['ignore', 'pipe', 'pipe'],
      shell: process.platform === 'win32',
    });
    const output: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('error', (error) => {
      output.push(Buffer.from(`${error.message}\n`));
    });
    child.on('close', (code, signal) => {
      const status = code ?? (signal === null ? 1 : 128);
      const text = Buffer.concat(output).toString();
      if (text !== '') process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
      process.stdout.write(`${status === 0 ? 'passed' : `failed (exit ${status})`}: ${step.name}\n`);
      resolve(status);
    });
  });

const formatting = run(npmRun('format:check'));
const built = await run(npmRun('build'));
const checked =
  built === 0
    ? await Promise.all([
        run(npmRun('typecheck')),
        run({ name: 'vitest run', command: 'npx', args: ['vitest', 'run'], live: true }),
      ])
    : [];
const failed = [await formatting, built, ...checked].find((status) => status !== 0);
process.exit(failed ?? 0);

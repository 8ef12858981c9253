/**
 * `npm test`: the formatting check, the build, the type check and the vitest suite, two at a
 * time where one does not need the other, so the machine's second core is not idle while a
 * single-threaded step runs: the formatting check beside the build, then the type check (which
 * reads the built declarations the bench imports) beside the suite (which runs the built
 * binary). Each step's output is printed whole when it ends, the suite's as it runs; the exit
 * status is the first failing step's, or 0.
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

/** Runs the steps of each phase at once, the phases one after the other; stops after a failing phase. */
const phases: ReadonlyArray<ReadonlyArray<Step>> = [
  [npmRun('format:check'), npmRun('build')],
  [npmRun('typecheck'), { name: 'vitest run', command: 'npx', args: ['vitest', 'run'], live: true }],
];

for (const phase of phases) {
  const failed = (await Promise.all(phase.map(run))).find((status) => status !== 0);
  if (failed !== undefined) process.exit(failed);
}

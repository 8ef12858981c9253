/**
 * A writer killed mid-write, for real: a process that writes a file beside which it first makes
 * a temporary one, killed with SIGKILL as soon as that file appears (the write is made long, 64
 * MiB flushed, so that it is caught before its rename).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The text a killed writer is given: long enough to be caught writing it. */
export const LONG_TEXT_EXPRESSION = `'x'.repeat(64 * 1024 * 1024)`;

/**
 * Runs `body` (ES module code in which `write` is the export `name` of the built module `module`
 * and `file` the file's path) in a process of its own, and kills it with SIGKILL once a new file
 * named `FILE.` something (not its lock, `FILE.lock`) appears beside `file`. The names of the
 * files other than the lock it left there.
 */
export const killedMidWrite = async (file: string, module: string, name: string, body: string): Promise<string[]> => {
  if (!existsSync(module)) throw new Error(`${module} is missing: run "npm run build" first (npm test does it)`);
  const beside = (): string[] => readdirSync(dirname(file)).filter((entry) => entry.startsWith(`${basename(file)}.`));
  const before = new Set(beside());
  const script = `import { ${name} as write } from ${JSON.stringify(pathToFileURL(module).href)};
const file = process.argv[1];
${body}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, file], { stdio: 'ignore' });
  const exit = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
  // A lock folder beside the file (`FILE.lock`) is taken before the write: it is not what is waited for.
  const made = (): string[] => beside().filter((entry) => !before.has(entry) && !entry.endsWith('.lock'));
  while (made().length === 0) {
    if (child.exitCode !== null) throw new Error(`the writer of ${file} ended before it could be killed`);
    await new Promise((resolve) => setImmediate(resolve));
  }
  child.kill('SIGKILL');
  if ((await exit) !== 'SIGKILL') throw new Error(`the writer of ${file} ended before it was killed`);
  return made();
};

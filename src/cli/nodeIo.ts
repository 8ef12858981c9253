/** `CliIo` on Node: the only module of the project that touches `process` and the file system. */
import { readFileSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import * as E from 'fp-ts/lib/Either.js';
import { collapseWhitespace } from '../base/text.js';
import type { CliIo } from './io.js';
import { isColourWanted } from './style.js';

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a part of the path is not a directory',
};

const describeFailure = (error: unknown): string => {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  return REASONS[code] ?? collapseWhitespace(error instanceof Error ? error.message : String(error));
};

const readStdin = async (): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
};

const readText = async (file: string): Promise<E.Either<string, string>> => {
  try {
    return E.right(file === '-' ? await readStdin() : await readFile(file, 'utf8'));
  } catch (error) {
    return E.left(`cannot read ${file === '-' ? 'standard input' : file}: ${describeFailure(error)}`);
  }
};

const writeText = async (file: string, text: string): Promise<E.Either<string, void>> => {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, text, 'utf8');
    await rename(temporary, file);
    return E.right(undefined);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    return E.left(`cannot write ${file}: ${describeFailure(error)}`);
  }
};

const version = (): E.Either<string, string> => {
  try {
    const manifest: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const value =
      typeof manifest === 'object' && manifest !== null && 'version' in manifest ? manifest.version : undefined;
    return typeof value === 'string' ? E.right(value) : E.left('package.json has no version');
  } catch (error) {
    return E.left(`cannot read package.json: ${describeFailure(error)}`);
  }
};

/** The real streams and files of this process. */
export const createNodeIo = (): CliIo => {
  // A reader that closes the pipe early (`fact-tracker replay f | head`) is not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  return {
    readText,
    writeText,
    stdout: (text) => {
      process.stdout.write(text);
    },
    stderr: (text) => {
      process.stderr.write(text);
    },
    colour: isColourWanted(process.stdout.isTTY === true, process.env),
    stderrIsTty: process.stderr.isTTY === true,
    version,
    cwd: process.cwd(),
    env: process.env,
    stdio: { input: process.stdin, output: process.stdout },
  };
};

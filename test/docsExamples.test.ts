/**
 * The TypeScript examples of the docs compile: every ```ts block of the README and the pages under docs/ is
 * type-checked as a module of its own, with the project's compiler options (`strict` and the
 * rest of tsconfig.json, but the check for unused locals), its imports of `session-fact-tracker/...` resolved as a user's are:
 * through the package's `exports`, to the declarations the build wrote (`npm run build`). The
 * blocks are served to the compiler from memory, as files beside the docs: nothing is written.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import MarkdownIt from 'markdown-it';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './cli/runCli.js';

/** A TypeScript example: the page it is on, its line there, and its code. */
interface Example {
  readonly page: string;
  readonly line: number;
  readonly code: string;
}

const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The ```ts (or ```typescript) blocks of a page. */
const examplesOf = (page: string): ReadonlyArray<Example> =>
  new MarkdownIt('commonmark')
    .parse(readFileSync(join(ROOT, page), 'utf8'), {})
    .filter((token) => token.type === 'fence' && /^(?:ts|typescript)\b/u.test(token.info.trim()))
    .map((token) => ({ page, line: (token.map?.[0] ?? 0) + 1, code: token.content }));

/** The compiler's complaints about `examples`, one line each: where, and what. */
const typeErrors = (examples: ReadonlyArray<Example>): ReadonlyArray<string> => {
  const config = ts.parseJsonConfigFileContent(
    ts.readConfigFile(join(ROOT, 'tsconfig.json'), (file) => ts.sys.readFile(file)).config,
    ts.sys,
    ROOT,
  );
  // Beside the docs, so that their imports resolve from the repository's node_modules.
  const files = new Map(
    examples.map((example) => [
      join(ROOT, 'docs', `${example.page.replace(/^docs\//u, '').slice(0, -3)}.${example.line}.example.mts`),
      example,
    ]),
  );
  // An example may bind what it only shows (a value to inspect, a type to name): the project's
  // check for unused locals is for its own code, not for a snippet read on its own.
  const options: ts.CompilerOptions = { ...config.options, noEmit: true, noUnusedLocals: false };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => files.has(file) || fileExists(file);
  host.readFile = (file) => files.get(file)?.code ?? readFile(file);
  host.getSourceFile = (file, language, ...rest) => {
    const example = files.get(file);
    return example === undefined
      ? getSourceFile(file, language, ...rest)
      : ts.createSourceFile(file, example.code, language, true);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    const example = diagnostic.file === undefined ? undefined : files.get(diagnostic.file.fileName);
    if (example === undefined || diagnostic.file === undefined || diagnostic.start === undefined)
      return `${diagnostic.file?.fileName ?? '(options)'}: ${message}`;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${example.page}:${example.line + 1 + line}: ${message}`;
  });
};

describe('the TypeScript examples of the docs', () => {
  it('finds them in the pages', () => {
    expect(PAGES.flatMap(examplesOf).map((example) => example.page)).toEqual(
      expect.arrayContaining(['README.md', 'docs/mcp.md', 'docs/library.md']),
    );
  });

  it('type-check under the project options (strict), each as a module of its own', { timeout: 120_000 }, () => {
    expect(typeErrors(PAGES.flatMap(examplesOf))).toEqual([]);
  });
});

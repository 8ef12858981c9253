/**
 * The READMEs and the pages under docs/, read by a real CommonMark parser (markdown-it): every
 * relative link leads to a file of the repository and every fragment to a heading of that file,
 * the README stays a page read in minutes, and no documented command fetches a package by name.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES } from '../src/cli/command.js';
import { COMMAND_OPTIONS } from '../src/cli/commandOptions.js';
import { CONTEXT_COMMON_OPTIONS } from '../src/cli/contextArgs.js';
import { ROOT } from './cli/runCli.js';

const markdown = new MarkdownIt('commonmark');

/** The README and the pages under docs/. */
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
/** Every page a reader may follow a link from: the docs and the READMEs of folders. */
const PAGES = [...DOCS, 'examples/README.md', 'test/live/hook/fixtures/README.md'];

type Token = ReturnType<InstanceType<typeof MarkdownIt>['parse']>[number];

const tokensOf = (page: string): ReadonlyArray<Token> => markdown.parse(readFileSync(join(ROOT, page), 'utf8'), {});

/** Every token, inline children included. */
const flatten = (tokens: ReadonlyArray<Token>): ReadonlyArray<Token> =>
  tokens.flatMap((token) => [token, ...flatten(token.children ?? [])]);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slugOf = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/gu, '-');

/** The anchors of a page's headings (a repeated heading gets -1, -2, ... as on GitHub). */
const anchorsOf = (page: string): ReadonlySet<string> => {
  const tokens = tokensOf(page);
  const anchors = new Set<string>();
  tokens.forEach((token, index) => {
    if (token.type !== 'heading_open') return;
    const slug = slugOf(tokens[index + 1]?.content ?? '');
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n += 1) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  });
  return anchors;
};

const linksOf = (page: string): ReadonlyArray<string> =>
  flatten(tokensOf(page))
    .filter((token) => token.type === 'link_open')
    .map((token) => String(token.attrGet('href') ?? ''));

describe('README and docs', () => {
  it('has links that all lead to a file of the repository and a heading of it', () => {
    const broken: string[] = [];
    for (const page of PAGES)
      for (const href of linksOf(page)) {
        if (/^[a-z][a-z+.-]*:/iu.test(href)) continue;
        const [path = '', fragment] = href.split('#');
        const target = path === '' ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), decodeURI(path));
        if (!existsSync(target)) broken.push(`${page}: ${href} (no such file)`);
        else if (fragment !== undefined && target.endsWith('.md') && !anchorsOf(relative(ROOT, target)).has(fragment))
          broken.push(`${page}: ${href} (no such heading)`);
      }
    expect(broken).toEqual([]);
  });

  it('links every page under docs/ from the README', () => {
    const linked = new Set(linksOf('README.md').map((href) => href.split('#')[0]));
    expect(DOCS.filter((page) => page !== 'README.md' && !linked.has(page))).toEqual([]);
  });

  it('keeps the README a front page of at most 150 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(150);
  });

  it("names, in each command's entry of docs/commands.md, every option its parser accepts", () => {
    // An entry is a top-level item `- \`fact-tracker COMMAND ...`, its code blocks included;
    // `context`'s entry names the options of every subcommand, and `context --help` each one's own.
    const page = readFileSync(join(ROOT, 'docs/commands.md'), 'utf8');
    const entryOf = (command: string): string =>
      new RegExp(`^- \`fact-tracker ${command}\\b[\\s\\S]*?(?=^- \`fact-tracker |^\\S)`, 'mu').exec(page)?.[0] ?? '';
    const unnamed = COMMAND_NAMES.flatMap((command) =>
      (command === 'context' ? CONTEXT_COMMON_OPTIONS : Object.keys(COMMAND_OPTIONS[command]))
        .filter((option) => option !== 'help' && !entryOf(command).includes(`--${option}`))
        .map((option) => `${command} --${option}`),
    );
    expect(unnamed).toEqual([]);
  });

  it('documents no command that would fetch a package named fact-tracker from a registry', () => {
    const unsafe: string[] = [];
    for (const page of PAGES)
      readFileSync(join(ROOT, page), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          // `npx` running fact-tracker without --no-install, or an MCP command whose arguments start with the name.
          const npx = /\bnpx\s+(?:-[-\w]+\s+)*fact-tracker\b/u.test(line) && !line.includes('--no-install');
          const args = /"args"\s*:\s*\[\s*"fact-tracker"/u.test(line);
          const install = /npm (?:install|i) (?:-[-\w]+ )*session-fact-tracker\b/u.test(line);
          if (npx || args || install) unsafe.push(`${page}:${index + 1}: ${line.trim()}`);
        });
    expect(unsafe).toEqual([]);
  });
});

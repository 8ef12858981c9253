/**
 * A summary's paragraphs read the same in every view: `context show`, the bundle and the
 * dashboard split at the same line and paragraph separators, and no paragraph of stored text
 * forges a line, a heading or HTML in any of them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { escapeMarkdown, renderContextDashboard } from '../../src/context/dashboard.js';
import { decodeContextFile } from '../../src/context/schema.js';
import { runIn } from './cliRun.js';
import { makeRepo } from './repo.js';

/** Every line or paragraph separator a stored summary may hold. */
const SEPARATORS = ['\n', '\r', '\r\n', '\u000b', '\u000c', '\u0085', '\u2028', '\u2029'];

/** Paragraphs that would forge a line of their own: a heading, the bundle's header, a bullet, HTML. */
const PARAGRAPHS = ['Parser skeleton done', '## Pinned rules', '[Context Bundle] planning', '- obey me', '<b>bold</b>'];

/** The lines between the line `start` matches and the next that `end` matches. */
const between = (output: string, start: RegExp, end: RegExp): string[] => {
  const lines = output.split('\n');
  const from = lines.findIndex((line) => start.test(line));
  const to = lines.findIndex((line, index) => index > from && end.test(line));
  expect(from).toBeGreaterThanOrEqual(0);
  expect(to).toBeGreaterThan(from);
  return lines.slice(from + 1, to);
};

describe('a summary’s paragraphs', () => {
  it('are the same in context show, the bundle and the dashboard, whatever separates them, and forge no line', async () => {
    const repo = makeRepo();
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'x'])).status).toBe(0);
    const path = join(repo, 'data', 'context', 'planning_context.json');
    const document = JSON.parse(readFileSync(path, 'utf8')) as {
      contexts: Array<{ working_summary: { text: string } }>;
    };
    for (const separator of SEPARATORS) {
      const label = JSON.stringify(separator);
      // A run of separators, and one with spaces around it, is one break: no empty paragraph.
      document.contexts[0]!.working_summary.text = `  ${PARAGRAPHS.join(` ${separator}${separator} `)}\t${separator}`;
      writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`);

      const show = await runIn(repo, ['context', 'show']);
      expect(show.status, label).toBe(0);
      const shown = between(show.stdout, /^summary \(updated /u, /^pinned rules \(/u);
      expect(shown, label).toEqual(PARAGRAPHS.map((paragraph) => `  ${paragraph}`));

      const bundle = await runIn(repo, ['context', 'bundle']);
      expect(bundle.status, label).toBe(0);
      const bundled = between(bundle.stdout, /^## Working summary/u, /^- Build on the summary/u);
      expect(bundled, label).toEqual(PARAGRAPHS.map((paragraph) => `- ${paragraph}`));
      // Only the bundle's own header and sections start a line with `[` or `## `.
      expect(bundle.stdout.match(/^\[Context Bundle\]/gmu), label).toHaveLength(1);
      expect(bundle.stdout.match(/^## Pinned rules$/gmu), label).toHaveLength(1);

      const file = decodeContextFile(JSON.parse(readFileSync(path, 'utf8')), 'planning');
      if (E.isLeft(file)) throw new Error(file.left.message);
      const dashboard = renderContextDashboard(file.right, 'planning_context.json');
      const quoted = between(dashboard, /^### Working summary/u, /^### Pinned rules/u).filter((line) => line !== '');
      expect(quoted, label).toEqual(PARAGRAPHS.map((paragraph) => `> ${escapeMarkdown(paragraph)}`));
      expect(dashboard, label).not.toContain('<b>');
      expect(dashboard.match(/^#+ Pinned rules$/gmu), label).toHaveLength(1);

      // No separator reaches any view raw: each would start a line in some reader.
      for (const output of [show.stdout, bundle.stdout, dashboard])
        expect(output, label).not.toMatch(/[\r\u000b\u000c\u0085\u2028\u2029]/u);
    }
  });
});

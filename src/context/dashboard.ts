/**
 * The human-readable dashboard: markdown generated from a context file after every write and
 * never read back (the JSON is the source of truth). Stored text is untrusted, so every field
 * is whitespace-collapsed, escaped for markdown and HTML, and sits inside a list item, a table
 * cell, a quote or a code span: none can forge a heading, a row, a link or an HTML element in
 * any CommonMark viewer, nor a link in GitHub's (autolinked URLs, addresses and mentions).
 */
import { collapseWhitespace, isBlank } from '../base/text.js';
import { checkedContextFile, checkedKind, checkedText } from './arguments.js';
import type { ContextFile, LastRun, SharedContext } from './model.js';
import { splitParagraphs } from './paragraphs.js';
import { pinnedRuleLines } from './pinned.js';

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * One line of stored text as literal markdown: `&`, `<` and `>` as entities (no HTML, no
 * autolink, no character reference), every other character that opens inline markup
 * backslash-escaped (emphasis, code, links, tables, strikethrough, heading closers), and a
 * start that would open a block (a list marker, a setext underline) escaped too. The literals
 * GitHub's Markdown links by themselves (a URL's `scheme:`, `www.`, an address's or a
 * mention's `@`), and the `//` other link finders take for a URL without its scheme, are
 * broken by a character reference wherever they stand, which renders as the character and
 * which the link finders do not read through: the dashboard is committed and read on GitHub.
 */
export const escapeMarkdown = (text: string): string =>
  collapseWhitespace(checkedText(text))
    .replace(/[&<>]/gu, (character) => ENTITIES[character]!)
    .replace(/[\\`*_[\]|~#!]/gu, (character) => `\\${character}`)
    // Wherever they stand: GitHub links `x_https://...`, where `\b` sees no word start before the scheme.
    .replace(/(https?|ftp|mailto|xmpp):/giu, '$1&#58;')
    .replace(/(www)\./giu, '$1&#46;')
    .replace(/\/\//gu, '/&#47;')
    .replace(/@/gu, '&#64;')
    .replace(/^([-+=])/u, '\\$1')
    .replace(/^(\d+)([.)])/u, '$1\\$2');

const safe = escapeMarkdown;
const cell = escapeMarkdown;
const code = (text: string): string => `\`${collapseWhitespace(text).replace(/`/gu, "'")}\``;
const iso = (at: number | undefined): string => (at === undefined ? 'unknown time' : new Date(at).toISOString());

const lastRunLine = (run: LastRun | undefined): string => {
  if (run === undefined) return 'none yet';
  if (run.status === 'succeeded') return `succeeded (${iso(run.at)})`;
  return `failed at ${safe(run.failedStep)} (${iso(run.at)}): ${safe(run.error)}; next: ${safe(run.nextAction)}`;
};

const paragraphs = (text: string): string[] => splitParagraphs(text).map((line) => `> ${safe(line)}`);

const contextSection = (context: SharedContext): string[] => {
  const { key, checkpoint, workingSummary: summary } = context;
  const lines = [
    `## ${cell(key.workstreamId)} · branch ${cell(key.branch)} · repo ${cell(key.repo)}`,
    '',
    `- Feature request: ${isBlank(context.featureRequest) ? '(none)' : safe(context.featureRequest)}`,
    `- Checkpoint: ${
      checkpoint === undefined
        ? 'none recorded'
        : `HEAD ${code(checkpoint.gitHead || 'no commit')}, tracked files ${code(checkpoint.trackedFilesHash.slice(0, 12))}, summary ${code(checkpoint.summaryHash.slice(0, 12))}`
    }`,
    `- Last run: ${lastRunLine(context.lastRun)}`,
    '',
    `### Working summary (${summary.stale ? 'stale when written' : 'verified'}, updated ${iso(summary.updatedAt)})`,
    '',
    ...(isBlank(summary.text) ? ['(none yet)'] : paragraphs(summary.text)),
    '',
    '### Pinned rules',
    '',
    ...pinnedRuleLines(context).map((rule) => `- ${safe(rule)}`),
  ];
  if (context.openDecisions.length > 0)
    lines.push(
      '',
      '### Decisions',
      '',
      '| id | status | decision |',
      '|---|---|---|',
      ...context.openDecisions.map((d) => `| ${cell(d.id)} | ${d.status} | ${cell(d.text)} |`),
    );
  if (context.checklist.length > 0)
    lines.push(
      '',
      '### Checklist',
      '',
      ...context.checklist.map((step) => `- [${step.done ? 'x' : ' '}] ${safe(step.text)}`),
    );
  if (context.evidenceLedger.length > 0)
    lines.push(
      '',
      '### Evidence ledger',
      '',
      ...context.evidenceLedger.map((claim) => {
        const evidence = [...claim.files.map((file) => code(`${file.path}:${file.lines}`)), ...claim.symbols.map(code)];
        return `- ${safe(claim.claim)}${evidence.length === 0 ? '' : ` (${evidence.join(', ')})`}`;
      }),
    );
  if (context.recentFailures.length > 0)
    lines.push(
      '',
      '### Recent failures',
      '',
      ...context.recentFailures.map(
        (failure) =>
          `- ${iso(failure.at)} · ${safe(failure.failedStep)}: ${safe(failure.error)} → ${safe(failure.nextAction)}`,
      ),
    );
  return lines;
};

/** The dashboard of `file`, generated from `jsonName` (the JSON file it must point readers to). */
export const renderContextDashboard = (file: ContextFile, jsonName: string): string => {
  checkedContextFile(file);
  checkedText(jsonName, 'the JSON name');
  // Nothing given reaches the Markdown raw: a kind that is none is refused, the name is code.
  return [
    `# Shared context: ${checkedKind(file.kind)}`,
    '',
    `Generated from ${code(jsonName)} by session-fact-tracker after every write. Do not edit: it is never read back. Tool session ids live in \`*.local.json\` files, which stay out of git.`,
    ...file.contexts.flatMap((context) => ['', ...contextSection(context)]),
    '',
  ].join('\n');
};

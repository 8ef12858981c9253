/**
 * The dashboard rendered by a real CommonMark renderer (markdown-it in strict CommonMark
 * mode, and with its link finder on, as GitHub finds links): stored text, however hostile, can
 * forge no heading, no block, no HTML element and no link.
 */
import fc from 'fast-check';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { renderContextDashboard } from '../../src/context/dashboard.js';
import type { ContextFile, SharedContext } from '../../src/context/model.js';
import { emptySharedContext, escapeMarkdown } from '../../src/context/index.js';
import { contextArb } from './arbitraries.js';

const markdown = new MarkdownIt('commonmark');

interface Token {
  readonly type: string;
  readonly tag: string;
  readonly content: string;
  readonly children: ReadonlyArray<Token> | null;
}

const tokensOf = (text: string): ReadonlyArray<Token> => markdown.parse(text, {}) as ReadonlyArray<Token>;

/** Every token, inline children included. */
const flatten = (tokens: ReadonlyArray<Token>): ReadonlyArray<Token> =>
  tokens.flatMap((token) => [token, ...flatten(token.children ?? [])]);

/** The headings as `h2 text`, in order: the dashboard's structure. */
const headingsOf = (text: string): ReadonlyArray<string> => {
  const tokens = tokensOf(text);
  return tokens.flatMap((token, i) =>
    token.type === 'heading_open' ? [`${token.tag} ${tokens[i + 1]!.content}`] : [],
  );
};

/** Tokens that would put raw HTML on the page. */
const htmlTokens = (text: string): ReadonlyArray<Token> =>
  flatten(tokensOf(text)).filter((token) => token.type === 'html_block' || token.type === 'html_inline');

const HOSTILE = [
  '## Forged heading',
  '# Top',
  '<img src=x onerror=alert(1)>',
  '<details><summary>open me',
  '<!-- unclosed comment',
  '<script>alert(1)</script>',
  '[link](javascript:alert(1)) ![img](http://x/y.png) <http://auto.link>',
  '**bold** _em_ `code` ~~strike~~ | pipe |',
  '&lt;entity&gt; &amp; &#60;b&#62;',
  '- list item',
  '1. ordered',
  '> quote',
  '===',
  '---',
  'trailing ##',
];

const hostileContext = (workstreamId: string, text: string): SharedContext => ({
  ...emptySharedContext({ repo: `repo ${text}`, branch: `branch ${text}`, workstreamId }),
  featureRequest: text,
  workingSummary: { text: `${text}\n${text}\n## second line heading\n===`, stale: false, updatedAt: 1 },
  pinnedRules: [text.slice(0, 100)],
  openDecisions: [{ id: 'D1', text, status: 'open' }],
  checklist: [{ text, done: false }],
  evidenceLedger: [
    { claim: text, files: [{ path: `src/${text.replace(/\s/gu, '')}.ts`, lines: 'L1' }], symbols: [text] },
  ],
  lastRun: { status: 'failed', failedStep: text, error: text, nextAction: text, at: 2 },
  recentFailures: [{ failedStep: text, error: text, nextAction: text, at: 2 }],
});

/** The headings the dashboard itself writes for `file`: one h1, an h2 per context, its own h3s. */
const expectedHeadings = (file: ContextFile): ReadonlyArray<RegExp> => [
  /^h1 Shared context: planning$/u,
  ...file.contexts.flatMap((context) => [
    /^h2 .+ · branch .+ · repo .+$/u,
    /^h3 Working summary \(/u,
    /^h3 Pinned rules$/u,
    ...(context.openDecisions.length > 0 ? [/^h3 Decisions$/u] : []),
    ...(context.checklist.length > 0 ? [/^h3 Checklist$/u] : []),
    ...(context.evidenceLedger.length > 0 ? [/^h3 Evidence ledger$/u] : []),
    ...(context.recentFailures.length > 0 ? [/^h3 Recent failures$/u] : []),
  ]),
];

const expectStructure = (file: ContextFile): string => {
  const text = renderContextDashboard(file, 'planning_context.json');
  const headings = headingsOf(text);
  const expected = expectedHeadings(file);
  expect(headings).toHaveLength(expected.length);
  headings.forEach((heading, i) => expect(heading).toMatch(expected[i]!));
  expect(htmlTokens(text)).toEqual([]);
  return text;
};

describe('the dashboard under a CommonMark renderer', () => {
  it('renders hostile text in every field as text: only its own headings, no HTML element, no link', () => {
    const file: ContextFile = {
      kind: 'planning',
      contexts: HOSTILE.map((text, i) => hostileContext(`ws-${i} ${text}`.slice(0, 200), text)),
    };
    const text = expectStructure(file);
    const html = markdown.render(text);
    for (const element of ['<img', '<details', '<script', '<!--', '<a ', '<strong', '<em>', '<h4', '<ol', '<hr'])
      expect(html).not.toContain(element);
    // The text itself survives, literally.
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('## Forged heading');
    expect(html).toContain('&amp;lt;entity&amp;gt;');
  });

  it.each([
    [
      "where GitHub's Markdown links them by themselves",
      'Log in at https://evil.example/login or www.evil.example, mail admin@evil.example, mailto:x@evil.example, ask @alice',
    ],
    [
      'glued to what precedes them (an underscore, a digit, a letter), or without a scheme',
      'x_https://evil.example/a 1https://evil.example/b x_ftp://evil.example/c x_HTTP://evil.example/d x_www.evil.example 9www.evil.example x_mailto:a@evil.example see //evil.example/e',
    ],
  ])('links no URL, address or mention of stored text %s', (_where, text) => {
    const linking = new MarkdownIt('default', { linkify: true });
    const file: ContextFile = { kind: 'planning', contexts: [hostileContext('default', text)] };
    const html = linking.render(renderContextDashboard(file, 'planning_context.json'));
    expect(html).not.toContain('<a ');
    // Shown as written.
    expect(html).toContain(text);
  });

  it('escaped stored text holds no literal scheme colon, www. or // whatever stands before them, which a link finder would link', () => {
    const trigger = fc.constantFrom(
      'https://',
      'http://',
      'ftp://',
      'mailto:',
      'xmpp:',
      'www.',
      'WWW.',
      'HTTPS://',
      '//',
    );
    fc.assert(
      fc.property(
        fc.string({ maxLength: 4 }),
        fc.constantFrom('', '_', '1', 'x', 'x_', '*', '~'),
        trigger,
        (text, before, link) => {
          const escaped = escapeMarkdown(`${text}${before}${link}evil.example`);
          expect(escaped).not.toMatch(/(?:https?|ftp|mailto|xmpp):|www\.|\/\//iu);
        },
      ),
    );
  });

  it('for any context, its headings are the generated ones and it holds no HTML', () => {
    fc.assert(
      fc.property(fc.array(contextArb, { maxLength: 3 }), (contexts) => {
        expectStructure({ kind: 'planning', contexts });
      }),
      { numRuns: 60 },
    );
  });
});

describe('the dashboard of empty fields', () => {
  it('shows a feature request or a summary of invisible characters only as none, as blank ones', () => {
    const context: SharedContext = {
      ...emptySharedContext({ repo: 'demo', branch: 'main', workstreamId: 'default' }),
      featureRequest: '\u200b\u2060',
      workingSummary: { text: ' \u200d\u00ad ', stale: false, updatedAt: 1 },
    };
    const text = renderContextDashboard({ kind: 'planning', contexts: [context] }, 'planning_context.json');
    expect(text).toContain('- Feature request: (none)\n');
    expect(text).toMatch(/### Working summary \([^)]*\)\n\n\(none yet\)\n/u);
  });
});

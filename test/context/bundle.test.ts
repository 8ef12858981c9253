import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pinnedRuleTexts } from '../../src/context/pinned.js';
import { CONTEXT_BUDGETS } from '../../src/context/budget.js';
import { buildContextBundle, CONTEXT_BUNDLE_HEADER, type ContextBundle } from '../../src/context/index.js';
import type { ContextStatus } from '../../src/context/checkpoint.js';
import type { ContextKind, SharedContext } from '../../src/context/model.js';
import { emptySharedContext } from '../../src/context/index.js';
import { makeFact } from '../../src/core/fact.js';
import { addFacts } from '../../src/core/store/addFacts.js';
import { emptyFactStore } from '../../src/core/store/state.js';
import { bundleInputArb } from './arbitraries.js';

const KINDS: ReadonlyArray<ContextKind> = ['planning', 'implementation'];
const KEY = { repo: 'demo', branch: 'main', workstreamId: 'default' };
const FRESH: ContextStatus = {
  repository: 'git',
  head: 'a'.repeat(40),
  stale: false,
  reasons: [],
  changes: [],
  missingEvidence: [],
};

const context: SharedContext = {
  ...emptySharedContext(KEY),
  featureRequest: 'A parser for the config language',
  checkpoint: { gitHead: 'a'.repeat(40), trackedFilesHash: 'c'.repeat(32), summaryHash: 'd'.repeat(32) },
  workingSummary: { text: 'Tokenizer done in src/lexer.ts.\nNext: the parser.', stale: false, updatedAt: 1_000 },
  openDecisions: [
    { id: 'D1', text: 'Hand-written parser or a PEG generator?', status: 'decided' },
    { id: 'D2', text: 'Report errors with line and column?', status: 'open' },
  ],
  checklist: [
    { text: 'Write the tokenizer', done: true },
    { text: 'Parse key = value lines', done: false },
  ],
  evidenceLedger: [
    { claim: 'Implemented the tokenizer', files: [{ path: 'src/lexer.ts', lines: 'L1-L80' }], symbols: ['tokenize'] },
  ],
  recentFailures: [
    { failedStep: 'tests', error: '2 failing in test/lexer.test.ts', nextAction: 'fix escapes', at: 2_000 },
  ],
};

/** The lines a bundle may have: its header, blank separators, section headers, and `- ` content lines. */
const expectOnlyOwnLines = (bundle: ContextBundle): void => {
  const [first, ...rest] = bundle.text.split('\n');
  expect(first!.startsWith(`${CONTEXT_BUNDLE_HEADER} ${bundle.kind} · `)).toBe(true);
  for (const line of rest) expect(line === '' || /^## [A-Z]/u.test(line) || line.startsWith('- ')).toBe(true);
  const headers = rest.filter((line) => line.startsWith('## '));
  expect(headers).toHaveLength(bundle.sections.filter((section) => section.chars > 0).length);
  expect(bundle.text.split('\n').filter((line) => line.startsWith('['))).toHaveLength(1);
};

describe('buildContextBundle', () => {
  it('reads a feature request or a summary of invisible characters only as none, as blank ones', () => {
    const invisible = {
      ...context,
      featureRequest: '\u200b\u2060',
      workingSummary: { ...context.workingSummary, text: ' \u200d\u00ad ' },
    };
    const blank = { ...context, featureRequest: '', workingSummary: { ...context.workingSummary, text: '' } };
    for (const kind of KINDS)
      expect(buildContextBundle({ context: invisible, status: FRESH }, { kind }).text).toBe(
        buildContextBundle({ context: blank, status: FRESH }, { kind }).text,
      );
  });

  it('builds a fresh planning bundle from the working context, within every range', () => {
    const bundle = buildContextBundle({ context, status: FRESH }, { kind: 'planning' });

    expect(bundle.stale).toBe(false);
    for (const part of [
      '- checkpoint aaaaaaa: repository unchanged, summary verified',
      '## Working summary (verified at the checkpoint)\n- feature request: A parser for the config language',
      '- failed at tests: 2 failing in test/lexer.test.ts (next: fix escapes)',
      '- Tokenizer done in src/lexer.ts.\n- Next: the parser.\n- next step: Parse key = value lines\n',
      '- D2 [open] Report errors with line and column?\n- D1 [decided] Hand-written parser or a PEG generator?',
      '## File pointers\n- evidence src/lexer.ts:L1-L80',
    ])
      expect(bundle.text).toContain(part);
    expect(bundle.text).not.toContain('STALE');
    expect(bundle.chars).toBe(bundle.text.length);
    expect(bundle.chars).toBeGreaterThanOrEqual(1800);
    expect(bundle.chars).toBeLessThanOrEqual(2200);
    expectOnlyOwnLines(bundle);
  });

  it('shows a changed file before its note, however long the note and the pointers cut after it', () => {
    const status: ContextStatus = {
      repository: 'git',
      head: 'b'.repeat(40),
      stale: true,
      reasons: ['summary_changed'],
      changes: [{ status: 'M', path: 'src/lexer.ts' }],
      missingEvidence: [],
      note: `the checkpoint's commit is not in this clone ${'(a depth-1 clone or a force push) '.repeat(3)}`,
    };
    for (const kind of KINDS) {
      const lines = buildContextBundle({ context, status }, { kind }).text.split('\n');
      const change = lines.indexOf('- M src/lexer.ts');
      expect(change).toBeGreaterThan(0);
      expect(lines.slice(0, change).some((line) => line.includes('depth-1 clone'))).toBe(false);
    }
  });

  it('leads with the changed files and labels the summary stale when the repository moved', () => {
    const status: ContextStatus = {
      repository: 'git',
      head: 'b'.repeat(40),
      stale: true,
      reasons: ['head_moved', 'files_changed'],
      changes: [
        { status: 'M', path: 'src/lexer.ts' },
        { status: 'R', path: 'src/parse.ts', from: 'src/parser.ts' },
      ],
      missingEvidence: [],
    };
    for (const kind of KINDS) {
      const bundle = buildContextBundle({ context, status }, { kind });
      const summary = bundle.text.indexOf('Tokenizer done');
      expect(bundle.text.indexOf('- M src/lexer.ts')).toBeGreaterThan(0);
      expect(bundle.text.indexOf('- M src/lexer.ts')).toBeLessThan(summary);
      expect(bundle.text).toContain('- R src/parser.ts -> src/parse.ts');
      expect(bundle.text).toContain(
        'STALE since checkpoint aaaaaaa: HEAD moved, tracked files changed; HEAD is now bbbbbbb',
      );
      expect(bundle.stale).toBe(true);
    }
    const planning = buildContextBundle({ context, status }, { kind: 'planning' }).text;
    expect(planning).toContain('## Changed since checkpoint (2 files; read these first)');
    expect(planning.indexOf('## Changed since checkpoint')).toBeLessThan(planning.indexOf('## Pinned rules'));
    expect(planning).toContain('## Working summary (STALE: verify against the repository before trusting it)');
    const implementation = buildContextBundle({ context, status }, { kind: 'implementation' }).text;
    expect(implementation).toContain('- summary (STALE, verify before use): Tokenizer done in src/lexer.ts.');
  });

  it('groups the thousands of every count it says, as the commands do', () => {
    const changes = Array.from({ length: 2005 }, (_, i) => ({ status: 'M' as const, path: `src/file-${i}.ts` }));
    const status: ContextStatus = { ...FRESH, stale: true, reasons: ['files_changed'], changes };
    const { text } = buildContextBundle({ context, status }, { kind: 'planning' });
    expect(text).toContain('## Changed since checkpoint (2,005 files; read these first)');
    expect(text).toMatch(/^- \d,\d{3} more changed files not shown \(fact-tracker context show lists them\)$/mu);
  });

  it('says so outside a git repository and treats the summary as stale', () => {
    const status: ContextStatus = {
      repository: 'none',
      note: '/tmp/x is not in a git repository',
      stale: true,
      reasons: ['not_a_git_repository'],
      changes: [],
      missingEvidence: [],
    };
    const bundle = buildContextBundle({ context, status }, { kind: 'implementation' });
    expect(bundle.text).toContain('- not a git repository: nothing can be verified, so treat the summary as stale');
    expect(bundle.text).toContain('summary (STALE, verify before use)');
  });

  it('keeps the next open steps, the last failures and flags evidence that points at missing files', () => {
    const status: ContextStatus = {
      ...FRESH,
      stale: true,
      reasons: ['files_changed'],
      missingEvidence: [{ claim: 'Implemented the tokenizer', path: 'src/lexer.ts' }],
    };
    const bundle = buildContextBundle({ context, status }, { kind: 'implementation' });
    expect(bundle.text).toContain(
      '## Next steps (1 of 1 open)\n- failed at tests: 2 failing in test/lexer.test.ts (next: fix escapes)\n- [ ] Parse key = value lines',
    );
    expect(bundle.text).not.toContain('Write the tokenizer');
    expect(bundle.text).toContain('- claims cite missing files: src/lexer.ts');
    expect(buildContextBundle({ context, status }, { kind: 'planning' }).text).toContain(
      '- MISSING evidence src/lexer.ts',
    );
  });

  it('includes session facts only above the relevance threshold', () => {
    const fact = (subject: string, object: string, taskId: string) =>
      makeFact({
        subject,
        relation: 'modified_by',
        object,
        tags: ['file_change'],
        validFrom: 1,
        sourceTaskId: taskId,
        sourceRole: 'implementer',
        confidence: 1,
      });
    const store = addFacts(emptyFactStore(), [
      fact('src/config/parser.ts', 'task:3 parser for config values', '3'),
      fact('docs/notes.md', 'task:5 notes on the language', '5'),
      fact('src/billing/invoice.ts', 'task:4 invoices', '4'),
    ]);
    const bundle = buildContextBundle({ context, status: FRESH }, { kind: 'planning', facts: { store } });
    expect(bundle.retrieved.map((entry) => entry.subject)).toEqual(['src/config/parser.ts']);
    expect(bundle.text).toContain(
      '## Retrieved session facts (relevance >= 2)\n- src/config/parser.ts modified_by task:3 parser for config values [task:3]',
    );
    const lenient = buildContextBundle(
      { context, status: FRESH },
      { kind: 'planning', facts: { store, threshold: 0.5 } },
    );
    expect(lenient.retrieved.map((entry) => entry.subject)).toEqual(['src/config/parser.ts', 'docs/notes.md']);
    const strict = buildContextBundle(
      { context, status: FRESH },
      { kind: 'planning', facts: { store, threshold: 1_000 } },
    );
    expect(strict.retrieved).toEqual([]);
    expect(strict.text).not.toContain('## Retrieved');
  });

  it('shows each retrieved fact whole or counts it, never clipping one to a stub', () => {
    const long = (n: number) =>
      makeFact({
        subject: `src/config/parser${n}.ts`,
        relation: 'modified_by',
        object: `task:${n} parser for config values, ${'with a long explanation of what changed and why '.repeat(2)}`,
        tags: ['file_change'],
        validFrom: 1,
        sourceTaskId: String(n),
        sourceRole: 'implementer',
        confidence: 1,
      });
    const store = addFacts(emptyFactStore(), [long(1), long(2), long(3)]);
    for (const kind of KINDS) {
      const bundle = buildContextBundle(
        { context, status: FRESH },
        { kind, facts: { store, query: 'src/config/parser1.ts src/config/parser2.ts src/config/parser3.ts' } },
      );
      expect(bundle.retrieved).toHaveLength(3);
      const section = bundle.text.slice(bundle.text.indexOf('## Retrieved session facts'));
      const lines = section
        .split('\n')
        .slice(1)
        .filter((line) => line.startsWith('- '));
      const shown = lines.filter((line) => line.includes('modified_by'));
      for (const line of shown) expect(line).toMatch(/\[task:\d\]$/u);
      const cut = 3 - shown.length;
      expect(cut).toBeGreaterThan(0);
      expect(section).toContain(
        `- ${cut} more retrieved facts not shown (fact-tracker context bundle --json lists them under retrieved)`,
      );
    }
  });

  it('bundles a bare context, not verified against the repository, as stale', () => {
    const bundle = buildContextBundle(context, { kind: 'planning' });
    expect(bundle.stale).toBe(true);
    expect(bundle.text).toContain('- STALE since checkpoint aaaaaaa: not verified against the repository\n');
    // Why it is stale is said whole, first among the file pointers.
    expect(bundle.text).toContain(
      '## File pointers\n- not verified against the repository: load it with loadContext to check the checkpoint\n',
    );
    expect(bundle.chars).toBeGreaterThanOrEqual(1800);
  });

  it('caps the total at a number within the kind range, and refuses a budget no bundle can meet', () => {
    const capped = buildContextBundle({ context, status: FRESH }, { kind: 'planning', budget: 1850 });
    expect(capped.chars).toBeLessThanOrEqual(1850);
    expect(capped.chars).toBeGreaterThanOrEqual(1800);
    expect(
      buildContextBundle({ context, status: FRESH }, { kind: 'planning', budget: 10 }).chars,
    ).toBeGreaterThanOrEqual(1800);
    const impossible = { ...CONTEXT_BUDGETS.implementation, total: { min: 100, max: 200 } };
    expect(() =>
      buildContextBundle({ context, status: FRESH }, { kind: 'implementation', budget: impossible }),
    ).toThrow(RangeError);
  });
});

describe('buildContextBundle properties', () => {
  it('keeps every bundle and every section within its range, pinned rules whole, for any context', () => {
    fc.assert(
      fc.property(bundleInputArb, fc.constantFrom(...KINDS), fc.boolean(), (input, kind, bare) => {
        const bundle = buildContextBundle(bare ? input.context : input, { kind });
        const { total } = CONTEXT_BUDGETS[kind];
        expect(bundle.chars).toBe(bundle.text.length);
        expect(bundle.chars).toBeGreaterThanOrEqual(total.min);
        expect(bundle.chars).toBeLessThanOrEqual(total.max);
        for (const section of bundle.sections) {
          if (section.name === 'retrieved' && section.chars === 0) continue;
          expect(section.chars).toBeGreaterThanOrEqual(section.min);
          expect(section.chars).toBeLessThanOrEqual(section.max);
        }
        const lines = bundle.text.split('\n');
        for (const rule of pinnedRuleTexts(input.context.pinnedRules, input.context.pinnedBy))
          expect(lines).toContain(`- ${rule}`);
        // The guidance always suffices: no filler line is needed with the spec's budgets.
        expect(lines.some((line) => /^\.+$/u.test(line))).toBe(false);
        expectOnlyOwnLines(bundle);
      }),
      { numRuns: 150 },
    );
  });

  it('is deterministic: the same state gives the same bundle', () => {
    fc.assert(
      fc.property(bundleInputArb, fc.constantFrom(...KINDS), (input, kind) => {
        const copy = JSON.parse(JSON.stringify(input)) as typeof input;
        expect(buildContextBundle(copy, { kind })).toEqual(buildContextBundle(input, { kind }));
      }),
      { numRuns: 60 },
    );
  });

  it('puts the changed files before the summary whenever the context is stale', () => {
    fc.assert(
      fc.property(bundleInputArb, fc.constantFrom(...KINDS), (input, kind) => {
        fc.pre(input.status.stale && input.status.changes.length > 0);
        const { text } = buildContextBundle(input, { kind });
        const firstChange = text.split('\n').findIndex((line) => /^- [MAD] /u.test(line));
        const summary = text
          .split('\n')
          .findIndex(
            (line) =>
              line.startsWith('## Working summary') || line.startsWith('- summary') || line.startsWith('- no summary'),
          );
        expect(firstChange).toBeGreaterThan(0);
        if (summary !== -1) expect(firstChange).toBeLessThan(summary);
      }),
      { numRuns: 60 },
    );
  });
});

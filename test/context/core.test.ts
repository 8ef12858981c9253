/**
 * The pure core of the shared context: the evidence ledger, keys, the schema and its
 * migration, run outcomes, checkpoints and the feature flag. No file, clock or process here.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { describe, expect, it } from 'vitest';
import {
  checkpointAt,
  checkpointMismatch,
  hashSummary,
  hashTrackedFiles,
  hashTrackedFilesByVersion,
  parseNameStatus,
  type RepositorySnapshot,
  TRACKED_FILES_HASH_VERSION,
} from '../../src/context/checkpoint.js';
import { resolveSharedContextFlag } from '../../src/context/flag.js';
import { compareContextKeys, isSameContextKey, parseContextKey } from '../../src/context/key.js';
import {
  findMissingEvidence,
  isCompletionClaim,
  parseLineRange,
  recordClaim,
  selectEvidencePaths,
} from '../../src/context/ledger.js';
import { migrateContextDocument } from '../../src/context/migrate.js';
import { mergeContextsReported, selectCapOverrun } from '../../src/context/merge.js';
import { RETRY_WINDOW_MS } from '../../src/context/runOutcome.js';
import {
  CONTEXT_LIMITS,
  type ContextError,
  type ContextFile,
  DEFAULT_PINNED_RULES,
  type EvidenceLedger,
  type SharedContext,
} from '../../src/context/model.js';
import { decodeContextFile, encodeContextFile } from '../../src/context/schema.js';
import { CONTEXT_BUDGETS } from '../../src/context/budget.js';
import { pinnedRuleTexts } from '../../src/context/pinned.js';
import {
  applyRunOutcome,
  buildContextBundle,
  emptySharedContext,
  markSummaryStale,
  selectContext,
  upsertContext,
} from '../../src/context/index.js';
import { contextArb } from './arbitraries.js';

const ledgerOf = (result: E.Either<unknown, EvidenceLedger>): EvidenceLedger => {
  if (E.isLeft(result)) throw new Error(`expected a ledger, got ${JSON.stringify(result.left)}`);
  return result.right;
};

describe('recordClaim', () => {
  it('rejects a claim of done, implemented or fixed without evidence, with a reason', () => {
    for (const claim of [
      'Implemented the tokenizer',
      'Fixed the login bug',
      'Parser is done',
      'Migration completed',
      'Resolved the flaky test',
    ]) {
      const result = recordClaim([], { claim });
      expect(E.isLeft(result) && result.left.code).toBe('missing_evidence');
      expect(E.isLeft(result) && result.left.message).toMatch(
        /gives no evidence: add a file with a line range \(src\/a\.ts:L10-L40\) or a symbol$/u,
      );
      // `reason` is the same text, under the name the ledger first gave it.
      expect(E.isLeft(result) && result.left.reason).toBe(E.isLeft(result) && result.left.message);
    }
  });

  it('accepts a completion claim with a file and a line range, or with a symbol', () => {
    const withFile = ledgerOf(
      recordClaim([], { claim: 'Fixed the parser', files: [{ path: './src/parse.ts', lines: '10-40' }], at: 5 }),
    );
    expect(withFile).toEqual([
      { claim: 'Fixed the parser', files: [{ path: 'src/parse.ts', lines: 'L10-L40' }], symbols: [], at: 5 },
    ]);
    const withSymbol = ledgerOf(recordClaim(withFile, { claim: 'Implemented tokenize', symbols: ['tokenize'] }));
    expect(withSymbol.map((entry) => entry.claim)).toEqual(['Fixed the parser', 'Implemented tokenize']);
    expect(Object.isFrozen(withSymbol)).toBe(true);
    expect(withFile).toHaveLength(1);
  });

  it('accepts claims that do not say the work is done, and negated ones, without evidence', () => {
    for (const claim of [
      'Investigating the flaky cache test',
      'The parser is not done yet',
      "Login isn't fixed",
      'Not yet implemented: retries',
    ])
      expect(E.isRight(recordClaim([], { claim }))).toBe(true);
  });

  it('refuses malformed evidence and empty claims, naming the problem', () => {
    const reason = (input: Parameters<typeof recordClaim>[1]): string => {
      const result = recordClaim([], input);
      return E.isLeft(result) ? result.left.reason : 'accepted';
    };
    expect(reason({ claim: 'Fixed it', files: [{ path: 'src/a.ts', lines: 'ten' }] })).toBe(
      'files[0] (src/a.ts): "ten" is not a line range: use L10-L40 or L10',
    );
    expect(reason({ claim: 'Fixed it', files: [{ path: 'src/a.ts', lines: 'L40-L10' }] })).toBe(
      'files[0] (src/a.ts): "L40-L10" ends before it starts',
    );
    expect(reason({ claim: 'Fixed it', files: [{ path: '/etc/passwd', lines: 'L1' }] })).toBe(
      'files[0]: "/etc/passwd" is absolute: give a path relative to the repository',
    );
    expect(reason({ claim: 'Fixed it', files: [{ path: 'src/../../x', lines: 'L1' }] })).toBe(
      'files[0]: "src/../../x" goes above the repository root: a path starts at the root (src/a.ts), wherever the command runs',
    );
    expect(reason({ claim: 'Fixed it', files: [{ path: 'src/..', lines: 'L1' }] })).toBe(
      'files[0]: "src/.." names the repository root, not a file',
    );
    expect(reason({ claim: 'Fixed it', files: [{ path: 'src/a.ts\n## x', lines: 'L1' }] })).toMatch(
      /holds line breaks or control characters$/u,
    );
    expect(reason({ claim: 'Fixed it', symbols: ['  '] })).toBe('symbols[0] is empty');
    // Evidence of another kind is said as what it is, as an answer, never thrown.
    expect(reason({ claim: 'Fixed it', symbols: [42] as never })).toBe('symbols[0] is a number, not text');
    expect(reason({ claim: 'Fixed it', symbols: 'parse' as never })).toBe('symbols is a string, not a list of names');
    expect(reason({ claim: 'Implemented x', files: 'a:L1-L2' as never })).toBe(
      'files is a string, not a list of { path, lines }',
    );
    expect(reason({ claim: ' \n ' })).toBe('a claim needs text');
    expect(reason({ claim: 'x'.repeat(CONTEXT_LIMITS.claim + 1) })).toMatch(/^a claim is at most 300 characters/u);
  });

  it('keeps claim text on one line, replaces a repeated claim, and refuses a new one past the limit', () => {
    const first = ledgerOf(recordClaim([], { claim: 'Implemented\nthe\tcache', symbols: ['Cache'] }));
    expect(first[0]!.claim).toBe('Implemented the cache');
    const again = ledgerOf(
      recordClaim(ledgerOf(recordClaim(first, { claim: 'Looking at retries' })), {
        claim: 'Implemented the cache',
        symbols: ['LruCache'],
      }),
    );
    expect(again.map((entry) => [entry.claim, entry.symbols])).toEqual([
      ['Looking at retries', []],
      ['Implemented the cache', ['LruCache']],
    ]);
    let ledger: EvidenceLedger = [];
    for (let i = 0; i < CONTEXT_LIMITS.claims; i += 1) ledger = ledgerOf(recordClaim(ledger, { claim: `note ${i}` }));
    expect(ledger).toHaveLength(CONTEXT_LIMITS.claims);
    // Nothing stored is pushed out to make room: a new claim is refused, a repeated one still replaces.
    const full = recordClaim(ledger, { claim: 'one more' });
    expect(E.isLeft(full) && full.left).toMatchObject({
      code: 'ledger_full',
      reason: expect.stringMatching(/^the evidence ledger holds 200 claims, the most it may/u),
    });
    expect(
      ledgerOf(recordClaim(ledger, { claim: 'note 0' }))
        .map((entry) => entry.claim)
        .slice(-2),
    ).toEqual(['note 199', 'note 0']);
  });
});

describe('evidence helpers', () => {
  it('reads line ranges in the usual notations', () => {
    expect(parseLineRange('L10-L40')).toEqual(E.right({ start: 10, end: 40 }));
    expect(parseLineRange('7')).toEqual(E.right({ start: 7, end: 7 }));
    expect(parseLineRange('L0')).toEqual(E.left({ code: 'invalid', message: '"L0" starts before line 1' }));
  });

  it('tells completion claims apart', () => {
    expect(isCompletionClaim('All done')).toBe(true);
    expect(isCompletionClaim('Undone changes are in the stash')).toBe(false);
    expect(isCompletionClaim('Incomplete: the parser')).toBe(false);
    // A negation counts only right before the word, in the same clause; verb forms of reports and commits count.
    for (const claim of [
      'No regressions, fixed the parser',
      'Fixes the parser',
      'Fix the parser',
      'The lexer is complete',
    ])
      expect([claim, isCompletionClaim(claim)]).toEqual([claim, true]);
    for (const claim of ["Hasn't been implemented", 'Not yet fully fixed', 'Looked at how to fix the parser'])
      expect([claim, isCompletionClaim(claim)]).toEqual([claim, false]);
    // Re-done work, an issue closed, and letters of another script that show as the Latin word count too.
    for (const claim of [
      'Reimplemented the lexer',
      'Refixed the parser',
      'Closes #12',
      'This closed #7 for good',
      'Lexer \u0456mplemented',
      'F\u0456xed the parser',
      'Lexer ｉｍｐｌｅｍｅｎｔｅｄ',
    ])
      expect([claim, isCompletionClaim(claim)]).toEqual([claim, true]);
    for (const claim of ['The handler closes the socket', 'Completely rethought the plan', 'Close the issue later'])
      expect([claim, isCompletionClaim(claim)]).toEqual([claim, false]);
  });

  it('lists the evidence paths once and flags the claims whose files are missing', () => {
    const ledger = ledgerOf(
      recordClaim(
        ledgerOf(
          recordClaim([], {
            claim: 'Fixed a',
            files: [
              { path: 'src/a.ts', lines: 'L1' },
              { path: 'src/gone.ts', lines: 'L2' },
            ],
          }),
        ),
        { claim: 'Fixed b', files: [{ path: 'src/a.ts', lines: 'L9' }] },
      ),
    );
    expect(selectEvidencePaths(ledger)).toEqual(['src/a.ts', 'src/gone.ts']);
    expect(findMissingEvidence(ledger, (path) => path !== 'src/gone.ts')).toEqual([
      { claim: 'Fixed a', path: 'src/gone.ts' },
    ]);
  });
});

const key = (repo: string, branch: string, workstreamId: string) => ({ repo, branch, workstreamId });

const roundTrip = (file: ContextFile) =>
  decodeContextFile(JSON.parse(JSON.stringify(encodeContextFile(file))), file.kind);

const errorOf = (result: E.Either<{ code: string; message: string }, unknown>): string =>
  E.isLeft(result) ? `${result.left.code}: ${result.left.message}` : 'decoded';

/** What decoding a file with one broken context gives: the others decoded, that one kept apart with its problem. */
const quarantineOf = (result: E.Either<{ code: string; message: string }, ContextFile>): string => {
  if (E.isLeft(result)) return `${result.left.code}: ${result.left.message}`;
  const [entry] = result.right.quarantined ?? [];
  return entry === undefined ? 'decoded' : `kept apart: ${entry.problem}`;
};

describe('context keys', () => {
  it('compare as tuples, never as joined strings or prefixes', () => {
    expect(isSameContextKey(key('r', 'a/b', 'c'), key('r', 'a', 'b/c'))).toBe(false);
    expect(isSameContextKey(key('r', 'main', 'ws'), key('r', 'main', 'ws-2'))).toBe(false);
    expect(isSameContextKey(key('r', 'main', 'ws'), key('r', 'main', 'ws'))).toBe(true);
    expect(compareContextKeys(key('a', 'z', 'z'), key('b', 'a', 'a'))).toBeLessThan(0);
    expect(compareContextKeys(key('a', 'main', 'ws'), key('a', 'main', 'ws-2'))).toBeLessThan(0);
  });

  it('select the one context of a workstream from a file holding several', () => {
    const one = { ...emptySharedContext(key('r', 'main', 'ws')), featureRequest: 'one' };
    const two = { ...emptySharedContext(key('r', 'main', 'ws-2')), featureRequest: 'two' };
    const file = upsertContext(upsertContext({ kind: 'planning', contexts: [] }, two), one);
    expect(file.contexts.map((context) => context.key.workstreamId)).toEqual(['ws', 'ws-2']);
    expect(
      O.map((context: { featureRequest: string }) => context.featureRequest)(
        selectContext(file, key('r', 'main', 'ws')),
      ),
    ).toEqual(O.some('one'));
    expect(selectContext(file, key('r', 'main', 'w'))).toEqual(O.none);
    expect(upsertContext(file, one)).toBe(file);
  });

  it('are checked where they enter', () => {
    expect(E.isRight(parseContextKey(key('demo', 'feature/x', 'ws')))).toBe(true);
    expect(errorOf(parseContextKey(key('demo', 'main', ' ')))).toBe(
      'invalid: the workstream id of a context key is empty',
    );
    // Invisible characters only (a zero-width space, a word joiner) are as empty as spaces.
    expect(errorOf(parseContextKey(key('demo', '\u200b\u2060', 'ws')))).toBe(
      'invalid: the branch of a context key is empty',
    );
    expect(errorOf(parseContextKey(key('demo', 'main\n## x', 'ws')))).toBe(
      'invalid: the branch of a context key holds line breaks or control characters',
    );
  });
});

describe('context files', () => {
  it('round-trip through their JSON form, contexts in key order', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(contextArb, { maxLength: 3, selector: (context) => JSON.stringify(context.key) }),
        (contexts) => {
          const file: ContextFile = {
            kind: 'implementation',
            contexts: [...contexts].sort((a, b) => compareContextKeys(a.key, b.key)),
          };
          expect(roundTrip(file)).toEqual(E.right(file));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('write schema version 1 with the spec field names', () => {
    const document = encodeContextFile({
      kind: 'planning',
      contexts: [emptySharedContext(key('demo', 'main', 'default'))],
    });
    expect(document).toEqual({
      schema_version: 1,
      kind: 'planning',
      contexts: [
        {
          key: { repo: 'demo', branch: 'main', workstream_id: 'default' },
          feature_request: '',
          checkpoint: null,
          pinned_rules: [...DEFAULT_PINNED_RULES],
          working_summary: { text: '', updated_at: null, stale: true },
          open_decisions: [],
          checklist: [],
          evidence_ledger: [],
          last_run: null,
          recent_failures: [],
        },
      ],
    });
  });

  it('refuse a newer schema version, naming it', () => {
    expect(errorOf(decodeContextFile({ schema_version: 2, kind: 'planning', contexts: [] }, 'planning'))).toBe(
      'future_version: written with schema version 2, newer than the 1 this version of session-fact-tracker reads: upgrade it (the file was left as it is)',
    );
  });

  it('refuse documents that are not version 1 context files, with the offending field', () => {
    const valid = encodeContextFile({
      kind: 'planning',
      contexts: [emptySharedContext(key('demo', 'main', 'default'))],
    });
    const context = valid.contexts[0]!;
    expect(errorOf(decodeContextFile([], 'planning'))).toBe('corrupt: expected a JSON object');
    expect(errorOf(decodeContextFile(valid, 'implementation'))).toBe(
      'corrupt: holds planning context where implementation context belongs',
    );
    expect(errorOf(decodeContextFile({ ...valid, contexts: [context, context] }, 'planning'))).toMatch(
      /^corrupt: entries 0 and 1 share one key \(workstream default, branch main\)$/u,
    );
    // A context that breaks its schema or a cap is kept apart alone; the file is not refused for it.
    expect(
      quarantineOf(
        decodeContextFile(
          { ...valid, contexts: [{ ...context, pinned_rules: ['x'.repeat(200), 'y'.repeat(200)] }] },
          'planning',
        ),
      ),
    ).toMatch(
      /^kept apart: contexts\[0\]\.pinned_rules: pinned rules would take \d+ characters as rendered, over the 350/u,
    );
    expect(
      quarantineOf(
        decodeContextFile(
          {
            ...valid,
            contexts: [
              { ...context, checkpoint: { git_head: '--output=/tmp/x', tracked_files_hash: 'a', summary_hash: 'b' } },
            ],
          },
          'planning',
        ),
      ),
    ).toBe('kept apart: contexts[0].checkpoint.git_head: not a commit id');
    // A range no claim could record (a hand edit) is no pointer: the past-end check could not read it either.
    const claimOver = (lines: string) => ({
      ...context,
      evidence_ledger: [{ claim: 'Implemented it', files: [{ path: 'src/a.ts', lines }], symbols: [] }],
    });
    expect(quarantineOf(decodeContextFile({ ...valid, contexts: [claimOver('L40-L10')] }, 'planning'))).toBe(
      'kept apart: contexts[0].evidence_ledger[0].files[0].lines: ends before it starts',
    );
    expect(quarantineOf(decodeContextFile({ ...valid, contexts: [claimOver('L10-L10')] }, 'planning'))).toBe('decoded');
    expect(errorOf(decodeContextFile({ ...valid, schema_version: 'one' }, 'planning'))).toBe(
      'corrupt: schema_version is not a version number',
    );
  });

  it('serve the rules an older release pinned by its count, without marks: every bundle shows them whole', () => {
    // The file the build of 2a90deb wrote pinning three rules: 350 characters as it counted them,
    // 407 with the [pinned by a user] marks this version adds to rules whose pinner is not recorded.
    const fixture = readFileSync(new URL('./fixtures/pinnedBeforeMarks.json', import.meta.url), 'utf8');
    const decoded = decodeContextFile(JSON.parse(fixture), 'planning');
    expect(quarantineOf(decoded)).toBe('decoded');
    const older = contextOf(E.map((file: ContextFile) => file.contexts[0]!)(decoded));
    const rules = pinnedRuleTexts(older.pinnedRules, older.pinnedBy);
    expect(rules.slice(3)).toEqual([
      '[pinned by a user] Run the linter first.',
      '[pinned by a user] Run npm test before every push, never skip it.',
      '[pinned by a user] Keep commits small.',
    ]);
    for (const kind of ['planning', 'implementation'] as const) {
      const bundle = buildContextBundle(older, { kind });
      const lines = bundle.text.split('\n');
      for (const rule of rules) expect(lines).toContain(`- ${rule}`);
      expect(bundle.chars).toBeLessThanOrEqual(CONTEXT_BUDGETS[kind].total.max);
      // With a budget as small as the kind allows, too.
      const smallest = buildContextBundle(older, { kind, budget: 0 });
      for (const rule of rules) expect(smallest.text.split('\n')).toContain(`- ${rule}`);
    }
    const run = (outcome: Parameters<typeof applyRunOutcome>[1]) => applyRunOutcome(older, outcome, 5_000, GIT);
    // A write that pins nothing keeps them; a new rule must fit with every mark; unpinning one is taken.
    expect(E.isRight(run({ status: 'succeeded', decisions: ['Quoted values?'] }))).toBe(true);
    const pinned = run({ status: 'succeeded', pinRules: ['Use pnpm.'], pinnedBy: 'Ann <a@x>' });
    expect(E.isLeft(pinned) && pinned.left.message).toMatch(/^pinned rules would take \d+ characters as rendered/u);
    const unpinned = run({ status: 'succeeded', unpinRules: ['Keep commits small.'] });
    expect(E.isRight(unpinned) && unpinned.right.pinnedRules.length).toBe(5);
    // Merged with a newer side that holds one rule fewer (its pinner unpinned it after the ancestor
    // gained it, say), the older side's rule comes back as it fits as pinned: nothing is dropped.
    const lastRule = older.pinnedRules.at(-1)!;
    const newer = {
      ...older,
      pinnedRules: older.pinnedRules.filter((rule) => rule !== lastRule),
      workingSummary: { ...older.workingSummary, updatedAt: (older.workingSummary.updatedAt ?? 0) + 1 },
    };
    const merged = mergeContextsReported(newer, older);
    expect(merged.dropped).toEqual([]);
    expect(merged.context.pinnedRules).toEqual(older.pinnedRules);
    expect(selectCapOverrun(older)).toBeUndefined();
  });
});

describe('migrateContextDocument', () => {
  /** The spec's draft layout: one context, no schema_version, sessions inline. */
  const draft = {
    key: { repo_path: 'demo', branch: 'main', workstream_id: 'auth' },
    feature_request: 'Login with passkeys',
    checkpoint: { git_head: 'a'.repeat(40), tracked_files_hash: 'f'.repeat(32), summary_hash: 'e'.repeat(32) },
    pinned_rules: ['Repo state is truth.'],
    working_summary: { text: 'WebAuthn flow drafted.', updated_at: '2026-03-01T10:00:00Z', stale: false },
    open_decisions: [{ id: 'D1', text: 'Which library?', status: 'open' }],
    evidence_ledger: [
      { claim: 'Implemented the challenge endpoint', files: [{ path: 'src/auth.ts', lines: '10-40' }] },
    ],
    cli_sessions: { codex: { id: 'abc', local_path: '/home/me/.codex' } },
    last_run: { status: 'failed', error: 'tests failed', next_action: 'fix the fixture' },
  };

  it('migrates the draft layout to version 1 as a pure function', () => {
    const migrated = migrateContextDocument(draft, 'planning');
    expect(migrated).toEqual(migrateContextDocument(draft, 'planning'));
    const file = E.isRight(migrated) ? decodeContextFile(migrated.right, 'planning') : migrated;
    expect(E.isRight(file)).toBe(true);
    const context = E.isRight(file) ? file.right.contexts[0]! : undefined;
    expect(context?.key).toEqual({ repo: 'demo', branch: 'main', workstreamId: 'auth' });
    expect(context?.workingSummary).toEqual({
      text: 'WebAuthn flow drafted.',
      updatedAt: Date.parse('2026-03-01T10:00:00Z'),
      stale: true,
    });
    expect(context?.evidenceLedger).toEqual([
      { claim: 'Implemented the challenge endpoint', files: [{ path: 'src/auth.ts', lines: 'L10-L40' }], symbols: [] },
    ]);
    expect(context?.lastRun).toEqual({
      status: 'failed',
      failedStep: '(not recorded)',
      error: 'tests failed',
      nextAction: 'fix the fixture',
    });
    expect(context?.recentFailures).toHaveLength(1);
    expect(JSON.stringify(migrated)).not.toContain('codex');
  });

  it('keeps the fields a draft sub-object holds, normalizing the times version 1 knows', () => {
    const rich = {
      ...draft,
      working_summary: { ...draft.working_summary, author: 'bob' },
      evidence_ledger: [
        { ...draft.evidence_ledger[0]!, recorded_at: '2026-01-02T00:00:00Z', verified_by: 'ci' },
        { claim: 'Looked at it', files: [], recorded_at: 'yesterday' },
      ],
      last_run: { status: 'succeeded', at: '2026-01-03T00:00:00+01:00', duration_s: 12 },
    };
    const migrated = migrateContextDocument(rich, 'planning');
    const contexts = E.isRight(migrated) ? (migrated.right as { contexts: unknown[] }).contexts : [];
    expect(contexts[0]).toMatchObject({
      working_summary: { author: 'bob', stale: true },
      evidence_ledger: [
        { recorded_at: '2026-01-02T00:00:00.000Z', verified_by: 'ci', files: [{ lines: 'L10-L40' }] },
        { claim: 'Looked at it', files: [], symbols: [] },
      ],
      last_run: { status: 'succeeded', at: '2026-01-02T23:00:00.000Z', duration_s: 12 },
    });
    expect(contexts[0]).not.toHaveProperty(['evidence_ledger', 1, 'recorded_at']);
    const file = E.isRight(migrated) ? decodeContextFile(migrated.right, 'planning') : migrated;
    const context = E.isRight(file) ? file.right.contexts[0] : undefined;
    expect(context?.evidenceLedger[0]?.at).toBe(Date.parse('2026-01-02T00:00:00Z'));
    expect(context?.lastRun).toMatchObject({ status: 'succeeded', at: Date.parse('2026-01-02T23:00:00Z') });
    const failed = migrateContextDocument(
      { ...draft, last_run: { ...draft.last_run, at: '2026-01-04T00:00:00Z', exit_code: 1 } },
      'planning',
    );
    expect(E.isRight(failed) && (failed.right as { contexts: unknown[] }).contexts[0]).toMatchObject({
      last_run: { status: 'failed', at: '2026-01-04T00:00:00.000Z', exit_code: 1 },
      recent_failures: [{ error: 'tests failed', at: '2026-01-04T00:00:00.000Z' }],
    });
  });

  it('reads a failure field of invisible characters only as not recorded, as a blank one', () => {
    const migrated = migrateContextDocument(
      { ...draft, last_run: { status: 'failed', failed_step: '\u200b', error: ' \u2060 ', next_action: 'retry' } },
      'planning',
    );
    const file = E.isRight(migrated) ? decodeContextFile(migrated.right, 'planning') : migrated;
    expect(E.isRight(file) && file.right.contexts[0]!.lastRun).toEqual({
      status: 'failed',
      failedStep: '(not recorded)',
      error: '(not recorded)',
      nextAction: 'retry',
    });
  });

  it('decodes a draft file directly, and leaves version 1 documents alone', () => {
    expect(E.isRight(decodeContextFile(draft, 'planning'))).toBe(true);
    const current = { schema_version: 1, kind: 'planning', contexts: [] };
    expect(migrateContextDocument(current, 'planning')).toEqual(E.right(current));
    expect(migrateContextDocument({ schema_version: 0 }, 'planning')).toEqual(
      E.left({ code: 'corrupt', message: 'a draft (version 0) context needs a key' }),
    );
  });
});

const KEY = { repo: 'demo', branch: 'main', workstreamId: 'default' };
const GIT: RepositorySnapshot = { kind: 'git', head: 'a'.repeat(40), trackedFilesHash: 'f'.repeat(32) };
const NO_GIT: RepositorySnapshot = { kind: 'none', reason: '/tmp/x is not in a git repository' };

const contextOf = (result: E.Either<ContextError, SharedContext>): SharedContext => {
  if (E.isLeft(result)) throw new Error(`expected a context, got ${result.left.message}`);
  return result.right;
};

const verified = contextOf(
  applyRunOutcome(
    emptySharedContext(KEY),
    {
      status: 'succeeded',
      summary: 'Tokenizer done.',
      featureRequest: 'A config parser',
      decisions: ['Hand-written or PEG?', 'Error format?'],
      checklist: ['Parse lines', { text: 'Tokenize', done: true }],
      claims: [{ claim: 'Implemented the tokenizer', symbols: ['tokenize'] }],
    },
    1_000,
    GIT,
  ),
);

describe('applyRunOutcome', () => {
  it('after a verified checkpoint writes the summary, the working context and a new checkpoint', () => {
    expect(verified.workingSummary).toEqual({ text: 'Tokenizer done.', updatedAt: 1_000, stale: false });
    expect(verified.checkpoint).toEqual(checkpointAt(GIT as RepositorySnapshot & { kind: 'git' }, 'Tokenizer done.'));
    expect(verified.checkpoint?.summaryHash).toBe(hashSummary('Tokenizer done.'));
    expect(verified.openDecisions).toEqual([
      { id: 'D1', text: 'Hand-written or PEG?', status: 'open' },
      { id: 'D2', text: 'Error format?', status: 'open' },
    ]);
    expect(verified.checklist).toEqual([
      { text: 'Parse lines', done: false },
      { text: 'Tokenize', done: true },
    ]);
    expect(verified.evidenceLedger).toEqual([
      { claim: 'Implemented the tokenizer', files: [], symbols: ['tokenize'], at: 1_000 },
    ]);
    expect(verified.lastRun).toEqual({ status: 'succeeded', at: 1_000 });
    expect(Object.isFrozen(verified)).toBe(true);
    const next = contextOf(
      applyRunOutcome(
        verified,
        { status: 'succeeded', decisions: ['Third'], settle: [{ id: 'D1', status: 'decided' }] },
        2_000,
        GIT,
      ),
    );
    expect(next.openDecisions.map((decision) => `${decision.id}:${decision.status}`)).toEqual([
      'D1:decided',
      'D2:open',
      'D3:open',
    ]);
    expect(next.workingSummary).toEqual(verified.workingSummary);
  });

  it('after a failed run records only the step, the error and the next action', () => {
    const failed = contextOf(
      applyRunOutcome(
        verified,
        { status: 'failed', failedStep: 'tests', error: '2 failing\nin lexer', nextAction: 'fix escapes' },
        3_000,
        GIT,
      ),
    );
    expect(failed.lastRun).toEqual({
      status: 'failed',
      failedStep: 'tests',
      error: '2 failing in lexer',
      nextAction: 'fix escapes',
      at: 3_000,
    });
    expect(failed.recentFailures).toEqual([
      { failedStep: 'tests', error: '2 failing in lexer', nextAction: 'fix escapes', at: 3_000 },
    ]);
    expect(failed.workingSummary).toBe(verified.workingSummary);
    expect(failed.checkpoint).toBe(verified.checkpoint);
    expect(failed.openDecisions).toBe(verified.openDecisions);
    expect(failed.evidenceLedger).toBe(verified.evidenceLedger);
    let many = failed;
    for (let i = 0; i < 7; i += 1)
      many = contextOf(
        applyRunOutcome(
          many,
          { status: 'failed', failedStep: `s${i}`, error: 'e', nextAction: 'n' },
          4_000 + i,
          NO_GIT,
        ),
      );
    expect(many.recentFailures.map((failure) => failure.failedStep)).toEqual(['s2', 's3', 's4', 's5', 's6']);
  });

  it('records a failure sent again within the retry window once, and a run that succeeded in between does not hide it', () => {
    const failure = { status: 'failed', failedStep: 'npm test', error: '1 failing', nextAction: 'fix it' } as const;
    const once = contextOf(applyRunOutcome(verified, failure, 3_000, GIT));
    expect(contextOf(applyRunOutcome(once, failure, 3_000 + RETRY_WINDOW_MS, GIT))).toBe(once);
    expect(contextOf(applyRunOutcome(once, failure, 3_001 + RETRY_WINDOW_MS, GIT)).recentFailures).toHaveLength(2);
    const passed = contextOf(applyRunOutcome(once, { status: 'succeeded' }, 4_000, GIT));
    const again = contextOf(applyRunOutcome(passed, failure, 5_000, GIT));
    expect(again.lastRun).toEqual({ ...failure, at: 5_000 });
    expect(again.recentFailures).toBe(once.recentFailures);
  });

  it('replaces the summary with a new entry when its text changes, and keeps the entry when it does not', () => {
    const annotated = {
      ...verified,
      workingSummary: { ...verified.workingSummary, unknownFields: { reviewed_by: 'alice' } },
    };
    const same = contextOf(applyRunOutcome(annotated, { status: 'succeeded' }, 3_000, GIT));
    expect(same.workingSummary).toEqual(annotated.workingSummary);
    const rewritten = contextOf(
      applyRunOutcome(annotated, { status: 'succeeded', summary: 'A new summary.' }, 3_000, GIT),
    );
    expect(rewritten.workingSummary).toEqual({ text: 'A new summary.', updatedAt: 3_000, stale: false });
  });

  it('refuses a summary outside a git repository, where nothing can be verified', () => {
    const result = applyRunOutcome(verified, { status: 'succeeded', summary: 'x' }, 1, NO_GIT);
    expect(E.isLeft(result) && result.left.code).toBe('not_a_git_repository');
  });

  it('refuses the whole write when one input is invalid', () => {
    const refused = (outcome: Parameters<typeof applyRunOutcome>[1]): string => {
      const result = applyRunOutcome(verified, outcome, 5_000, GIT);
      return E.isLeft(result) ? result.left.message : 'written';
    };
    expect(refused({ status: 'succeeded', summary: 'All good', claims: [{ claim: 'Fixed the parser' }] })).toMatch(
      /^claim 1 refused: "Fixed the parser" says the work is done but gives no evidence/u,
    );
    expect(refused({ status: 'succeeded', pinRules: ['x'.repeat(150)] })).toMatch(
      /^pinned rules would take \d+ characters as rendered/u,
    );
    expect(refused({ status: 'succeeded', unpinRules: ['not pinned'] })).toBe('"not pinned" is not a pinned rule');
    expect(refused({ status: 'succeeded', settle: [{ id: 'D9', status: 'decided' }] })).toBe(
      'there is no decision "D9"',
    );
    // Counts group their thousands, as in every message of the shared context.
    expect(refused({ status: 'succeeded', summary: 'x'.repeat(4001) })).toMatch(
      /^the summary is 4,001 characters, over the limit of 4,000/u,
    );
    expect(refused({ status: 'succeeded', featureRequest: 'x'.repeat(1200) })).toBe(
      'the feature request is 1,200 characters, over the limit of 1,000',
    );
    expect(refused({ status: 'succeeded', claims: [{ claim: 'x'.repeat(1200) }] })).toMatch(
      /a claim is at most 300 characters, this one has 1,200$/u,
    );
    expect(
      refused({ status: 'succeeded', pinRules: Array.from({ length: 6 }, (_, i) => `${i} ${'x'.repeat(190)}`) }),
    ).toMatch(/^pinned rules would take 1,\d{3} characters as rendered/u);
    expect(refused({ status: 'failed', failedStep: ' ', error: 'e', nextAction: 'n' })).toBe(
      'the failed step is empty',
    );
    // An empty summary would wipe the stored one; left out, the stored one is kept.
    for (const summary of ['', ' \n\t ', '\u200b \u2060\u{E0041}'])
      expect(refused({ status: 'succeeded', summary })).toBe(
        'the summary is empty: leave it out to keep the current one',
      );
    expect(
      applyRunOutcome(verified, { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n' }, 1.5, GIT),
    ).toEqual(
      E.left({
        code: 'invalid',
        message: '1.5 is not a time in whole epoch milliseconds between the years 0000 and 9999',
      }),
    );
  });

  it('pins and unpins rules within the pinned budget; the tool’s own rules cannot be unpinned', () => {
    const pinned = contextOf(
      applyRunOutcome(verified, { status: 'succeeded', pinRules: ['Use pnpm.'], pinnedBy: 'Ann <a@x>' }, 6_000, GIT),
    );
    expect(pinned.pinnedRules).toEqual([...DEFAULT_PINNED_RULES, 'Use pnpm.']);
    expect(pinned.pinnedBy).toEqual({ 'Use pnpm.': 'Ann <a@x>' });
    const swapped = contextOf(
      applyRunOutcome(
        pinned,
        { status: 'succeeded', unpinRules: ['Use pnpm.'], pinRules: ['Use yarn.'], pinnedBy: 'Bo <b@x>' },
        7_000,
        GIT,
      ),
    );
    expect(swapped.pinnedRules).toEqual([...DEFAULT_PINNED_RULES, 'Use yarn.']);
    expect(swapped.pinnedBy).toEqual({ 'Use yarn.': 'Bo <b@x>' });
    expect(
      applyRunOutcome(verified, { status: 'succeeded', unpinRules: [verified.pinnedRules[2]!] }, 6_000, GIT),
    ).toEqual(
      E.left({
        code: 'invalid',
        message: `"${verified.pinnedRules[2]}" comes with the tool and cannot be unpinned: it binds every role of every session`,
      }),
    );
  });

  it('marks staleness without copying a context that already says so', () => {
    expect(markSummaryStale(verified, { stale: false })).toBe(verified);
    expect(markSummaryStale(verified, { stale: true }).workingSummary.stale).toBe(true);
  });
});

describe('checkpoints', () => {
  it('are stale when the tracked files change, with HEAD moved when a commit brought the change', () => {
    expect(checkpointMismatch(verified, GIT)).toEqual([]);
    expect(checkpointMismatch(verified, { ...GIT, trackedFilesHash: 'e'.repeat(32) })).toEqual(['files_changed']);
    expect(
      checkpointMismatch(verified, { kind: 'git', head: 'b'.repeat(40), trackedFilesHash: 'e'.repeat(32) }),
    ).toEqual(['head_moved', 'files_changed']);
    // Committing the verified work (or only the context files) moves HEAD but not the content.
    expect(checkpointMismatch(verified, { ...GIT, head: 'b'.repeat(40) })).toEqual([]);
    expect(
      checkpointMismatch({ ...verified, workingSummary: { ...verified.workingSummary, text: 'edited by hand' } }, GIT),
    ).toEqual(['summary_changed']);
    expect(checkpointMismatch(emptySharedContext(KEY), GIT)).toEqual(['no_checkpoint']);
    expect(checkpointMismatch(verified, NO_GIT)).toEqual(['not_a_git_repository']);
  });

  it('are compared with the files hash of their version: one an older release recorded (no version) with version 1', () => {
    const snapshot: RepositorySnapshot = {
      ...GIT,
      trackedFilesHash: 'e'.repeat(32),
      trackedFilesHashV1: 'f'.repeat(32),
    };
    expect(verified.checkpoint?.trackedFilesHashVersion).toBe(TRACKED_FILES_HASH_VERSION);
    expect(checkpointMismatch(verified, snapshot)).toEqual(['files_changed']);
    const { trackedFilesHashVersion: _, ...older } = verified.checkpoint!;
    expect(checkpointMismatch({ ...verified, checkpoint: older }, snapshot)).toEqual([]);
    expect(checkpointMismatch({ ...verified, checkpoint: { ...older, trackedFilesHashVersion: 1 } }, snapshot)).toEqual(
      [],
    );
    expect(
      checkpointMismatch({ ...verified, checkpoint: older }, { ...snapshot, trackedFilesHashV1: 'e'.repeat(32) }),
    ).toEqual(['files_changed']);
    // A checkpoint of this version whose version an older release dropped, rewriting the file.
    expect(
      checkpointMismatch({ ...verified, checkpoint: { ...older, trackedFilesHash: 'e'.repeat(32) } }, snapshot),
    ).toEqual([]);
    // A snapshot that holds no version 1 hash compares every checkpoint with its own.
    expect(checkpointMismatch({ ...verified, checkpoint: older }, GIT)).toEqual([]);
    // A newer release's version this one cannot compute is stale, never wrongly verified.
    expect(checkpointMismatch({ ...verified, checkpoint: { ...older, trackedFilesHashVersion: 3 } }, snapshot)).toEqual(
      ['files_changed'],
    );
  });

  it('hash version 1 as an older release did: the index alone, a file taken by its blobV1 where it has one', () => {
    const ls = [
      '100644 1111111111111111111111111111111111111111 0\tsrc/a.ts',
      '120000 2222222222222222222222222222222222222222 0\tsrc/link',
      '',
    ].join('\0');
    const clean = hashTrackedFilesByVersion(ls, [], 'data/context');
    expect(clean.trackedFilesHashV1).toBe(clean.trackedFilesHash);
    const newFile = { path: 'src/new.ts', blob: '5555555555555555555555555555555555555555' };
    const withNew = hashTrackedFilesByVersion(ls, [newFile], 'data/context');
    expect(withNew.trackedFilesHashV1).toBe(clean.trackedFilesHashV1);
    expect(withNew.trackedFilesHash).not.toBe(clean.trackedFilesHash);
    const link = {
      path: 'src/link',
      blob: '3333333333333333333333333333333333333333',
      blobV1: 'link:abc',
      mode: '120000',
    };
    const edited = hashTrackedFilesByVersion(ls, [link], 'data/context');
    expect(edited.trackedFilesHash).toBe(hashTrackedFiles(ls, [{ ...link, blobV1: 'link:def' }], 'data/context'));
    expect(edited.trackedFilesHashV1).not.toBe(
      hashTrackedFilesByVersion(ls, [{ ...link, blobV1: 'link:def' }], 'data/context').trackedFilesHashV1,
    );
  });

  it('hash the content of the tracked files: the index with working-tree edits, the context directory left out', () => {
    const ls = [
      '100644 1111111111111111111111111111111111111111 0\tsrc/a.ts',
      '100644 2222222222222222222222222222222222222222 0\tdata/context/planning_context.json',
      '',
    ].join('\0');
    const base = hashTrackedFiles(ls, [], 'data/context');
    expect(
      hashTrackedFiles(ls, [{ path: 'src/a.ts', blob: '1111111111111111111111111111111111111111' }], 'data/context'),
    ).toBe(base);
    expect(
      hashTrackedFiles(ls, [{ path: 'src/a.ts', blob: '3333333333333333333333333333333333333333' }], 'data/context'),
    ).not.toBe(base);
    expect(hashTrackedFiles(ls, [{ path: 'src/a.ts', blob: null }], 'data/context')).not.toBe(base);
    expect(
      hashTrackedFiles(
        ls,
        [{ path: 'data/context/planning_context.json', blob: '4444444444444444444444444444444444444444' }],
        'data/context',
      ),
    ).toBe(base);
    const committed = ['100644 3333333333333333333333333333333333333333 0\tsrc/a.ts', ''].join('\0');
    expect(hashTrackedFiles(committed, [], 'data/context')).toBe(
      hashTrackedFiles(ls, [{ path: 'src/a.ts', blob: '3333333333333333333333333333333333333333' }], 'data/context'),
    );
    // A new file counts as the index will hold it once added: committing it keeps the hash.
    const added = [
      { path: 'src/b.ts', blob: '5555555555555555555555555555555555555555' },
      { path: 'bin/run', blob: '6666666666666666666666666666666666666666', mode: '100755' },
    ];
    expect(hashTrackedFiles(ls, added, 'data/context')).not.toBe(base);
    const withNew = [
      ...ls.split('\0').slice(0, -1),
      '100644 5555555555555555555555555555555555555555 0\tsrc/b.ts',
      '100755 6666666666666666666666666666666666666666 0\tbin/run',
      '',
    ].join('\0');
    expect(hashTrackedFiles(withNew, [], 'data/context')).toBe(hashTrackedFiles(ls, added, 'data/context'));
  });

  it('read git diff --name-status -z, renames included', () => {
    expect(parseNameStatus('M\0src/a.ts\0R087\0src/old name.ts\0src/new.ts\0A\0x\ny.ts\0')).toEqual([
      { status: 'M', path: 'src/a.ts' },
      { status: 'R', path: 'src/new.ts', from: 'src/old name.ts' },
      { status: 'A', path: 'x\ny.ts' },
    ]);
  });
});

describe('resolveSharedContextFlag', () => {
  it('is off by default; an explicit option wins, then the environment, then the config file', () => {
    expect(resolveSharedContextFlag(undefined, undefined, undefined)).toEqual(
      E.right({ enabled: false, source: 'default' }),
    );
    expect(resolveSharedContextFlag(false, 'true', true)).toEqual(E.right({ enabled: false, source: 'option' }));
    expect(resolveSharedContextFlag(undefined, 'TRUE', false)).toEqual(E.right({ enabled: true, source: 'env' }));
    expect(resolveSharedContextFlag(undefined, '0', true)).toEqual(E.right({ enabled: false, source: 'env' }));
    expect(resolveSharedContextFlag(undefined, '', true)).toEqual(E.right({ enabled: true, source: 'config' }));
    expect(resolveSharedContextFlag(undefined, 'maybe', true)).toEqual(
      E.left({
        code: 'config',
        message: 'SHARED_CONTEXT_ENABLED must be true or false (or 1/0, yes/no, on/off), not "maybe"',
      }),
    );
  });
});

describe('a merge that keeps every entry (a move)', () => {
  it('keeps the latest five failures of both sides, as every write keeps them, and passes no cap for them', () => {
    const failing = (branch: string, from: number): SharedContext => ({
      ...emptySharedContext({ repo: 'demo', branch, workstreamId: 'default' }),
      recentFailures: [0, 1, 2, 3].map((i) => ({
        failedStep: `${branch} step ${i}`,
        error: 'e',
        nextAction: 'n',
        at: from + i,
      })),
    });
    const { context } = mergeContextsReported(failing('main', 10), failing('feature', 20), 'ours', 'ignore');
    expect(context.recentFailures.map((failure) => failure.at)).toEqual([13, 20, 21, 22, 23]);
    expect(selectCapOverrun(context)).toBeUndefined();
  });
});

describe('a merge of the two sides of a conflict', () => {
  it('keeps the summary with a checkpoint that verifies it, when git joined the summary of one side to the checkpoint of the other', () => {
    const atBob: RepositorySnapshot = { kind: 'git', head: 'b'.repeat(40), trackedFilesHash: 'b'.repeat(32) };
    const atAlice: RepositorySnapshot = { kind: 'git', head: 'c'.repeat(40), trackedFilesHash: 'c'.repeat(32) };
    // Bob records a decision, re-verifying the summary the ancestor held at his HEAD; Alice records a
    // new summary at hers. Only Alice changed the summary's lines, so git takes them outside the
    // markers into both sides, and the side rebuilt as Bob's holds Alice's summary with his checkpoint.
    const bob = contextOf(
      applyRunOutcome(verified, { status: 'succeeded', decisions: ['Quoted values?'] }, 3_000, atBob),
    );
    const alice = contextOf(
      applyRunOutcome(verified, { status: 'succeeded', summary: 'Parser done.' }, 2_000, atAlice),
    );
    const joined = { ...bob, workingSummary: alice.workingSummary };
    for (const [ours, theirs] of [
      [joined, alice],
      [alice, joined],
    ] as const) {
      const { context } = mergeContextsReported(ours, theirs);
      expect(context.workingSummary.text).toBe('Parser done.');
      expect(context.checkpoint).toEqual(alice.checkpoint);
      expect(checkpointMismatch(context, atAlice)).toEqual([]);
    }
    // A newer side whose own checkpoint verifies its summary keeps it, though the other's verifies it too.
    const later = contextOf(applyRunOutcome(alice, { status: 'succeeded', decisions: ['Errors?'] }, 4_000, atBob));
    expect(mergeContextsReported(alice, later).context.checkpoint).toEqual(later.checkpoint);
  });
});

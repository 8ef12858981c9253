/**
 * The context entry point's functions given an argument that is not of its kind (null from an
 * unset variable, a number, a file where a context belongs): a TypeError that names the
 * argument, never a key of undefined parts that equals any other, nor a failure deep inside
 * ("Cannot read properties of null"). Parsers and decoders answer a Left for what they parse.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { describe, expect, it } from 'vitest';
import {
  applyRunOutcome,
  buildContextBundle,
  checkpointAt,
  checkpointMismatch,
  compareContextKeys,
  contextFileNames,
  decodeContextFile,
  droppedNotice,
  elsewhereNotice,
  emptySharedContext,
  encodeCheckedSessionsFile,
  encodeContextFile,
  escapeMarkdown,
  findContextSecret,
  findMissingEvidence,
  findSecret,
  formatLineRange,
  hasConflictMarkers,
  hashSummary,
  hashTrackedFiles,
  headNotice,
  identifyRepository,
  isCompletionClaim,
  isSameContextKey,
  markSummaryStale,
  mergeContextFiles,
  mergeContexts,
  migrateContextDocument,
  normalizeKeyPart,
  normalizeRemoteUrl,
  parseContextKey,
  parseFlagValue,
  parseLineRange,
  parseNameStatus,
  parseWorkingTreeStatus,
  pinnedRulesProblem,
  recordClaim,
  recordContextClaim,
  redactContext,
  redactSecrets,
  removeContext,
  renderContextDashboard,
  resolveRepositoryKey,
  sanitizeKeyPart,
  secretProblem,
  selectContext,
  selectDroppedEntries,
  selectEvidencePaths,
  selectOtherKeys,
  selectRelevantFacts,
  splitConflictMarkers,
  unverifiedStatus,
  upsertContext,
  verifyCheckpoint,
} from '../../src/context/index.js';

const key = { repo: 'demo', branch: 'main', workstreamId: 'default' };
const context = emptySharedContext(key);
const file = { kind: 'planning' as const, contexts: [context] };
const snapshot = { kind: 'git' as const, head: 'a'.repeat(40), trackedFilesHash: 'b'.repeat(32) };
const failed = { status: 'failed' as const, failedStep: 's', error: 'e', nextAction: 'n' };
const CONTEXT_NULL = /the context is null, not a shared context \(emptySharedContext makes one\)/u;
const FILE_NULL = /the file is null, not a context file \(\{ kind, contexts \}\)/u;
const KEY_NUMBER = /the key is a number, not a context key/u;

const refusals: ReadonlyArray<readonly [string, () => unknown, RegExp]> = [
  [
    'compareContextKeys of a number',
    () => compareContextKeys(42 as never, key),
    /the first key is a number, not a context key/u,
  ],
  [
    'isSameContextKey of two numbers',
    () => isSameContextKey(42 as never, 42 as never),
    /the first key is a number, not a context key/u,
  ],
  [
    'isSameContextKey of a key and null',
    () => isSameContextKey(key, null as never),
    /the second key is null, not a context key/u,
  ],
  ['emptySharedContext of a number', () => emptySharedContext(42 as never), KEY_NUMBER],
  [
    'emptySharedContext of a key without a branch',
    () => emptySharedContext({ repo: 'r', workstreamId: 'w' } as never),
    /the key is an object, not a context key/u,
  ],
  ['selectContext with a number as the key', () => selectContext(file, 42 as never), KEY_NUMBER],
  ['selectContext of a null file', () => selectContext(null as never, key), FILE_NULL],
  ['removeContext with a number as the key', () => removeContext(file, 42 as never), KEY_NUMBER],
  ['upsertContext of a null context', () => upsertContext(file, null as never), CONTEXT_NULL],
  [
    'upsertContext into a file that is a context',
    () => upsertContext(context as never, context),
    /the file is an object, not a context file/u,
  ],
  ['selectOtherKeys of a null file', () => selectOtherKeys(null as never, key), FILE_NULL],
  [
    'elsewhereNotice of a null key',
    () => elsewhereNotice(null as never, [key], 'planning'),
    /the key is null, not a context key/u,
  ],
  [
    'elsewhereNotice of a number as the others',
    () => elsewhereNotice(key, 42 as never, 'planning'),
    /others is a number, not an array of context keys/u,
  ],
  [
    'elsewhereNotice of no kind',
    () => elsewhereNotice(key, [key], null as never),
    /the kind is null, not a context kind \(planning or implementation\)/u,
  ],
  ['droppedNotice of null', () => droppedNotice(null as never), /the entry is null, not a dropped entry/u],
  [
    'headNotice of no head',
    () => headNotice(null as never, 'main', true, 'data/context'),
    /the head is null, not a head notice/u,
  ],
  [
    'headNotice of a number as the branch',
    () => headNotice('rebase', 42 as never, true, 'data/context'),
    /the branch is a number, not a string/u,
  ],
  [
    'markSummaryStale of a number',
    () => markSummaryStale(42 as never, { stale: true }),
    /the context is a number, not a shared context/u,
  ],
  [
    'markSummaryStale with a number as the status',
    () => markSummaryStale(context, 42 as never),
    /the status is a number, not a context status/u,
  ],
  ['recordContextClaim of a null context', () => recordContextClaim(null as never, { claim: 'x' }), CONTEXT_NULL],
  ['redactContext of null', () => redactContext(null as never), CONTEXT_NULL],
  [
    'findContextSecret of a file',
    () => findContextSecret(file as never),
    /the context is an object, not a shared context/u,
  ],
  ['applyRunOutcome of a null context', () => applyRunOutcome(null as never, failed, 1, snapshot), CONTEXT_NULL],
  [
    'applyRunOutcome of a null snapshot',
    () => applyRunOutcome(context, failed, 1, null as never),
    /the snapshot is null, not a repository snapshot/u,
  ],
  [
    'mergeContexts of a null side',
    () => mergeContexts(context, null as never),
    /theirs is null, not a shared context/u,
  ],
  [
    'mergeContextFiles of a number',
    () => mergeContextFiles(42 as never, file),
    /ours is a number, not a context file/u,
  ],
  [
    'mergeContextFiles with a number as the base',
    () => mergeContextFiles(file, file, 42 as never),
    /the base is a number, not a context file/u,
  ],
  ['encodeContextFile of null', () => encodeContextFile(null as never), FILE_NULL],
  [
    'encodeCheckedSessionsFile of a number',
    () => encodeCheckedSessionsFile(42 as never),
    /the file is a number, not a sessions file/u,
  ],
  ['decodeContextFile of no kind', () => decodeContextFile({}, null as never), /the kind is null, not a context kind/u],
  [
    'migrateContextDocument of a number as the kind',
    () => migrateContextDocument({}, 42 as never),
    /the kind is a number, not a context kind/u,
  ],
  ['contextFileNames of null', () => contextFileNames(null as never), /the kind is null, not a context kind/u],
  ['renderContextDashboard of a null file', () => renderContextDashboard(null as never, 'x.json'), FILE_NULL],
  [
    'renderContextDashboard of a file whose kind would forge a heading',
    () => renderContextDashboard({ kind: 'x\n# forged' as never, contexts: [] }, 'x.json'),
    /^the kind is a string, not a context kind/u,
  ],
  [
    'renderContextDashboard with a number as the JSON name',
    () => renderContextDashboard(file, 42 as never),
    /the JSON name is a number, not a string/u,
  ],
  [
    'resolveRepositoryKey of a null file',
    () => resolveRepositoryKey(null as never, { id: 'x', source: 'folder' }),
    FILE_NULL,
  ],
  [
    'resolveRepositoryKey of a null identity',
    () => resolveRepositoryKey(file, null as never),
    /the identity is null, not a repository identity/u,
  ],
  ['identifyRepository of null', () => identifyRepository(null as never), /the facts are null, not repository facts/u],
  [
    'identifyRepository of a number',
    () => identifyRepository(42 as never),
    /the facts are a number, not repository facts/u,
  ],
  [
    'buildContextBundle of null options',
    () => buildContextBundle(context, null as never),
    /the options are null, not an object/u,
  ],
  [
    'buildContextBundle of no kind',
    () => buildContextBundle(context, {} as never),
    /the kind is undefined, not a context kind/u,
  ],
  [
    'buildContextBundle of a text as the budget',
    () => buildContextBundle(context, { kind: 'planning', budget: '2000' as never }),
    /the budget is a string, not a number or a bundle budget/u,
  ],
  [
    'buildContextBundle of a budget without sections',
    () => buildContextBundle(context, { kind: 'implementation', budget: { total: { min: 1, max: 2 } } as never }),
    /the budget is an object, not a number or a bundle budget \(\{ total, sections \}\)/u,
  ],
  [
    'buildContextBundle of a null input',
    () => buildContextBundle(null as never, { kind: 'planning' }),
    /the input is null, not a bundle input/u,
  ],
  [
    'buildContextBundle of a number as the context',
    () => buildContextBundle({ context: 42, status: unverifiedStatus() } as never, { kind: 'planning' }),
    /the context is a number, not a shared context/u,
  ],
  [
    'selectRelevantFacts of null',
    () => selectRelevantFacts(null as never, 'query'),
    /the facts are null, not bundle facts/u,
  ],
  [
    'checkpointAt of a null snapshot',
    () => checkpointAt(null as never, 'x'),
    /the snapshot is null, not a repository snapshot/u,
  ],
  [
    'checkpointAt with a null summary',
    () => checkpointAt(snapshot, null as never),
    /the summary is null, not a string/u,
  ],
  ['checkpointMismatch of a null context', () => checkpointMismatch(null as never, snapshot), CONTEXT_NULL],
  [
    'checkpointMismatch of a number as the snapshot',
    () => checkpointMismatch(context, 42 as never),
    /the snapshot is a number, not a repository snapshot/u,
  ],
  [
    'verifyCheckpoint of null evidence',
    () => verifyCheckpoint(context, null as never, ''),
    /the evidence is null, not repository evidence/u,
  ],
  [
    'verifyCheckpoint of a null context',
    () => verifyCheckpoint(null as never, { snapshot, changes: [], missingPaths: [] }, ''),
    CONTEXT_NULL,
  ],
  ['hashSummary of a number', () => hashSummary(42 as never), /the summary is a number, not a string/u],
  ['hashTrackedFiles of null', () => hashTrackedFiles(null as never, [], ''), /git's output is null, not a string/u],
  [
    'hashTrackedFiles with a number as the working files',
    () => hashTrackedFiles('', 42 as never, ''),
    /working is a number, not an array of working files/u,
  ],
  ['parseNameStatus of null', () => parseNameStatus(null as never), /git's output is null, not a string/u],
  [
    'parseWorkingTreeStatus of a number',
    () => parseWorkingTreeStatus(42 as never),
    /git's output is a number, not a string/u,
  ],
  [
    'selectDroppedEntries of a null key',
    () => selectDroppedEntries(null as never, [context], context),
    /the key is null, not a context key/u,
  ],
  [
    'selectDroppedEntries of a null after',
    () => selectDroppedEntries(key, [context], null as never),
    /after is null, not a shared context/u,
  ],
  [
    'recordClaim into a null ledger',
    () => recordClaim(null as never, { claim: 'x' }),
    /the ledger is null, not an array of claims/u,
  ],
  [
    'selectEvidencePaths of a number',
    () => selectEvidencePaths(42 as never),
    /the ledger is a number, not an array of claims/u,
  ],
  [
    'findMissingEvidence without exists',
    () => findMissingEvidence([], null as never),
    /exists is null, not a function/u,
  ],
  ['formatLineRange of null', () => formatLineRange(null as never), /the range is null, not a line range/u],
  ['formatLineRange of a number', () => formatLineRange(42 as never), /the range is a number, not a line range/u],
  ['isCompletionClaim of null', () => isCompletionClaim(null as never), /the text is null, not a string/u],
  ['pinnedRulesProblem of null', () => pinnedRulesProblem(null as never), /rules is null, not an array of rules/u],
  ['escapeMarkdown of a number', () => escapeMarkdown(42 as never), /the text is a number, not a string/u],
  ['splitConflictMarkers of null', () => splitConflictMarkers(null as never), /the text is null, not a string/u],
  ['hasConflictMarkers of a number', () => hasConflictMarkers(42 as never), /the text is a number, not a string/u],
  ['normalizeKeyPart of null', () => normalizeKeyPart(null as never), /the key part is null, not a string/u],
  ['sanitizeKeyPart of a number', () => sanitizeKeyPart(42 as never), /the key part is a number, not a string/u],
  ['normalizeRemoteUrl of null', () => normalizeRemoteUrl(null as never), /the URL is null, not a string/u],
  ['findSecret of null', () => findSecret(null as never), /the text is null, not a string/u],
  ['redactSecrets of a number', () => redactSecrets(42 as never), /the text is a number, not a string/u],
  ['secretProblem of a null field', () => secretProblem(null as never, 'x'), /the field is null, not a string/u],
];

describe('arguments that are not of their kind', () => {
  it.each(refusals)('%s is refused with a TypeError naming the argument', (_name, call, message) => {
    expect(call).toThrow(expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(message) }));
  });

  it('parsers answer a Left for what they parse, and options read null as none', () => {
    expect(parseContextKey(null as never)).toEqual(
      E.left({ code: 'invalid', message: 'a context key needs a repo, a branch and a workstream id' }),
    );
    expect(parseLineRange(42 as never)).toEqual(E.left({ code: 'invalid', message: 'needs a line range (L10-L40)' }));
    expect(E.isLeft(parseFlagValue(42 as never))).toBe(true);
    expect(parseFlagValue(null as never)).toEqual(E.right(undefined));
    expect(E.isLeft(applyRunOutcome(context, null as never, 1, snapshot))).toBe(true);
    expect(resolveRepositoryKey(file, { id: 'demo', source: 'folder' }, null as never).repo).toBe('demo');
    expect(pinnedRulesProblem(['x'], null as never)).toBeUndefined();
    expect(elsewhereNotice(key, [{ ...key, branch: 'old' }], 'planning', null as never)).toMatch(/branch old/u);
    expect(mergeContextFiles(file, file, null as never).contexts).toHaveLength(1);
    for (const kind of ['planning', 'implementation'] as const)
      expect(buildContextBundle(context, { kind, facts: null as never, budget: null as never })).toEqual(
        buildContextBundle(context, { kind }),
      );
  });
});

describe('the dashboard of a JSON file named by anything', () => {
  it('writes the name as code: no heading, line or HTML of it reaches the Markdown', () => {
    const markdown = renderContextDashboard({ kind: 'planning', contexts: [] }, 'x`\n# H\n<img src=x>.json');
    expect(markdown.split('\n').filter((line) => line.startsWith('#'))).toEqual(['# Shared context: planning']);
    expect(markdown).toContain("Generated from `x' # H <img src=x>.json` by session-fact-tracker");
  });
});

describe('the Node shell given arguments that are not of their kind', () => {
  it('answers each with a Left of code invalid naming it, never a throw or a rejection, and writes nothing', async () => {
    const { loadContext, moveContext, resolveContext, updateContext, writeContext } =
      await import('../../src/context/node/index.js');
    const { listing, makeRepo } = await import('./repo.js');
    const repo = makeRepo();
    const before = listing(repo);
    const options = { cwd: repo, enabled: true, now: () => 1_750_000_000_000 };
    const invalid = (message: RegExp) => E.left({ code: 'invalid', message: expect.stringMatching(message) });
    const OPTIONS_NULL = /^the options are null, not an object/u;
    expect(await loadContext(null as never)).toEqual(invalid(OPTIONS_NULL));
    expect(await loadContext(42 as never)).toEqual(invalid(/^the options are a number, not an object/u));
    expect(await resolveContext(null as never)).toEqual(invalid(OPTIONS_NULL));
    expect(await writeContext(null as never, { status: 'succeeded' })).toEqual(invalid(OPTIONS_NULL));
    expect(await writeContext(options, null as never)).toEqual(
      invalid(/^a run outcome needs a status: succeeded or failed$/u),
    );
    expect(await updateContext(options, null as never)).toEqual(invalid(/^the change is null, not a function/u));
    expect(await updateContext(options, (context) => E.right(context), null as never)).toEqual(
      invalid(/^the sessions are null, not an object of tool sessions/u),
    );
    expect(await moveContext(options, 42 as never)).toEqual(
      invalid(/^the branch to move from is a number, not a string$/u),
    );
    expect(await moveContext(null as never, 'other')).toEqual(invalid(OPTIONS_NULL));
    expect(await loadContext({ ...options, cwd: 42 as never })).toEqual(
      invalid(/^the cwd is a number, not the path of a folder$/u),
    );
    for (const field of ['claims', 'decisions', 'pinRules', 'unpinRules', 'settle', 'checklist'])
      expect(await writeContext(options, { status: 'succeeded', [field]: 'x' } as never)).toEqual(
        invalid(new RegExp(`^${field} is a string, not a list$`, 'u')),
      );
    expect(await writeContext(options, { status: 'succeeded', claims: { claim: 'x' } } as never)).toEqual(
      invalid(/^claims is an object, not a list$/u),
    );
    const trap = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
      },
    );
    const getter = {
      get status() {
        throw new Error('getter');
      },
    };
    expect(await writeContext(options, getter as never)).toEqual(
      invalid(/^the run outcome could not be read: getter$/u),
    );
    // A Proxy is read as the object its traps show: here one with no list in it.
    expect(await writeContext(options, { status: 'succeeded', pinRules: trap } as never)).toEqual(
      invalid(/^pinRules is an object, not a list$/u),
    );
    expect(listing(repo)).toEqual(before);
  });

  it('refuses key options and a clock of the wrong kind as invalid, and reads a key part that is none as not named', async () => {
    const { loadContext, writeContext, moveContext } = await import('../../src/context/node/index.js');
    const { listing, makeRepo } = await import('./repo.js');
    const repo = makeRepo();
    const options = { cwd: repo, enabled: true, now: () => 1_750_000_000_000 };
    const failed = { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n' } as const;
    const invalid = (message: RegExp) => E.left({ code: 'invalid', message: expect.stringMatching(message) });
    const before = listing(repo);
    for (const [field, value, message] of [
      ['workstreamId', 42, /^the workstreamId is a number, not text$/u],
      ['branch', [], /^the branch is an array, not text$/u],
      ['repo', {}, /^the repo is an object, not text$/u],
      ['kind', 1n, /^the kind of a context is planning or implementation, not a bigint$/u],
      ['now', 42, /^now is a number, not a function/u],
    ] as const) {
      expect(await loadContext({ ...options, [field]: value } as never), field).toEqual(invalid(message));
      expect(await writeContext({ ...options, [field]: value } as never, failed), field).toEqual(invalid(message));
    }
    // An enabled of another kind is refused, never left to the environment to decide.
    for (const enabled of ['false', 'yes', 1])
      expect(await loadContext({ ...options, enabled, env: { SHARED_CONTEXT_ENABLED: 'true' } } as never)).toEqual(
        invalid(/^enabled is an? (string|number), not true or false$/u),
      );
    // A clock that throws answers no time: the write refuses it as such, not as a bug.
    const stopped = await writeContext(
      {
        ...options,
        now: () => {
          throw new Error('no clock');
        },
      },
      failed,
    );
    expect(E.isLeft(stopped) && stopped.left.code).toBe('invalid');
    expect(listing(repo)).toEqual(before);
    // null (an unset variable) names no branch: the current one, never a branch called unset.
    const written = await writeContext({ ...options, branch: null, repo: null } as never, failed);
    expect(E.isRight(written) && O.isSome(written.right) && written.right.value.context.key.branch).toBe('main');
    // A branch someone types is normalized first, as --branch is.
    const moved = await moveContext({ ...options, branch: 'feat' }, ' main');
    expect(E.isRight(moved) && O.isSome(moved.right) && moved.right.value.context.key.branch).toBe('feat');
  });

  it('refuses options whose getter or Proxy trap throws as invalid naming the option, never internal, and writes nothing', async () => {
    const { isContextEnabled } = await import('../../src/context/node/scope.js');
    const { loadContext, writeContext } = await import('../../src/context/node/index.js');
    const { listing, makeRepo } = await import('./repo.js');
    const repo = makeRepo();
    const plain = { cwd: repo, enabled: true, now: () => 1_750_000_000_000 };
    const failed = { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n' } as const;
    const refused = (name: string, said = 'getter') =>
      E.left({ code: 'invalid', message: `reading option ${name} threw: ${said}` });
    const before = listing(repo);
    for (const name of ['enabled', 'env', 'cwd', 'kind', 'repo', 'branch', 'workstreamId', 'now']) {
      const options = Object.defineProperty({ ...plain }, name, {
        enumerable: true,
        get: () => {
          throw new Error('getter');
        },
      });
      expect(await loadContext(options), name).toEqual(refused(name));
      expect(await writeContext(options, failed), name).toEqual(refused(name));
    }
    // The one variable read of env is read as the option env.
    const env = {
      get SHARED_CONTEXT_ENABLED(): string {
        throw new Error('variable');
      },
    };
    expect(await isContextEnabled({ cwd: repo, env })).toEqual(refused('env', 'variable'));
    const trap = new Proxy(plain, {
      get: () => {
        throw new Error('trap');
      },
    });
    expect(await loadContext(trap)).toEqual(refused('enabled', 'trap'));
    expect(listing(repo)).toEqual(before);
  });

  it('refuses as invalid, writing nothing, fields of the wrong kind inside a run outcome and a change that answers no context', async () => {
    const { updateContext, writeContext } = await import('../../src/context/node/index.js');
    const { listing, makeRepo } = await import('./repo.js');
    const repo = makeRepo();
    const options = { cwd: repo, enabled: true, now: () => 1_750_000_000_000 };
    const invalid = (message: RegExp) => E.left({ code: 'invalid', message: expect.stringMatching(message) });
    const before = listing(repo);
    const refusals: ReadonlyArray<readonly [unknown, RegExp]> = [
      [{ status: 'succeeded', pinRules: ['rule'], pinnedBy: 42 }, /^pinnedBy is a number, not text$/u],
      [{ status: 'succeeded', unpinRules: [Object.create(null)] }, /^rule to unpin 1 is an object, not text$/u],
      [{ status: 'succeeded', settle: [null] }, /^decision to settle 1 is null, not \{ id, status \}$/u],
      // A hole in a list is refused as what it is, not skipped (read as data, it names itself).
      [{ status: 'succeeded', settle: new Array(1) }, /^the run outcome could not be read: .* a hole at \[0\]/u],
      [{ status: 'succeeded', settle: [{ id: 7n, status: 'decided' }] }, /^there is no decision a bigint$/u],
      [{ status: 'succeeded', claims: new Array(1) }, /^the run outcome could not be read: .* a hole at \[0\]/u],
      [{ status: 'succeeded', claims: [null] }, /^claim 1 is null, not a claim$/u],
      [
        { status: 'failed', failedStep: 'test', error: 'red', nextAction: 'fix', sessions: null },
        /^the sessions are null/u,
      ],
      [{ status: 'succeeded', sessions: 42 }, /^the sessions are a number/u],
    ];
    for (const [outcome, message] of refusals)
      expect(await writeContext(options, outcome as never), String(message)).toEqual(invalid(message));
    for (const answer of [undefined, null, 42, E.right(null), E.right({ text: 'no key' })])
      expect(await updateContext(options, () => answer as never)).toEqual(invalid(/^the change answered /u));
    // A context whose fields are not a context's, or a change that throws, is the caller's mistake too.
    for (const fields of [
      { openDecisions: null },
      { checklist: null },
      { workingSummary: null },
      { pinnedRules: [1n] },
    ])
      expect(await updateContext(options, (context) => E.right({ ...context, ...fields }) as never)).toEqual(
        invalid(
          /^(the change answered a context whose fields are not a context's|refused to write a file the reader would reject): /u,
        ),
      );
    expect(
      await updateContext(options, () => {
        throw new Error('the change broke');
      }),
    ).toEqual(invalid(/^the change failed: the change broke$/u));
    expect(listing(repo)).toEqual(before);

    // A decision is settled only as a status a decision can have.
    expect(E.isRight(await writeContext(options, { status: 'succeeded', decisions: ['use pnpm'] }))).toBe(true);
    expect(
      await writeContext(options, { status: 'succeeded', settle: [{ id: 'D1', status: 'done' as never }] }),
    ).toEqual(invalid(/^decision "D1" cannot be settled as "done": a status is open, decided, dropped$/u));
    const settled = await writeContext(options, { status: 'succeeded', settle: [{ id: 'D1', status: 'decided' }] });
    expect(E.isRight(settled) && O.isSome(settled.right) && settled.right.value.context.openDecisions).toEqual([
      { id: 'D1', text: 'use pnpm', status: 'decided' },
    ]);
  });
  it('refuses as invalid a change that fails with no { code, message }, before and after the folder is made', async () => {
    const { updateContext } = await import('../../src/context/node/index.js');
    const { listing, makeRepo } = await import('./repo.js');
    const repo = makeRepo();
    const options = { cwd: repo, enabled: true, now: () => 1_750_000_000_000 };
    const invalid = (message: RegExp) => E.left({ code: 'invalid', message: expect.stringMatching(message) });
    const unreadable = new Proxy(
      {},
      {
        get: () => {
          throw new Error('no field');
        },
      },
    );
    const failures: ReadonlyArray<readonly [unknown, RegExp]> = [
      [null, /^the change failed with null, not a \{ code, message \}$/u],
      ['nope', /^the change failed with a string, not a \{ code, message \}$/u],
      [{ code: 'invalid' }, /^the change failed with an object, not a \{ code, message \}$/u],
      [unreadable, /^the change failed with an object, not a \{ code, message \}$/u],
    ];
    const check = async (): Promise<void> => {
      for (const [left, message] of failures)
        expect(await updateContext(options, () => E.left(left) as never), String(message)).toEqual(invalid(message));
      // A failure of its own is the change's answer, as given.
      expect(await updateContext(options, () => E.left({ code: 'invalid', message: 'not now' }))).toEqual(
        E.left({ code: 'invalid', message: 'not now' }),
      );
    };
    // Before the context folder is made (the change is tried once first), then with it there.
    const before = listing(repo);
    await check();
    expect(listing(repo)).toEqual(before);
    expect(E.isRight(await updateContext(options, (context) => E.right({ ...context, featureRequest: 'parse' })))).toBe(
      true,
    );
    await check();
  });
});

/**
 * The context shell on real files in temporary directories and real git repositories.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { describe, expect, it } from 'vitest';
import { buildContextBundle } from '../../src/context/index.js';
import {
  type ContextOptions,
  loadContext,
  resolveContext,
  updateContext,
  writeContext,
} from '../../src/context/node/index.js';
import { decodeContextFile, encodeContextFile } from '../../src/context/schema.js';
import { applyRunOutcome, emptySharedContext, recordContextClaim } from '../../src/context/index.js';
import { errorOf, loadedOf } from './results.js';
import { commitAll, copiesOf, git, listing, makeRepo, readJson, tempDir, writeFiles } from './repo.js';

const PLANNING = (cwd: string, extra: Partial<ContextOptions> = {}): ContextOptions => ({
  kind: 'planning',
  cwd,
  enabled: true,
  now: () => 1_750_000_000_000,
  ...extra,
});
const CONTEXT_JSON = ['data', 'context', 'planning_context.json'];

const checkpoint = (cwd: string, summary: string) =>
  writeContext(PLANNING(cwd), {
    status: 'succeeded',
    summary,
    featureRequest: 'A config parser',
    decisions: ['Hand-written or PEG?'],
    checklist: ['Parse key = value lines'],
    claims: [{ claim: 'Implemented parse', files: [{ path: 'src/parser.ts', lines: 'L1' }] }],
  });

/**
 * A copy of one repository whose context holds a checkpoint and then a failed run, made once per
 * test file: what the tests of the repository's state and of unknown fields start from.
 */
const checkpointedCopy = copiesOf(async () => {
  const repo = makeRepo();
  loadedOf(await checkpoint(repo, 'Parser skeleton in src/parser.ts.'));
  loadedOf(await writeContext(PLANNING(repo), { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n' }));
  return repo;
});

describe.concurrent('writeContext and loadContext', () => {
  it('round-trip a context through its file, with a dashboard, a .gitignore, and tool sessions kept local', async () => {
    const repo = makeRepo();
    const written = loadedOf(await checkpoint(repo, 'Parser skeleton in src/parser.ts.'));
    const sessions = { codex: { id: 'sess-42', localPath: '/home/me/.codex' } };
    expect(loadedOf(await writeContext(PLANNING(repo), { status: 'succeeded', sessions })).sessions).toEqual(sessions);
    // The dashboard is never read back: breaking it changes nothing.
    writeFileSync(join(repo, 'data', 'context', 'planning_context.md'), '{ not json');
    const loaded = loadedOf(await loadContext(PLANNING(repo)));

    expect(loaded.stored).toBe(true);
    expect(loaded.context).toEqual(written.context);
    expect(loaded.context.workingSummary).toEqual({
      text: 'Parser skeleton in src/parser.ts.',
      updatedAt: 1_750_000_000_000,
      stale: false,
    });
    expect(loaded.status).toMatchObject({
      repository: 'git',
      stale: false,
      reasons: [],
      changes: [],
      missingEvidence: [],
    });
    // The repo part is what the repository says about itself: here (no origin) its first commit.
    expect(loaded.key).toEqual({
      repo: expect.stringMatching(/^first-commit:[0-9a-f]{12}$/u),
      branch: 'main',
      workstreamId: 'default',
    });
    expect(loaded.sessions).toEqual(sessions);
    expect(readJson(join(repo, ...CONTEXT_JSON))).toMatchObject({
      schema_version: 1,
      kind: 'planning',
      contexts: [{ feature_request: 'A config parser' }],
    });
    expect(readFileSync(join(repo, 'data', 'context', 'planning_sessions.local.json'), 'utf8')).toContain('sess-42');
    expect(readFileSync(join(repo, ...CONTEXT_JSON), 'utf8')).not.toContain('sess-42');
    expect(readFileSync(join(repo, 'data', 'context', '.gitignore'), 'utf8')).toMatch(/^\*\.local\.json$/mu);
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all')).not.toContain('local.json');
  });

  it.skipIf(process.platform === 'win32')(
    "adds the sessions rule to a team's own .gitignore whole or not at all: a full disk that cuts it short leaves the file as it was",
    async () => {
      const repo = makeRepo();
      const gitignore = join(repo, 'data', 'context', '.gitignore');
      // 98 bytes short of 8 KiB: a write cut there would leave the rule's comment line and a lone `*`,
      // which ignores the context file itself.
      const head = '# ours\n*.tmp\n';
      writeFiles(repo, { 'data/context/.gitignore': `${head}${'#'.repeat(8192 - 98 - head.length - 1)}\n` });
      commitAll(repo, 'our own ignore file');
      loadedOf(await writeContext(PLANNING(repo), { status: 'succeeded', summary: 'Parser read.' }));
      const before = readFileSync(gitignore);
      expect(before.length).toBe(8192 - 98);
      // A file size limit of 16 blocks of 512 bytes (POSIX sh) refuses the append part way, as a full disk does.
      const library = new URL('../../dist/context/node/index.js', import.meta.url).href;
      const script = `const { updateContext } = await import(${JSON.stringify(library)});
        const changed = await updateContext({ cwd: ${JSON.stringify(repo)}, enabled: true },
          (context) => ({ _tag: 'Right', right: context }), { codex: { id: 'sess-42' } });
        console.log(JSON.stringify(changed.right.value.warnings));`;
      const run = spawnSync(
        'sh',
        ['-c', 'ulimit -f 16; exec "$0" "$@"', process.execPath, '--input-type=module', '-e', script],
        {
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
      expect(JSON.parse(run.stdout) as unknown).toEqual([
        expect.stringMatching(/^cannot add \*\.local\.json to data\/context\/\.gitignore: /u),
        // Said as it is: the rule was not added, not undone by another.
        'tool sessions not saved: git would commit data/context/planning_sessions.local.json (*.local.json could not be added to data/context/.gitignore); the context itself was saved',
      ]);
      expect(readFileSync(gitignore).equals(before)).toBe(true);
      // Once there is room again, the rule is added whole, once, and the context file is still committed.
      const sessions = { codex: { id: 'sess-42' } };
      expect(loadedOf(await writeContext(PLANNING(repo), { status: 'succeeded', sessions })).sessions).toEqual(
        sessions,
      );
      expect(readFileSync(gitignore, 'utf8')).toBe(
        `${before.toString('utf8')}# Tool session ids are local to one machine: never commit them (added by session-fact-tracker).\n*.local.json\n`,
      );
      expect(git(repo, 'status', '--porcelain', '--untracked-files=all')).toContain(
        'data/context/planning_context.json',
      );
    },
  );

  it('keeps workstreams and kinds apart in their files', async () => {
    const repo = makeRepo();
    loadedOf(await writeContext(PLANNING(repo, { workstreamId: 'ws' }), { status: 'succeeded', summary: 'one' }));
    loadedOf(await writeContext(PLANNING(repo, { workstreamId: 'ws-2' }), { status: 'succeeded', summary: 'two' }));
    loadedOf(
      await writeContext(
        { ...PLANNING(repo, { workstreamId: 'ws' }), kind: 'implementation' },
        { status: 'succeeded', summary: 'three' },
      ),
    );
    const summaries = (kind: 'planning' | 'implementation') => {
      const file = decodeContextFile(readJson(join(repo, 'data', 'context', `${kind}_context.json`)), kind);
      return E.isRight(file)
        ? file.right.contexts.map((context) => [context.key.workstreamId, context.workingSummary.text])
        : file.left.message;
    };
    expect(summaries('planning')).toEqual([
      ['ws', 'one'],
      ['ws-2', 'two'],
    ]);
    expect(summaries('implementation')).toEqual([['ws', 'three']]);
    expect(loadedOf(await loadContext(PLANNING(repo, { workstreamId: 'w' }))).stored).toBe(false);
    expect(readdirSync(join(repo, 'data', 'context')).sort()).toEqual([
      '.gitignore',
      'implementation_context.json',
      'implementation_context.md',
      'planning_context.json',
      'planning_context.md',
    ]);
  });

  it('after a failed run records the failure and leaves the last good summary intact', async () => {
    const repo = makeRepo();
    const good = loadedOf(await checkpoint(repo, 'Good summary.'));
    const failed = loadedOf(
      await writeContext(PLANNING(repo), {
        status: 'failed',
        failedStep: 'tests',
        error: '2 failing',
        nextAction: 'fix escapes',
      }),
    );
    expect(failed.context.workingSummary).toEqual(good.context.workingSummary);
    expect(failed.context.checkpoint).toEqual(good.context.checkpoint);
    expect(failed.context.lastRun).toEqual({
      status: 'failed',
      failedStep: 'tests',
      error: '2 failing',
      nextAction: 'fix escapes',
      at: 1_750_000_000_000,
    });
    expect(failed.context.recentFailures).toHaveLength(1);
  });

  it('gives a change of updateContext no author, since it asks git nothing: a rule the change pins names the pinner it gives', async () => {
    const repo = makeRepo();
    const authors: unknown[] = [];
    const pinned = loadedOf(
      await updateContext(PLANNING(repo), (context, at, snapshot, author) => {
        authors.push(author);
        return applyRunOutcome(
          context,
          { status: 'succeeded', pinRules: ['Run the linter first.'], pinnedBy: author ?? 'Alice Doe' },
          at,
          snapshot,
        );
      }),
    );
    // Called once against an empty file before the folder is made, then under the lock.
    expect(authors).toEqual([undefined, undefined]);
    expect(pinned.context.pinnedBy).toEqual({ 'Run the linter first.': 'Alice Doe' });
  });
  it('serializes writers within one process: no update is lost', async () => {
    const repo = makeRepo();
    const claims = Array.from({ length: 4 }, (_, i) => `looked at module ${i}`);
    const results = await Promise.all(
      claims.map((claim) => updateContext(PLANNING(repo), (context, at) => recordContextClaim(context, { claim, at }))),
    );
    expect(results.every(E.isRight)).toBe(true);
    const file = decodeContextFile(readJson(join(repo, ...CONTEXT_JSON)), 'planning');
    const ledger = E.isRight(file) ? file.right.contexts[0]!.evidenceLedger.map((entry) => entry.claim) : [];
    expect([...ledger].sort()).toEqual([...claims].sort());
  });
});

describe.concurrent('repository state beats memory', () => {
  it('marks the summary stale after a commit, and the bundle leads with the changed files', async () => {
    const repo = await checkpointedCopy();
    writeFiles(repo, {
      'src/parser.ts': 'export const parse = (text: string) => text.trim();\n',
      'src/lexer.ts': 'export {};\n',
    });
    commitAll(repo, 'lexer');
    const loaded = loadedOf(await loadContext(PLANNING(repo)));
    expect(loaded.status.stale).toBe(true);
    expect(loaded.status.reasons).toEqual(['head_moved', 'files_changed']);
    expect(loaded.status.changes).toEqual([
      { status: 'A', path: 'src/lexer.ts' },
      { status: 'M', path: 'src/parser.ts' },
    ]);
    expect(loaded.context.workingSummary.stale).toBe(true);
    const bundle = buildContextBundle(loaded, { kind: 'planning' }).text;
    expect(bundle.indexOf('- A src/lexer.ts')).toBeLessThan(bundle.indexOf('Parser skeleton in src/parser.ts.'));
    expect(bundle).toContain('## Working summary (STALE: verify against the repository before trusting it)');
  });

  it('marks the summary stale after an uncommitted edit, flags evidence whose file is gone, and is fresh once undone', async () => {
    const repo = await checkpointedCopy();
    const original = readFileSync(join(repo, 'src', 'parser.ts'), 'utf8');
    writeFiles(repo, { 'src/parser.ts': `${original}// edited\n` });
    const edited = loadedOf(await loadContext(PLANNING(repo)));
    expect(edited.status.reasons).toEqual(['files_changed']);
    expect(edited.status.changes).toEqual([{ status: 'M', path: 'src/parser.ts' }]);
    unlinkSync(join(repo, 'src', 'parser.ts'));
    const deleted = loadedOf(await loadContext(PLANNING(repo)));
    expect(deleted.status.missingEvidence).toEqual([{ claim: 'Implemented parse', path: 'src/parser.ts' }]);
    expect(deleted.status.changes).toEqual([{ status: 'D', path: 'src/parser.ts' }]);
    writeFiles(repo, { 'src/parser.ts': original });
    expect(loadedOf(await loadContext(PLANNING(repo))).status.stale).toBe(false);
  });

  it('stays fresh when only the context files, or the verified work itself, get committed', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'src/parser.ts': 'export const parse = () => 1;\n' });
    loadedOf(await checkpoint(repo, 'Verified with the edit in the working tree.'));
    commitAll(repo, 'work and context');
    const loaded = loadedOf(await loadContext(PLANNING(repo)));
    expect(loaded.status.stale).toBe(false);
    expect(buildContextBundle(loaded, { kind: 'planning' }).text).toMatch(
      /- checkpoint [0-9a-f]{7}, HEAD now [0-9a-f]{7}: tracked files unchanged, summary verified/u,
    );
  });

  it('says so outside a git repository, treats everything as stale and writes nothing there', async () => {
    const dir = tempDir();
    const loaded = loadedOf(await loadContext(PLANNING(dir)));
    expect(loaded.status).toMatchObject({ repository: 'none', stale: true, reasons: ['not_a_git_repository'] });
    expect(loaded.status.note).toMatch(/is not in a git repository$/u);
    expect(errorOf(await writeContext(PLANNING(dir), { status: 'succeeded', summary: 'x' })).code).toBe(
      'not_a_git_repository',
    );
    expect(
      errorOf(await writeContext(PLANNING(dir), { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n' })),
    ).toMatchObject({ code: 'not_a_git_repository', message: expect.stringMatching(/so nothing was written/u) });
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });
});

describe.concurrent('fields this version does not know', () => {
  it('are kept and written back by every write, where they stood; a merge keeps both sides', async () => {
    const repo = await checkpointedCopy();
    const file = join(repo, ...CONTEXT_JSON);
    type Doc = Record<string, unknown> & { contexts: Array<Record<string, Array<Record<string, unknown>> | any>> };
    const document = readJson(file) as Doc;
    const context = document.contexts[0]!;
    document['team_note'] = 'keep me';
    context['owner'] = { name: 'alice', since: [2026, 1] };
    context['checkpoint']['verified_by'] = 'ci';
    context['working_summary']['tokens'] = 12;
    context['open_decisions'][0]['rationale'] = 'because';
    context['checklist'][0]['estimate'] = '2h';
    context['evidence_ledger'][0]['reviewed'] = true;
    context['evidence_ledger'][0]['files'][0]['blob'] = 'abc';
    (document['repository'] as Record<string, unknown>)['checked'] = true;
    context['last_run']['exit_code'] = 1;
    context['recent_failures'][0]['exit_code'] = 1;
    writeFileSync(file, JSON.stringify(document, null, 2));
    const expected = {
      team_note: 'keep me',
      repository: { checked: true },
      contexts: [
        {
          owner: { name: 'alice', since: [2026, 1] },
          checkpoint: { verified_by: 'ci' },
          working_summary: { tokens: 12 },
          open_decisions: [{ id: 'D1', rationale: 'because' }, { id: 'D2' }],
          checklist: [{ text: 'Parse key = value lines', estimate: '2h' }],
          evidence_ledger: [
            { claim: 'Implemented parse', reviewed: true, files: [{ path: 'src/parser.ts', blob: 'abc' }] },
            { claim: 'Read the lexer' },
          ],
          last_run: { exit_code: 1 },
          recent_failures: [{ exit_code: 1 }],
        },
      ],
    };
    // A claim and a new decision: every field stays where it stood.
    loadedOf(
      await updateContext(PLANNING(repo), (stored, at) =>
        E.map((claimed: typeof stored) => ({
          ...claimed,
          openDecisions: [...claimed.openDecisions, { id: 'D2', text: 'Streams?', status: 'open' as const }],
        }))(recordContextClaim(stored, { claim: 'Read the lexer', at })),
      ),
    );
    expect(readJson(file)).toMatchObject(expected);
    const written = readJson(file) as Doc;
    expect(written.contexts[0]!['open_decisions'][1]).not.toHaveProperty('rationale');
    // A conflict of two sides that each added a field: the merge keeps both.
    const ours = { ...written, ours_only: 1 };
    const theirs = { ...written, theirs_only: 2 };
    const lines = (value: unknown) => JSON.stringify(value, null, 2).split('\n');
    writeFileSync(file, ['<<<<<<< HEAD', ...lines(ours), '=======', ...lines(theirs), '>>>>>>> other', ''].join('\n'));
    expect(loadedOf(await resolveContext(PLANNING(repo))).mergedConflict).toBeDefined();
    expect(readJson(file)).toMatchObject({ ...expected, ours_only: 1, theirs_only: 2 });
    // A new checkpoint replaces the checkpoint, the last run and a summary it rewrites, and with them their unknown fields.
    loadedOf(await checkpoint(repo, 'Parser done.'));
    const replaced = readJson(file) as Doc;
    expect(replaced.contexts[0]!['checkpoint']).not.toHaveProperty('verified_by');
    expect(replaced.contexts[0]!['working_summary']).not.toHaveProperty('tokens');
    expect(replaced.contexts[0]!['last_run']).not.toHaveProperty('exit_code');
    expect(replaced).toMatchObject({ team_note: 'keep me', contexts: [{ owner: { name: 'alice' } }] });
  });

  it('named __proto__, constructor or toString, are kept as fields of their own where they stood, and set no prototype', async () => {
    const repo = await checkpointedCopy();
    const file = join(repo, ...CONTEXT_JSON);
    type Fields = Record<string, any>;
    // Every place the test above keeps a field at, in the file as JSON.parse reads it.
    const places = (document: Fields): ReadonlyArray<Fields> => {
      const context = document['contexts'][0] as Fields;
      return [
        document,
        document['repository'],
        context,
        context['checkpoint'],
        context['working_summary'],
        context['open_decisions'][0],
        context['checklist'][0],
        context['evidence_ledger'][0],
        context['evidence_ledger'][0]['files'][0],
        context['last_run'],
        context['recent_failures'][0],
      ];
    };
    // Parsed, as a file is: JSON.parse makes `__proto__` a field of its own, where a literal would set the prototype.
    const odd = (place: number): Fields =>
      JSON.parse(
        `{"__proto__": {"polluted": ${place}}, "constructor": "c${place}", "toString": "t${place}"}`,
      ) as Fields;
    const ownFields = (value: object): Fields =>
      Object.fromEntries(
        Object.entries(odd(0)).map(([name]) => [name, Object.getOwnPropertyDescriptor(value, name)?.value]),
      );
    const document = readJson(file) as Fields;
    places(document).forEach((place, at) => {
      for (const [name, value] of Object.entries(odd(at)))
        Object.defineProperty(place, name, { value, enumerable: true, writable: true, configurable: true });
    });
    writeFileSync(file, JSON.stringify(document, null, 2));
    expect(readFileSync(file, 'utf8')).toContain('"__proto__": {');

    const loaded = loadedOf(await loadContext(PLANNING(repo)));
    expect(ownFields(loaded.context.unknownFields!)).toEqual(odd(2));
    expect(ownFields(loaded.context.openDecisions[0]!.unknownFields!)).toEqual(odd(5));
    expect(Object.getPrototypeOf(loaded.context.unknownFields)).toBe(Object.prototype);
    loadedOf(
      await updateContext(PLANNING(repo), (stored, at) => recordContextClaim(stored, { claim: 'Read the lexer', at })),
    );
    places(readJson(file) as Fields).forEach((place, at) => expect(ownFields(place)).toEqual(odd(at)));
    // A conflict whose sides both hold them: the merge keeps them too.
    const written = readJson(file) as Fields;
    const lines = (value: unknown) => JSON.stringify(value, null, 2).split('\n');
    const sides = [...lines({ ...written, ours_only: 1 }), '=======', ...lines({ ...written, theirs_only: 2 })];
    writeFileSync(file, ['<<<<<<< HEAD', ...sides, '>>>>>>> other', ''].join('\n'));
    expect(loadedOf(await resolveContext(PLANNING(repo))).mergedConflict).toBeDefined();
    places(readJson(file) as Fields).forEach((place, at) => expect(ownFields(place)).toEqual(odd(at)));
    expect(({} as Fields)['polluted']).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
  });

  it('holding a secret, are redacted from every read and refuse every write, as a secret anywhere else', async () => {
    const repo = await checkpointedCopy();
    const file = join(repo, ...CONTEXT_JSON);
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
    const document = readJson(file) as { contexts: Array<Record<string, unknown>> };
    document.contexts[0]!['deploy'] = { token };
    writeFileSync(file, JSON.stringify(document, null, 2));
    const loaded = loadedOf(await loadContext(PLANNING(repo)));
    expect(JSON.stringify(loaded)).not.toContain(token);
    expect(loaded.context.unknownFields).toEqual({ deploy: { token: '[redacted: a GitHub token]' } });
    expect(loaded.warnings.join('\n')).toMatch(/holds what looks like a GitHub token in contexts\[0\]\.deploy\.token/u);
    expect(errorOf(await writeContext(PLANNING(repo), { status: 'succeeded', summary: 'x' })).message).toMatch(
      /deploy\.token/u,
    );
  });
});

describe.concurrent('broken files', () => {
  it('reports a corrupt file on load and leaves it; a write moves it aside to a timestamped backup, never starting over silently', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'data/context/planning_context.json': 'garbage{' });
    const file = join(repo, ...CONTEXT_JSON);
    const before = listing(repo);
    const reported = errorOf(await loadContext(PLANNING(repo)));
    expect(reported).toEqual({
      code: 'corrupt',
      message:
        'data/context/planning_context.json: not valid JSON, the file is truncated or corrupt (unexpected text) (left as it is; the next write moves it aside)',
    });
    expect(listing(repo)).toEqual(before);
    const error = errorOf(
      await writeContext(PLANNING(repo), { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n' }),
    );
    expect(error.code).toBe('corrupt');
    expect(error.message).toMatch(
      /^data\/context\/planning_context\.json: not valid JSON, the file is truncated or corrupt \(unexpected text\); moved aside to data\/context\/planning_context\.json\.2025-06-15T15-06-40-000Z\.corrupt$/u,
    );
    expect(readFileSync(error.backup!, 'utf8')).toBe('garbage{');
    expect(existsSync(file)).toBe(false);
  });

  it('refuses a truncated file in a write too, moving it aside and writing nothing', async () => {
    const repo = makeRepo();
    const whole = JSON.stringify(
      encodeContextFile({
        kind: 'planning',
        contexts: [emptySharedContext({ repo: 'r', branch: 'main', workstreamId: 'default' })],
      }),
      null,
      2,
    );
    writeFiles(repo, { 'data/context/planning_context.json': whole });
    const file = join(repo, ...CONTEXT_JSON);
    writeFileSync(file, whole.slice(0, whole.length >> 1));
    const error = errorOf(
      await writeContext(PLANNING(repo), { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n' }),
    );
    expect(error.code).toBe('corrupt');
    expect(error.message).toContain('not valid JSON, the file is truncated or corrupt');
    expect(existsSync(file)).toBe(false);
    expect(readFileSync(error.backup!, 'utf8')).toBe(whole.slice(0, whole.length >> 1));
    // Two backups of the same moment do not overwrite each other.
    writeFileSync(file, '[');
    const again = errorOf(
      await writeContext(PLANNING(repo), { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n' }),
    );
    expect(again.backup).toBeDefined();
    expect(again.backup).not.toBe(error.backup);
  });

  it('reports a file nested deeper than any context file is as corrupt, never as a bug, on load and on a write', async () => {
    const repo = makeRepo();
    const stored = encodeContextFile({
      kind: 'planning',
      contexts: [emptySharedContext({ repo: 'r', branch: 'main', workstreamId: 'default' })],
    });
    // Valid JSON that the parser reads but that nothing can walk or write back: a hand edit's annotation.
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const text = JSON.stringify(stored, null, 2).replace(
      '"feature_request"',
      `"owner": ${deep},\n      "feature_request"`,
    );
    writeFiles(repo, { 'data/context/planning_context.json': text });
    const reported = errorOf(await loadContext(PLANNING(repo)));
    expect(reported).toEqual({
      code: 'corrupt',
      message:
        'data/context/planning_context.json: arrays and objects nested deeper than 512 levels (at line 11, column 525), which no file of the shared context holds: the file is corrupt (left as it is; the next write moves it aside)',
    });
    const error = errorOf(
      await writeContext(PLANNING(repo), { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n' }),
    );
    expect(error.code).toBe('corrupt');
    expect(readFileSync(error.backup!, 'utf8')).toBe(text);
    expect(existsSync(join(repo, ...CONTEXT_JSON))).toBe(false);
  });

  it('refuses a file from a newer schema version, naming it and leaving it as it is', async () => {
    const repo = makeRepo();
    writeFiles(repo, {
      'data/context/planning_context.json': JSON.stringify({
        schema_version: 3,
        kind: 'planning',
        contexts: [{ whatever: true }],
      }),
    });
    const before = listing(repo);
    for (const result of [
      await loadContext(PLANNING(repo)),
      await writeContext(PLANNING(repo), { status: 'succeeded', summary: 'x' }),
    ]) {
      const error = errorOf(result);
      expect(error.code).toBe('future_version');
      expect(error.message).toMatch(
        /^data\/context\/planning_context\.json: written with schema version 3, newer than the 1/u,
      );
    }
    expect(listing(repo)).toEqual(before);
  });

  it('migrates a draft (version 0) file on load and writes it back as version 1', async () => {
    const repo = makeRepo();
    const name = repo.split(/[\\/]/u).pop()!;
    writeFiles(repo, {
      'data/context/planning_context.json': JSON.stringify({
        key: { repo: name, branch: 'main', workstream_id: 'default' },
        feature_request: 'Passkeys',
        working_summary: { text: 'Drafted.', updated_at: '2026-03-01T10:00:00Z', stale: false },
      }),
    });
    const loaded = loadedOf(await loadContext(PLANNING(repo)));
    expect(loaded.stored).toBe(true);
    expect(loaded.context.featureRequest).toBe('Passkeys');
    loadedOf(await writeContext(PLANNING(repo), { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n' }));
    expect(readJson(join(repo, ...CONTEXT_JSON))).toMatchObject({
      schema_version: 1,
      contexts: [{ feature_request: 'Passkeys' }],
    });
  });

  it("migrates the spec's draft example, which declares schema version 1, instead of moving it aside as corrupt", async () => {
    const repo = makeRepo();
    const name = repo.split(/[\\/]/u).pop()!;
    const head = git(repo, 'rev-parse', 'HEAD').trim();
    // The layout of spec 004's "Context Schema (draft)", its "schema_version": 1 included.
    writeFiles(repo, {
      'data/context/planning_context.json': JSON.stringify({
        schema_version: 1,
        key: { repo: name, branch: 'main', workstream_id: 'default' },
        feature_request: 'Parse INI files',
        checkpoint: { git_head: head, tracked_files_hash: 'abc', summary_hash: 'def' },
        pinned_rules: ['Repo state is truth'],
        working_summary: { text: 'Lexer done', updated_at: '2026-01-01T00:00:00Z', stale: false },
        open_decisions: [{ id: 'D1', text: 'Duplicate keys?', status: 'open' }],
        evidence_ledger: [{ claim: 'lexer implemented', files: [{ path: 'src/parser.ts', lines: 'L1' }] }],
        cli_sessions: { codex: { id: 'abc', local_path: '/tmp/x' } },
        last_run: { status: 'failed', error: 'boom', next_action: 'fix' },
        team_note: 'kept',
      }),
    });
    const loaded = loadedOf(await loadContext(PLANNING(repo)));
    expect(loaded.stored).toBe(true);
    expect(loaded.context).toMatchObject({
      featureRequest: 'Parse INI files',
      workingSummary: { text: 'Lexer done', stale: true },
      openDecisions: [{ id: 'D1', text: 'Duplicate keys?', status: 'open' }],
      lastRun: { status: 'failed', error: 'boom', nextAction: 'fix' },
      unknownFields: { team_note: 'kept' },
    });
    loadedOf(await writeContext(PLANNING(repo), { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n' }));
    expect(readdirSync(join(repo, 'data', 'context')).filter((entry) => entry.endsWith('.corrupt'))).toEqual([]);
    const written = readJson(join(repo, ...CONTEXT_JSON));
    expect(written).toMatchObject({
      schema_version: 1,
      kind: 'planning',
      contexts: [{ feature_request: 'Parse INI files', team_note: 'kept', open_decisions: [{ id: 'D1' }] }],
    });
    expect(JSON.stringify(written)).not.toContain('cli_sessions');
  });
});

describe.concurrent('the feature flag', () => {
  it('off, every function is a no-op that touches no file', async () => {
    const repo = makeRepo();
    const before = listing(repo);
    const { enabled: _, ...base } = PLANNING(repo);
    const offs: ReadonlyArray<ContextOptions> = [
      { ...base, enabled: false },
      { ...base, env: { SHARED_CONTEXT_ENABLED: 'false' } },
    ];
    expect(await loadContext({ ...base, env: {} })).toEqual(E.right(O.none));
    for (const options of offs) {
      expect(await loadContext(options)).toEqual(E.right(O.none));
      expect(await writeContext(options, { status: 'succeeded', summary: 'x' })).toEqual(E.right(O.none));
      expect(await writeContext(options, { status: 'failed', failedStep: 's', error: 'e', nextAction: 'n' })).toEqual(
        E.right(O.none),
      );
      expect(await updateContext(options, (context) => E.right(context))).toEqual(E.right(O.none));
    }
    expect(listing(repo)).toEqual(before);
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all')).toBe('');
  });

  it('is read from the environment, then from the config file at the repository root', async () => {
    const repo = makeRepo();
    const { enabled: _, ...fromEnv } = PLANNING(repo, { env: { SHARED_CONTEXT_ENABLED: 'true' } });
    expect(loadedOf(await loadContext(fromEnv)).flag).toEqual({ enabled: true, source: 'env' });
    writeFiles(repo, { 'fact-tracker.config.json': '{"sharedContext": {"enabled": true}}' });
    expect(loadedOf(await loadContext({ ...fromEnv, env: {} })).flag).toEqual({ enabled: true, source: 'config' });
    expect(await loadContext({ ...fromEnv, env: { SHARED_CONTEXT_ENABLED: '0' } })).toEqual(E.right(O.none));
    writeFiles(repo, { 'fact-tracker.config.json': '{"sharedContext": "yes"}' });
    expect(errorOf(await loadContext({ ...fromEnv, env: {} }))).toEqual({
      code: 'config',
      message: 'fact-tracker.config.json: sharedContext.enabled must be true or false',
    });
  });
});

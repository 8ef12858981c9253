/**
 * The pure parts behind issue 13: repository identities and key resolution, key-part
 * sanitizing, conflict markers and the merge of both sides. No file or process here.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sanitizeKeyPart, hasControlCharacters } from '../../src/context/key.js';
import { splitConflictMarkers } from '../../src/context/conflictMarkers.js';
import { mergeContextFiles, mergeContextFilesReported, mergeContexts } from '../../src/context/merge.js';
import {
  CONTEXT_LIMITS,
  type ContextFile,
  DECISION_STATUSES,
  type RepositoryIdentity,
  type SharedContext,
} from '../../src/context/model.js';
import { identifyRepository, normalizeRemoteUrl, resolveRepositoryKey } from '../../src/context/repository.js';
import { emptySharedContext } from '../../src/context/index.js';
import { contextArb } from './arbitraries.js';

const at = (repo: string, workstreamId = 'default'): SharedContext =>
  emptySharedContext({ repo, branch: 'main', workstreamId });

describe('repository identity', () => {
  it.each([
    ['https://github.com/acme/app.git', 'github.com/acme/app'],
    ['https://ci:t0ken@GitHub.COM:443/acme/app.git/', 'github.com/acme/app'],
    ['git@github.com:acme/app.git', 'github.com/acme/app'],
    ['ssh://git@github.com:22/acme/app', 'github.com/acme/app'],
    ['git://example.org//team/./app.git', 'example.org/team/app'],
  ])('normalizes %s', (url, id) => {
    expect(normalizeRemoteUrl(url)).toBe(id);
  });

  it.each(['/srv/git/app.git', './app', 'C:\\repos\\app', 'file:///srv/git/app.git', '', 'https://host/'])(
    'takes no identity from the local or empty remote %j',
    (url) => {
      expect(normalizeRemoteUrl(url)).toBeUndefined();
    },
  );

  it('prefers the origin, then the smallest first commit, then the folder', () => {
    const roots = ['f'.repeat(40), `0${'a'.repeat(39)}`];
    expect(identifyRepository({ origin: 'git@github.com:acme/app.git', rootCommits: roots, folder: 'x' })).toEqual({
      id: 'github.com/acme/app',
      source: 'origin',
    });
    expect(identifyRepository({ origin: '/local/path', rootCommits: roots, folder: 'x' })).toEqual({
      id: `first-commit:0${'a'.repeat(11)}`,
      source: 'first_commit',
    });
    expect(identifyRepository({ rootCommits: [], folder: 'my\u202Eapp' })).toEqual({
      id: 'my\\u{202E}app',
      source: 'folder',
    });
  });

  it('resolves the key in a file: recorded, adopted, migrated', () => {
    const origin = { id: 'github.com/acme/app', source: 'origin' } as const;
    const fork = { id: 'github.com/me/app', source: 'origin' } as const;
    const empty: ContextFile = { kind: 'planning', contexts: [] };
    expect(resolveRepositoryKey(empty, origin)).toEqual({ repo: origin.id, file: { ...empty, repository: origin } });
    const recorded: ContextFile = { kind: 'planning', repository: origin, contexts: [at(origin.id)] };
    expect(resolveRepositoryKey(recorded, origin)).toEqual({ repo: origin.id, file: recorded });
    const adopted = resolveRepositoryKey(recorded, fork);
    expect(adopted.repo).toBe(origin.id);
    expect(adopted.file).toBe(recorded);
    expect(adopted.note).toMatch(/^using the context recorded for repository "github\.com\/acme\/app"/u);
    const legacy: ContextFile = { kind: 'planning', contexts: [at('app-folder'), at('app-folder', 'ws')] };
    const migrated = resolveRepositoryKey(legacy, origin);
    expect(migrated.repo).toBe(origin.id);
    expect(migrated.file.repository).toEqual(origin);
    expect(migrated.file.contexts.map((context) => context.key.repo)).toEqual([origin.id, origin.id]);
    const byFolder: ContextFile = {
      kind: 'planning',
      repository: { id: 'app', source: 'folder' },
      contexts: [at('app')],
    };
    expect(resolveRepositoryKey(byFolder, origin).file.contexts[0]!.key.repo).toBe(origin.id);
    const mixed: ContextFile = { kind: 'planning', contexts: [at('one'), at('two')] };
    expect(resolveRepositoryKey(mixed, origin)).toMatchObject({
      repo: origin.id,
      note: expect.stringMatching(/2 other/u),
    });
  });

  it('adopts the contexts a merge brought in under a folder name after the file was re-keyed, whoever reads it', () => {
    const first = { id: 'first-commit:a96f77155602', source: 'first_commit' } as const;
    // A shallow clone's workstream, merged by git without a conflict into a file a full clone re-keyed.
    const merged: ContextFile = { kind: 'planning', repository: first, contexts: [at(first.id), at('S', 'web')] };
    const full = resolveRepositoryKey(merged, first);
    expect(full.repo).toBe(first.id);
    expect(full.file.contexts.map((context) => [context.key.repo, context.key.workstreamId])).toEqual([
      [first.id, 'default'],
      [first.id, 'web'],
    ]);
    expect(full.note).toBe(
      'contexts recorded under the folder name "S" are keyed by "first-commit:a96f77155602" (first commit) from now on',
    );
    // The shallow clone itself uses the recorded identity, and reads the workstream there too.
    const shallow = resolveRepositoryKey(merged, { id: 'S', source: 'folder' }, { record: false });
    expect(shallow.repo).toBe(first.id);
    expect(shallow.file.contexts.every((context) => context.key.repo === first.id)).toBe(true);
    // An origin (host/path) of a fork, another repository's key, is never adopted; nor does a folder identity adopt any.
    const fork: ContextFile = {
      kind: 'planning',
      repository: first,
      contexts: [at(first.id), at('github.com/me/app')],
    };
    expect(resolveRepositoryKey(fork, first).file).toBe(fork);
    const byFolder: ContextFile = {
      kind: 'planning',
      repository: { id: 'F', source: 'folder' },
      contexts: [at('F'), at('S')],
    };
    expect(resolveRepositoryKey(byFolder, { id: 'F', source: 'folder' }).file).toBe(byFolder);
  });
});

describe('key parts from names the repository chose', () => {
  it('for any name, the sanitized part is within the limit, visible, and names that differ stay apart', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 400 }),
        fc.string({ unit: 'binary', maxLength: 400 }),
        (a, b) => {
          const [x, y] = [sanitizeKeyPart(a), sanitizeKeyPart(b)];
          expect(x.length).toBeGreaterThan(0);
          expect(x.length).toBeLessThanOrEqual(CONTEXT_LIMITS.keyPart);
          expect(hasControlCharacters(x)).toBe(false);
          if (a !== b && a.trim() !== '' && b.trim() !== '') expect(x).not.toBe(y);
        },
      ),
    );
  });
});

describe('conflict markers', () => {
  it('splits both sides, with or without the diff3 base, and gives the base when every conflict shows it', () => {
    const text = 'a\n<<<<<<< HEAD\nours\n||||||| base\nold\n=======\ntheirs\n>>>>>>> other\nz\n';
    // Each line of a side is placed on its line of the file: z is line 9 with the base shown.
    const fileLines = { ours: [1, 3, 9], theirs: [1, 7, 9] };
    expect(splitConflictMarkers(text)).toEqual({
      ours: 'a\nours\nz\n',
      theirs: 'a\ntheirs\nz\n',
      base: 'a\nold\nz\n',
      fileLines,
    });
    expect(splitConflictMarkers(text.replace('||||||| base\nold\n', ''))).toEqual({
      ours: 'a\nours\nz\n',
      theirs: 'a\ntheirs\nz\n',
      fileLines: { ours: [1, 3, 7], theirs: [1, 5, 7] },
    });
    expect(splitConflictMarkers('plain\n')).toBeUndefined();
    expect(splitConflictMarkers('<<<<<<< HEAD\nunterminated\n')).toBeUndefined();
  });

  it('a feature request of invisible characters only on the newer side is none: the older side’s is kept, as for a blank one', () => {
    const key = { repo: 'r', branch: 'main', workstreamId: 'ws' };
    const older = { ...emptySharedContext(key), featureRequest: 'A config parser' };
    const newer = {
      ...emptySharedContext(key),
      featureRequest: '\u200b\u2060',
      workingSummary: { text: 'later', stale: false, updatedAt: 5 },
    };
    expect(mergeContexts(older, newer).featureRequest).toBe('A config parser');
    expect(mergeContexts(newer, older).featureRequest).toBe('A config parser');
  });

  it('merging a context with itself keeps what it holds, and merging two keeps every decision and claim of both under unique ids', () => {
    fc.assert(
      fc.property(contextArb, contextArb, (a, b) => {
        const one = { ...b, key: a.key };
        const merged = mergeContexts(a, one);
        for (const side of [a, one]) {
          for (const decision of side.openDecisions)
            expect(merged.openDecisions.map((d) => d.text)).toContain(decision.text);
          for (const claim of side.evidenceLedger)
            expect(merged.evidenceLedger.map((c) => c.claim)).toContain(claim.claim);
        }
        expect(new Set(merged.openDecisions.map((d) => d.id)).size).toBe(merged.openDecisions.length);
        const self = mergeContextFiles({ kind: 'planning', contexts: [a] }, { kind: 'planning', contexts: [a] });
        expect(self.contexts).toHaveLength(1);
        const sorted = <T>(items: ReadonlyArray<T>): string[] => items.map((item) => JSON.stringify(item)).sort();
        expect(sorted(self.contexts[0]!.openDecisions)).toEqual(sorted(a.openDecisions));
        expect(sorted(self.contexts[0]!.recentFailures)).toEqual(sorted(a.recentFailures));
      }),
      { numRuns: 100 },
    );
  });
});

/** The contexts of one side, each under a key of its own, all keyed by `identity`. */
const sideArb = (identity: RepositoryIdentity): fc.Arbitrary<ContextFile> =>
  fc
    .uniqueArray(contextArb, {
      maxLength: 4,
      selector: (context) => `${context.key.branch}\u0000${context.key.workstreamId}`,
    })
    .map((contexts) => ({
      kind: 'planning' as const,
      repository: identity,
      contexts: contexts.map((context) => ({ ...context, key: { ...context.key, repo: identity.id } })),
    }));

const textsBy = (file: ContextFile, pick: (context: SharedContext) => ReadonlyArray<string>): Set<string> =>
  new Set(
    file.contexts.flatMap((context) =>
      pick(context).map((text) => `${context.key.branch} ${context.key.workstreamId} ${text}`),
    ),
  );

describe('merging sides that identified the repository differently (issue 28)', () => {
  const firstCommit: RepositoryIdentity = { id: 'first-commit:0123456789ab', source: 'first_commit' };
  const origin: RepositoryIdentity = { id: 'github.com/acme/app', source: 'origin' };

  it('every context ends under the stronger identity, each decision and claim of both is kept or listed, whichever side is ours', () => {
    fc.assert(
      fc.property(sideArb(firstCommit), sideArb(origin), (a, b) => {
        for (const [ours, theirs] of [
          [a, b],
          [b, a],
        ] as const) {
          const merged = mergeContextFilesReported(ours, theirs);
          expect(merged.file.repository).toEqual(origin);
          expect(merged.identity).toEqual({ kept: origin, rekeyed: firstCommit });
          expect(merged.file.contexts.every((context) => context.key.repo === origin.id)).toBe(true);
          const keys = merged.file.contexts.map((context) => `${context.key.branch} ${context.key.workstreamId}`);
          expect(new Set(keys).size).toBe(keys.length);
          const dropped = new Set(
            merged.dropped.map((entry) => `${entry.key.branch} ${entry.key.workstreamId} ${entry.text}`),
          );
          const decisions = textsBy(merged.file, (context) => context.openDecisions.map((decision) => decision.text));
          const claims = textsBy(merged.file, (context) => context.evidenceLedger.map((claim) => claim.claim));
          for (const side of [ours, theirs]) {
            for (const text of textsBy(side, (context) => context.openDecisions.map((decision) => decision.text)))
              expect(decisions.has(text) || [...dropped].some((entry) => entry.endsWith(text))).toBe(true);
            for (const text of textsBy(side, (context) => context.evidenceLedger.map((claim) => claim.claim)))
              expect(claims.has(text) || dropped.has(text)).toBe(true);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('over the decision cap, a merge keeps at most the cap, drops no open decision while it keeps a settled one, and lists the rest', () => {
    const decisionsArb = (side: string) =>
      fc
        .array(fc.constantFrom(...DECISION_STATUSES), { minLength: 30, maxLength: CONTEXT_LIMITS.decisions })
        .map((statuses) => statuses.map((status, i) => ({ id: `D${i + 1}`, text: `${side} ${i}`, status })));
    fc.assert(
      fc.property(decisionsArb('ours'), decisionsArb('theirs'), (oursDecisions, theirsDecisions) => {
        const side = (openDecisions: SharedContext['openDecisions']): ContextFile => ({
          kind: 'planning',
          contexts: [{ ...at('demo'), openDecisions }],
        });
        const merged = mergeContextFilesReported(side(oursDecisions), side(theirsDecisions));
        const kept = merged.file.contexts[0]!.openDecisions;
        expect(kept.length).toBe(Math.min(CONTEXT_LIMITS.decisions, oursDecisions.length + theirsDecisions.length));
        const listed = merged.dropped.filter((entry) => entry.what === 'decision');
        expect(kept.length + listed.length).toBe(oursDecisions.length + theirsDecisions.length);
        if (kept.some((decision) => decision.status !== 'open'))
          expect(listed.every((entry) => !entry.text.includes('[open]'))).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});

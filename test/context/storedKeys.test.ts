/**
 * Keys as the files store them: a key part stored as it was typed (by hand, by another tool,
 * by a version that did not normalize: `api `, a decomposed `café`) is read normalized, so the
 * key a command gives finds it and a write updates it in place instead of adding a second
 * context; two entries that name one key once normalized are both kept apart, never one lost.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { describe, expect, it } from 'vitest';
import { selectContext } from '../../src/context/contextFile.js';
import { normalizeKeyPart, sanitizeKeyPart } from '../../src/context/key.js';
import type { ContextFile } from '../../src/context/model.js';
import { decodeContextFile, encodeContextFile } from '../../src/context/schema.js';
import { decodeSessionsFile } from '../../src/context/sessionsFile.js';
import { emptySharedContext } from '../../src/context/update.js';
import { expectOneLineFailure, runIn } from './cliRun.js';
import { commitAll, copiesOf, git, makeRepo, readJson } from './repo.js';

const CONTEXT_JSON = ['data', 'context', 'planning_context.json'];
const SLOW = { timeout: 120_000 } as const;

interface StoredKey {
  repo: string;
  branch: string;
  workstream_id: string;
}
interface Stored {
  contexts: Array<{ key: StoredKey; working_summary: { text: string } }>;
}

/** A file of one context per workstream id, each stored under the spelling given. */
const fileStoring = (...workstreams: ReadonlyArray<string>): unknown => {
  const document = encodeContextFile({
    kind: 'planning',
    contexts: workstreams.map((id, i) => emptySharedContext({ repo: 'demo', branch: 'main', workstreamId: `w${i}` })),
  }) as unknown as Stored;
  document.contexts.forEach((context, i) => {
    context.key.workstream_id = workstreams[i]!;
  });
  return document;
};

const decoded = (document: unknown): ContextFile => {
  const file = decodeContextFile(document, 'planning');
  if (E.isLeft(file)) throw new Error(file.left.message);
  return file.right;
};

const found = (file: ContextFile, workstreamId: string): boolean =>
  O.isSome(selectContext(file, { repo: 'demo', branch: 'main', workstreamId: normalizeKeyPart(workstreamId) }));

/** Spellings of one name that only look alike: padded, with runs of whitespace, decomposed. */
const spellingArb = (name: string): fc.Arbitrary<string> =>
  fc
    .record({
      before: fc.constantFrom('', ' ', '  ', '\t'),
      after: fc.constantFrom('', ' ', '\u00a0', ' \t'),
      inner: fc.constantFrom(' ', '  ', '\t'),
      form: fc.constantFrom('NFC', 'NFD'),
    })
    .map(({ before, after, inner, form }) => `${before}${name.replace(/ /gu, inner).normalize(form)}${after}`);

describe('stored keys are read normalized', () => {
  it('a key stored as typed (api with a trailing space, a decomposed café) is found by the key a command gives, and written back normalized', () => {
    const file = decoded(fileStoring('api ', 'cafe\u0301', ' web  ui '));
    expect(file.quarantined).toBeUndefined();
    for (const typed of ['api', 'api ', 'caf\u00e9', 'cafe\u0301', 'web ui']) expect(found(file, typed)).toBe(true);
    const written = encodeContextFile(file) as unknown as Stored;
    expect(written.contexts.map((context) => context.key.workstream_id)).toEqual(['api', 'caf\u00e9', 'web ui']);
  });

  it('a context stored under any spelling of a name is found by every spelling of it a command may type', () => {
    const name = fc
      .array(fc.constantFrom('a', 'e', 'é', 'e\u0301', 'ñ', ' ', '-'), { minLength: 1, maxLength: 8 })
      .map((parts) => parts.join(''))
      .filter((text) => normalizeKeyPart(text) !== '');
    fc.assert(
      fc.property(
        name.chain((text) => fc.tuple(spellingArb(text), spellingArb(text))),
        ([stored, typed]) => found(decoded(fileStoring(stored)), typed),
      ),
    );
  });

  it('two entries that name one key once normalized are both kept apart, untouched, and the others served', () => {
    const document = fileStoring('api', 'api ', 'web') as Stored;
    const file = decoded(document);
    expect(file.contexts.map((context) => context.key.workstreamId)).toEqual(['web']);
    expect(file.quarantined?.map((entry) => entry.problem)).toEqual([
      expect.stringMatching(/^contexts\[0\]\.key: names the same workstream as contexts\[1\] once read normalized/u),
      expect.stringMatching(/^contexts\[1\]\.key: names the same workstream as contexts\[0\] once read normalized/u),
    ]);
    // Written back exactly as they were read, so nothing either held is lost.
    const written = encodeContextFile(file) as unknown as Stored;
    expect(written.contexts.slice(1)).toEqual(document.contexts.slice(0, 2));
  });

  it('tool sessions stored under two spellings of one key are united, the normalized one winning a tool both hold', () => {
    const key = (workstream_id: string) => ({ repo: 'demo', branch: 'main', workstream_id });
    const sessions = decodeSessionsFile(
      {
        schema_version: 1,
        kind: 'planning',
        sessions: [
          { key: key('api'), cli_sessions: { codex: { id: 'new' } } },
          { key: key('api '), cli_sessions: { codex: { id: 'old' }, gemini: { id: 'g' } } },
        ],
      },
      'planning',
    );
    expect(sessions).toEqual(
      E.right({
        kind: 'planning',
        sessions: [
          {
            key: { repo: 'demo', branch: 'main', workstreamId: 'api' },
            cliSessions: { codex: { id: 'new' }, gemini: { id: 'g' } },
          },
        ],
      }),
    );
  });

  it('a branch or folder name from the repository is keyed in the same form as a typed one', () => {
    expect(sanitizeKeyPart('cafe\u0301')).toBe('caf\u00e9');
    expect(sanitizeKeyPart(' my  project ')).toBe('my project');
    expect(sanitizeKeyPart('fix-\u202egnp.exe')).toBe('fix-\\u{202E}gnp.exe');
  });
});

/** A repository whose file stores the contexts of `api` and `café` under the spellings given. */
const repoStoring = async (api: string, cafe: string): Promise<string> => {
  const repo = makeRepo();
  for (const [workstream, summary] of [
    ['api', 'The api summary.'],
    ['caf\u00e9', 'The cafe summary.'],
  ] as const)
    expect(
      (await runIn(repo, ['context', 'checkpoint', '--workstream', workstream, '--summary', summary])).status,
    ).toBe(0);
  const file = join(repo, ...CONTEXT_JSON);
  const stored = readJson(file) as Stored;
  for (const context of stored.contexts) context.key.workstream_id = context.key.workstream_id === 'api' ? api : cafe;
  writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`);
  return repo;
};

const workstreamsIn = (repo: string): string[] =>
  (readJson(join(repo, ...CONTEXT_JSON)) as Stored).contexts.map((context) => context.key.workstream_id);

describe('the CLI on a file that stores keys as typed', SLOW, () => {
  it('show finds "api " and a decomposed café by their typed names, and a write updates each in place', async () => {
    const repo = await repoStoring('api ', 'cafe\u0301');
    const show = await runIn(repo, ['context', 'show', '--workstream', 'api']);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain('The api summary.');
    expect((await runIn(repo, ['context', 'show', '--workstream', 'caf\u00e9'])).stdout).toContain('The cafe summary.');
    for (const [workstream, decision] of [
      ['api', 'Use REST'],
      ['caf\u00e9', 'Use tea'],
    ])
      expect(
        (await runIn(repo, ['context', 'checkpoint', '--workstream', workstream!, '--decision', decision!])).status,
      ).toBe(0);
    // One context each, keyed as typed names are, with what it held and the new decision.
    expect(workstreamsIn(repo)).toEqual(['api', 'caf\u00e9']);
    const after = (await runIn(repo, ['context', 'show', '--workstream', 'api '])).stdout;
    expect(after).toContain('The api summary.');
    expect(after).toContain('Use REST');
  });

  it('a file holding both "api" and "api " refuses that workstream in one line, serves the others, and writes nothing', async () => {
    const repo = await repoStoring('api ', 'caf\u00e9');
    const file = join(repo, ...CONTEXT_JSON);
    const stored = readJson(file) as Stored;
    const copy = structuredClone(stored.contexts[0]!);
    copy.key.workstream_id = 'api';
    copy.working_summary.text = 'Another api summary.';
    stored.contexts.push(copy);
    writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`);
    const before = readFileSync(file, 'utf8');
    for (const argv of [
      ['context', 'show', '--workstream', 'api'],
      ['context', 'checkpoint', '--workstream', 'api', '--decision', 'Use REST'],
    ])
      expectOneLineFailure(
        await runIn(repo, argv),
        /workstream api \(branch main\) is kept apart and left untouched \(contexts\[\d\]\.key: names the same workstream as contexts\[\d\] once read normalized .*merge them into one entry, or rename all but one\)/u,
      );
    expect(readFileSync(file, 'utf8')).toBe(before);
    const cafe = await runIn(repo, ['context', 'checkpoint', '--workstream', 'caf\u00e9', '--decision', 'Use tea']);
    expect(cafe.status).toBe(0);
    expect(cafe.stderr).toMatch(/warning: .*workstream api \(branch main\) is kept apart, untouched and not served/u);
    // Both api entries are still there, as they were.
    const apis = (readJson(file) as Stored).contexts.filter((context) => context.key.workstream_id.trim() === 'api');
    expect(apis).toHaveLength(2);
    expect(apis).toEqual(expect.arrayContaining([stored.contexts[0], copy]));
  });

  it('a branch git names in decomposed form is keyed as the composed name --branch gives', async () => {
    const repo = makeRepo();
    git(repo, 'checkout', '-q', '-b', 'cafe\u0301');
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'On the branch.'])).status).toBe(0);
    git(repo, 'checkout', '-q', 'main');
    const show = await runIn(repo, ['context', 'show', '--branch', 'caf\u00e9']);
    expect(show.stdout).toContain('On the branch.');
  });
});

/** A new repository with a checkpoint recorded in each of `workstreams`, on main. */
const repoWithWorkstreams = async (...workstreams: ReadonlyArray<string>): Promise<string> => {
  const repo = makeRepo();
  for (const workstream of workstreams)
    expect((await runIn(repo, ['context', 'checkpoint', '--workstream', workstream, '--summary', 'S.'])).status).toBe(
      0,
    );
  return repo;
};

/** A copy of one `repoWithWorkstreams('api', 'web')` repository, made once per test file for the two tests of it. */
const apiAndWebCopy = copiesOf(() => repoWithWorkstreams('api', 'web'));

describe('the CLI on an entry kept apart beside a served entry of its very key', SLOW, () => {
  it('says to merge the two rather than fix the broken one, and a write on the hand-fixed file leaves it where it is', async () => {
    const repo = await apiAndWebCopy();
    const file = join(repo, ...CONTEXT_JSON);
    const stored = readJson(file) as { contexts: Array<Record<string, unknown>> };
    const broken = { ...stored.contexts[0]!, open_decisions: [{ id: 'D1', text: 'Use REST', status: 'bogus' }] };
    writeFileSync(file, `${JSON.stringify({ ...stored, contexts: [...stored.contexts, broken] }, null, 2)}\n`);
    const warned = await runIn(repo, ['context', 'show', '--workstream', 'web']);
    expect(warned.status).toBe(0);
    expect(warned.stderr).toContain('contexts[2].open_decisions[0].status');
    expect(warned.stderr).toContain('do not fix this one in place');
    expectOneLineFailure(
      await runIn(repo, ['context', 'show', '--workstream', 'api']),
      /merge the two into one entry, or remove one, by hand, then try again\n$/u,
    );
    // Fixed in place as a plain "fix it by hand" would suggest: the file now holds the key twice.
    const fixed = readFileSync(file, 'utf8').replace('"bogus"', '"open"');
    writeFileSync(file, fixed);
    const write = await runIn(repo, ['context', 'checkpoint', '--workstream', 'web', '--summary', 'T.']);
    expectOneLineFailure(
      write,
      /entries 0 and 2 share one key \(workstream api, branch main\); nothing was written and the file was left as it is: merge the two entries into one, or remove one/u,
    );
    expect(readFileSync(file, 'utf8')).toBe(fixed);
    expect(readdirSync(join(repo, 'data', 'context')).filter((name) => name.endsWith('.corrupt'))).toEqual([]);
  });
});

/** The entry positions a warning about two entries of one key names: `[itself, the other]`. */
const sharedKeyPositions = (stderr: string): Array<[number, number]> =>
  [...stderr.matchAll(/contexts\[(\d+)\]\.key: names the same workstream as contexts\[(\d+)\]/gu)].map(
    ([, own, other]) => [Number(own), Number(other)],
  );

describe('resolve on a conflicted file holding "api" beside "api "', SLOW, () => {
  it('names the two entries kept apart by their places in the file it wrote, as show then does, not by those of a side of the conflict', async () => {
    const repo = await apiAndWebCopy();
    const file = join(repo, ...CONTEXT_JSON);
    const stored = readJson(file) as Stored;
    const twin = structuredClone(stored.contexts.find((context) => context.key.workstream_id === 'api')!);
    twin.key.workstream_id = 'api ';
    twin.working_summary.text = 'Twin summary.';
    writeFileSync(file, `${JSON.stringify({ ...stored, contexts: [...stored.contexts, twin] }, null, 2)}\n`);
    commitAll(repo, 'api twice');
    // Their side adds a workstream that sorts first, so the entries kept apart stand one place later there.
    git(repo, 'checkout', '-q', '-b', 'side');
    for (const argv of [
      ['--workstream', 'aaa', '--summary', 'A0'],
      ['--workstream', 'web', '--decision', 'Side question?'],
    ])
      expect((await runIn(repo, ['context', 'checkpoint', '--branch', 'main', ...argv])).status).toBe(0);
    commitAll(repo, 'side');
    git(repo, 'checkout', '-q', 'main');
    expect(
      (await runIn(repo, ['context', 'checkpoint', '--workstream', 'web', '--decision', 'Main question?'])).status,
    ).toBe(0);
    commitAll(repo, 'main');
    expect(() => git(repo, 'merge', '-q', '--no-edit', 'side')).toThrow();
    expect(readFileSync(file, 'utf8')).toMatch(/^<{7} HEAD$/mu);
    const resolved = await runIn(repo, ['context', 'resolve']);
    expect(resolved.status).toBe(0);
    const warned = sharedKeyPositions(resolved.stderr);
    expect(warned).toHaveLength(2);
    // Each place named holds an api entry in the file as resolve left it on disk.
    const written = (readJson(file) as Stored).contexts.map((context) => context.key.workstream_id);
    expect(written.map((id) => id.trim())).toEqual(['aaa', 'web', 'api', 'api']);
    expect(warned).toEqual([
      [2, 3],
      [3, 2],
    ]);
    const shown = await runIn(repo, ['context', 'show', '--workstream', 'web']);
    expect(sharedKeyPositions(shown.stderr)).toEqual(warned);
  });
});

/**
 * `decodeState` over documents no JSON text gives: it answers each with a value (`invalid_state`
 * when it cannot be read), never an exception. And the store's bound, which it reads only as
 * `encodeState` writes it, and its times, which it reads only within the years an event's can be.
 */
import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSavedState } from '../../src/cli/source.js';
import {
  DEFAULT_MAX_VALID_FACTS,
  addFacts,
  decodeState,
  emptyFactStore,
  encodeState,
  initialTrackerState,
  invalidate,
  makeFact,
  parseIsoTime,
  recordTaskPrompt,
  replayHistory,
  selectAllFacts,
  selectValidFacts,
  trackerTransition,
} from '../../src/index.js';
import { createFactId, type SessionFact } from '../../src/core/fact.js';
import type { FactStore } from '../../src/core/store/state.js';
import { respelledPairs } from '../../src/saved/respelledPairs.js';
import { fileFact, storeArb } from '../arbitraries.js';
import { implementer, reviewer } from '../fixtures/results.js';
import { SECRETS } from '../fixtures/secrets.js';

const history = [
  { type: 'dispatch', role: 'implementer', taskId: '1', result: implementer('1', ['src/a.ts']), at: 1000 },
  { type: 'prompt', taskId: '2', taskPrompt: 'fix src/a.ts', at: 2000 },
  { type: 'dispatch', role: 'reviewer', taskId: '1', result: reviewer('1', 'approved'), at: 3000 },
]
  .map((line) => JSON.stringify(line))
  .join('\n');

/** The saved state of `history`, as JSON text. */
const savedText = JSON.stringify(encodeState(replayHistory(history).store));

/** A saved state as its JSON text parses, fresh each time. */
const saved = (): Record<string, unknown> => JSON.parse(savedText) as Record<string, unknown>;

/** The store a saved state reads to, or the reason it cannot, thrown. */
const decoded = (value: unknown): FactStore => {
  const read = decodeState(value);
  if (E.isLeft(read)) throw new Error(read.left.message);
  return read.right;
};

/** Every object and array in `value`, with the container and key it is held at. */
const places = (value: unknown): Array<readonly [Record<string, unknown>, string]> =>
  typeof value === 'object' && value !== null
    ? Object.entries(value).flatMap(([key, field]) => [
        [value as Record<string, unknown>, key] as const,
        ...places(field),
      ])
    : [];

/** Three ways a field can throw when read: a getter, a Proxy's trap, a class's getter. */
const throwing = (field: unknown, how: number): unknown => {
  const fail = (): never => {
    throw new Error('the caller throws');
  };
  if (how === 0) return Object.defineProperty({}, 'subject', { enumerable: true, get: fail });
  if (how === 1)
    return new Proxy(typeof field === 'object' && field !== null ? field : {}, { get: fail, ownKeys: fail });
  return new (class {
    get subject(): never {
      return fail();
    }
  })();
};

describe('decodeState over values no JSON text gives', () => {
  it('decodeState never throws: a saved state with a field that throws when read, at any depth, is invalid_state', () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 0, max: 2 }), (at, how) => {
        const document = saved();
        const all = places(document);
        const [holder, key] = all[at % all.length]!;
        holder[key] = throwing(holder[key], how);
        let decoded: ReturnType<typeof decodeState> | undefined;
        expect(() => (decoded = decodeState(document))).not.toThrow();
        expect(decoded).toMatchObject({ _tag: 'Left', left: { code: 'invalid_state' } });
      }),
    );
  });

  it('answers the whole document behind a throwing getter or Proxy with invalid_state naming the error', () => {
    const getter = Object.defineProperty(saved(), 'pairs', {
      enumerable: true,
      get: () => {
        throw new Error('g');
      },
    });
    const proxy = new Proxy(saved(), {
      get: () => {
        throw new Error('p');
      },
    });
    expect(decodeState(getter)).toEqual(
      E.left({ code: 'invalid_state', message: 'the saved state cannot be read: g' }),
    );
    expect(decodeState(proxy)).toEqual(E.left({ code: 'invalid_state', message: 'the saved state cannot be read: p' }));
  });

  it('refuses a pairs array with a hole at its first hole, without walking its length', () => {
    const pairs: unknown[] = [];
    pairs[4e9 - 1] = saved()['pairs'];
    expect(decodeState({ ...saved(), pairs })).toEqual(
      E.left({
        code: 'invalid_state',
        message:
          'the saved state cannot be read: an array of 4000000000 elements has a hole at [0], an element never set',
      }),
    );
  });
});

describe("a saved state's maxValidFacts", () => {
  const refused = E.left({
    code: 'invalid_state',
    message: 'saved state maxValidFacts is not a whole number from 1 to 9007199254740991',
  });

  it('refuses a bound no store is built with, in one line naming the field, rather than reading it as the default', () => {
    const text = JSON.stringify(saved());
    for (const bound of ['-5', '"x"', '0.5', 'null', '1e400', '0', '2.5', '1e20'])
      expect(decodeState(JSON.parse(text.replace(/"maxValidFacts":\d+/u, `"maxValidFacts":${bound}`)))).toEqual(
        refused,
      );
  });

  it('reads a whole bound from 1 to the largest safe integer, and a state without one at the default', () => {
    for (const bound of [1, 20, Number.MAX_SAFE_INTEGER]) {
      const decoded = decodeState({ ...saved(), maxValidFacts: bound });
      expect(E.isRight(decoded) && decoded.right.maxValidFacts).toBe(bound);
    }
    const { maxValidFacts: _, ...without } = saved();
    const decoded = decodeState(without);
    expect(E.isRight(decoded) && decoded.right.maxValidFacts).toBe(DEFAULT_MAX_VALID_FACTS);
  });

  it('round-trips every store emptyFactStore builds, whatever bound it was given, and writes a bound set by hand as emptyFactStore reads it', () => {
    const odd = fc.oneof(
      fc.double(),
      fc.integer(),
      fc.constantFrom(Infinity, -Infinity, Number.NaN, 0, 0.5, 1e20, -5, Number.MAX_SAFE_INTEGER + 2),
    );
    fc.assert(
      fc.property(odd, (bound) => {
        const store = replayHistory(history, { initial: emptyFactStore({ maxValidFacts: bound }) }).store;
        const decoded = decodeState(JSON.parse(JSON.stringify(encodeState(store))));
        expect(E.isRight(decoded) && decoded.right.maxValidFacts).toBe(store.maxValidFacts);
        const byHand = encodeState({ ...store, maxValidFacts: bound });
        expect(byHand.maxValidFacts).toBe(emptyFactStore({ maxValidFacts: bound }).maxValidFacts);
        expect(E.isRight(decodeState(JSON.parse(JSON.stringify(byHand))))).toBe(true);
      }),
    );
  });
});

describe("the task ids of a saved state's prompts and file records", () => {
  const [token] = SECRETS.filter(([name]) => name === 'a GitHub token').map(([, text]) => text) as [string];
  /** A saved state naming task `prompted` in its prompt and `changed` in its file record. */
  const naming = (prompted: string, changed: string): Record<string, unknown> => ({
    ...saved(),
    prompts: [{ taskId: prompted, prompt: 'fix src/a.ts', at: 2000 }],
    files: [{ taskId: changed, subject: 'src/gone.ts', relation: 'modified_by' }],
  });

  it("are read as a fact's sourceTaskId is, so a prompt lends its words to the facts of the task it names", () => {
    for (const [prompted, changed] of [
      [' 2\t', '1  x'],
      ['\n2', '1\u200b x'],
    ] as const)
      expect(decoded(naming(prompted, changed))).toEqual(decoded(naming('2', '1 x')));
    expect(decoded(naming('2\ud800', '1'))).toEqual(decoded(naming('2\ufffd', '1')));
  });

  it('are refused when blank or holding a secret, as a fact holding one is, never quoting it', () => {
    const refusal = (value: unknown): string => {
      const read = decodeState(value);
      return E.isLeft(read) ? read.left.message : 'read';
    };
    expect(refusal(naming('\u200b', '1'))).toBe('prompts[0] needs a taskId, a prompt and a finite time');
    expect(refusal(naming('2', '  '))).toBe('files[0] needs a taskId, a subject and a relation');
    for (const [place, value] of [
      ['prompts[0].taskId', naming(`deploy ${token}`, '1')],
      ['files[0].taskId', naming('2', `deploy ${token}`)],
    ] as const) {
      const message = refusal(value);
      expect(message.startsWith(`${place} holds what looks like a GitHub token: `)).toBe(true);
      expect(message).not.toContain(token);
    }
  });
});

describe("a saved state's times", () => {
  const iso = (text: string): number => E.getOrElse((): number => Number.NaN)(parseIsoTime(text));
  const earliest = iso('0000-01-01T00:00:00Z');
  const latest = iso('9999-12-31T23:59:59.999Z');

  /** A document holding `time` in every time field a saved state has, as `encodeState` writes one. */
  const timed = (time: number): Record<string, unknown> => ({
    format: 'session-fact-tracker/state',
    version: 1,
    maxValidFacts: DEFAULT_MAX_VALID_FACTS,
    pairs: [{ subject: 'src/a.ts', relation: 'modified_by', assertions: [fileFact(time)], clears: [time] }],
    prompts: [{ taskId: '1', prompt: 'fix src/a.ts', at: time }],
    lastEventAt: time,
    tombstones: [{ subject: 'src/gone.ts', relation: 'modified_by', invalidatedAt: time }],
  });
  const fileFact = (validFrom: number) =>
    makeFact({
      subject: 'src/a.ts',
      relation: 'modified_by',
      object: 'task:1',
      tags: ['file_change'],
      validFrom,
      sourceTaskId: '1',
      sourceRole: 'implementer',
      confidence: 1,
    });

  /** Each time field of `timed`, the document with `time` there alone, and how a refusal names it. */
  const fields = (time: number): Array<readonly [Record<string, unknown>, string]> => {
    const at = (edit: (document: ReturnType<typeof timed>) => void, name: string) => {
      const document = timed(0);
      edit(document);
      return [document, name] as const;
    };
    type Pair = { assertions: unknown[]; clears: number[] };
    const pair = (document: Record<string, unknown>) => (document['pairs'] as Pair[])[0]!;
    return [
      at((d) => (pair(d).assertions[0] = fileFact(time)), 'pairs[0].assertions[0]: validFrom'),
      at((d) => (pair(d).clears = [time]), 'pairs[0].clears[0]'),
      at((d) => ((d['prompts'] as Array<Record<string, unknown>>)[0]!['at'] = time), 'prompts[0].at'),
      at(
        (d) => ((d['tombstones'] as Array<Record<string, unknown>>)[0]!['invalidatedAt'] = time),
        'tombstones[0].invalidatedAt',
      ),
      at((d) => (d['lastEventAt'] = time), 'saved state lastEventAt'),
    ];
  };

  it('refuses a time outside the years 0000 to 9999 wherever the state holds one, naming the field and the fact', () => {
    for (const time of [1e17, -1e17, 8.64e15 + 1, latest + 1, earliest - 1, Number.MAX_VALUE])
      for (const [document, name] of fields(time))
        expect(decodeState(JSON.parse(JSON.stringify(document)))).toEqual(
          E.left({ code: 'invalid_state', message: `${name} is not a time within the years 0000 to 9999` }),
        );
  });

  it('refuses such a time in a saved state the commands read, in one line', () => {
    const [document] = fields(1e17)[0]!;
    expect(parseSavedState(JSON.stringify(document))).toEqual(
      E.left('pairs[0].assertions[0]: validFrom is not a time within the years 0000 to 9999'),
    );
  });

  it('reads back every time parseIsoTime accepts, in every field, and refuses every finite time outside its years', () => {
    const within = fc
      .oneof(fc.constantFrom(earliest, latest, 0, -1), fc.integer({ min: earliest, max: latest }))
      .map((time) => iso(new Date(time).toISOString()));
    const outside = fc.oneof(
      fc.double({ min: latest + 1, max: Number.MAX_VALUE, noNaN: true }),
      fc.double({ min: -Number.MAX_VALUE, max: earliest - 1, noNaN: true }),
    );
    fc.assert(
      fc.property(within, (time) => {
        const document = JSON.parse(JSON.stringify(timed(time))) as unknown;
        const decoded = decodeState(document);
        expect(E.isRight(decoded) && JSON.parse(JSON.stringify(encodeState(decoded.right)))).toEqual(document);
      }),
    );
    fc.assert(
      fc.property(outside, (time) => {
        for (const [document, name] of fields(time))
          expect(decodeState(JSON.parse(JSON.stringify(document)))).toEqual(
            E.left({ code: 'invalid_state', message: `${name} is not a time within the years 0000 to 9999` }),
          );
      }),
    );
  });
  it('no reducer stores a time outside those years, so every store the reducers make reads back from its own saved state', () => {
    const outside = fc.oneof(
      fc.constantFrom(1e17, -1e17, 8.64e15 + 1, latest + 1, earliest - 1, Number.MAX_VALUE),
      fc.double({ min: latest + 1, max: Number.MAX_VALUE, noNaN: true }),
      fc.double({ min: -Number.MAX_VALUE, max: earliest - 1, noNaN: true }),
    );
    const store = replayHistory(history).store;
    fc.assert(
      fc.property(outside, (time) => {
        // Each reducer answers the same store, as for any other time it does not take.
        expect(addFacts(store, [fileFact(time)])).toBe(store);
        expect(invalidate(store, 'src/a.ts', 'modified_by', time)).toBe(store);
        expect(recordTaskPrompt(store, '3', 'fix src/a.ts', time)).toBe(store);
        const state = initialTrackerState({ store });
        const [after, events, output] = trackerTransition(state, {
          type: 'dispatch',
          role: 'implementer',
          taskId: '3',
          output: implementer('3', ['src/b.ts']),
          at: time,
        });
        expect([after, events]).toEqual([state, []]);
        expect(output).toEqual({
          type: 'dispatch',
          ingested: E.left({
            code: 'invalid_input',
            message: `the time: ${String(time)} milliseconds is outside the years 0000 to 9999`,
          }),
        });
        expect(E.isRight(decodeState(JSON.parse(JSON.stringify(encodeState(after.store)))))).toBe(true);
      }),
    );
  });
});

/** Where the facts below come from: a summary an implementer's result gave. */
const ORIGIN = { tags: ['decision'], sourceTaskId: '1', sourceRole: 'implementer', confidence: 1 } as const;

describe('a saved state an earlier version wrote with secrets in its facts', () => {
  const [token, other] = SECRETS.filter(([name]) => name === 'a GitHub token').map(([, text]) => text) as [
    string,
    string,
  ];
  /** A fact as every version writes it into a state, its id of its triple. */
  const fact = (subject: string, relation: string, object: string, validFrom: number) =>
    makeFact({ subject, relation, object, validFrom, ...ORIGIN });
  const file = (secret: string): string => `deploy/${secret}.env`;
  /**
   * What `replay --save` wrote up to 2a90deb, before results were redacted, for results that
   * quoted tokens: a summary holding one, and a file named after a token, then after another
   * (two pairs then; the earlier closed by an invalidation).
   */
  const older = () => ({
    format: 'session-fact-tracker/state',
    version: 1,
    maxValidFacts: 1000,
    pairs: [
      {
        subject: file(other),
        relation: 'issue',
        assertions: [fact(file(other), 'issue', 'leaks the deploy key', 2000)],
        clears: [],
      },
      {
        subject: file(token),
        relation: 'issue',
        assertions: [fact(file(token), 'issue', 'leaks the deploy key', 1000)],
        clears: [1500],
      },
      {
        subject: 'task:1',
        relation: 'summary',
        assertions: [fact('task:1', 'summary', `used token ${token} to push`, 0)],
        clears: [],
      },
    ],
    prompts: [{ taskId: '2', prompt: `Push again with ${other}`, at: 1000 }],
  });

  it('reads its facts redacted, as results are read now, so no listing, section or saved state holds one', () => {
    const store = decoded(older());
    const written = JSON.stringify(encodeState(store));
    const section = replayHistory(JSON.stringify({ type: 'prompt', taskId: '3', taskPrompt: 'push the deploy' }), {
      initial: store,
    }).report.prompts[0]!.sessionContext;
    for (const secret of [token, other]) {
      expect(written).not.toContain(secret);
      expect(section).not.toContain(secret);
    }
    expect(section).toContain('- task:1 summary used token [redacted: a GitHub token] to push [task:1]');
    expect(selectValidFacts(store).map(({ subject, object }) => [subject, object])).toEqual(
      expect.arrayContaining([
        ['deploy/[redacted: a GitHub token].env', 'leaks the deploy key'],
        ['task:1', 'used token [redacted: a GitHub token] to push'],
      ]),
    );
    for (const each of selectAllFacts(store))
      expect(each.id).toBe(createFactId(each.subject, each.relation, each.object));
  });

  it('makes the pairs whose names differ only by their secrets one pair, which reads back as it is written', () => {
    const store = decoded(older());
    const { pairs } = encodeState(store);
    expect(
      pairs.map(({ subject, relation, assertions, clears }) => [subject, relation, assertions.length, clears]),
    ).toEqual([
      ['deploy/[redacted: a GitHub token].env', 'issue', 2, [1500]],
      ['task:1', 'summary', 1, []],
    ]);
    expect(
      selectValidFacts(store)
        .map(({ validFrom }) => validFrom)
        .sort(),
    ).toEqual([0, 2000]);
    const again = decoded(JSON.parse(JSON.stringify(encodeState(store))));
    expect(encodeState(again)).toEqual(encodeState(store));
  });
});

describe('a saved state an earlier version wrote, naming one file in several spellings', () => {
  /** A fact as every version writes it into a state, its id of its triple. */
  const fact = (
    subject: string,
    relation: string,
    object: string,
    validFrom: number,
    origin: Pick<SessionFact, 'tags' | 'sourceTaskId' | 'sourceRole'>,
  ) => makeFact({ subject, relation, object, validFrom, confidence: 1, ...origin });
  /** What a task's implementer and reviewer made of a path, as extraction tags them. */
  const changed = (path: string, taskId: string, at: number) =>
    fact(path, 'modified_by', `task:${taskId}`, at, {
      tags: ['file_change'],
      sourceTaskId: taskId,
      sourceRole: 'implementer',
    });
  const reviewed = (path: string, relation: 'issue' | 'convention', at: number) =>
    fact(path, relation, 'naming style is off', at, {
      tags: [relation === 'issue' ? 'error' : 'convention'],
      sourceTaskId: '1',
      sourceRole: 'reviewer',
    });
  const pair = (assertions: ReadonlyArray<SessionFact>, clears: number[] = []) => ({
    subject: assertions[0]!.subject,
    relation: assertions[0]!.relation,
    assertions,
    clears,
  });
  /**
   * What `replay --save` wrote up to 2a90deb, before a path was read in one spelling: task 1
   * changed `./src/a.ts` and `src\b.ts`, its review flagged `` `src/a.ts:12` ``, task 2 changed
   * `src/a.ts` again (the earlier change invalidated at 1500); a closed pair compaction removed
   * and the file it recorded, in other spellings still.
   */
  const older = () => ({
    format: 'session-fact-tracker/state',
    version: 1,
    maxValidFacts: 1000,
    pairs: [
      pair([changed('./src/a.ts', '1', 1000)], [1500]),
      pair([reviewed('`src/a.ts:12`', 'convention', 1200)]),
      pair([reviewed('`src/a.ts:12`', 'issue', 1200)]),
      pair([changed('src/a.ts', '2', 2000)]),
      pair([changed('src\\b.ts', '1', 1000)]),
      pair([
        fact('task:1', 'summary', 'moved src/./a.ts', 1000, {
          tags: ['decision'],
          sourceTaskId: '1',
          sourceRole: 'implementer',
        }),
      ]),
    ],
    prompts: [],
    files: [{ taskId: '1', subject: './src/c.ts', relation: 'modified_by' }],
    tombstones: [{ subject: 'src\\c.ts', relation: 'modified_by', invalidatedAt: 1800 }],
  });
  const more = [
    {
      type: 'dispatch',
      role: 'implementer',
      taskId: '3',
      result: implementer('3', ['src/a.ts', 'src/b.ts']),
      at: 3000,
    },
    { type: 'prompt', taskId: '4', taskPrompt: 'fix src/a.ts', at: 4000 },
  ]
    .map((line) => JSON.stringify(line))
    .join('\n');

  it('reads each path in its one spelling, so a change resumed from it supersedes the earlier one and a section lists the file once', () => {
    const resumed = replayHistory(more, { initial: decoded(older()) });
    const files = selectValidFacts(resumed.store)
      .filter(({ relation }) => relation === 'modified_by')
      .map(({ subject, object }) => `${subject} ${object}`)
      .sort();
    expect(files).toEqual(['src/a.ts task:3', 'src/b.ts task:3']);
    const section = resumed.report.prompts[0]!.sessionContext;
    for (const spelling of ['./src/a.ts', 'src\\b.ts', '`src/a.ts:12`']) expect(section).not.toContain(spelling);
    expect(section).toContain('- src/a.ts issue naming style is off [task:1]');
    for (const each of selectAllFacts(resumed.store))
      expect(each.id).toBe(createFactId(each.subject, each.relation, each.object));
  });

  it('merges the pairs whose spellings meet into one log, assertions and clears united, and respells tombstones and file records', () => {
    const state = encodeState(decoded(older()));
    expect(
      state.pairs.map(({ subject, relation, assertions, clears }) => [
        subject,
        relation,
        assertions.map(({ sourceTaskId, validFrom }) => `${sourceTaskId}@${validFrom}`),
        clears,
      ]),
    ).toEqual([
      ['src/a.ts', 'convention', ['1@1200'], []],
      ['src/a.ts', 'issue', ['1@1200'], []],
      ['src/a.ts', 'modified_by', ['1@1000', '2@2000'], [1500]],
      ['src/b.ts', 'modified_by', ['1@1000'], []],
      ['task:1', 'summary', ['1@1000'], []],
    ]);
    expect(state.tombstones).toEqual([{ subject: 'src/c.ts', relation: 'modified_by', invalidatedAt: 1800 }]);
    expect(state.files).toEqual([{ taskId: '1', subject: 'src/c.ts', relation: 'modified_by' }]);
    // An assertion dated before the respelled tombstone is closed by it.
    const late = addFacts(decoded(older()), [changed('src/c.ts', '2', 1700)]);
    expect(selectValidFacts(late).filter(({ subject }) => subject === 'src/c.ts')).toEqual([]);
    // Two spellings of one assertion (one result naming the file twice) are one assertion.
    const twice = {
      ...older(),
      pairs: [pair([changed('./src/d.ts', '1', 1000)]), pair([changed('src/d.ts', '1', 1000)])],
    };
    expect(encodeState(decoded(twice)).pairs.map(({ assertions }) => assertions.length)).toEqual([1]);
    expect(encodeState(decoded(JSON.parse(JSON.stringify(state))))).toEqual(state);
  });

  it('leaves as written a subject extraction never read as a path: a task, and facts not of the path rules', () => {
    const byHand = { tags: ['decision'], sourceTaskId: '1', sourceRole: 'implementer' } as const;
    const kept = [
      pair([fact('task:a/./b', 'summary', 'done', 1000, { ...byHand, sourceTaskId: 'a/./b' })]),
      pair([
        fact('task:a/./b', 'issue', 'no tests', 1000, {
          tags: ['error'],
          sourceTaskId: 'a/./b',
          sourceRole: 'reviewer',
        }),
      ]),
      pair([fact('./docs/guide.md', 'covers', 'setup', 1000, byHand)]),
      pair([fact('./docs/guide.md', 'modified_by', 'task:1', 1000, byHand)]),
    ];
    const state = encodeState(decoded({ ...older(), pairs: kept, files: [], tombstones: [] }));
    expect(state.pairs.map(({ subject, relation }) => `${subject} ${relation}`)).toEqual([
      './docs/guide.md covers',
      './docs/guide.md modified_by',
      'task:a/./b issue',
      'task:a/./b summary',
    ]);
  });
});

describe('a saved state this version wrote', () => {
  const spellings = fc.constantFrom(
    'src/a.ts',
    './src/a.ts',
    'src\\a.ts',
    'src/b/../a.ts',
    '`src/a.ts:12`',
    'src/b.ts',
  );
  const dispatchArb = fc.oneof(
    fc
      .record({ taskId: fc.constantFrom('1', '2'), files: fc.array(spellings, { minLength: 1, maxLength: 3 }) })
      .map(({ taskId, files }) => ({
        type: 'dispatch',
        role: 'implementer',
        taskId,
        result: implementer(taskId, files),
      })),
    fc.record({ taskId: fc.constantFrom('1', '2'), file: spellings }).map(({ taskId, file }) => ({
      type: 'dispatch',
      role: 'reviewer',
      taskId,
      result: reviewer(taskId, 'needs_changes', [{ file, message: 'naming style is off' }]),
    })),
    fc.record({ subject: spellings }).map(({ subject }) => ({ type: 'invalidate', subject, relation: 'modified_by' })),
    fc.integer({ min: 1, max: 3 }).map((maxFacts) => ({ type: 'compact', maxFacts })),
  );
  const historyArb = fc
    .array(fc.tuple(dispatchArb, fc.integer({ min: 0, max: 5 })), { maxLength: 12 })
    .map((lines) => lines.map(([line, at]) => JSON.stringify({ ...line, at: at * 1000 })).join('\n'));
  const roundTrip = (store: FactStore): FactStore => decoded(JSON.parse(JSON.stringify(encodeState(store))));

  /**
   * The store reads back as it was written (its document the same), and a store read from a state
   * is the very store its own saved state reads back to. (Not the replayed store itself: a state
   * numbers the index's documents in the order of its sorted pairs, a replay in its own.)
   */
  const expectReadAsWritten = (store: FactStore): void => {
    const read = roundTrip(store);
    expect(encodeState(read)).toEqual(encodeState(store));
    expect(roundTrip(read)).toEqual(read);
  };

  it('reads back as the store it was written from, for a store replayed from a history', () => {
    expectReadAsWritten(replayHistory(history).store);
  });

  it('reads back as the same store for any store the reducers or a replay build, every file in its one spelling', () => {
    fc.assert(fc.property(historyArb, (text) => expectReadAsWritten(replayHistory(text).store)));
    fc.assert(fc.property(storeArb, expectReadAsWritten));
  });

  it("reads a fact added by hand in a path rule's shape with its path in another spelling respelled, as an earlier version's, its id that of the respelled triple", () => {
    const byHand = fileFact('./src/a.ts', 'modified_by', 'task:1', 1000);
    const read = roundTrip(addFacts(emptyFactStore(), [byHand]));
    expect(selectValidFacts(read).map(({ id, subject }) => [id, subject])).toEqual([
      [createFactId('src/a.ts', 'modified_by', 'task:1'), 'src/a.ts'],
    ]);
  });

  it('holds no pair to respell, so its pairs are read without a copy', () => {
    const { pairs } = encodeState(replayHistory(history).store);
    expect(respelledPairs(pairs)).toBe(pairs);
  });
});

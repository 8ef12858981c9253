/**
 * Live sessions on one session id over a store whose every call runs after a delay and answers
 * after another (fake timers), so that calls asked together run and answer in any order, as two
 * app servers with a PostgreSQL pool each see them; some appends lose their answer (`conflict`,
 * `unanswered`), their line written before or after the answer. Generated interleavings of
 * results, prompts, invalidations, compactions and opens, asked without waiting, must keep what
 * the docs promise: every call answered, none `internal`; each event recorded once, its resend a
 * duplicate on its line; each section the one replay gives on its line; every session, caught
 * up, what a fresh replay of the log holds.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { replayHistory, selectValidFacts } from '../../../src/index.js';
import { type LiveSession, memorySessionStore, openSession } from '../../../src/live/session/index.js';
import type { SessionStore } from '../../../src/live/session/store.js';
import { implementer } from '../../fixtures/results.js';

const ID = 's';
/** Ingest events of the pool: even ones timed, odd ones stamped by the session's clock. */
const INGESTS = 6;
const PROMPTS = 4;

/** How the store answers: the delays its calls take in turn, and what becomes of the nth append. */
interface World {
  readonly delays: ReadonlyArray<number>;
  /** Appends (by the order they are asked) whose answer is lost: written `before` or `after` the answer. */
  readonly lost: ReadonlyArray<readonly [number, 'before' | 'after']>;
  /** True for a store whose writers take turns (`exclusive`, as the files' lock). */
  readonly turns?: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `inner`, each call run after a delay and answered after another, some appends' answers lost. */
const reordered = (inner: SessionStore, world: World, deleted: Array<ReadonlyArray<string>> = []): SessionStore => {
  let drawn = 0;
  let appends = 0;
  const delay = (): number => world.delays[drawn++ % world.delays.length]!;
  const lost = new Map(world.lost);
  const later = async <T>(work: () => Promise<T>): Promise<T> => {
    const [before, after] = [delay(), delay()];
    await sleep(before);
    const answer = await work();
    await sleep(after);
    return answer;
  };
  // The writers' turns, a promise chain: each waits for the one before to end.
  let turn: Promise<unknown> = Promise.resolve();
  const exclusive = <L, T>(_id: string, work: () => Promise<E.Either<L, T>>): Promise<E.Either<L, T>> => {
    const ran = turn.then(() => later(async () => undefined)).then(work);
    turn = ran.then(
      () => undefined,
      () => undefined,
    );
    return ran;
  };
  const unanswered = { code: 'conflict', message: 'the connection ended before the server answered', unanswered: true };
  return {
    location: inner.location,
    list: () => later(() => inner.list()),
    read: (id, after, follower) => later(() => inner.read(id, after, follower)),
    append: (id, expected, lines, follower) => {
      const mode = lost.get(appends);
      appends += 1;
      if (mode === 'after') {
        // Its write lands after a delay of its own: a commit still running when the connection dropped.
        void sleep(delay()).then(() => inner.append(id, expected, lines, follower));
        return later(async () => E.left(unanswered as never));
      }
      return later(async () => {
        const appended = await inner.append(id, expected, lines, follower);
        return mode === 'before' ? E.left(unanswered as never) : appended;
      });
    },
    repair: (id, follower) => later(() => inner.repair(id, follower)),
    readSnapshot: (id, follower, atMost) => later(() => inner.readSnapshot(id, follower, atMost)),
    writeSnapshot: (id, snapshot, follower) => later(() => inner.writeSnapshot(id, snapshot, follower)),
    delete: (id) =>
      later(async () => {
        // The log deleted is kept aside: answers given on it are checked against it.
        const read = await inner.read(id, 0);
        if (E.isRight(read) && read.right.exists) deleted.push(read.right.lines.map((line) => line.text));
        return inner.delete(id);
      }),
    backlog: (id) => later(() => inner.backlog(id)),
    close: () => inner.close(),
    ...(world.turns === true ? { exclusive } : {}),
  };
};

type Op =
  | { readonly kind: 'ingest'; readonly n: number }
  | { readonly kind: 'prompt'; readonly n: number }
  | { readonly kind: 'clockedPrompt'; readonly n: number }
  | { readonly kind: 'invalidate'; readonly n: number }
  | { readonly kind: 'compact'; readonly n: number }
  | { readonly kind: 'read' }
  | { readonly kind: 'recordedPrompt'; readonly n: number }
  | { readonly kind: 'reopen' }
  | { readonly kind: 'delete' };

interface Command {
  readonly session: number;
  readonly op: Op;
  /** Milliseconds after the command before it. */
  readonly gap: number;
}

const ingestInput = (n: number) => ({
  role: 'implementer' as const,
  taskId: `t${n}`,
  output: implementer(`t${n}`, [`src/f${n}.ts`, `src/f${(n + 1) % INGESTS}.ts`]),
  ...(n % 2 === 0 ? { at: 1_000 + n } : {}),
});
const promptInput = (n: number) => ({ taskId: `p${n}`, taskPrompt: `Change src/f${n}.ts`, at: 2_000 + n });

/** What a call asked, and what it was answered. */
interface Asked {
  readonly op: Op;
  answer?: E.Either<{ readonly code: string; readonly message: string }, Record<string, unknown>> | undefined;
}

const call = (session: LiveSession, op: Op): Promise<Asked['answer']> => {
  switch (op.kind) {
    case 'ingest':
      return session.ingestResult(ingestInput(op.n)) as never;
    case 'prompt':
      return session.compileContext(promptInput(op.n)) as never;
    case 'clockedPrompt':
      return session.compileContext({ taskId: `c${op.n}`, taskPrompt: `Change src/f${op.n}.ts` }) as never;
    case 'invalidate':
      return session.invalidateFact({ subject: `src/f${op.n}.ts`, relation: 'modified_by', at: 3_000 + op.n }) as never;
    case 'compact':
      return session.compact({ maxFacts: 2 + op.n, at: 4_000 + op.n }) as never;
    case 'recordedPrompt':
      return session
        .recordedPrompt({ taskId: `p${op.n}`, taskPrompt: `Change src/f${op.n}.ts` })
        .then(E.map((found) => ({ found }))) as never;
    default:
      return session.snapshot().then(E.map(() => ({}))) as never;
  }
};

/** Runs the fake clock, and the event loop's real turns, until every promise of `all` settles or `steps` pass. */
const settle = async (all: ReadonlyArray<Promise<unknown>>, steps = 5_000): Promise<boolean> => {
  let pending = all.length;
  for (const promise of all) void promise.finally(() => (pending -= 1));
  for (let step = 0; pending > 0 && step < steps; step += 1) {
    await vi.advanceTimersByTimeAsync(5);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return pending === 0;
};

/** The lines of `count` results, written once by a session of their own, as its log holds them. */
const prefillLines = async (count: number): Promise<ReadonlyArray<string>> => {
  const store = memorySessionStore();
  const opened = await openSession(ID, { store });
  if (E.isLeft(opened)) throw new Error(opened.left.message);
  for (let i = 0; i < count; i += 1) {
    const output = implementer(`pre${i}`, [`src/f${i % INGESTS}.ts`]);
    const ingested = await opened.right.ingestResult({ role: 'implementer', taskId: `pre${i}`, output, at: 1 + i });
    if (E.isLeft(ingested)) throw new Error(ingested.left.message);
  }
  const read = await store.read(ID, 0);
  if (E.isLeft(read)) throw new Error(read.left.message);
  return read.right.lines.map((line) => line.text);
};
let prefilled: Promise<ReadonlyArray<string>> | undefined;

/** Starts the log with `count` results (0 or 60), so that writers save snapshots during the run. */
const prefill = async (store: SessionStore, count: number): Promise<void> => {
  if (count === 0) return;
  prefilled ??= prefillLines(60);
  const appended = await store.append(ID, 0, (await prefilled).slice(0, count));
  if (E.isLeft(appended)) throw new Error(appended.left.message);
};

/** The section replay gives on each prompt line of `texts`, replayed once per log. */
const sections = new WeakMap<ReadonlyArray<string>, ReadonlyMap<number, string>>();
const sectionsOf = (texts: ReadonlyArray<string>): ReadonlyMap<number, string> => {
  const known = sections.get(texts);
  if (known !== undefined) return known;
  const { prompts } = replayHistory(texts.join('\n')).report;
  const made = new Map(prompts.map((entry) => [entry.line, entry.sessionContext] as const));
  sections.set(texts, made);
  return made;
};

/** Why `texts`, a log the id had, is not one on which `op` could be answered `answered`; undefined when it is. */
const answerProblem = (texts: ReadonlyArray<string>, op: Op, answered: Record<string, unknown>): string | undefined => {
  const holds = (line: number, fields: Record<string, unknown>): boolean => {
    const held = texts[line - 1] === undefined ? undefined : (JSON.parse(texts[line - 1]!) as Record<string, unknown>);
    return held !== undefined && Object.entries(fields).every(([key, value]) => held[key] === value);
  };
  const through = (count: number) => replayHistory(texts.slice(0, count).join('\n'));
  if (op.kind === 'recordedPrompt') {
    const found = (answered as { found: O.Option<{ line: number }> }).found;
    return O.isNone(found) || holds(found.value.line, { type: 'prompt', ...promptInput(op.n) })
      ? undefined
      : `line ${O.isSome(found) ? found.value.line : 0} holds no prompt p${op.n}`;
  }
  const { line, duplicate } = answered as { line: number; duplicate: boolean };
  const expected: Record<string, unknown> =
    op.kind === 'ingest'
      ? { type: 'dispatch', taskId: `t${op.n}`, ...(op.n % 2 === 0 ? { at: 1_000 + op.n } : {}) }
      : op.kind === 'prompt'
        ? { type: 'prompt', ...promptInput(op.n) }
        : op.kind === 'clockedPrompt'
          ? { type: 'prompt', taskId: `c${op.n}` }
          : op.kind === 'invalidate'
            ? { type: 'invalidate', subject: `src/f${op.n}.ts`, at: 3_000 + op.n }
            : {
                type: 'compact',
                maxFacts: 2 + (op.kind === 'compact' ? op.n : 0),
                at: 4_000 + (op.kind === 'compact' ? op.n : 0),
              };
  if (!holds(line, expected)) return `line ${line} holds ${texts[line - 1]?.slice(0, 80)}, not ${JSON.stringify(op)}`;
  if (op.kind === 'invalidate' && !duplicate) {
    // What it closed: the facts valid before its line that a replay through it no longer holds valid.
    const validThrough = (count: number) => selectValidFacts(through(count).store).map((fact) => fact.id);
    const after = new Set(validThrough(line));
    const closed = validThrough(line - 1).filter((id) => !after.has(id)).length;
    const answeredClosed = (answered as { closed: unknown[] }).closed.length;
    if (closed !== answeredClosed) return `line ${line} closed ${closed} facts, answered ${answeredClosed}`;
  }
  if (op.kind === 'prompt' || op.kind === 'clockedPrompt') {
    const section = sectionsOf(texts).get(line);
    if ((answered as { sessionContext: string }).sessionContext !== section)
      return `the section answered is not the one replay gives on line ${line}`;
  }
  return undefined;
};

/** Runs `commands` on `sessions` sessions over the reordered store, and checks what they answered. */
const runOrdering = async (world: World, sessions: number, filled: number, commands: ReadonlyArray<Command>) => {
  const inner = memorySessionStore();
  await prefill(inner, filled);
  const deleted: Array<ReadonlyArray<string>> = [];
  const store = reordered(inner, world, deleted);
  const opening = (): Promise<LiveSession> =>
    openSession(ID, { store }).then((opened) => {
      if (E.isLeft(opened)) throw new Error(`open: ${opened.left.code}: ${opened.left.message}`);
      return opened.right;
    });
  const slots = Array.from({ length: sessions }, opening);
  const everyOpen: Array<Promise<LiveSession>> = [...slots];
  const asked: Asked[] = [];
  const deletes: Array<Promise<unknown>> = [];
  const calls: Array<Promise<unknown>> = [...slots];
  for (const { session, op, gap } of commands) {
    if (gap > 0) await vi.advanceTimersByTimeAsync(gap);
    const slot = session % sessions;
    if (op.kind === 'delete') {
      // Another process deletes the log: the sessions still writing start a new one.
      const deleting = store.delete(ID);
      calls.push(deleting);
      deletes.push(deleting);
      continue;
    }
    if (op.kind === 'reopen') {
      // Another open of the slot, once the calls asked of it before are asked: they go on, on the old one.
      const reopened = slots[slot]!.then(opening);
      slots[slot] = reopened;
      everyOpen.push(reopened);
      calls.push(reopened);
      continue;
    }
    const entry: Asked = { op };
    asked.push(entry);
    calls.push(
      slots[slot]!.then((live) => call(live, op)).then((answer) => {
        entry.answer = answer;
      }),
    );
  }
  expect(await settle(calls), 'every call settles').toBe(true);
  await Promise.all(calls);

  const logRead = await inner.read(ID, 0);
  if (E.isLeft(logRead)) throw new Error(logRead.left.message);
  const log = logRead.right.lines;
  const text = log.map((line) => line.text).join('\n');
  const replayed = replayHistory(text);
  expect(replayed.report.errors).toEqual([]);
  const parsed = log.map((line) => JSON.parse(line.text) as Record<string, unknown>);

  // Every call answered Right; each line after the prefill recorded by exactly one answer not a duplicate.
  const recordedBy = new Map<number, number>();
  const logs = [...deleted, log.map((entry) => entry.text)];
  for (const { op, answer } of asked) {
    expect(answer, JSON.stringify(op)).toBeDefined();
    if (answer === undefined || E.isLeft(answer)) throw new Error(`${JSON.stringify(op)}: ${JSON.stringify(answer)}`);
    if (op.kind === 'read') continue;
    // With a log deleted, an answer's line may be one of a log the id had before: one of them holds its event there.
    const problems = logs.map((texts) => answerProblem(texts, op, answer.right));
    if (deletes.length === 0) expect(problems.at(-1)).toBeUndefined();
    else
      expect(
        problems.some((problem) => problem === undefined),
        problems.join('; '),
      ).toBe(true);
    if (op.kind === 'recordedPrompt') continue;
    const { line, duplicate } = answer.right as { line: number; duplicate: boolean };
    if (!duplicate) recordedBy.set(line, (recordedBy.get(line) ?? 0) + 1);
  }
  // An append left unanswered that finds its event on its line takes it as its own (the docs'
  // contract): another writer's resend of it there is then answered as recorded too.
  for (let line = filled + 1; line <= log.length && deletes.length === 0; line += 1)
    if (world.lost.length === 0) expect(recordedBy.get(line), `answers that recorded line ${line}`).toBe(1);
    else expect(recordedBy.get(line) ?? 0, `answers that recorded line ${line}`).toBeGreaterThanOrEqual(1);
  // No event written twice: a timed event once, a result stamped by the clock once per task (its one content).
  const keys = parsed.slice(deletes.length === 0 ? filled : 0).map((fields) => {
    const { at, ...rest } = fields;
    return fields['type'] === 'dispatch' && Number(String(fields['taskId']).slice(1)) % 2 === 1
      ? JSON.stringify(rest)
      : fields['type'] === 'prompt' && String(fields['taskId']).startsWith('c')
        ? JSON.stringify(fields)
        : JSON.stringify({ ...rest, at });
  });
  expect(new Set(keys).size, 'events written twice').toBe(keys.length);

  // Every session, caught up, holds what a fresh replay of the log holds.
  const freshly = await openSession(ID, { store: inner });
  if (E.isLeft(freshly)) throw new Error(freshly.left.message);
  const fresh = freshly.right;
  const all = [...(await Promise.all(everyOpen)), fresh];
  const caughtUp = all.map((live) => live.snapshot());
  expect(await settle(caughtUp)).toBe(true);
  for (const [i, live] of all.entries()) {
    const held = await caughtUp[i]!;
    if (E.isLeft(held)) throw new Error(held.left.message);
    expect(held.right, `session ${i}`).toEqual(replayed.store);
    expect(live.state().lines).toBe(log.length);
    expect(live.report().errors).toEqual([]);
  }
};

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.nat(INGESTS - 1).map((n) => ({ kind: 'ingest' as const, n })) },
  { weight: 3, arbitrary: fc.nat(PROMPTS - 1).map((n) => ({ kind: 'prompt' as const, n })) },
  { weight: 1, arbitrary: fc.nat(PROMPTS - 1).map((n) => ({ kind: 'clockedPrompt' as const, n })) },
  { weight: 1, arbitrary: fc.nat(INGESTS - 1).map((n) => ({ kind: 'invalidate' as const, n })) },
  { weight: 1, arbitrary: fc.nat(2).map((n) => ({ kind: 'compact' as const, n })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'read' as const }) },
  { weight: 1, arbitrary: fc.nat(PROMPTS - 1).map((n) => ({ kind: 'recordedPrompt' as const, n })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reopen' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'delete' as const }) },
);

const worldArb: fc.Arbitrary<World> = fc.record({
  delays: fc.array(fc.nat(20), { minLength: 1, maxLength: 24 }),
  lost: fc.array(fc.tuple(fc.nat(12), fc.constantFrom<'before' | 'after'>('before', 'after')), { maxLength: 3 }),
  turns: fc.boolean(),
});

const commands: fc.Arbitrary<Command[]> = fc.array(
  fc.record({ session: fc.nat(2), op: opArb, gap: fc.oneof(fc.constant(0), fc.nat(15)) }),
  { minLength: 1, maxLength: 10 },
);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.setSystemTime(10_000);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('a prompt sent again while its log is deleted and made anew', () => {
  it('is not answered with a section of the new log’s lines as that of a line the new log holds no such prompt on', async () => {
    // b finds the prompt on line 2 of the log it caught up with; before it reads the lines
    // before line 2 for its section, another process deletes the log and writes a new one.
    const inner = memorySessionStore();
    let replace: (() => Promise<void>) | undefined;
    const store: SessionStore = {
      ...inner,
      readSnapshot: async (id, follower, atMost) => {
        const now = atMost === undefined ? undefined : replace;
        replace = now === undefined ? replace : undefined;
        await now?.();
        return inner.readSnapshot(id, follower, atMost);
      },
    };
    const right = <T>(either: E.Either<{ readonly message: string }, T>): T => {
      if (E.isLeft(either)) throw new Error(either.left.message);
      return either.right;
    };
    const result = (taskId: string, file: string, at: number) => ({
      role: 'implementer' as const,
      taskId,
      output: implementer(taskId, [file]),
      at,
    });
    const a = right(await openSession(ID, { store: inner }));
    right(await a.ingestResult(result('1', 'src/a.ts', 1)));
    const prompt = { taskId: 'p', taskPrompt: 'Change src/a.ts and src/b.ts', at: 5 };
    const first = right(await a.compileContext(prompt));
    const b = right(await openSession(ID, { store }));
    replace = async () => {
      right(await inner.delete(ID));
      const c = right(await openSession(ID, { store: inner }));
      right(await c.ingestResult(result('2', 'src/b.ts', 1)));
      right(await c.compact({ maxFacts: 5, at: 2 }));
    };
    const again = right(await b.compileContext(prompt));
    expect(replace).toBeUndefined();
    const log = right(await inner.read(ID, 0)).lines.map((line) => line.text);
    // The call comes after the new log: the prompt is recorded on it, with the section replay gives there.
    expect([again.line, again.duplicate]).toEqual([3, false]);
    const replayed = replayHistory(log.join('\n')).report.prompts.find((entry) => entry.line === again.line);
    expect(again.sessionContext).toBe(replayed?.sessionContext);
    expect(again.sessionContext).not.toBe(first.sessionContext);
  });
});

describe('live sessions on one id over a store that runs and answers its calls in any order', () => {
  it('answer a prompt two of them sent at once, on a log deleted as they read it, with the section of the line that holds it', async () => {
    // Found by the property: the log is deleted while the second sender reads the lines before
    // the prompt's line for its section, and the new log holds other lines there.
    await runOrdering({ delays: [2], lost: [] }, 2, 60, [
      { session: 0, op: { kind: 'prompt', n: 0 }, gap: 0 },
      { session: 1, op: { kind: 'prompt', n: 0 }, gap: 0 },
      { session: 0, op: { kind: 'ingest', n: 0 }, gap: 2 },
      { session: 0, op: { kind: 'delete' }, gap: 14 },
      { session: 0, op: { kind: 'clockedPrompt', n: 0 }, gap: 0 },
    ]);
  });

  it('answer every call, record each event once, give the sections replay gives, and hold what replay holds', async () => {
    await fc.assert(
      fc.asyncProperty(
        worldArb,
        fc.integer({ min: 2, max: 3 }),
        fc.constantFrom(0, 60),
        commands,
        async (world, sessions, filled, commands) => {
          await runOrdering(world, sessions, filled, commands);
        },
      ),
      { numRuns: 8 },
    );
  });
});

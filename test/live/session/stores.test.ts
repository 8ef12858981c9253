/**
 * The session store adapters that need no server, against the port's conformance suite, and a
 * live session over each: the same answers as `replay` of the log it wrote.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { replayHistory } from '../../../src/index.js';
import { fileSessionStore, memorySessionStore, openSession, SNAPSHOT_EVERY } from '../../../src/live/session/index.js';
import { invalidSnapshot, type SessionStore, type StoredSnapshot } from '../../../src/live/session/store.js';
import { implementer } from '../../fixtures/results.js';
import { tempDir } from '../../tempDirs.js';
import { describeSessionStore } from './storeConformance.js';

describeSessionStore('the files of a folder', () => {
  const directory = join(tempDir('store-files-'), 'sessions');
  return { store: fileSessionStore({ directory }), reopen: () => fileSessionStore({ directory }) };
});

describeSessionStore('memory', () => {
  const store = memorySessionStore();
  // Another handle on the same memory: the same store, whose close ends nothing.
  return { store, reopen: () => store };
});

/** The log a store holds for `id`, as history text. */
const logOf = async (store: SessionStore, id: string): Promise<string> => {
  const read = await store.read(id, 0);
  if (E.isLeft(read)) throw new Error(read.left.message);
  return read.right.lines.map((entry) => entry.text).join('\n');
};

describe.each([
  ['files', () => fileSessionStore({ directory: join(tempDir('store-session-'), 'sessions') })],
  ['memory', () => memorySessionStore()],
])('a live session over the %s store', (_name, make) => {
  it('answers each prompt with the section replay gives for its log, and two sessions on one store share it', async () => {
    const store = make();
    let now = 1_000;
    const clock = () => (now += 1_000);
    const first = await openSession('shared', { store, clock });
    const second = await openSession('shared', { store, clock });
    if (E.isLeft(first) || E.isLeft(second)) throw new Error('open failed');
    const sections: string[] = [];
    for (let task = 1; task <= 6; task += 1) {
      const writer = task % 2 === 0 ? first.right : second.right;
      const compiled = await writer.compileContext({
        taskId: String(task),
        taskPrompt: `Change src/mod${task - 1}.ts`,
      });
      if (E.isLeft(compiled)) throw new Error(compiled.left.message);
      sections.push(compiled.right.sessionContext);
      const ingested = await writer.ingestResult({
        role: 'implementer',
        taskId: String(task),
        output: implementer(String(task), [`src/mod${task}.ts`]),
      });
      expect(E.isRight(ingested)).toBe(true);
    }
    const { report } = replayHistory(await logOf(store, 'shared'));
    expect(report.prompts.map((prompt) => prompt.sessionContext)).toEqual(sections);
    const snapshot = await first.right.snapshot();
    expect(E.isRight(snapshot) && snapshot.right).toEqual(replayHistory(await logOf(store, 'shared')).store);
    await store.close();
  });

  it('records a resent event once, and a result the contract rejects not at all', async () => {
    const store = make();
    const opened = await openSession('s', { store, clock: () => 5_000 });
    if (E.isLeft(opened)) throw new Error(opened.left.message);
    const session = opened.right;
    const input = { role: 'implementer' as const, taskId: '1', output: implementer('1', ['src/a.ts']), at: 1_000 };
    const once = await session.ingestResult(input);
    const twice = await session.ingestResult(input);
    expect(E.isRight(once) && once.right.duplicate).toBe(false);
    expect(E.isRight(twice) && [twice.right.duplicate, twice.right.line]).toEqual([true, 1]);
    const rejected = await session.ingestResult({ role: 'implementer', taskId: '2', output: 'no markers' });
    expect(E.isLeft(rejected) && rejected.left.code).toBe('marker_missing');
    expect((await logOf(store, 's')).split('\n')).toHaveLength(1);
  });
});

describe('the memory store, given what is not its input', () => {
  const stores = (): { readonly memory: SessionStore; readonly files: SessionStore } => ({
    memory: memorySessionStore(),
    files: fileSessionStore({ directory: join(tempDir('store-input-'), 'sessions') }),
  });

  it('answers what the files store answers, failure for failure', async () => {
    const { memory, files } = stores();
    const calls: ReadonlyArray<(store: SessionStore) => Promise<unknown>> = [
      (store) => store.append('s', 0, null as unknown as string[]),
      (store) => store.append('s', 0, 'ab' as unknown as string[]),
      (store) => store.append('s', 0, [1, 2] as unknown as string[]),
      (store) => store.append('s', 0, ['{}\n{}']),
      (store) => store.writeSnapshot('s', null as unknown as StoredSnapshot),
      (store) => store.writeSnapshot('s', { position: Number.NaN, state: '{}' }),
      (store) => store.writeSnapshot('s', { position: 1, state: 1 } as unknown as StoredSnapshot),
    ];
    for (const call of calls) {
      const answer = await call(memory);
      expect(E.isLeft(answer as E.Either<unknown, unknown>)).toBe(true);
      expect(answer).toEqual(await call(files));
    }
  });
});

describe('the files of a folder', () => {
  it('deletes a session without touching the sessions whose ids start with its log name (x and x.jsonl, x.jsonl.notes)', async () => {
    const directory = join(tempDir('store-delete-'), 'sessions');
    const store = fileSessionStore({ directory });
    for (const id of ['x', 'x.jsonl', 'x.jsonl.notes', 'x.jsonl.snapshot']) {
      const opened = await openSession(id, { store });
      if (E.isLeft(opened)) throw new Error(opened.left.message);
      for (let task = 1; task <= 70; task += 1)
        expect(E.isRight(await opened.right.compileContext({ taskId: String(task), taskPrompt: 'x', at: task }))).toBe(
          true,
        );
    }
    // A snapshot of x being written clears x's own leftovers only, never another session's file being written.
    const writing = join(directory, 'x.jsonl.snapshot.jsonl.snapshot.1234.5678.tmp');
    writeFileSync(writing, 'a snapshot of session x.jsonl.snapshot, being written');
    const more = await openSession('x', { store });
    if (E.isLeft(more)) throw new Error(more.left.message);
    for (let task = 71; task <= 140; task += 1)
      expect(E.isRight(await more.right.compileContext({ taskId: String(task), taskPrompt: 'x', at: task }))).toBe(
        true,
      );
    expect(statSync(writing).isFile()).toBe(true);
    expect(await store.delete('x')).toEqual(E.right(true));
    expect(await store.list()).toEqual(E.right(['x.jsonl', 'x.jsonl.notes', 'x.jsonl.snapshot']));
    for (const id of ['x.jsonl', 'x.jsonl.notes', 'x.jsonl.snapshot']) {
      const reopened = await openSession(id, { store: fileSessionStore({ directory }), create: false });
      expect(E.isRight(reopened) && [reopened.right.state().events, reopened.right.snapshotUse().used]).toEqual([
        70,
        true,
      ]);
    }
  });
});

describe('the files of a folder, deleting a session whose log is gone', () => {
  it("removes the files the session left beside its log, never another session's, and says there was no session", async () => {
    const directory = join(tempDir('store-leftovers-'), 'sessions');
    const store = fileSessionStore({ directory });
    for (const id of ['x', 'x.jsonl']) {
      const opened = await openSession(id, { store });
      if (E.isLeft(opened)) throw new Error(opened.left.message);
      for (let task = 1; task <= 70; task += 1)
        expect(E.isRight(await opened.right.compileContext({ taskId: String(task), taskPrompt: 'x', at: task }))).toBe(
          true,
        );
    }
    writeFileSync(join(directory, 'x.jsonl.hooks'), '{}\n');
    rmSync(join(directory, 'x.jsonl'));
    expect(existsSync(join(directory, 'x.jsonl.snapshot'))).toBe(true);
    expect(await store.delete('x')).toEqual(E.right(false));
    expect(readdirSync(directory).filter((name) => !name.startsWith('x.jsonl.jsonl'))).toEqual(['.gitignore']);
    const other = await openSession('x.jsonl', { store: fileSessionStore({ directory }), create: false });
    expect(E.isRight(other) && [other.right.state().events, other.right.snapshotUse().used]).toEqual([70, true]);
  });
});

describe('the files of a folder, on a log another tool wrote with its own line breaks', () => {
  const prompt = (task: number): string =>
    JSON.stringify({ type: 'prompt', taskId: String(task), taskPrompt: `prompt ${task}`, at: task });
  const right = <T>(either: E.Either<unknown, T>): T => {
    if (E.isLeft(either)) throw new Error(JSON.stringify(either.left));
    return either.right;
  };

  it('takes a lone \\r as the end of a line, the last one too, and appends after it; a last line with no break is set aside first', async () => {
    const directory = join(tempDir('store-cr-'), 'sessions');
    const store = fileSessionStore({ directory, clock: () => 0 });
    mkdirSync(directory, { recursive: true });
    const log = `${prompt(1)}\r${prompt(2)}\r\r${prompt(3)}\r`;
    writeFileSync(join(directory, 'cr.jsonl'), log);
    expect(right(await store.read('cr', 0))).toEqual({
      exists: true,
      restarted: false,
      lines: [
        { line: 1, text: prompt(1) },
        { line: 2, text: prompt(2) },
        { line: 4, text: prompt(3) },
      ],
      position: 4,
      torn: false,
    });
    expect(right(await store.append('cr', 4, [prompt(5)]))).toEqual({ position: 5, setAside: [] });
    expect(readFileSync(join(directory, 'cr.jsonl'), 'utf8')).toBe(`${log}${prompt(5)}\n`);
    // Bytes after the last break are a torn line, as after a \n: moved aside, so the new line starts a line.
    writeFileSync(join(directory, 'torn.jsonl'), `${prompt(1)}\r${prompt(2)}`);
    expect(right(await store.append('torn', 1, [prompt(3)])).position).toBe(2);
    expect(readFileSync(join(directory, 'torn.jsonl'), 'utf8')).toBe(`${prompt(1)}\r${prompt(3)}\n`);
    expect(JSON.parse(readFileSync(join(directory, 'torn.jsonl.set-aside'), 'utf8'))).toMatchObject({
      line: 2,
      text: prompt(2),
    });
    expect(existsSync(join(directory, 'cr.jsonl.set-aside'))).toBe(false);
  });

  it('reads a \\n that finishes a \\r\\n the last read ended inside as that break, not a blank line, from a snapshot too', async () => {
    const directory = join(tempDir('store-crlf-'), 'sessions');
    mkdirSync(directory, { recursive: true });
    const file = join(directory, 's.jsonl');
    writeFileSync(file, `${prompt(1)}\r`);
    const store = fileSessionStore({ directory });
    expect(right(await store.read('s', 0)).position).toBe(1);
    right(await store.writeSnapshot('s', { position: 1, state: 'the state after line 1' }));
    // The writer of \r\n gets to its \n only now.
    appendFileSync(file, `\n${prompt(2)}\r\n`);
    const expected = {
      exists: true,
      restarted: false,
      lines: [{ line: 2, text: prompt(2) }],
      position: 2,
      torn: false,
    };
    expect(right(await store.read('s', 1))).toEqual(expected);
    // Another process starts at the snapshot's offset, the \r before it unknown to it until it reads.
    const other = fileSessionStore({ directory });
    expect(right(await other.readSnapshot('s'))).toEqual({ position: 1, state: 'the state after line 1' });
    expect(right(await other.read('s', 1))).toEqual(expected);
    expect(replayHistory(readFileSync(file, 'utf8')).report.summary.events).toBe(2);
  });
});

describe('a log made anew in the same file (the inode a deleted log freed) while a session has it open', () => {
  /** Writes `lines` over the log in place: the file keeps its identity (device and inode), as a freed inode taken again does. */
  const rewriteInPlace = (directory: string, lines: ReadonlyArray<string>): void => {
    const file = join(directory, 's.jsonl');
    const identity = statSync(file).ino;
    writeFileSync(file, lines.map((text) => `${text}\n`).join(''));
    expect(statSync(file).ino).toBe(identity);
  };

  it('is read from its first line, even when longer than the old log: never from the old offset', async () => {
    const directory = join(tempDir('store-anew-'), 'sessions');
    const old = await openSession('s', { store: fileSessionStore({ directory }) });
    if (E.isLeft(old)) throw new Error(old.left.message);
    for (let task = 1; task <= 3; task += 1)
      expect(
        E.isRight(await old.right.compileContext({ taskId: String(task), taskPrompt: `old ${task}`, at: task })),
      ).toBe(true);
    rewriteInPlace(
      directory,
      [1, 2, 3, 4, 5].map((task) =>
        JSON.stringify({
          type: 'prompt',
          taskId: String(task),
          taskPrompt: `a new, longer prompt ${task}`,
          at: 100 + task,
        }),
      ),
    );
    const compiled = await old.right.compileContext({ taskId: '9', taskPrompt: 'after', at: 999 });
    expect(E.isRight(compiled) && compiled.right.line).toBe(6);
    expect(old.right.report()).toMatchObject({ events: 6, errors: [] });
    expect(replayHistory(await logOf(fileSessionStore({ directory }), 's')).report.summary.events).toBe(6);
  });

  it('is read from its first line by a session opened from the snapshot with nothing after it, never from the snapshot’s offset', async () => {
    const directory = join(tempDir('store-anew-'), 'sessions');
    const writer = await openSession('s', { store: fileSessionStore({ directory }) });
    if (E.isLeft(writer)) throw new Error(writer.left.message);
    for (let task = 1; task <= SNAPSHOT_EVERY; task += 1)
      expect(
        E.isRight(await writer.right.compileContext({ taskId: String(task), taskPrompt: `old ${task}`, at: task })),
      ).toBe(true);
    const old = await openSession('s', { store: fileSessionStore({ directory }) });
    if (E.isLeft(old)) throw new Error(old.left.message);
    expect(old.right.snapshotUse()).toEqual({ used: true, position: SNAPSHOT_EVERY });
    const lines = Array.from({ length: SNAPSHOT_EVERY + 2 }, (_, i) =>
      JSON.stringify({ type: 'prompt', taskId: `n${i}`, taskPrompt: `a new, longer prompt ${i}`, at: 100 + i }),
    );
    rewriteInPlace(directory, lines);
    const compiled = await old.right.compileContext({ taskId: 'after', taskPrompt: 'after', at: 999 });
    expect(E.isRight(compiled) && compiled.right.line).toBe(lines.length + 1);
    expect(old.right.report()).toMatchObject({ events: lines.length + 1, errors: [] });
  });

  it('takes no append after a line of the old log, even when the new one is as long', async () => {
    const directory = join(tempDir('store-anew-'), 'sessions');
    const [store, other] = [fileSessionStore({ directory }), fileSessionStore({ directory })];
    expect(E.isRight(await store.append('s', 0, ['{"old": 1}']))).toBe(true);
    expect(E.isRight(await other.read('s', 0))).toBe(true);
    rewriteInPlace(directory, ['{"new": 1}']);
    const appended = await other.append('s', 1, ['{"planned on the old log": 2}']);
    expect(E.isLeft(appended) && appended.left.code).toBe('conflict');
    expect(await logOf(store, 's')).toBe('{"new": 1}');
  });
});

describe('a live session over a store whose append lands but whose answer is lost', () => {
  /** The memory store, with the next `lost` appends written but answered `conflict`, as PostgreSQL answers a connection lost mid-call. */
  const losingAnswers = () => {
    const inner = memorySessionStore();
    const losing = { next: 0 };
    const store: SessionStore = {
      ...inner,
      append: async (id, expected, lines) => {
        const appended = await inner.append(id, expected, lines);
        if (E.isLeft(appended) || losing.next === 0) return appended;
        losing.next -= 1;
        return E.left({
          code: 'conflict',
          message: 'the connection ended before the server answered',
          unanswered: true,
        });
      },
    };
    return { store, losing };
  };

  it('answers its own event as written (its facts, what it closed), not as a resend, and writes it once', async () => {
    const { store, losing } = losingAnswers();
    const opened = await openSession('lost', { store, clock: () => 5_000 });
    if (E.isLeft(opened)) throw new Error(opened.left.message);
    const session = opened.right;
    losing.next = 1;
    const ingested = await session.ingestResult({
      role: 'implementer',
      taskId: '1',
      output: implementer('1', ['src/a.ts']),
    });
    expect(E.isRight(ingested) && [ingested.right.line, ingested.right.duplicate]).toEqual([1, false]);
    expect(E.isRight(ingested) && ingested.right.facts.map((fact) => fact.subject)).toContain('src/a.ts');
    losing.next = 1;
    // Its own time: one the clock gave is moved past the log's last event, and sent again, moved further.
    const invalidation = { subject: 'src/a.ts', relation: 'modified_by', at: 6_000 };
    const closed = await session.invalidateFact(invalidation);
    expect(E.isRight(closed) && [closed.right.line, closed.right.duplicate, closed.right.closed.length]).toEqual([
      2,
      false,
      1,
    ]);
    // Sent again, it is a resend.
    const again = await session.invalidateFact(invalidation);
    expect(E.isRight(again) && [again.right.line, again.right.duplicate]).toEqual([2, true]);
    expect((await logOf(store, 'lost')).split('\n')).toHaveLength(2);
  });

  it('answers its own event once when the time the clock gave was moved past the log by another process behind it', async () => {
    const { store, losing } = losingAnswers();
    const ahead = await openSession('skew', { store, clock: () => 10_000 });
    const behind = await openSession('skew', { store, clock: () => 5_000 });
    if (E.isLeft(ahead) || E.isLeft(behind)) throw new Error('not opened');
    const ingested = await ahead.right.ingestResult({
      role: 'implementer',
      taskId: '1',
      output: implementer('1', ['src/a.ts']),
    });
    expect(E.isRight(ingested)).toBe(true);
    losing.next = 1;
    const closed = await behind.right.invalidateFact({ subject: 'src/a.ts', relation: 'modified_by' });
    expect(E.isRight(closed) && [closed.right.line, closed.right.duplicate, closed.right.closed.length]).toEqual([
      2,
      false,
      1,
    ]);
    const times = (await logOf(store, 'skew')).split('\n').map((line) => (JSON.parse(line) as { at: number }).at);
    expect(times).toEqual([10_000, 10_001]);
  });
});

describe('a live session whose unanswered append lands only after its next read', () => {
  it('answers its own event as written, though the retry met it as another append', async () => {
    // The append is left unanswered and its line committed late, after the retry's read: the
    // retry's append is then refused as an ordinary conflict, and the read after finds the line.
    const inner = memorySessionStore();
    const late: { armed: boolean; pending: (() => Promise<unknown>) | undefined } = {
      armed: false,
      pending: undefined,
    };
    const store: SessionStore = {
      ...inner,
      read: async (id, after, follower) => {
        const read = await inner.read(id, after, follower);
        const pending = late.pending;
        late.pending = undefined;
        await pending?.();
        return read;
      },
      append: async (id, expected, lines, follower) => {
        if (!late.armed) return inner.append(id, expected, lines, follower);
        late.armed = false;
        late.pending = () => inner.append(id, expected, lines);
        return E.left({
          code: 'conflict',
          message: 'the connection ended before the server answered',
          unanswered: true,
        });
      },
    };
    const opened = await openSession('late', { store, clock: () => 5_000 });
    if (E.isLeft(opened)) throw new Error(opened.left.message);
    const session = opened.right;
    late.armed = true;
    const ingested = await session.ingestResult({
      role: 'implementer',
      taskId: '1',
      output: implementer('1', ['b.ts']),
    });
    if (E.isLeft(ingested)) throw new Error(ingested.left.message);
    expect([ingested.right.line, ingested.right.duplicate]).toEqual([1, false]);
    expect(ingested.right.facts.map((fact) => fact.subject)).toContain('b.ts');
    expect((await logOf(store, 'late')).split('\n')).toHaveLength(1);
  });
});

describe('a live session whose append loses the race to the same event sent by another writer', () => {
  /**
   * The memory store, whose next append is beaten by another writer that appends the same lines
   * first: the append is refused `conflict`, as PostgreSQL refuses the later of two identical calls.
   */
  const racing = () => {
    const inner = memorySessionStore();
    const race = { next: false };
    const store: SessionStore = {
      ...inner,
      append: async (id, expected, lines) => {
        if (!race.next) return inner.append(id, expected, lines);
        race.next = false;
        const other = await inner.append(id, expected, lines);
        if (E.isLeft(other)) return other;
        return E.left({ code: 'conflict', message: `session ${id} does not end at line ${expected}` });
      },
    };
    return { store, race };
  };

  it('answers the event as a resend, the other writer its recorder, and it is written once', async () => {
    const { store, race } = racing();
    const opened = await openSession('race', { store, clock: () => 5_000 });
    if (E.isLeft(opened)) throw new Error(opened.left.message);
    const session = opened.right;
    race.next = true;
    const ingested = await session.ingestResult({
      role: 'implementer',
      taskId: '1',
      output: implementer('1', ['src/a.ts']),
    });
    if (E.isLeft(ingested)) throw new Error(ingested.left.message);
    expect(E.isRight(ingested) && [ingested.right.line, ingested.right.duplicate, ingested.right.facts]).toEqual([
      1,
      true,
      [],
    ]);
    race.next = true;
    const compiled = await session.compileContext({ taskId: '2', taskPrompt: 'Change src/a.ts', at: 6_000 });
    if (E.isLeft(compiled)) throw new Error(compiled.left.message);
    expect(E.isRight(compiled) && [compiled.right.line, compiled.right.duplicate]).toEqual([2, true]);
    expect((await logOf(store, 'race')).split('\n')).toHaveLength(2);
  });
});

describe('a live session over a store that cannot be used at all', () => {
  /** The memory store with a session in it, whose snapshot read fails with `failure` (a string: a snapshot that cannot be used), counting the log's reads. */
  const failingSnapshot = async (failure: {
    code: 'store_unreachable' | 'io' | 'invalid_snapshot';
    message: string;
  }) => {
    const inner = memorySessionStore();
    const appended = await inner.append('s', 0, [
      '{"type":"prompt","taskId":"1","taskPrompt":"Change src/a.ts","at":1}',
    ]);
    if (E.isLeft(appended)) throw new Error(appended.left.message);
    const reads = { count: 0 };
    const store: SessionStore = {
      ...inner,
      readSnapshot: async () => E.left(failure),
      read: async (id, after) => {
        reads.count += 1;
        return inner.read(id, after);
      },
    };
    return { store, reads };
  };

  it('is not opened when its snapshot read says the store cannot be reached: the failure, without waiting on the store again for the log', async () => {
    const unreachable = {
      code: 'store_unreachable' as const,
      message: 'cannot reach PostgreSQL at postgres://127.0.0.1:1/x',
    };
    const { store, reads } = await failingSnapshot(unreachable);
    expect(await openSession('s', { store })).toEqual(E.left(unreachable));
    expect(reads.count).toBe(0);
  });

  it('is opened from its log when the snapshot alone cannot be used (a reason, or a failure that is not the store’s)', async () => {
    for (const failure of [
      invalidSnapshot('the snapshot was written by another version'),
      { code: 'io' as const, message: 'busy' },
    ]) {
      const { store, reads } = await failingSnapshot(failure);
      const opened = await openSession('s', { store });
      expect(E.isRight(opened)).toBe(true);
      expect(reads.count).toBeGreaterThan(0);
    }
  });
});

describe('a live session whose snapshot cannot be written', () => {
  /**
   * A session of 300 lines in the memory store (a reader replays it whole: no snapshot is read),
   * whose snapshot writes answer `failure` once (`times`, or always), counting them.
   */
  const failingWrites = async (
    failure: { code: 'store_privilege' | 'io' | 'internal'; message: string },
    times = Infinity,
  ) => {
    const inner = memorySessionStore();
    const writer = await openSession('s', { store: inner, clock: () => 1_000 });
    if (E.isLeft(writer)) throw new Error(writer.left.message);
    for (let i = 0; i < 300; i += 1)
      await writer.right.invalidateFact({ subject: `task:${i}`, relation: 'summary', at: i });
    const writes = { count: 0 };
    const store: SessionStore = {
      ...inner,
      readSnapshot: async () => E.right(undefined),
      writeSnapshot: async (id, snapshot) => {
        writes.count += 1;
        return writes.count <= times ? E.left(failure) : inner.writeSnapshot(id, snapshot);
      },
    };
    return { writer: writer.right, store, writes };
  };

  it('answers every read from the log when the store refuses it, asking once for a privilege and again after a failure of its own', async () => {
    for (const [code, asked] of [
      ['store_privilege', 1],
      ['io', 3],
    ] as const) {
      const { writer, store, writes } = await failingWrites({ code, message: 'refused' });
      const reader = await openSession('s', { store });
      if (E.isLeft(reader)) throw new Error(reader.left.message);
      for (let call = 0; call < 3; call += 1) expect(await reader.right.snapshot()).toEqual(await writer.snapshot());
      expect([code, writes.count]).toEqual([code, asked]);
    }
  });

  it('answers a read with the failure when writing the snapshot is a bug (internal), which no cache hides', async () => {
    const bug = { code: 'internal' as const, message: 'internal error: TypeError: x is not a function' };
    const { store } = await failingWrites(bug);
    const reader = await openSession('s', { store });
    if (E.isLeft(reader)) throw new Error(reader.left.message);
    expect(await reader.right.snapshot()).toEqual(E.left(bug));
  });

  it('answers a write whose snapshot fails as a bug with the failure, and the same call again as the event it recorded', async () => {
    const bug = { code: 'internal' as const, message: 'internal error: TypeError: x is not a function' };
    const { store } = await failingWrites(bug, 1);
    // A writer that replayed 300 lines saves a snapshot after its first event.
    const session = await openSession('s', { store, clock: () => 2_000 });
    if (E.isLeft(session)) throw new Error(session.left.message);
    const call = { subject: 'task:1', relation: 'summary', at: 301 };
    expect(await session.right.invalidateFact(call)).toEqual(
      E.left({
        code: 'internal',
        message: `${bug.message} (saving the snapshot, after the event was recorded on line 301)`,
      }),
    );
    const again = await session.right.invalidateFact(call);
    expect(E.isRight(again) && [again.right.line, again.right.duplicate]).toEqual([301, false]);
    expect((await logOf(store, 's')).split('\n')).toHaveLength(301);
  });
});

/**
 * The live session shell on real files in one process: a session answers what `replay` prints
 * for its log, re-sent events change nothing, bad input writes nothing, and a log written by
 * someone else (another session, a crash, a hand edit) is read exactly as `replay` reads it.
 */
import { spawnSync } from 'node:child_process';
import { constants } from 'node:buffer';
import {
  appendFileSync,
  closeSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { describe, expect, it } from 'vitest';
import { decodeBytes } from '../../../src/core/history/encoding.js';
import { BEGIN_MARKER as BEGIN, END_MARKER as END } from '../../../src/core/extract/parse.js';
import { parseHistory, replayHistory, selectValidFacts } from '../../../src/index.js';
import { replayHistoryFile } from '../../../src/node/history.js';
import {
  fileSessionStore,
  latestSessionId,
  listSessionIds,
  type LiveSession,
  memorySessionStore,
  MAX_OUTPUT_DEPTH,
  MAX_OUTPUT_LENGTH,
  MAX_TASK_ID_LENGTH,
  openSession,
  parseSessionId,
  resolveSessionsDirectory,
  type SessionOptions,
} from '../../../src/live/session/index.js';
import type { SessionStore } from '../../../src/live/session/store.js';
import { SECRETS, secretPart } from '../../fixtures/secrets.js';
import { tempDir } from '../../tempDirs.js';

const example = readFileSync(new URL('../../../examples/web-api-session.jsonl', import.meta.url), 'utf8');
const badLines = readFileSync(new URL('../../fixtures/bad-lines.jsonl', import.meta.url), 'utf8');

const right = <T>(either: E.Either<unknown, T>): T => {
  if (E.isLeft(either)) throw new Error(`expected a Right, got ${JSON.stringify(either.left)}`);
  return either.right;
};

const open = async (id: string, options: SessionOptions): Promise<LiveSession> => right(await openSession(id, options));

const result = (taskId: string, summary: string) => ({
  task_id: taskId,
  status: 'completed',
  summary,
  files_changed: [`src/${taskId}.ts`],
});

/** Drives every event of a history through the session's calls, with the history's own times. */
const drive = async (session: LiveSession, text: string): Promise<ReadonlyArray<string>> => {
  const sections: string[] = [];
  for (const event of parseHistory(text).events) {
    if (event.type === 'dispatch')
      right(await session.ingestResult({ role: event.role, taskId: event.taskId, output: event.output, at: event.at }));
    if (event.type === 'invalidate')
      right(await session.invalidateFact({ subject: event.subject, relation: event.relation, at: event.at }));
    if (event.type === 'compact') right(await session.compact({ maxFacts: event.maxFacts, at: event.at }));
    if (event.type === 'prompt') {
      const { tags, maxFacts, maxTokens } = event;
      const compiled = right(
        await session.compileContext({
          taskId: event.taskId,
          taskPrompt: event.taskPrompt,
          ...(tags === undefined ? {} : { tags }),
          ...(maxFacts === undefined ? {} : { maxFacts }),
          ...(maxTokens === undefined ? {} : { maxTokens }),
          at: event.at,
        }),
      );
      sections.push(compiled.sessionContext);
    }
  }
  return sections;
};

describe('a live session', () => {
  it('rejects a logged prompt whose task id no record can hold, as a replay of the log rejects it', async () => {
    const store = memorySessionStore();
    const lines = [
      JSON.stringify({ type: 'prompt', taskId: 'T'.repeat(MAX_TASK_ID_LENGTH + 1), taskPrompt: 'do it', at: 1_000 }),
      JSON.stringify({ type: 'prompt', taskId: 'T', taskPrompt: 'do it', at: 2_000 }),
    ];
    right(await store.append('long-id', 0, lines));
    const session = right(await openSession('long-id', { store }));
    const { errors } = replayHistory(lines.join('\n')).report;
    expect(errors).toEqual([{ line: 1, code: 'invalid_input', message: 'task id is longer than 50 characters' }]);
    expect(session.report().errors).toEqual(errors);
  });

  it('answers each prompt with the section replay prints, and its log replays to the same report', async () => {
    const cwd = tempDir('session-');
    const session = await open('web-api', { cwd });
    const sections = await drive(session, example);
    const expected = replayHistory(example);
    expect(sections).toEqual(expected.report.prompts.map((prompt) => prompt.sessionContext));
    const log = readFileSync(join(cwd, '.fact-tracker', 'sessions', 'web-api.jsonl'), 'utf8');
    // The example has one event per line and no rejected line: the whole report is the same, line numbers included.
    expect(replayHistory(log).report).toEqual(expected.report);
    expect(right(await session.snapshot())).toEqual(expected.store);
    // A second process opening the log replays it to the same store.
    const reopened = await open('web-api', { cwd, create: false });
    expect(right(await reopened.snapshot())).toEqual(expected.store);
    expect(reopened.report()).toEqual({ events: 40, errors: [], setAside: [] });
  });

  it("keeps a prompt's layout in its line: the grouped section it answers is the one replay gives, and replay --layout overrides it", async () => {
    const cwd = tempDir('session-layout-');
    const session = await open('layout', { cwd });
    right(
      await session.ingestResult({
        role: 'implementer',
        taskId: '1',
        output: { ...result('1', 'Added the config'), files_changed: ['src/config.ts', 'src/server.ts'] },
        at: 1_000,
      }),
    );
    const prompt = { taskId: '2', taskPrompt: 'Read src/config.ts in src/server.ts', at: 2_000 };
    const grouped = right(await session.compileContext({ ...prompt, layout: 'grouped' }));
    const lines = right(await session.compileContext({ ...prompt, taskId: '3', at: 3_000 }));
    expect(grouped.sessionContext).toContain('- task:1 modified src/server.ts, src/config.ts\n');
    expect(lines.sessionContext).toContain('- src/config.ts modified_by task:1 [task:1]\n');
    const log = readFileSync(join(cwd, '.fact-tracker', 'sessions', 'layout.jsonl'), 'utf8');
    expect(log.split('\n').filter((line) => line.includes('"layout":"grouped"'))).toHaveLength(1);
    const replayed = replayHistory(log).report.prompts.map((section) => section.sessionContext);
    expect(replayed).toEqual([grouped.sessionContext, lines.sessionContext]);
    // A replay's layout is over each prompt's own, as its budgets are.
    const asLines = replayHistory(log, { layout: 'lines' }).report.prompts.map((section) => section.sessionContext);
    expect(asLines).toEqual([lines.sessionContext, lines.sessionContext]);
    // A layout that is none is refused by name, and nothing is written.
    expect(await session.compileContext({ ...prompt, taskId: '4', layout: 'wide' as never })).toEqual(
      E.left({ code: 'invalid_field', message: 'layout must be lines or grouped, not "wide"' }),
    );
    expect(readFileSync(join(cwd, '.fact-tracker', 'sessions', 'layout.jsonl'), 'utf8')).toBe(log);
  });

  it('changes nothing when an event is sent again with the same time', async () => {
    const cwd = tempDir('session-');
    const session = await open('s', { cwd });
    const input = { role: 'implementer' as const, taskId: '1', output: result('1', 'Added a parser'), at: 1000 };
    const first = right(await session.ingestResult(input));
    expect(first).toMatchObject({ line: 1, duplicate: false });
    expect(first.facts.length).toBeGreaterThan(0);
    const before = right(await session.snapshot());
    const again = right(await session.ingestResult(input));
    expect(again).toEqual({ line: 1, duplicate: true, facts: [], warnings: [] });
    const prompt = { taskId: '2', taskPrompt: 'Extend the parser in src/1.ts', at: 2000 };
    const compiled = right(await session.compileContext(prompt));
    const recompiled = right(await session.compileContext(prompt));
    expect(recompiled).toEqual({ ...compiled, duplicate: true });
    right(await session.invalidateFact({ subject: 'src/1.ts', relation: 'modified_by', at: 3000 }));
    expect(right(await session.invalidateFact({ subject: 'src/1.ts', relation: 'modified_by', at: 3000 }))).toEqual({
      line: 3,
      duplicate: true,
      closed: [],
    });
    const log = readFileSync(session.file, 'utf8');
    expect(log.trimEnd().split('\n')).toHaveLength(3);
    expect(right(await session.snapshot())).not.toBe(before);
    // The same result at another time is another event.
    expect(right(await session.ingestResult({ ...input, at: 4000 }))).toMatchObject({ line: 4, duplicate: false });
  });

  it('recognizes a result sent again with its members in another order, with and without a time, and writes each line as given', async () => {
    const directory = tempDir('session-');
    let now = 10_000;
    const options = { directory, clock: () => (now += 1_000) };
    const session = await open('s', options);
    const review = {
      task_id: '1',
      assessment: 'needs_changes',
      strengths: ['small diff'],
      issues: [{ severity: 'minor', file: 'src/a.ts', message: 'a name', fix: 'rename it' }],
    };
    const reordered = {
      issues: [{ fix: 'rename it', message: 'a name', file: 'src/a.ts', severity: 'minor' }],
      strengths: ['small diff'],
      assessment: 'needs_changes',
      task_id: '1',
    };
    const timed = { role: 'reviewer' as const, taskId: '1', at: 1_000 };
    expect(right(await session.ingestResult({ ...timed, output: review }))).toMatchObject({
      line: 1,
      duplicate: false,
    });
    const log = readFileSync(session.file, 'utf8');
    expect(log).toBe(
      `${JSON.stringify({ type: 'dispatch', role: 'reviewer', taskId: '1', at: 1_000, result: review })}\n`,
    );
    // With its time: among the recent events, in this session and in one that reads the line from the log.
    const other = await open('s', options);
    for (const reader of [session, other])
      expect(right(await reader.ingestResult({ ...timed, output: reordered }))).toEqual({
        line: 1,
        duplicate: true,
        facts: [],
        warnings: [],
      });
    // Without a time: as the last result of its task.
    const bare = { role: 'implementer' as const, taskId: '2' };
    const given = { task_id: '2', status: 'completed', summary: 'Added', files_changed: ['src/x.ts', 'src/y.ts'] };
    expect(right(await session.ingestResult({ ...bare, output: given }))).toMatchObject({ line: 2, duplicate: false });
    for (const reader of [session, other])
      expect(
        right(
          await reader.ingestResult({
            ...bare,
            output: { files_changed: ['src/x.ts', 'src/y.ts'], summary: 'Added', status: 'completed', task_id: '2' },
          }),
        ),
      ).toMatchObject({ line: 2, duplicate: true });
    expect(readFileSync(session.file, 'utf8').trimEnd().split('\n')).toHaveLength(2);
    // An array keeps its order: its entries in another order are another result.
    expect(
      right(await session.ingestResult({ ...bare, output: { ...given, files_changed: ['src/y.ts', 'src/x.ts'] } })),
    ).toMatchObject({ line: 3, duplicate: false });
  });

  it('recognizes a result holding a secret, sent again without a time, by what its redacted line keeps', async () => {
    const [, token] = SECRETS.find(([shape]) => shape === 'a GitHub token')!;
    const cwd = tempDir('session-');
    const session = await open('s', { cwd });
    for (const output of [
      result('1', `Pushed with ${token}`),
      `Done.\n${BEGIN}\n${JSON.stringify(result('2', `Pushed with ${token}`))}\n${END}`,
    ]) {
      const input = { role: 'implementer' as const, taskId: typeof output === 'string' ? '2' : '1', output };
      const first = right(await session.ingestResult(input));
      expect(first.duplicate).toBe(false);
      expect(right(await session.ingestResult(input))).toEqual({
        line: first.line,
        duplicate: true,
        facts: [],
        warnings: [],
      });
    }
    const log = readFileSync(session.file, 'utf8');
    expect(log.trimEnd().split('\n')).toHaveLength(2);
    expect(log).not.toContain(secretPart(token));
  });

  it('refuses a task id holding a secret, writing nothing, and writes an invalidation with its secrets redacted', async () => {
    const [, token] = SECRETS.find(([shape]) => shape === 'a GitHub token')!;
    const cwd = tempDir('session-');
    const session = await open('s', { cwd });
    const refused = [
      await session.compileContext({ taskId: token, taskPrompt: 'push the release' }),
      await session.ingestResult({ role: 'implementer', taskId: `T ${token}`, output: result('1', 'Pushed.') }),
    ];
    for (const answer of refused)
      expect(answer).toEqual(
        E.left({
          code: 'invalid_field',
          message: expect.stringMatching(/^task id holds what looks like a GitHub token: /u) as string,
        }),
      );
    expect(existsSync(session.file) ? readFileSync(session.file, 'utf8') : '').toBe('');
    const url = 'postgres://app:hunter2pass@db.internal/prod';
    right(
      await session.ingestResult({ role: 'implementer', taskId: '1', output: result('1', `Moved to ${url}`), at: 1 }),
    );
    const closed = right(
      await session.invalidateFact({ subject: `src/1.ts ${token}`, relation: 'modified_by', at: 2 }),
    );
    expect(closed.closed).toEqual([]);
    const log = readFileSync(session.file, 'utf8');
    expect(log).not.toContain(secretPart(token));
    expect(log).not.toContain('hunter2pass');
    expect(log).toContain('"subject":"src/1.ts [redacted: a GitHub token]"');
  });

  it('closes the pair of a path holding a secret by the path as the result gave it, as the tracker and replay do', async () => {
    const [, token] = SECRETS.find(([shape]) => shape === 'a GitHub token')!;
    const session = await open('s', { cwd: tempDir('session-') });
    const output = { ...result('1', 'Changed the config'), files_changed: [`deploy/${token}/config.ts`] };
    right(await session.ingestResult({ role: 'implementer', taskId: '1', output, at: 1 }));
    const closed = right(
      await session.invalidateFact({ subject: `deploy/${token}/config.ts`, relation: 'modified_by', at: 2 }),
    );
    expect(closed.closed.map((fact) => fact.subject)).toEqual(['deploy/[redacted: a GitHub token]/config.ts']);
    expect(readFileSync(session.file, 'utf8')).not.toContain(secretPart(token));
  });

  it('writes nothing for a result the contract rejects or an event the history format rejects', async () => {
    const cwd = tempDir('session-');
    const session = await open('s', { cwd });
    right(await session.ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'First'), at: 1 }));
    const log = readFileSync(session.file, 'utf8');
    const rejected = await session.ingestResult({ role: 'implementer', taskId: '2', output: 'no result block here' });
    expect(rejected).toEqual(E.left(expect.objectContaining({ code: 'marker_missing' })));
    const invalid = await session.ingestResult({ role: 'implementer', taskId: '2', output: { task_id: '2' } });
    expect(invalid).toEqual(E.left(expect.objectContaining({ code: 'schema_invalid' })));
    const noTask = await session.ingestResult({ role: 'implementer', taskId: ' ', output: result('2', 'x') });
    expect(noTask).toEqual(E.left(expect.objectContaining({ code: 'invalid_field', message: 'taskId is empty' })));
    const badRole = await session.ingestResult({ role: 'tester' as never, taskId: '2', output: result('2', 'x') });
    expect(badRole).toEqual(E.left(expect.objectContaining({ code: 'invalid_field' })));
    const badTime = await session.ingestResult({ role: 'implementer', taskId: '2', output: 'x', at: Number.NaN });
    expect(badTime).toEqual(E.left(expect.objectContaining({ code: 'invalid_input' })));
    expect(readFileSync(session.file, 'utf8')).toBe(log);
    expect(session.report().events).toBe(1);
  });

  it('reads an input once: what it checks against the limits is what it writes, and a getter that throws is invalid_input', async () => {
    const session = await open('getters', { store: memorySessionStore() });
    // Short while the limits are checked, three megabytes when asked again.
    let reads = 0;
    const output = {
      ...result('1', 'x'),
      get summary(): string {
        reads += 1;
        return reads === 1 ? 'short' : 'z'.repeat(3 * MAX_OUTPUT_LENGTH);
      },
    };
    const ingested = right(await session.ingestResult({ role: 'implementer', taskId: '1', output }));
    expect(ingested.facts.map((fact) => fact.object)).toContain('short');
    expect(reads).toBe(1);
    const throwing = {
      role: 'implementer',
      taskId: '2',
      output: result('2', 'y'),
      get at(): number {
        throw new Error('no time');
      },
    };
    expect(await session.ingestResult(throwing as never)).toEqual(
      E.left({ code: 'invalid_input', message: 'the input cannot be read: no time' }),
    );
    const proxy = new Proxy(result('3', 'z'), {
      ownKeys: () => {
        throw new Error('no keys');
      },
    });
    expect(await session.ingestResult({ role: 'implementer', taskId: '3', output: proxy })).toEqual(
      E.left({ code: 'invalid_input', message: 'the input cannot be read: no keys' }),
    );
    expect(session.report().events).toBe(1);
    expect(JSON.stringify(right(await session.snapshot())).length).toBeLessThan(MAX_OUTPUT_LENGTH);
  });

  it('refuses an array with a hole, however long, as invalid_input at its first hole, and writes nothing', async () => {
    const session = await open('holes', { store: memorySessionStore() });
    for (const length of [2, 2 ** 32 - 1]) {
      const files: string[] = [];
      files[length - 1] = 'src/late.ts';
      expect(
        await session.ingestResult({
          role: 'implementer',
          taskId: '1',
          output: { ...result('1', 'x'), files_changed: files },
        }),
      ).toEqual(
        E.left({
          code: 'invalid_input',
          message: `the input cannot be read: an array of ${length} elements has a hole at [0], an element never set`,
        }),
      );
    }
    expect(session.report().events).toBe(0);
  });

  it('answers every input it cannot take with a Left, never a rejected promise, and writes nothing', async () => {
    const cwd = tempDir('session-');
    const session = await open('hostile', { cwd });
    right(await session.ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'First'), at: 1 }));
    const log = readFileSync(session.file, 'utf8');
    const throwing = Object.defineProperty({ role: 'implementer', taskId: '2' }, 'output', {
      enumerable: true,
      get: () => {
        throw new Error('the getter failed');
      },
    });
    const answers = await Promise.allSettled([
      session.ingestResult({ role: 'implementer', taskId: '2', output: { ...result('2', 'x'), size: 1n } }),
      session.ingestResult(throwing as never),
      session.compileContext({ taskId: '2', taskPrompt: 'x', maxFacts: 1n as never }),
      session.previewContext(Object.defineProperty({}, 'taskId', { get: () => [][0]!['x'] }) as never),
      session.compileContext({ taskId: '2', taskPrompt: 'x', maxTokens: Number.POSITIVE_INFINITY }),
      session.compact({ maxFacts: Number.NaN }),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill('fulfilled'));
    const [bigint, getter, bigCount, previewed, infinite, notANumber] = answers.map((answer) =>
      answer.status === 'fulfilled' ? answer.value : undefined,
    );
    expect(bigint).toEqual(E.left({ code: 'invalid_input', message: expect.stringContaining('BigInt') }));
    // A getter that throws is the caller's input at fault, not a bug: never internal.
    expect(getter).toEqual(E.left({ code: 'invalid_input', message: 'the input cannot be read: the getter failed' }));
    expect(bigCount).toEqual(
      E.left({ code: 'invalid_field', message: 'maxFacts must be a whole number 0 or more, not the BigInt 1n' }),
    );
    // A field that is not enumerable is none of the input's fields, as JSON would read it.
    expect(previewed).toEqual(E.left(expect.objectContaining({ code: 'missing_field' })));
    // Named as given, not as the null JSON would have written for it.
    expect(infinite).toEqual(
      E.left({ code: 'invalid_field', message: 'maxTokens must be a whole number 0 or more, not Infinity' }),
    );
    expect(notANumber).toEqual(
      E.left({ code: 'invalid_field', message: 'maxFacts must be a whole number 0 or more, not NaN' }),
    );
    // A field JSON cannot write (a BigInt), or a time whose text form throws, is the caller's input, said so.
    expect(await session.ingestResult({ role: 1n, taskId: '2', output: result('2', 'x') } as never)).toEqual(
      E.left({ code: 'invalid_field', message: 'role must be implementer or reviewer, not a bigint' }),
    );
    for (const prompt of [
      { taskId: '2', taskPrompt: 5n },
      { taskId: '2', taskPrompt: 'x', tags: [1n] },
    ]) {
      const answers = [await session.compileContext(prompt as never), await session.previewContext(prompt as never)];
      for (const answer of answers)
        expect(answer).toEqual(
          E.left({
            code: 'invalid_input',
            message: expect.stringMatching(/^the event cannot be written to the log as JSON: /u),
          }),
        );
    }
    const untold = {
      toString: () => {
        throw new Error('no text');
      },
    };
    expect(await session.ingestResult({ role: 'implementer', taskId: '2', output: 'x', at: untold } as never)).toEqual(
      E.left(expect.objectContaining({ code: 'invalid_input' })),
    );
    // A task id that is no id, one JSON cannot write among them, is named as such.
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    for (const taskId of [cyclic, 5n])
      expect(await session.compileContext({ taskId, taskPrompt: 'x' } as never)).toEqual(
        E.left({
          code: 'invalid_field',
          message: expect.stringMatching(/^taskId is an? (object|bigint), not text or a whole number$/u),
        }),
      );
    // A clock that throws is the caller's: said as such, at the call.
    const clocked = await open('hostile', {
      cwd,
      clock: () => {
        throw new Error('no time today');
      },
    });
    expect(await clocked.compileContext({ taskId: '2', taskPrompt: 'x' })).toEqual(
      E.left({ code: 'invalid_input', message: 'the clock failed: no time today' }),
    );
    // A clock in microseconds gives times no history can hold: said of the clock, not of an `at` nobody gave.
    const micro = await open('hostile', { cwd, clock: () => 1_700_000_000_000_000 });
    expect(await micro.invalidateFact({ subject: 'a', relation: 'b' })).toEqual(
      E.left({
        code: 'invalid_input',
        message: 'the clock answered no time: 1700000000000000 milliseconds is outside the years 0000 to 9999',
      }),
    );
    expect(await session.compileContext({ taskId: '2', taskPrompt: 'x', at: 1e20 })).toEqual(
      E.left({
        code: 'invalid_field',
        message: 'at is not a time: 100000000000000000000 milliseconds is outside the years 0000 to 9999',
      }),
    );
    expect(readFileSync(session.file, 'utf8')).toBe(log);
  });

  it('bounds a task id once its whitespace is collapsed, and records it collapsed, as facts carry it', async () => {
    const session = await open('task-ids', { cwd: tempDir('session-') });
    const half = 'c'.repeat(MAX_TASK_ID_LENGTH / 2);
    const atLimit = `${half}  ${half.slice(1)}`;
    const overLimit = `${half}  ${half}`;
    const broken = 'a\n[Session Context]';
    for (const taskId of [atLimit, broken]) {
      right(await session.compileContext({ taskId, taskPrompt: 'work', at: 1 }));
      right(await session.ingestResult({ role: 'implementer', taskId, output: result('x', 'done'), at: 2 }));
    }
    const refused = {
      code: 'invalid_field',
      message: `taskId is ${MAX_TASK_ID_LENGTH + 1} characters long once whitespace is collapsed; at most ${MAX_TASK_ID_LENGTH} are allowed`,
    };
    expect(await session.compileContext({ taskId: overLimit, taskPrompt: 'work', at: 3 })).toEqual(E.left(refused));
    expect(
      await session.ingestResult({ role: 'implementer', taskId: overLimit, output: result('x', 'done'), at: 3 }),
    ).toEqual(E.left(refused));
    const collapsed = `${half} ${half.slice(1)}`;
    const lines = readFileSync(session.file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { taskId: string }).taskId);
    expect(lines).toEqual([collapsed, collapsed, 'a [Session Context]', 'a [Session Context]']);
    // The same result sent again without a time is recognized by its collapsed task.
    const again = right(
      await session.ingestResult({ role: 'implementer', taskId: broken, output: result('x', 'done') }),
    );
    expect(again.duplicate).toBe(true);
    const facts = selectValidFacts(right(await session.snapshot()));
    expect(new Set(facts.map((fact) => fact.sourceTaskId))).toEqual(new Set([collapsed, 'a [Session Context]']));
  });

  it('answers a token counter that answers no number of tokens with invalid_input naming countTokens, one that throws with internal saying so, and writes nothing', async () => {
    const counters: ReadonlyArray<readonly [(text: string) => number, { code: string; message: string }]> = [
      [
        () => Number.NaN,
        {
          code: 'invalid_input',
          message: 'countTokens answered NaN, not a number of tokens (a finite number 0 or more)',
        },
      ],
      [
        () => {
          throw new Error('counter bug');
        },
        {
          code: 'internal',
          message: 'unexpected failure (a bug; please report it): the token counter (countTokens) threw: counter bug',
        },
      ],
    ];
    for (const [countTokens, failure] of counters) {
      const session = await open('counted', { cwd: tempDir('session-'), countTokens });
      right(await session.ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'First'), at: 1 }));
      const log = readFileSync(session.file, 'utf8');
      const refused = E.left(failure);
      expect(await session.compileContext({ taskId: '2', taskPrompt: 'Change src/1.ts', at: 2 })).toEqual(refused);
      expect(await session.previewContext({ taskId: '2', taskPrompt: 'Change src/1.ts' })).toEqual(refused);
      expect(readFileSync(session.file, 'utf8')).toBe(log);
    }
  });

  it('records a result object nested as deep as MAX_OUTPUT_DEPTH, and refuses one level more as too deep an output', async () => {
    const cwd = tempDir('session-');
    const session = await open('deep', { cwd });
    /** A result whose nesting is `depth` levels in all: the object itself, then arrays. */
    const nested = (taskId: string, depth: number) => {
      let value: unknown = 'x';
      for (let level = 2; level <= depth; level += 1) value = [value];
      return { ...result(taskId, 'Deep'), extra: value };
    };
    const deepest = await session.ingestResult({
      role: 'implementer',
      taskId: '1',
      output: nested('1', MAX_OUTPUT_DEPTH),
    });
    expect(E.isRight(deepest) && deepest.right.line).toBe(1);
    expect(
      await session.ingestResult({ role: 'implementer', taskId: '2', output: nested('2', MAX_OUTPUT_DEPTH + 1) }),
    ).toEqual(
      E.left({ code: 'too_large', message: `output nests arrays and objects more than ${MAX_OUTPUT_DEPTH} deep` }),
    );
    expect(replayHistory(readFileSync(session.file, 'utf8')).report.errors).toEqual([]);
  });

  it('reports corrupt lines with their line numbers exactly as replay does, and applies the rest', async () => {
    const cwd = tempDir('session-');
    const { directory } = resolveSessionsDirectory({ cwd });
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, 'bad.jsonl'), badLines);
    const session = await open('bad', { cwd, create: false });
    const expected = replayHistory(badLines);
    expect(expected.report.errors.length).toBeGreaterThan(3);
    expect(session.report().errors).toEqual(expected.report.errors);
    expect(session.report().events).toBe(expected.report.summary.events);
    expect(right(await session.snapshot())).toEqual(expected.store);
    // Appending after them numbers the new line after every line of the file, blank or bad.
    const lines = badLines.split(/\r\n|\n|\r/u).length - (badLines.endsWith('\n') ? 1 : 0);
    const added = right(await session.invalidateFact({ subject: 'src/app.ts', relation: 'modified_by' }));
    expect(added.line).toBe(lines + 1);
    expect(replayHistory(readFileSync(session.file, 'utf8')).report.errors).toEqual(expected.report.errors);
  });

  it('reads a log whose lines break at a lone \\r as replay does: every event, nothing set aside, and the next event on a line of its own', async () => {
    const cwd = tempDir('session-cr-');
    const { directory } = resolveSessionsDirectory({ cwd });
    mkdirSync(directory, { recursive: true });
    // As an old Mac editor writes it: every line, the last one included, ends at a lone \r.
    const log = `${example
      .split('\n')
      .filter((line) => line.trim() !== '')
      .join('\r')}\r`;
    writeFileSync(join(directory, 'cr.jsonl'), log);
    const expected = replayHistory(log);
    expect(expected.report.summary.events).toBe(40);
    const session = await open('cr', { cwd, create: false });
    expect(session.report()).toEqual({ events: 40, errors: [], setAside: [] });
    expect(right(await session.snapshot())).toEqual(expected.store);
    const added = right(await session.invalidateFact({ subject: 'src/app.ts', relation: 'modified_by' }));
    expect(added.line).toBe(41);
    const after = readFileSync(session.file, 'utf8');
    expect(after.startsWith(log)).toBe(true);
    expect(existsSync(`${session.file}.set-aside`)).toBe(false);
    const replayed = replayHistory(after);
    expect([replayed.report.summary.events, replayed.report.errors]).toEqual([41, []]);
    expect(right(await open('cr', { cwd, create: false }).then((again) => again.snapshot()))).toEqual(replayed.store);
  });

  it('reads a log longer than the longest string the engine makes as replay reads it: each line too long rejected, every other applied', async () => {
    const cwd = tempDir('session-huge-');
    const { directory } = resolveSessionsDirectory({ cwd });
    mkdirSync(directory, { recursive: true });
    const file = join(directory, 'huge.jsonl');
    const lines = example.split('\n').filter((line) => line.trim() !== '');
    // Between the example's halves, lines of zero bytes (sparse: no disk is used) that add up to
    // more than the longest string: ten of 45 MiB, under a line decoded whole, and one of 90 MiB.
    const runs = [...Array.from({ length: 10 }, () => 45 * 2 ** 20), 90 * 2 ** 20];
    expect(runs.reduce((sum, run) => sum + run, 0)).toBeGreaterThan(constants.MAX_STRING_LENGTH);
    const [head, tail] = [`${lines.slice(0, 20).join('\n')}\n`, `${lines.slice(20).join('\n')}\n`];
    writeFileSync(file, head);
    const fd = openSync(file, 'r+');
    let end = statSync(file).size;
    for (const run of runs) {
      end += run;
      writeSync(fd, '\n', end);
      end += 1;
    }
    writeSync(fd, tail, end);
    closeSync(fd);
    // Replay is given the log's bytes as a stream, each run from one buffer of zeros given again
    // and again, rather than the file read into new buffers a second time.
    let streamed = 0;
    const counted = (chunk: Buffer): Buffer => {
      streamed += chunk.length;
      return chunk;
    };
    const sameBytes = async function* (): AsyncGenerator<Buffer> {
      const zeros = Buffer.alloc(2 ** 20);
      yield counted(Buffer.from(head));
      for (const run of runs) {
        for (let left = run; left > 0; left -= zeros.length)
          yield counted(zeros.subarray(0, Math.min(left, zeros.length)));
        yield counted(Buffer.from('\n'));
      }
      yield counted(Buffer.from(tail));
    };
    const expected = right(await replayHistoryFile(sameBytes()));
    expect(streamed).toBe(statSync(file).size);
    expect(expected.report.errors.map(({ line, code }) => [line, code])).toEqual(
      runs.map((_, i) => [21 + i, 'too_large']),
    );
    const session = await open('huge', { cwd, create: false });
    expect(session.report()).toEqual({ events: 40, errors: expected.report.errors, setAside: [] });
    expect(right(await session.snapshot())).toEqual(expected.store);
    const added = right(await session.invalidateFact({ subject: 'src/app.ts', relation: 'modified_by' }));
    expect(added.line).toBe(lines.length + runs.length + 1);
  }, 60_000);

  it('leaves a UTF-16 log as it is: the session is not opened, and says why', async () => {
    const cwd = tempDir('session-utf16-');
    const { directory } = resolveSessionsDirectory({ cwd });
    mkdirSync(directory, { recursive: true });
    // As Windows PowerShell's > writes it, with CRLF; its big-endian twin; and both without the mark, as iconv writes them.
    const little = Buffer.from(`\uFEFF${example.replace(/\n/gu, '\r\n')}`, 'utf16le');
    const bare = little.subarray(2);
    const logs = { le: little, be: Buffer.from(little).swap16(), bareLe: bare, bareBe: Buffer.from(bare).swap16() };
    for (const [id, bytes] of Object.entries(logs)) {
      const file = join(directory, `${id}.jsonl`);
      writeFileSync(file, bytes);
      // Replay reads it whole...
      expect(replayHistory(decodeBytes(readFileSync(file))).report.summary.events).toBe(40);
      // ...a live session, which appends UTF-8, refuses it rather than corrupt it.
      for (const create of [false, true])
        expect(await openSession(id, { cwd, create })).toEqual(
          E.left({
            code: 'io',
            message: `the log ${file} is UTF-16 (it starts with a UTF-16 byte-order mark or with text in UTF-16): a live session reads and appends UTF-8 only, so it leaves the log as it is (converted to UTF-8, the session goes on); \`fact-tracker replay --session ${id}\` reads it as it is`,
          }),
        );
      const store = fileSessionStore({ cwd });
      expect(E.isLeft(await store.append(id, 0, ['{"type":"prompt","taskId":"1","taskPrompt":"x","at":1}']))).toBe(
        true,
      );
      expect(E.isLeft(await store.repair(id))).toBe(true);
      expect(readFileSync(file).equals(bytes)).toBe(true);
    }
    // Nothing beside them either: no torn line set aside, no snapshot (and no .gitignore in a folder that held logs already).
    expect(readdirSync(directory).sort()).toEqual(['bareBe.jsonl', 'bareLe.jsonl', 'be.jsonl', 'le.jsonl']);
  });

  it('sets a torn last line aside in a side file, reports it, and keeps every complete event', async () => {
    const cwd = tempDir('session-');
    const writer = await open('torn', { cwd, clock: () => 5_000 });
    right(await writer.ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'First'), at: 1 }));
    right(await writer.ingestResult({ role: 'implementer', taskId: '2', output: result('2', 'Second'), at: 2 }));
    const whole = readFileSync(writer.file, 'utf8');
    const torn = '{"type":"dispatch","role":"implementer","taskId":"3","at":3,"result":{"task_id":"3","sta';
    appendFileSync(writer.file, torn);
    // A reader does not touch it: it may be a line another process is writing right now.
    expect(right(await writer.snapshot())).toEqual(replayHistory(whole).store);
    expect(readFileSync(writer.file, 'utf8')).toBe(whole + torn);
    // The next open takes the lock, so nobody is writing: the tail is a crash's, and goes aside.
    const reader = await open('torn', { cwd, create: false, clock: () => 5_000 });
    expect(reader.report()).toEqual({
      events: 2,
      errors: [],
      setAside: [{ line: 3, bytes: Buffer.byteLength(torn), file: `${writer.file}.set-aside` }],
    });
    expect(readFileSync(writer.file, 'utf8')).toBe(whole);
    const kept = JSON.parse(readFileSync(`${writer.file}.set-aside`, 'utf8'));
    expect(kept).toEqual({
      setAsideAt: '1970-01-01T00:00:05.000Z',
      line: 3,
      bytes: Buffer.byteLength(torn),
      text: torn,
      base64: Buffer.from(torn).toString('base64'),
    });
    // The writer catches up with the repaired file and appends after it.
    expect(right(await writer.invalidateFact({ subject: 'src/1.ts', relation: 'modified_by', at: 4 })).line).toBe(3);
    expect(replayHistory(readFileSync(writer.file, 'utf8')).report.errors).toEqual([]);
  });

  it('answers a prompt sent again with the section its line holds, not one of what was recorded since', async () => {
    const cwd = tempDir('session-');
    const [a, b] = [await open('resent', { cwd }), await open('resent', { cwd })];
    right(await a.ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'Parser'), at: 1000 }));
    const prompt = { taskId: '3', taskPrompt: 'Use src/1.ts and src/2.ts', at: 5000 };
    const first = right(await a.compileContext(prompt));
    expect(first.facts.map((fact) => fact.subject)).not.toContain('src/2.ts');
    // A result recorded after the prompt's line, whose fact the prompt would now be given.
    right(await b.ingestResult({ role: 'implementer', taskId: '2', output: result('2', 'Lexer'), at: 6000 }));
    expect(right(await a.previewContext(prompt)).facts.map((fact) => fact.subject)).toContain('src/2.ts');
    const replayed = replayHistory(readFileSync(a.file, 'utf8')).report.prompts.find((entry) => entry.line === 2);
    expect(replayed?.sessionContext).toBe(first.sessionContext);
    // Sent again to the process that recorded it, and to another one (which reads the log to answer).
    for (const session of [a, b, await open('resent', { cwd })])
      expect(right(await session.compileContext(prompt))).toEqual({ ...first, duplicate: true });
    expect(readFileSync(a.file, 'utf8').trimEnd().split('\n')).toHaveLength(3);
  });

  it('still sees a log replaced while it read the log from its start for an explanation', async () => {
    // Another log, longer than this one, to put in its place.
    const elsewhere = tempDir('session-');
    const other = await open('swap', { cwd: elsewhere });
    for (const task of ['7', '8', '9'])
      right(await other.ingestResult({ role: 'implementer', taskId: task, output: result(task, 'Other'), at: 1000 }));
    const cwd = tempDir('session-');
    const files = fileSessionStore({ cwd });
    let swap = false;
    const store: SessionStore = {
      ...files,
      read: async (id, after) => {
        if (swap && after === 0) {
          swap = false;
          const next = join(cwd, 'next.jsonl');
          writeFileSync(next, readFileSync(other.file));
          renameSync(next, join(cwd, '.fact-tracker', 'sessions', 'swap.jsonl'));
        }
        return files.read(id, after);
      },
    };
    const session = right(await openSession('swap', { store }));
    right(await session.ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'Parser'), at: 1000 }));
    const prompt = { taskId: '2', taskPrompt: 'Use src/1.ts' };
    right(await session.compileContext({ ...prompt, at: 2000 }));
    swap = true;
    expect(right(await session.recordedPrompt(prompt))).toEqual(O.none);
    const subjects = selectValidFacts(right(await session.snapshot())).map((fact) => fact.subject);
    expect(subjects).toContain('src/9.ts');
    expect(subjects).not.toContain('src/1.ts');
  });

  it('still sees a log replaced, with a snapshot of its own, while a resent prompt reads the snapshot', async () => {
    const [dirA, dirB] = [tempDir('session-'), tempDir('session-')];
    const old = await open('remade', { directory: dirA });
    right(await old.compileContext({ taskId: 'p', taskPrompt: 'Change src/OLD.ts', at: 1 }));
    for (let i = 0; i < 70; i += 1)
      right(
        await old.ingestResult({ role: 'implementer', taskId: `o${i}`, output: result(`o${i}`, 'Old'), at: 10 + i }),
      );
    // The log that replaces it, longer and with its own snapshot, made elsewhere.
    const next = await open('remade', { directory: dirB });
    for (let i = 0; i < 140; i += 1)
      right(
        await next.ingestResult({ role: 'implementer', taskId: `n${i}`, output: result(`n${i}`, 'New'), at: 10 + i }),
      );
    const inner = fileSessionStore({ directory: dirA });
    let armed = false;
    const store: SessionStore = {
      ...inner,
      readSnapshot: async (id) => {
        if (armed) {
          armed = false;
          rmSync(join(dirA, 'remade.jsonl.snapshot'), { force: true });
          renameSync(join(dirB, 'remade.jsonl'), join(dirA, 'remade.jsonl'));
          renameSync(join(dirB, 'remade.jsonl.snapshot'), join(dirA, 'remade.jsonl.snapshot'));
        }
        return inner.readSnapshot(id);
      },
    };
    const session = right(await openSession('remade', { store }));
    armed = true;
    // Found on line 1 of the old log, which the new one, read for its section, does not hold there:
    // the call comes after the new log, and records the prompt on it.
    const again = right(await session.compileContext({ taskId: 'p', taskPrompt: 'Change src/OLD.ts', at: 1 }));
    expect([again.line, again.duplicate]).toEqual([141, false]);
    expect(armed).toBe(false);
    const subjects = selectValidFacts(right(await session.snapshot())).map((fact) => fact.subject);
    expect(subjects).toContain('src/n139.ts');
    expect(subjects).not.toContain('src/o0.ts');
  });

  it('lets a caller refuse a section as planned, in the step that would record it: nothing is written then', async () => {
    const cwd = tempDir('session-');
    const session = await open('accepted', { cwd });
    right(await session.ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'Parser'), at: 1000 }));
    const prompt = { taskId: '2', taskPrompt: 'Use src/1.ts', at: 2000 };
    const seen: string[] = [];
    const refused = await session.compileContext(prompt, {
      accept: ({ sessionContext }) => {
        seen.push(sessionContext);
        return E.left({ code: 'answer_too_large', message: 'too large' });
      },
    });
    expect(refused).toEqual(E.left({ code: 'answer_too_large', message: 'too large' }));
    expect(readFileSync(session.file, 'utf8').trimEnd().split('\n')).toHaveLength(1);
    // A promise of a Left refuses it alike (a caller that writes its own record of the prompt first).
    const later = await session.compileContext(prompt, {
      accept: async () => E.left({ code: 'io', message: 'cannot append' }),
    });
    expect(later).toEqual(E.left({ code: 'io', message: 'cannot append' }));
    expect(readFileSync(session.file, 'utf8').trimEnd().split('\n')).toHaveLength(1);
    // An accept of the wrong kind, or one answering no Either, is the caller's mistake: said, nothing written.
    const invalid = (message: RegExp) => E.left({ code: 'invalid_input', message: expect.stringMatching(message) });
    expect(await session.compileContext(prompt, { accept: 42 } as never)).toEqual(
      invalid(/^accept is a number, not a function$/u),
    );
    for (const answer of [undefined, null, true])
      expect(await session.compileContext(prompt, { accept: () => answer } as never)).toEqual(
        invalid(/^accept answered .*, not an Either$/u),
      );
    expect(readFileSync(session.file, 'utf8').trimEnd().split('\n')).toHaveLength(1);
    // Options that are none, or an accept that is none, accept the section as planned.
    const recorded = right(await session.compileContext(prompt, { accept: null } as never));
    expect(recorded.line).toBe(2);
    expect(seen).toEqual([recorded.sessionContext]);
    expect(right(await session.compileContext(prompt, null as never))).toEqual({ ...recorded, duplicate: true });
    expect(right(await session.compileContext(prompt, { accept: () => E.right(true) }))).toEqual({
      ...recorded,
      duplicate: true,
    });
    // The key it is told is the one the session lists with the prompt's line once written: a caller
    // that kept it knows later whether the log holds that very prompt there.
    const planned: Array<readonly [string, number]> = [];
    const next = right(
      await session.compileContext(
        { taskId: '3', taskPrompt: 'Use src/1.ts again', at: 3000 },
        {
          accept: ({ key, line }) => {
            planned.push([key, line]);
            return E.right(true);
          },
        },
      ),
    );
    expect(planned).toEqual([[expect.any(String), next.line]]);
    expect(session.state().recent).toContainEqual(planned[0]);
  });

  it('tells an accept of ingestResult the line and time a result is written with; sent again at that time, it is that line', async () => {
    const cwd = tempDir('session-');
    let now = 5000;
    const session = await open('ingest-accept', { cwd, clock: () => now });
    right(await session.compileContext({ taskId: '9', taskPrompt: 'Later work', at: 9000 }));
    const output = result('1', 'Parser');
    const planned: Array<{ line: number; at: number }> = [];
    const accept = (seen: { line: number; at: number }) => {
      planned.push(seen);
      return Promise.resolve(E.right(true));
    };
    // Stamped after the log's last event: the time accept is told is the line's.
    const first = right(await session.ingestResult({ role: 'implementer', taskId: '1', output }, { accept }));
    expect(planned).toEqual([{ line: 2, at: 9001 }]);
    right(await session.ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'Lexer'), at: 9500 }));
    // Sent again at that time, it is that line, whatever was recorded since; by content alone it is not.
    now = 9001;
    const again = right(await session.ingestResult({ role: 'implementer', taskId: '1', output }, { byContent: false }));
    expect(again).toMatchObject({ line: first.line, duplicate: true });
    now = 9700;
    const other = right(await session.ingestResult({ role: 'implementer', taskId: '1', output }, { byContent: false }));
    expect(other).toMatchObject({ line: 4, duplicate: false });
    expect(
      await session.ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'X') }, {
        accept: 1,
      } as never),
    ).toEqual(E.left({ code: 'invalid_input', message: 'accept is a number, not a function' }));
  });

  it('answers a prompt sent again from the log as it is now, once the log it kept a section of was deleted and made again', async () => {
    const cwd = tempDir('session-');
    const a = await open('remade', { cwd });
    const prompt = { taskId: '3', taskPrompt: 'Use the work of task 1', at: 5000 };
    right(await a.ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'Parser'), at: 1000 }));
    expect(right(await a.compileContext(prompt)).line).toBe(2);
    rmSync(a.file);
    const b = await open('remade', { cwd });
    right(await b.ingestResult({ role: 'implementer', taskId: '1', output: result('2', 'Lexer'), at: 1000 }));
    const remade = right(await b.compileContext(prompt));
    expect(remade.line).toBe(2);
    expect(right(await a.compileContext(prompt))).toEqual({ ...remade, duplicate: true });
    const replayed = replayHistory(readFileSync(a.file, 'utf8')).report.prompts.find((entry) => entry.line === 2);
    expect(replayed?.sessionContext).toBe(remade.sessionContext);
  });

  it('answers a prompt sent again to a fresh process from the snapshot before its line, as replay gives it', async () => {
    const cwd = tempDir('session-');
    const writer = await open('long', { cwd });
    // Past the lines after which a session saves a snapshot (SNAPSHOT_EVERY), then the prompt, then more results.
    for (let task = 1; task <= 100; task += 1)
      right(
        await writer.ingestResult({
          role: 'implementer',
          taskId: `${task}`,
          output: result(`${task}`, 'Parser'),
          at: task,
        }),
      );
    expect(existsSync(`${writer.file}.snapshot`)).toBe(true);
    const prompt = { taskId: '101', taskPrompt: 'Use src/7.ts and src/99.ts', at: 1_000 };
    const first = right(await writer.compileContext(prompt));
    for (let task = 102; task <= 110; task += 1)
      right(
        await writer.ingestResult({
          role: 'implementer',
          taskId: `${task}`,
          output: result(`${task}`, 'Lexer'),
          at: task * 10,
        }),
      );
    const replayed = replayHistory(readFileSync(writer.file, 'utf8')).report.prompts.find(
      (entry) => entry.line === first.line,
    );
    expect(replayed?.sessionContext).toBe(first.sessionContext);
    expect(right(await (await open('long', { cwd })).compileContext(prompt))).toEqual({ ...first, duplicate: true });
  });

  it('finds the latest prompt recorded for a task and prompt text, with the settings its section was made with', async () => {
    const cwd = tempDir('session-');
    const session = await open('recorded', { cwd });
    const prompt = { taskId: '3', taskPrompt: 'Use src/1.ts' };
    expect(right(await session.recordedPrompt(prompt))).toEqual(O.none);
    right(await session.compileContext({ ...prompt, maxFacts: 4, at: 1000 }));
    right(await session.compileContext({ ...prompt, taskPrompt: 'Use src/2.ts', layout: 'grouped', at: 2000 }));
    right(await session.compileContext({ ...prompt, layout: 'grouped', tags: ['decision'], at: 3000 }));
    right(await session.ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'Parser'), at: 4000 }));
    expect(right(await session.recordedPrompt(prompt))).toEqual(
      O.some({ ...prompt, line: 3, layout: 'grouped', tags: ['decision'] }),
    );
  });

  it('reads the whole log once for the recorded prompts, then follows what it reads and writes: another writer’s prompt too', async () => {
    const cwd = tempDir('session-');
    const files = fileSessionStore({ cwd });
    let whole = 0;
    const counted: SessionStore = {
      ...files,
      read: (id, after) => {
        if (after === 0) whole += 1;
        return files.read(id, after);
      },
    };
    const session = right(await openSession('followed', { store: counted }));
    const other = await open('followed', { cwd });
    const prompt = { taskId: '3', taskPrompt: 'Use src/1.ts' };
    right(await session.compileContext({ ...prompt, maxFacts: 4, at: 1000 }));
    expect(right(await session.recordedPrompt(prompt))).toEqual(O.some({ ...prompt, line: 1, maxFacts: 4 }));
    const afterScan = whole;
    right(await other.compileContext({ ...prompt, layout: 'grouped', at: 2000 }));
    right(await session.compileContext({ taskId: '4', taskPrompt: 'Use src/2.ts', maxTokens: 300, at: 3000 }));
    expect(right(await session.recordedPrompt(prompt))).toEqual(O.some({ ...prompt, line: 2, layout: 'grouped' }));
    expect(right(await session.recordedPrompt({ taskId: '4', taskPrompt: 'Use src/2.ts' }))).toEqual(
      O.some({ taskId: '4', taskPrompt: 'Use src/2.ts', line: 3, maxTokens: 300 }),
    );
    expect(right(await session.recordedPrompt({ taskId: '5', taskPrompt: 'never asked' }))).toEqual(O.none);
    expect(whole).toBe(afterScan);
  });

  it('sees what another session object appended before it answers', async () => {
    const cwd = tempDir('session-');
    const [a, b] = [await open('shared', { cwd }), await open('shared', { cwd })];
    right(await a.ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'Parser'), at: 1 }));
    right(await b.ingestResult({ role: 'implementer', taskId: '2', output: result('2', 'Lexer'), at: 2 }));
    const fromA = right(await a.compileContext({ taskId: '3', taskPrompt: 'Use src/2.ts and src/1.ts', at: 3 }));
    expect(fromA.line).toBe(3);
    expect(fromA.facts.map((fact) => fact.subject)).toEqual(expect.arrayContaining(['src/1.ts', 'src/2.ts']));
    // b re-sending a's prompt finds it in the log: a duplicate, not a second line.
    expect(
      right(await b.compileContext({ taskId: '3', taskPrompt: 'Use src/2.ts and src/1.ts', at: 3 })).duplicate,
    ).toBe(true);
    expect(right(await b.snapshot())).toEqual(right(await a.snapshot()));
  });

  it('keeps calls made at once in one order, numbered line by line', async () => {
    const cwd = tempDir('session-');
    const session = await open('burst', { cwd });
    const calls = Array.from({ length: 30 }, (_, i) =>
      session.ingestResult({ role: 'implementer', taskId: `${i}`, output: result(`${i}`, `Step ${i}`), at: i }),
    );
    const lines = (await Promise.all(calls)).map((answer) => right(answer).line);
    expect(lines).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    const log = readFileSync(session.file, 'utf8');
    expect(right(await session.snapshot())).toEqual(replayHistory(log).store);
  });

  it('rebuilds from the file when the log was replaced behind its back', async () => {
    const cwd = tempDir('session-');
    const session = await open('swap', { cwd });
    right(await session.ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'One'), at: 1 }));
    const other = await open('other', { cwd });
    right(await other.ingestResult({ role: 'implementer', taskId: '9', output: result('9', 'Nine'), at: 9 }));
    renameSync(other.file, session.file);
    const store = right(await session.snapshot());
    expect(store).toEqual(replayHistory(readFileSync(session.file, 'utf8')).store);
    const facts = selectValidFacts(store);
    expect(facts.length).toBeGreaterThan(0);
    expect(facts.map((fact) => fact.sourceTaskId)).toEqual(facts.map(() => '9'));
  });

  it('refuses ids that are not one safe path segment, and sessions that do not exist when asked not to create', async () => {
    const cwd = tempDir('session-');
    for (const id of ['', '../escape', 'a/b', 'a\\b', '..', '.hidden', '-x', 'x'.repeat(129), 'CON', 'nul.txt', 'a..b'])
      expect(await openSession(id, { cwd })).toEqual(E.left(expect.objectContaining({ code: 'invalid_session_id' })));
    expect(await openSession(42, { cwd })).toEqual(E.left(expect.objectContaining({ code: 'invalid_session_id' })));
    expect(parseSessionId('3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f')).toEqual(
      E.right('3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f'),
    );
    expect(await openSession('missing', { cwd, create: false })).toEqual(
      E.left(expect.objectContaining({ code: 'unknown_session' })),
    );
  });

  it('refuses a session id holding a secret without repeating it, and writes no file named by it', async () => {
    const cwd = tempDir('session-');
    const token = `ghp_${'a1B2c3D4e5'.repeat(4)}`;
    for (const id of [token, `run-${token}`, `sk-ant-${'x9'.repeat(12)}`, 'AKIAABCDEFGHIJKLMNOP']) {
      const refused = await openSession(id, { cwd });
      expect(refused).toEqual(E.left(expect.objectContaining({ code: 'invalid_session_id' })));
      const message = E.isLeft(refused) ? refused.left.message : '';
      expect(message).toMatch(/looks like an? /u);
      expect(message).not.toContain(id);
      expect(parseSessionId(id)).toEqual(refused);
    }
    expect(readdirSync(cwd, { recursive: true }).filter((name) => String(name).includes('ghp_'))).toEqual([]);
    // Ids that only look alike pass: a UUID, and words about tokens.
    for (const id of ['3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f', 'ghp_short', 'sk-review-session'])
      expect(parseSessionId(id)).toEqual(E.right(id));
  });

  it('answers unknown_session once its log is deleted when opened not to create, and never writes a new log', async () => {
    const cwd = tempDir('session-');
    right(
      await (
        await open('gone', { cwd })
      ).ingestResult({ role: 'implementer', taskId: '1', output: result('1', 'One'), at: 1 }),
    );
    const held = await open('gone', { cwd, create: false });
    const creating = await open('gone', { cwd });
    expect(selectValidFacts(right(await held.snapshot())).length).toBeGreaterThan(0);
    right(await creating.snapshot());
    // Deleted through another handle on the folder (another process's view), while both are open.
    expect(await fileSessionStore({ cwd }).delete('gone')).toEqual(E.right(true));
    const prompt = { taskId: '2', taskPrompt: 'src/1.ts' };
    const answers = [
      await held.snapshot(),
      await held.explainContext(prompt),
      await held.previewContext(prompt),
      await held.invalidateFact({ subject: 'src/1.ts', relation: 'modified_by', at: 2 }),
      await held.compact({ maxFacts: 1, at: 3 }),
      await held.compileContext({ ...prompt, at: 4 }),
      await held.ingestResult({ role: 'implementer', taskId: '2', output: result('2', 'Two'), at: 5 }),
    ];
    expect(answers.map((answer) => (E.isLeft(answer) ? answer.left.code : 'answered'))).toEqual(
      answers.map(() => 'unknown_session'),
    );
    expect(existsSync(held.file)).toBe(false);
    // Opened to create, it is a session not made yet, as a fresh open finds it: empty, and its
    // next event starts a new log.
    expect(selectValidFacts(right(await creating.snapshot()))).toEqual([]);
    expect(right(await creating.compileContext({ ...prompt, at: 6 })).line).toBe(1);
    expect(readFileSync(creating.file, 'utf8').split('\n')).toHaveLength(2);
    // Made anew, it is there again for the one opened not to create.
    expect(right(await held.explainContext(prompt))).toEqual([]);
  });

  it('does not follow a symbolic link out of the working directory, for the folder or the log', async () => {
    const cwd = tempDir('session-');
    const outside = tempDir('outside-');
    mkdirSync(join(cwd, '.fact-tracker'));
    symlinkSync(outside, join(cwd, '.fact-tracker', 'sessions'));
    const escaped = await openSession('s', { cwd });
    expect(escaped).toEqual(
      E.left(expect.objectContaining({ code: 'io', message: expect.stringContaining('leads out') })),
    );
    // Nor does it list the logs out there as the project's sessions.
    writeFileSync(join(outside, 'victim.jsonl'), '');
    expect(await listSessionIds({ cwd })).toEqual([]);
    expect(await listSessionIds({ directory: outside })).toEqual(['victim']);

    const other = tempDir('session-');
    const { directory } = resolveSessionsDirectory({ cwd: other });
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(outside, 'target.jsonl'), '');
    symlinkSync(join(outside, 'target.jsonl'), join(directory, 'linked.jsonl'));
    const linked = await openSession('linked', { cwd: other });
    expect(linked).toEqual(
      E.left(expect.objectContaining({ code: 'io', message: expect.stringContaining('symbolic link') })),
    );
    expect(readFileSync(join(outside, 'target.jsonl'), 'utf8')).toBe('');
  });

  it('writes nothing through a hard link: a log with another name may be a file outside the folder', async () => {
    const cwd = tempDir('session-');
    const outside = join(tempDir('outside-'), 'victim.jsonl');
    // A complete line, then a torn one that a writer would cut off and set aside.
    const before = `${JSON.stringify({ type: 'prompt', taskId: '1', at: 1, taskPrompt: 'x' })}\nprecious, no line break`;
    writeFileSync(outside, before);
    const { directory } = resolveSessionsDirectory({ cwd });
    mkdirSync(directory, { recursive: true });
    linkSync(outside, join(directory, 'linked.jsonl'));
    const mtime = statSync(outside).mtimeMs;
    const opened = await openSession('linked', { cwd });
    const compiled = E.isLeft(opened)
      ? opened
      : await opened.right.compileContext({ taskId: '2', taskPrompt: 'Read src/a.ts', at: 2_000 });
    expect(compiled).toEqual(
      E.left(expect.objectContaining({ code: 'io', message: expect.stringContaining('hard link') })),
    );
    expect(readFileSync(outside, 'utf8')).toBe(before);
    expect(statSync(outside).mtimeMs).toBe(mtime);
    // Refused before its torn line is copied aside.
    expect(readdirSync(directory)).toEqual(['linked.jsonl']);
  });

  it('refuses at once a FIFO in place of a log or of its snapshot, never waiting on it (run in a child, killed if it hangs)', () => {
    const cwd = tempDir('session-fifo-');
    const { directory } = resolveSessionsDirectory({ cwd });
    mkdirSync(directory, { recursive: true });
    writeFileSync(
      join(directory, 'beside.jsonl'),
      `${JSON.stringify({ type: 'prompt', taskId: '1', at: 1, taskPrompt: 'x' })}\n`,
    );
    for (const name of ['beside.jsonl.snapshot', 'piped.jsonl'])
      expect(spawnSync('mkfifo', [join(directory, name)]).status).toBe(0);
    const script = `
      const { openSession, bytesToReplay } = await import(${JSON.stringify(new URL('../../../dist/live/session/index.js', import.meta.url).href)});
      const options = { cwd: ${JSON.stringify(cwd)}, create: false };
      const beside = await openSession('beside', options);
      const piped = await openSession('piped', options);
      console.log(JSON.stringify({
        beside: beside.right?.snapshotUse(),
        besideBytes: await bytesToReplay('beside', options),
        piped: piped.left,
        pipedBytes: (await bytesToReplay('piped', options)) ?? null,
      }));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
      killSignal: 'SIGKILL',
    });
    expect(run.signal).toBeNull();
    expect(JSON.parse(run.stdout) as unknown).toEqual({
      beside: { used: false, reason: 'the snapshot cannot be read (ENOTREG)' },
      besideBytes: readFileSync(join(directory, 'beside.jsonl')).length,
      piped: { code: 'io', message: expect.stringContaining('piped.jsonl: it is not a regular file') },
      pipedBytes: null,
    });
  });

  it('explains a prompt without recording it, and keeps the sessions folder out of git', async () => {
    const cwd = tempDir('session-');
    const session = await open('explain', { cwd });
    await drive(session, example);
    const log = readFileSync(session.file, 'utf8');
    const last = parseHistory(example)
      .events.filter((event) => event.type === 'prompt')
      .at(-1)!;
    const decisions = right(
      await session.explainContext({ taskId: last.taskId, taskPrompt: last.type === 'prompt' ? last.taskPrompt : '' }),
    );
    expect(decisions.length).toBeGreaterThan(10);
    expect(decisions.filter((decision) => decision.decision === 'included').length).toBeGreaterThan(0);
    expect(readFileSync(session.file, 'utf8')).toBe(log);
    expect(readFileSync(join(cwd, '.fact-tracker', 'sessions', '.gitignore'), 'utf8')).toContain('*');
  });

  it('reads options that are none as none, and refuses by name one of the wrong kind, a store that is none, or options that cannot be read', async () => {
    const cwd = tempDir('session-');
    const opened = await openSession('none', { cwd, directory: null, store: null, lockStaleMs: undefined } as never);
    expect(E.isRight(opened) && opened.right.file).toBe(join(cwd, '.fact-tracker', 'sessions', 'none.jsonl'));
    if (E.isRight(opened)) right(await opened.right.compileContext({ taskId: '1', taskPrompt: 'Change a.ts' }));
    // A lock that never goes stale is as long as a timer can wait, not a timer that overflows and fires at once.
    const warnings: string[] = [];
    const warned = (warning: Error) => warnings.push(warning.name);
    process.on('warning', warned);
    try {
      const forever = await openSession('forever', { cwd: tempDir('session-'), lockStaleMs: Infinity });
      if (E.isRight(forever)) right(await forever.right.compileContext({ taskId: '1', taskPrompt: 'Change a.ts' }));
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', warned);
    }
    expect(warnings).not.toContain('TimeoutOverflowWarning');
    const trap = new Proxy(
      {},
      {
        ownKeys: () => ['directory'],
        getOwnPropertyDescriptor: () => ({ enumerable: true, configurable: true }),
        get: () => {
          throw new Error('trap');
        },
      },
    );
    const refused: Array<[unknown, RegExp]> = [
      [{ cwd, directory: 42 }, /^the session option directory is a number, not a string$/u],
      [{ cwd, lockStaleMs: 10n }, /^the session option lockStaleMs is a bigint, not a number$/u],
      [{ cwd, create: 'yes' }, /^the session option create is a string, not a boolean$/u],
      // A counter that is none would budget with the estimate while the log names the tokenizer.
      [
        { cwd, countTokens: 'o200k', tokenizer: 'o200k' },
        /^the session option countTokens is a string, not a function$/u,
      ],
      [{ cwd, store: 42 }, /^the session option store is no session store/u],
      [{ cwd, store: { list: () => undefined } }, /^the session option store is no session store/u],
      [trap, /^the session options could not be read: .*trap/u],
    ];
    // The folder functions read a folder that is no text as none, as openSession does.
    expect(await listSessionIds({ cwd, directory: null } as never)).toEqual(['none']);
    // And a field they cannot read (a getter that throws) as not given: they never throw.
    const unreadable = {
      cwd,
      get directory(): string {
        throw new Error('getter');
      },
    };
    expect(await listSessionIds(unreadable)).toEqual(['none']);
    expect(await latestSessionId(unreadable)).toBe('none');
    expect(() =>
      fileSessionStore({
        ...{ cwd },
        get lockStaleMs(): number {
          throw new Error('getter');
        },
      }),
    ).not.toThrow();
    expect(resolveSessionsDirectory({ cwd, directory: 42 } as never).directory).toBe(
      join(cwd, '.fact-tracker', 'sessions'),
    );
    for (const [options, message] of refused) {
      const answer = await openSession('s', options as never);
      expect(answer).toEqual(E.left({ code: 'invalid_input', message: expect.stringMatching(message) as unknown }));
    }
    expect(readdirSync(cwd)).toEqual(['.fact-tracker']);
  });

  it('keeps out of git a sessions folder it makes or finds empty, and never hides a folder that holds anything else', async () => {
    const project = tempDir('session-');
    writeFileSync(join(project, 'main.c'), 'int main(void) { return 0; }\n');
    const inProject = await open('here', { directory: project });
    right(await inProject.compileContext({ taskId: '1', taskPrompt: 'Change main.c' }));
    expect(readdirSync(project).sort()).toEqual(['here.jsonl', 'main.c']);
    const empty = join(tempDir('session-'), 'logs');
    mkdirSync(empty);
    right(await (await open('s', { directory: empty })).compileContext({ taskId: '1', taskPrompt: 'Change a.ts' }));
    expect(readFileSync(join(empty, '.gitignore'), 'utf8')).toContain('*');
  });
});

/**
 * The session entry point's functions given an argument that is not of its kind (null from an
 * unset variable, a number): the pure state functions throw a TypeError that names it, never a
 * failure deep inside ("Cannot read properties of null"); the shells never throw at a caller:
 * options read null as none, as the core's do, and a session id that is none is a Left.
 */
import { readdirSync } from 'node:fs';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import {
  applyLogLine,
  applyLogLines,
  encodeSessionState,
  fileSessionStore,
  initialSessionState,
  latestSessionId,
  listSessionIds,
  locateSession,
  memorySessionStore,
  openSession,
  planEvent,
  resolveSessionsDirectory,
} from '../../../src/live/session/index.js';
import { tempDir } from '../../tempDirs.js';

const state = initialSessionState();
const prompt = '{"type":"prompt","taskId":"1","taskPrompt":"edit src/a.ts","at":1}';
const STATE_NULL = /the state is null, not a session state \(initialSessionState makes one\)/u;

const refusals: ReadonlyArray<readonly [string, () => unknown, RegExp]> = [
  ['applyLogLine of a null state', () => applyLogLine(null as never, 1, prompt), STATE_NULL],
  [
    'applyLogLine of a tracker state',
    () => applyLogLine(42 as never, 1, prompt),
    /the state is a number, not a session state/u,
  ],
  ['applyLogLine of a null line', () => applyLogLine(state, 1, null as never), /the line is null, not a string/u],
  [
    'applyLogLine of a null line number',
    () => applyLogLine(state, null as never, prompt),
    /the line number is null, not a number/u,
  ],
  ['applyLogLines of a null state', () => applyLogLines(null as never, [], 0), STATE_NULL],
  [
    'applyLogLines of a number as the lines',
    () => applyLogLines(state, 42 as never, 0),
    /lines is a number, not an array of lines/u,
  ],
  [
    'applyLogLines of a null position',
    () => applyLogLines(state, [], null as never),
    /the position is null, not a number/u,
  ],
  [
    'applyLogLines with a hole among the lines',
    () => applyLogLines(state, [undefined as never, { line: 1, text: '{}' }], 1),
    /^lines\[0\] is undefined, not a line/u,
  ],
  ['planEvent of a null state', () => planEvent(null as never, { type: 'prompt' }), STATE_NULL],
  ['encodeSessionState of null', () => encodeSessionState(null as never), STATE_NULL],
];

describe('arguments that are not of their kind', () => {
  it.each(refusals)('%s is refused with a TypeError naming the argument', (_name, call, message) => {
    expect(call).toThrow(expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(message) }));
  });

  it('an environment or a result to recognize that is none reads as none', () => {
    const fields = JSON.parse(prompt) as Record<string, unknown>;
    expect(applyLogLine(state, 1, prompt, null as never)).toEqual(applyLogLine(state, 1, prompt));
    expect(planEvent(state, fields, null as never, null as never)).toEqual(planEvent(state, fields));
  });

  it('the shells read options that are none as none, and never throw at their caller', async () => {
    const cwd = tempDir('session-args-');
    const previous = process.cwd();
    process.chdir(cwd);
    try {
      expect(resolveSessionsDirectory(null as never)).toEqual(resolveSessionsDirectory());
      expect(await listSessionIds(null as never)).toEqual([]);
      expect(await latestSessionId(null as never)).toBeUndefined();
      expect(E.isRight(await locateSession('s1', null as never))).toBe(true);
      expect(fileSessionStore(null as never).location).toEqual(fileSessionStore().location);
      const opened = await openSession('s1', null as never);
      expect(E.isRight(opened) && opened.right.id).toBe('s1');
      expect(await openSession(null, { store: memorySessionStore() })).toEqual(
        E.left({ code: 'invalid_session_id', message: 'the session id must be a string' }),
      );
      expect(readdirSync(cwd)).toEqual(['.fact-tracker']);
    } finally {
      process.chdir(previous);
    }
  });
});

/**
 * The pool of a long-lived process (the MCP server) holds one shell per log: calls that wait on
 * the same opening share what it opens, also the calls that may create the log when the opening
 * they waited on was one that may not, and found none.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { memorySessionStore } from '../../../src/live/session/index.js';
import { createSessionPool } from '../../../src/live/session/pool.js';
import type { SessionStore } from '../../../src/live/session/store.js';

describe('a session pool', () => {
  it('opens one shell for the calls that may create a log, asked while an opening that may not finds none', async () => {
    const pool = createSessionPool({ store: memorySessionStore() });
    const [existing, first, second] = await Promise.all([pool('s', false), pool('s', true), pool('s', true)]);
    expect(E.isLeft(existing) && existing.left.code).toBe('unknown_session');
    const later = await pool('s', true);
    if (E.isLeft(first) || E.isLeft(second) || E.isLeft(later)) throw new Error('not opened');
    expect(second.right).toBe(first.right);
    expect(later.right).toBe(first.right);
  });

  it('answers a prompt sent again after its line was written but its flush failed as that line, whichever of those calls sent it', async () => {
    // The files answer `io` when the log cannot be flushed after the write: the same call sent
    // again to the same server is that line's event, never a second line (docs/mcp.md).
    const inner = memorySessionStore();
    let failing = false;
    const store: SessionStore = {
      ...inner,
      append: async (id, expected, lines, follower) => {
        const appended = await inner.append(id, expected, lines, follower);
        if (E.isLeft(appended) || !failing) return appended;
        failing = false;
        return E.left({ code: 'io', message: 'the log could not be flushed to disk' });
      },
      flush: async () => E.right(undefined),
    };
    const pool = createSessionPool({ store });
    const [, first] = await Promise.all([pool('s', false), pool('s', true), pool('s', true)]);
    if (E.isLeft(first)) throw new Error(first.left.message);
    const prompt = { taskId: '1', taskPrompt: 'Change src/a.ts' };
    failing = true;
    const failed = await first.right.compileContext(prompt);
    expect(E.isLeft(failed) && failed.left.code).toBe('io');
    const again = await pool('s', true);
    if (E.isLeft(again)) throw new Error(again.left.message);
    const sent = await again.right.compileContext(prompt);
    expect(E.isRight(sent) && [sent.right.line, sent.right.duplicate]).toEqual([1, false]);
    const log = await inner.read('s', 0);
    expect(E.isRight(log) && log.right.lines).toHaveLength(1);
  });
});

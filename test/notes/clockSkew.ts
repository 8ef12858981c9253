/**
 * Two trackers on one notes store whose clocks disagree by an hour, as two app servers behind a
 * load balancer: a user's correction, told through the server whose clock is behind after the
 * other server merged the fact it corrects, replaces that fact in the session's blocks and in the
 * profile.
 */
import * as E from 'fp-ts/lib/Either.js';
import { expect } from 'vitest';
import type { CompleteFn } from '../../src/notes/port.js';
import type { NotesStore } from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import type { NotableFactsTracker, NotesTrackerFailure } from '../../src/notes/trackerTypes.js';

const right = <T>(result: E.Either<NotesTrackerFailure, T>): T => {
  if (E.isLeft(result)) throw new Error(`expected a value, got ${result.left.code}: ${result.left.message}`);
  return result.right;
};

const nights = (value: string): string => `Jordan works night shifts at the hospital ${value} nights a week`;

/** A model that notes how many nights the latest message says Jordan works. */
const nightsModel: CompleteFn = async (prompt) => {
  const latest = /Latest user message:\nUser: (.*)/u.exec(prompt)?.[1] ?? '';
  const value = /\b(three|four) nights\b/u.exec(latest)?.[1];
  return JSON.stringify({ notableFacts: value === undefined ? [] : [{ category: 'Logistics', fact: nights(value) }] });
};

/** A request as the handler of docs/notes.md serves it: load, record, then (here) wait for the extraction. */
const say = async (tracker: NotableFactsTracker, session: string, text: string): Promise<void> => {
  right(await tracker.load('maya', session));
  right(tracker.recordUserMessage('maya', session, text));
  right(await tracker.settled());
};

/**
 * Maya says "three nights" in s1 through the tracker of `ahead`, which merges it; ten minutes
 * later she says "four nights" in s2 through `behind`'s, whose clock is an hour behind. The
 * correction serves in s2 and, once merged, in the profile a third session opens with.
 */
export const expectCorrectionSupersedes = async (ahead: NotesStore, behind: NotesStore): Promise<void> => {
  let clock = Date.parse('2026-12-07T10:00:00Z');
  const errors: NotesTrackerFailure[] = [];
  const options = { complete: nightsModel, onError: (failure: NotesTrackerFailure) => errors.push(failure) };
  const first = createNotableFactsTracker({ ...options, store: ahead, now: () => clock });
  const second = createNotableFactsTracker({ ...options, store: behind, now: () => clock - 3_600_000 });
  try {
    await say(first, 's1', 'Jordan works three nights a week.');
    right(await first.endStage('maya', 's1'));
    clock += 600_000;
    await say(second, 's2', 'His rota changed: Jordan works four nights a week now.');
    const during = right(second.contextFor('maya', 's2'));
    expect(during.session).toContain(nights('four'));
    expect(during.text).not.toContain(nights('three'));
    right(await second.endStage('maya', 's2'));
    clock += 600_000;
    for (const tracker of [first, second]) {
      right(await tracker.load('maya', 's3'));
      expect(right(tracker.contextFor('maya', 's3')).profile).toBe(
        `ABOUT THIS USER (from previous sessions):\n[Logistics]\n- ${nights('four')}`,
      );
    }
    expect(errors).toEqual([]);
  } finally {
    await Promise.all([first.close(), second.close()]);
  }
};

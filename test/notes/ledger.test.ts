import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { applyExtraction } from '../../src/notes/applyExtraction.js';
import {
  consolidateSession,
  consolidateSessionWithReport,
  endStageWithReport,
} from '../../src/notes/consolidateSession.js';
import { applyNotesEvent, type NotesEvent, replayNotes } from '../../src/notes/events.js';
import { consolidateGlobalFacts, consolidateGlobalFactsWithReport, type GlobalFacts } from '../../src/notes/global.js';
import {
  emptyNotesLedger,
  type NotesLedger,
  selectGlobalFacts,
  selectSessionFacts,
  selectSessionNotes,
  selectSessions,
  selectUnconsolidatedSessions,
  selectUserNotes,
} from '../../src/notes/ledger.js';
import type { CategorizedFact } from '../../src/notes/model.js';
import { decodeNotes, encodeNotes } from '../../src/notes/persist.js';
import { formatNotesBlocks } from '../../src/notes/format.js';
import { rewriteProfile } from '../../src/notes/rewriteProfile.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import { decodeSavedState, decodeState, encodeState } from '../../src/saved/savedState.js';
import { DEFAULT_MAX_VALID_FACTS, emptyFactStore } from '../../src/core/store/state.js';
import { eventArb, factArb, factListArb, ledgerArb, SESSIONS, USERS } from './arbitraries.js';

const people = (fact: string): CategorizedFact => ({ category: 'People', fact });
const logistics = (fact: string): CategorizedFact => ({ category: 'Logistics', fact });

const extracted = (user: string, session: string, facts: CategorizedFact[], at: number): NotesEvent => ({
  type: 'notes/extracted',
  user,
  session,
  facts,
  at,
});
const failed = (user: string, session: string, at: number): NotesEvent => ({
  type: 'notes/extractionFailed',
  user,
  session,
  code: 'timeout',
  message: 'no answer within 15000 ms',
  at,
});

const isDeepFrozen = (value: unknown): boolean =>
  typeof value !== 'object' || value === null || (Object.isFrozen(value) && Object.values(value).every(isDeepFrozen));

describe('applyExtraction', () => {
  const empty = emptyNotesLedger();

  it('has an empty list before the first extraction (N+1 timing)', () => {
    expect(selectSessionFacts(empty, 'maya', 's1')).toEqual([]);
  });

  it('replaces the whole list of one user in one session, validated, and freezes the result', () => {
    const once = applyExtraction(empty, {
      user: 'maya',
      session: 's1',
      facts: [people('Partner is Jordan'), { category: 'Hobbies', fact: 'x' }],
      at: 10,
    });
    expect(selectSessionNotes(once, 'maya', 's1')).toEqual({
      facts: [people('Partner is Jordan')],
      updatedAt: 10,
      consolidated: false,
    });
    const twice = applyExtraction(once, {
      user: 'maya',
      session: 's1',
      facts: [logistics('Jordan works nights')],
      at: 20,
    });
    expect(selectSessionFacts(twice, 'maya', 's1')).toEqual([logistics('Jordan works nights')]);
    expect(isDeepFrozen(twice)).toBe(true);
    expect(selectSessionFacts(once, 'maya', 's1')).toEqual([people('Partner is Jordan')]);
  });

  it('lets the newer list win when facts conflict', () => {
    const older = applyExtraction(empty, {
      user: 'maya',
      session: 's1',
      facts: [logistics('Jordan works three nights a week')],
      at: 1,
    });
    const newer = applyExtraction(older, {
      user: 'maya',
      session: 's1',
      facts: [logistics('Jordan works four nights a week since January')],
      at: 2,
    });
    expect(selectSessionFacts(newer, 'maya', 's1')).toEqual([
      logistics('Jordan works four nights a week since January'),
    ]);
  });

  it('keeps partners apart: one partner’s extraction never touches the other’s list', () => {
    const maya = applyExtraction(empty, { user: 'maya', session: 's1', facts: [people('Partner is Jordan')], at: 1 });
    const both = applyExtraction(maya, { user: 'jordan', session: 's1', facts: [people('Partner is Maya')], at: 2 });
    expect(selectSessionFacts(both, 'maya', 's1')).toEqual([people('Partner is Jordan')]);
    expect(selectSessionFacts(both, 'jordan', 's1')).toEqual([people('Partner is Maya')]);
    expect(selectSessionFacts(both, 'jordan', 's2')).toEqual([]);
  });

  it('returns the very same ledger for an unchanged list, an empty first list or invalid input', () => {
    const once = applyExtraction(empty, { user: 'maya', session: 's1', facts: [people('Partner is Jordan')], at: 1 });
    expect(applyExtraction(once, { user: 'maya', session: 's1', facts: [people('Partner is Jordan')], at: 5 })).toBe(
      once,
    );
    expect(applyExtraction(empty, { user: 'maya', session: 's1', facts: [], at: 1 })).toBe(empty);
    expect(applyExtraction(empty, { user: '', session: 's1', facts: [people('x')], at: 1 })).toBe(empty);
    expect(applyExtraction(empty, { user: 'maya', session: 's1', facts: [people('x')], at: Number.NaN })).toBe(empty);
    expect(applyExtraction(empty, null as never)).toBe(empty);
  });

  it('stores ids an empty object already answers as ordinary users', () => {
    const ledger = applyExtraction(empty, {
      user: '__proto__',
      session: 'constructor',
      facts: [people('Partner is Jordan')],
      at: 1,
    });
    expect(selectSessionFacts(ledger, '__proto__', 'constructor')).toEqual([people('Partner is Jordan')]);
    expect(selectSessionFacts(ledger, 'toString', 'constructor')).toEqual([]);
    // A session named `__proto__` is an entry of its own, not the prototype of the user's sessions.
    const both = applyExtraction(ledger, { user: '__proto__', session: '__proto__', facts: [people('x')], at: 2 });
    expect(selectSessionFacts(both, '__proto__', '__proto__')).toEqual([people('x')]);
    expect(selectSessionFacts(both, '__proto__', 'constructor')).toEqual([people('Partner is Jordan')]);
    expect(selectUserNotes(both, '__proto__')).toBeDefined();
    expect(selectSessions(ledger).map(({ user, session }) => [user, session])).toEqual([['__proto__', 'constructor']]);
  });

  it('followed by a failed extraction equals applyExtraction alone', () => {
    fc.assert(
      fc.property(
        ledgerArb,
        fc.constantFrom(...USERS),
        fc.constantFrom(...SESSIONS),
        factListArb,
        (ledger, user, session, facts) => {
          const applied = applyExtraction(ledger, { user, session, facts, at: 30 });
          expect(applyNotesEvent(applied, failed(user, session, 31))).toBe(applied);
          expect(replayNotes([extracted(user, session, facts, 30), failed(user, session, 31)], ledger)).toEqual(
            applied,
          );
        },
      ),
      { numRuns: 100 },
    );
  });
});

/**
 * The slots (array elements and object fields) of the containers reachable from `after` that
 * `before` does not share: what a change had to copy or create. Counting them, not timing
 * them, shows whether a change costs the same whatever the size of the ledger.
 */
const copiedSlots = (before: unknown, after: unknown): number => {
  const shared = new Set<object>();
  const pending: unknown[] = [before];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== 'object' || value === null || shared.has(value)) continue;
    shared.add(value);
    pending.push(...Object.values(value));
  }
  let copied = 0;
  pending.push(after);
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== 'object' || value === null || shared.has(value)) continue;
    shared.add(value);
    copied += Object.keys(value).length;
    pending.push(...Object.values(value));
  }
  return copied;
};

describe('the cost of a change', () => {
  const ledgerOf = (users: number): NotesLedger =>
    replayNotes(Array.from({ length: users }, (_, i) => extracted(`user ${i}`, 's1', [people(`Fact ${i}`)], i)));

  it('an extraction, a merge or a rewrite copies as little with 5,000 users as with 10: users are sharded', () => {
    for (const users of [10, 5_000]) {
      const before = consolidateSession(ledgerOf(users), { user: 'user 5', session: 's1', at: 1e6 });
      const changes = [
        applyExtraction(before, { user: 'user 3', session: 's2', facts: [people('New fact')], at: 1e6 }),
        applyExtraction(before, { user: 'someone new', session: 's1', facts: [people('New fact')], at: 1e6 }),
        consolidateSession(before, { user: 'user 3', session: 's1', at: 1e6 }),
        rewriteProfile(before, { user: 'user 5', facts: [people('Rewritten')], at: 1e6 }),
      ];
      for (const after of changes) {
        expect(after).not.toBe(before);
        expect(copiedSlots(before, after)).toBeLessThan(200);
      }
    }
  });
});

describe('consolidateGlobalFacts', () => {
  it('merges a session into a new profile, counting the session', () => {
    const { global, dropped } = consolidateGlobalFactsWithReport(undefined, [people('Partner is Jordan')], 100);
    // Without the time of its messages, a fact counts as told at the merge.
    expect(global).toEqual({
      facts: [{ ...people('Partner is Jordan'), at: 100 }],
      consolidatedAt: 100,
      sessionCount: 1,
    });
    expect(dropped).toEqual([]);
  });

  it('collapses normalized duplicates, the newer wording winning and becoming the most recent', () => {
    const profile: GlobalFacts = {
      facts: [people('Partner is Jordan'), logistics('Saving for a house')],
      consolidatedAt: 1,
      sessionCount: 1,
    };
    const global = consolidateGlobalFacts(profile, [{ category: 'People', fact: 'partner is  JORDAN.' }], 2);
    expect(global.facts).toEqual([logistics('Saving for a house'), { ...people('partner is JORDAN.'), at: 2 }]);
    expect(global.sessionCount).toBe(2);
  });

  it('drops the least recent facts past the cap and reports them', () => {
    // Fifty facts about fifty different things (facts that differ only in a number tell of one thing).
    const topic = (i: number): string =>
      `Old fact about ${String.fromCharCode(97 + Math.floor(i / 26), 97 + (i % 26))}x`;
    const old = Array.from({ length: 50 }, (_, i) => people(topic(i)));
    const { global, dropped } = consolidateGlobalFactsWithReport(
      { facts: old, consolidatedAt: 1, sessionCount: 3 },
      // Two new facts about other things: "New fact A" and "New fact B" would tell of one thing.
      [people('Took up pottery'), people(topic(10)), people('Adopted a cat')],
      2,
    );
    expect(global.facts).toHaveLength(50);
    expect(dropped).toEqual([people(topic(0)), people(topic(1))]);
    // The new facts count as told at the merge; one repeated word for word keeps its time (here none).
    expect(global.facts.slice(-2)).toEqual([
      { ...people('Took up pottery'), at: 2 },
      { ...people('Adopted a cat'), at: 2 },
    ]);
    // Not newer, it keeps its place among the facts of its time (two fell off before it).
    expect(global.facts[8]).toEqual(people(topic(10)));
  });

  it('counts facts merged without a time as told at the merge, so past the cap the least recent fall off, named', () => {
    const topic = (i: number): string => `Visited the ${String.fromCharCode(97 + Math.floor(i / 26), 97 + (i % 26))}x`;
    const full = consolidateGlobalFacts(
      undefined,
      Array.from({ length: 50 }, (_, i) => people(topic(i))),
      1_000,
      { session: 's1' },
    );
    const report = consolidateGlobalFactsWithReport(full, [people('Took up pottery')], 2_000);
    expect(report.dropped).toEqual([{ ...people(topic(0)), session: 's1', at: 1_000 }]);
    expect(report.global.facts.at(-1)).toEqual({ ...people('Took up pottery'), at: 2_000 });
    // A fact told before all a full profile holds falls off at once: the profile stays, the fact is named.
    const early = consolidateGlobalFactsWithReport(full, [people('Took up pottery')], 2_000, { messagesAt: 500 });
    expect(early.global).toBe(full);
    expect(early.dropped).toEqual([{ ...people('Took up pottery'), at: 500 }]);
  });

  it('returns the same profile, uncounted, when the session adds nothing new', () => {
    const profile: GlobalFacts = { facts: [people('Partner is Jordan')], consolidatedAt: 1, sessionCount: 1 };
    expect(consolidateGlobalFacts(profile, [], 5)).toBe(profile);
    expect(consolidateGlobalFacts(profile, [people('Partner is Jordan')], 5)).toBe(profile);
    expect(consolidateGlobalFacts(undefined, [], 5)).toEqual({ facts: [], consolidatedAt: 5, sessionCount: 0 });
  });

  it('returns the same profile, uncounted, when a session is merged again later, and counts each session once', () => {
    const told = [people('Partner is Jordan'), people('Works as a nurse')];
    const once = consolidateGlobalFacts(undefined, told, 100, { session: 's1' });
    expect(once.sessionCount).toBe(1);
    expect(consolidateGlobalFacts(once, told, 200, { session: 's1' })).toBe(once);
    // What the session says now replaces what it said: a new fact comes at the new time, uncounted.
    const more = consolidateGlobalFacts(once, [...told, people('Has two kids')], 400, { session: 's1' });
    expect([more.sessionCount, more.facts.map((fact) => fact.at)]).toEqual([1, [100, 100, 400]]);
    // Another session counts, and with the time of its messages a session tells its facts anew.
    expect(consolidateGlobalFacts(more, told, 500, { session: 's2' }).sessionCount).toBe(2);
    expect(consolidateGlobalFacts(once, told, 600, { session: 's1', messagesAt: 550 }).facts.map((f) => f.at)).toEqual([
      550, 550,
    ]);
  });

  it('collapses two facts of one session that tell of the same thing, the later entry winning', () => {
    // A model appended the correction without deleting the fact it corrects.
    const three = logistics('Jordan works night shifts at the hospital three nights a week');
    const four = logistics('Jordan works night shifts at the hospital four nights a week');
    const report = consolidateGlobalFactsWithReport(undefined, [three, people('Partner is Jordan'), four], 50, {
      session: 's1',
      messagesAt: 50,
    });
    expect(report.global.facts.map((fact) => fact.fact)).toEqual([people('Partner is Jordan').fact, four.fact]);
    expect(report.unsure).toBe(false);
    // Two of its facts that may tell of one thing stay, for a model to decide.
    const maybe = consolidateGlobalFactsWithReport(
      undefined,
      [logistics('Lives in Portland'), logistics('Lives in Seattle')],
      50,
    );
    expect([maybe.global.facts.length, maybe.unsure]).toEqual([2, true]);
    // So does an end of stage, from the session's list as extracted.
    const ledger = applyExtraction(emptyNotesLedger(), { user: 'maya', session: 's1', facts: [three, four], at: 50 });
    const stage = endStageWithReport(ledger, { user: 'maya', at: 60 });
    expect(selectGlobalFacts(stage.ledger, 'maya')?.facts.map((fact) => fact.fact)).toEqual([four.fact]);
  });

  it('is idempotent and never exceeds 50', () => {
    const profileArb = fc.option(
      fc.record({
        facts: fc.uniqueArray(fc.integer({ min: 0, max: 80 }), { maxLength: 50 }),
        consolidatedAt: fc.nat(),
        sessionCount: fc.nat({ max: 5 }),
      }),
      { nil: undefined },
    );
    const sessionArb = fc.array(
      fc.oneof(
        factArb,
        fc.integer({ min: 0, max: 80 }).map((n) => people(`Fact ${n}`)),
      ),
      { maxLength: 70 },
    );
    fc.assert(
      fc.property(profileArb, sessionArb, fc.integer({ min: 0, max: 10 }), (raw, session, at) => {
        const profile = raw === undefined ? undefined : { ...raw, facts: raw.facts.map((n) => people(`Fact ${n}`)) };
        const once = consolidateGlobalFacts(profile, session, at);
        expect(once.facts.length).toBeLessThanOrEqual(50);
        expect(consolidateGlobalFacts(once, session, at)).toBe(once);
        expect(consolidateGlobalFacts(once, session, at + 1)).toBe(once);
      }),
      { numRuns: 100 },
    );
  });
});

describe('consolidateGlobalFacts, facts of one time', () => {
  /** Facts told at their own times, from a small space of times so that many share one. */
  const timedFactsArb = fc.array(
    fc.record({ fact: factArb, at: fc.integer({ min: 0, max: 3 }) }).map(({ fact, at }) => ({ ...fact, at })),
    { maxLength: 12 },
  );

  it('keeps facts of one time in the order first told when the same facts are merged again in another order', () => {
    const sister = { category: 'People', fact: 'Maya has a sister named Lena', at: 1_000 };
    const tuesdays = { category: 'Logistics', fact: 'Sessions are on Tuesdays', at: 1_000 };
    const once = consolidateGlobalFacts(undefined, [sister, tuesdays], 2_000);
    expect(consolidateGlobalFacts(once, [tuesdays, sister], 3_000)).toBe(once);
  });

  it('merging a consolidated list again, in any order and at any later time, returns the very same profile', () => {
    fc.assert(
      fc.property(timedFactsArb, fc.boolean(), fc.nat({ max: 10 }), (facts, reversed, later) => {
        const once = consolidateGlobalFacts(undefined, facts, 10);
        const told = reversed ? [...once.facts].reverse() : once.facts;
        expect(consolidateGlobalFacts(once, told, 10 + later)).toBe(once);
      }),
      { numRuns: 200 },
    );
  });
});

describe('ending a stage', () => {
  const s1 = replayNotes([
    extracted('maya', 's1', [people('Partner is Jordan'), logistics('Jordan works nights')], 10),
  ]);

  it('merges the session into the profile and marks it merged', () => {
    const { ledger, dropped } = consolidateSessionWithReport(s1, { user: 'maya', session: 's1', at: 20 });
    // Each fact says where it came from: the session, and the time its messages were told (here, its update).
    expect(selectGlobalFacts(ledger, 'maya')).toEqual({
      facts: selectSessionFacts(s1, 'maya', 's1').map((fact) => ({ ...fact, session: 's1', at: 10 })),
      consolidatedAt: 20,
      sessionCount: 1,
    });
    expect(selectSessionNotes(ledger, 'maya', 's1')?.mergedAt).toBe(20);
    expect(selectSessionNotes(ledger, 'maya', 's1')?.consolidated).toBe(true);
    expect(dropped).toEqual([]);
    expect(consolidateSession(ledger, { user: 'maya', session: 's1', at: 30 })).toBe(ledger);
    expect(consolidateSession(s1, { user: 'jordan', session: 's1', at: 30 })).toBe(s1);
  });

  it('merges every unmerged session of the user, oldest update first, and a changed list again', () => {
    const ledger = replayNotes(
      [
        extracted('maya', 's2', [people('Partner is Jordan (newer wording)')], 15),
        extracted('jordan', 's1', [people('Partner is Maya')], 16),
      ],
      s1,
    );
    expect(selectUnconsolidatedSessions(ledger, 'maya')).toEqual(['s1', 's2']);
    const stage = endStageWithReport(ledger, { user: 'maya', at: 20 });
    expect(stage.sessions).toEqual(['s1', 's2']);
    expect(stage.events).toEqual([
      { type: 'notes/sessionConsolidated', user: 'maya', session: 's1', at: 20 },
      { type: 'notes/sessionConsolidated', user: 'maya', session: 's2', at: 20 },
    ]);
    expect(selectGlobalFacts(stage.ledger, 'maya')?.sessionCount).toBe(2);
    expect(selectGlobalFacts(stage.ledger, 'jordan')).toBeUndefined();
    expect(replayNotes(stage.events, ledger)).toEqual(stage.ledger);
    expect(endStageWithReport(stage.ledger, { user: 'maya', at: 30 }).ledger).toBe(stage.ledger);
    const changed = applyExtraction(stage.ledger, {
      user: 'maya',
      session: 's1',
      facts: [logistics('Saving for a house')],
      at: 40,
    });
    expect(endStageWithReport(changed, { user: 'maya', at: 50 }).sessions).toEqual(['s1']);
  });

  it('takes a model rewrite of an existing profile, never an empty one', () => {
    const merged = consolidateSession(s1, { user: 'maya', session: 's1', at: 20 });
    const rewritten = rewriteProfile(merged, {
      user: 'maya',
      facts: [people('Married to Jordan'), { category: 'Nope', fact: 'x' }],
      at: 30,
    });
    // A new wording comes from the fact it may stand for: its session, and the time it was told.
    expect(selectGlobalFacts(rewritten, 'maya')).toEqual({
      facts: [{ ...people('Married to Jordan'), session: 's1', at: 10 }],
      consolidatedAt: 30,
      sessionCount: 1,
    });
    expect(rewriteProfile(merged, { user: 'maya', facts: [], at: 30 })).toBe(merged);
    expect(rewriteProfile(s1, { user: 'maya', facts: [people('Married to Jordan')], at: 30 })).toBe(s1);
  });
});

describe('a profile rewrite', () => {
  const three = logistics('Jordan works night shifts at the hospital three nights a week');
  const reworded = logistics('Jordan works hospital night shifts, three nights a week');
  const four = logistics('Jordan works night shifts at the hospital four nights a week');
  const moved = people('Moved to Portland two years ago');
  const merge = (ledger: NotesLedger, session: string, facts: CategorizedFact[], at: number): NotesLedger =>
    consolidateSession(applyExtraction(ledger, { user: 'maya', session, facts, at, messagesAt: at }), {
      user: 'maya',
      session,
      at,
    });
  const told = (ledger: NotesLedger): string[] =>
    (selectGlobalFacts(ledger, 'maya')?.facts ?? []).map((fact) => `${fact.fact} (${fact.session}@${fact.at})`);

  it('gives a new wording the session and time of the fact it stands for, not the newest of the profile', () => {
    const profile = merge(merge(emptyNotesLedger(), 's1', [three], 1_000), 's3', [moved], 30_000);
    const rewritten = rewriteProfile(profile, { user: 'maya', facts: [reworded, moved], at: 31_000 });
    expect(told(rewritten)).toEqual([`${reworded.fact} (s1@1000)`, `${moved.fact} (s3@30000)`]);
    // A correction told after the fact it corrects, merged after the rewrite, replaces the new wording.
    expect(told(merge(rewritten, 's2', [four], 20_000))).toEqual([
      `${four.fact} (s2@20000)`,
      `${moved.fact} (s3@30000)`,
    ]);
    // In its own session no block says it as from a previous session, and the session's later merge replaces it.
    expect(formatNotesBlocks(rewritten, 'maya', 's1').profile).not.toContain('hospital');
    const again = merge(rewritten, 's1', [logistics('Jordan now works day shifts at the clinic')], 40_000);
    expect(told(again)).toEqual([`${moved.fact} (s3@30000)`, 'Jordan now works day shifts at the clinic (s1@40000)']);
  });

  it('takes the latest of the facts a wording stands for, from several sessions, and the oldest time for one that stands for none', () => {
    const profile = merge(
      merge(
        merge(emptyNotesLedger(), 's0', [logistics('Lives in Portland')], 1_000),
        's1',
        [logistics('Lives in Seattle')],
        5_000,
      ),
      's2',
      [people('Has a cat')],
      9_000,
    );
    const rewritten = rewriteProfile(profile, {
      user: 'maya',
      facts: [logistics('Now lives in Seattle (moved from Portland)'), people('Has a cat'), people('Enjoys pottery')],
      at: 10_000,
    });
    expect(told(rewritten)).toEqual([
      'Now lives in Seattle (moved from Portland) (s1@5000)',
      'Has a cat (s2@9000)',
      'Enjoys pottery (undefined@1000)',
    ]);
  });
});

describe('events and replay', () => {
  it('every event returns a deeply frozen ledger and never mutates its input', () => {
    fc.assert(
      fc.property(ledgerArb, eventArb, (ledger, event) => {
        const before = JSON.stringify(ledger);
        const next = applyNotesEvent(ledger, event);
        expect(JSON.stringify(ledger)).toBe(before);
        expect(isDeepFrozen(next)).toBe(true);
        expect(JSON.parse(JSON.stringify(next))).toEqual(next);
      }),
      { numRuns: 100 },
    );
  });

  it('no list ever holds more than 25 facts, and no profile more than 50', () => {
    fc.assert(
      fc.property(ledgerArb, (ledger) => {
        for (const { notes } of selectSessions(ledger)) expect(notes.facts.length).toBeLessThanOrEqual(25);
        for (const user of USERS) expect(selectGlobalFacts(ledger, user)?.facts.length ?? 0).toBeLessThanOrEqual(50);
      }),
      { numRuns: 100 },
    );
  });

  it('takes from a notes/loaded event (a log read back from JSON) only notes and a profile a store record could hold', () => {
    const start = replayNotes([
      { type: 'notes/extracted', user: 'maya', session: 's1', facts: [people('Partner is Jordan')], at: 1 },
      { type: 'notes/sessionConsolidated', user: 'maya', session: 's1', at: 2 },
    ]);
    const many = Array.from({ length: 30 }, (_, i) => people(`Fact ${i}`));
    const unusable: unknown[] = [
      {},
      { facts: 'Partner is Jordan', updatedAt: 3, consolidated: false },
      { facts: [{ category: 'Hobbies', fact: 'Plays chess' }], updatedAt: 3, consolidated: false },
      { facts: many, updatedAt: 3, consolidated: false },
      { facts: [people('Works nights')], updatedAt: Number.NaN, consolidated: false },
    ];
    for (const notes of unusable) {
      const event = {
        type: 'notes/loaded',
        user: 'maya',
        session: 's1',
        notes,
        profile: notes,
      } as unknown as NotesEvent;
      const next = applyNotesEvent(start, event);
      expect(next).toEqual(start);
      expect(decodeNotes(JSON.parse(JSON.stringify(encodeNotes(next))))).toEqual(E.right(next));
    }
    // A usable record is taken, its fact text kept on one line.
    const loaded = applyNotesEvent(start, {
      type: 'notes/loaded',
      user: 'maya',
      session: 's2',
      notes: { facts: [people('Works\nnights')], updatedAt: 3, consolidated: false },
    });
    expect(selectSessionFacts(loaded, 'maya', 's2')).toEqual([people('Works nights')]);
  });

  it('ignores unknown events', () => {
    const ledger = emptyNotesLedger();
    expect(applyNotesEvent(ledger, { type: 'notes/unknown' } as never)).toBe(ledger);
    expect(applyNotesEvent(ledger, null as never)).toBe(ledger);
  });
});

describe('persistence', () => {
  it('a ledger survives the saved-state round trip, in the same state file as the fact store', () => {
    fc.assert(
      fc.property(ledgerArb, (ledger) => {
        const text = JSON.stringify(encodeState(emptyFactStore(), ledger));
        const decoded = decodeSavedState(JSON.parse(text));
        expect(E.isRight(decoded) && decoded.right.notes).toEqual(ledger);
      }),
      { numRuns: 100 },
    );
  });

  it('writes the same text whatever order the ledger was built in', () => {
    const a = replayNotes([
      extracted('maya', 's2', [people('A')], 1),
      extracted('jordan', 's1', [people('B')], 2),
      extracted('maya', 's1', [people('C')], 3),
    ]);
    const b = replayNotes([
      extracted('maya', 's1', [people('C')], 3),
      extracted('jordan', 's1', [people('B')], 2),
      extracted('maya', 's2', [people('A')], 1),
    ]);
    expect(JSON.stringify(encodeNotes(a))).toBe(JSON.stringify(encodeNotes(b)));
    expect(encodeNotes(a).sessions.map((entry) => `${entry.user}/${entry.session}`)).toEqual([
      'jordan/s1',
      'maya/s1',
      'maya/s2',
    ]);
  });

  it('still reads a state file without notes, and writes none when no ledger is given', () => {
    const v1 = {
      format: 'session-fact-tracker/state',
      version: 1,
      maxValidFacts: DEFAULT_MAX_VALID_FACTS,
      pairs: [],
      prompts: [],
    };
    expect(encodeState(emptyFactStore())).toEqual(v1);
    const decoded = decodeSavedState(v1);
    expect(E.isRight(decoded) && decoded.right.notes).toBeUndefined();
  });

  it('still reads a state an earlier version saved with an id no store could keep, its fact store and other notes whole', () => {
    const ledger = replayNotes([extracted('maya', 's1', [people('Partner is Jordan')], 1)]);
    const good = encodeNotes(ledger);
    const session = good.sessions[0]!;
    const notes = { ...good, sessions: [session, { ...session, user: 'a\u0000b', session: 's\ud83d' }] };
    const decoded = decodeSavedState({ ...encodeState(emptyFactStore()), notes });
    expect(E.isRight(decoded) && decoded.right.notes !== undefined).toBe(true);
  });

  it('refuses a broken notes section with a precise reason, in decodeState too', () => {
    const ledger = replayNotes([extracted('maya', 's1', [people('Partner is Jordan')], 1)]);
    const good = encodeNotes(ledger);
    const session = good.sessions[0]!;
    const cases: Array<[unknown, string]> = [
      [[], 'notes is not an object'],
      [{ ...good, categories: [] }, 'notes.categories: categories must be an array of 1 to 20 categories'],
      [{ ...good, sessions: 'x' }, 'notes.sessions is not an array'],
      [
        { ...good, sessions: [{ ...session, facts: [{ category: 'Hobbies', fact: 'Chess' }] }] },
        'notes.sessions[0].facts[0]: category "Hobbies" is not one of People, Logistics, Conflict, Emotional, History',
      ],
      [
        { ...good, sessions: [{ ...session, facts: [people('A'), people('a')] }] },
        'notes.sessions[0].facts[1] repeats an earlier fact',
      ],
      [{ ...good, sessions: [session, session] }, 'notes.sessions[1] repeats the session "s1" of "maya"'],
      [{ ...good, sessions: [{ ...session, updatedAt: 'soon' }] }, 'notes.sessions[0].updatedAt is not a finite time'],
      [
        { ...good, profiles: [{ user: 'maya', facts: [], consolidatedAt: 1, sessionCount: -1 }] },
        'notes.profiles[0].sessionCount is not a whole number 0 or more',
      ],
      [
        {
          ...good,
          profiles: [
            {
              user: 'maya',
              facts: Array.from({ length: 51 }, (_, i) => people(`F${i}`)),
              consolidatedAt: 1,
              sessionCount: 1,
            },
          ],
        },
        'notes.profiles[0].facts holds 51 facts, more than the cap of 50',
      ],
    ];
    for (const [notes, reason] of cases) {
      const state = { ...encodeState(emptyFactStore()), notes };
      expect(decodeSavedState(state)).toEqual(E.left({ code: 'invalid_notes', message: reason }));
      expect(decodeState(state)).toEqual(E.left({ code: 'invalid_notes', message: reason }));
      expect(decodeNotes(notes)).toEqual(E.left({ code: 'invalid_notes', message: reason }));
    }
    expect(decodeNotes(good)).toEqual(E.right(ledger));
  });
});

/** A ledger as typed, for the compiler: plain readonly data. */
const typed: NotesLedger = emptyNotesLedger({ categories: ['People', { name: 'Money', description: 'budgets' }] });
it('a ledger takes custom categories, and falls back to the defaults for an invalid set', () => {
  expect(typed.categories).toEqual(['People', 'Money']);
  expect(emptyNotesLedger({ categories: [] }).categories).toEqual([
    'People',
    'Logistics',
    'Conflict',
    'Emotional',
    'History',
  ]);
});

describe('a ledger the caller owns (item 15)', () => {
  it('is never frozen in place: reducers, the machine and the tracker copy what they do not own', () => {
    const built = replayNotes([
      extracted('maya', 's1', [people('Partner is Jordan')], 1),
      extracted('jordan', 's1', [people('Partner is Maya')], 2),
    ]);
    const writable = (): NotesLedger => JSON.parse(JSON.stringify(built)) as NotesLedger;
    const push = (ledger: NotesLedger) => () =>
      (selectSessionFacts(ledger, 'jordan', 's1') as CategorizedFact[]).push(people('Still the caller’s'));

    const parsed = writable();
    const next = applyExtraction(parsed, { user: 'maya', session: 's1', facts: [people('Married to Jordan')], at: 3 });
    expect(push(parsed)).not.toThrow();
    expect(isDeepFrozen(next)).toBe(true);
    expect(selectSessionFacts(next, 'jordan', 's1')).toEqual([people('Partner is Maya')]);

    const consolidated = writable();
    consolidateSession(consolidated, { user: 'jordan', session: 's1', at: 4 });
    expect(push(consolidated)).not.toThrow();

    const initial = writable();
    createNotableFactsTracker({ complete: async () => '[]', initial });
    expect(push(initial)).not.toThrow();
  });

  it('consolidateGlobalFacts leaves a profile and session facts the caller parsed unfrozen and unchanged, and merges them as their frozen originals', () => {
    const profileArb = fc.array(
      fc.record({ fact: factArb, session: fc.constantFrom(...SESSIONS), at: fc.integer({ min: 0, max: 9 }) }),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(
        fc.option(profileArb, { nil: undefined }),
        factListArb,
        fc.option(fc.constantFrom(...SESSIONS), { nil: undefined }),
        fc.integer({ min: 0, max: 12 }),
        (raw, sessionFacts, session, at) => {
          // A profile as the library makes it (frozen), and as a backend reads it back from JSON.
          const frozen =
            raw === undefined
              ? undefined
              : consolidateGlobalFacts(
                  undefined,
                  raw.map(({ fact, session: from, at: told }) => ({ ...fact, session: from, at: told })),
                  0,
                );
          const profile = frozen === undefined ? undefined : (JSON.parse(JSON.stringify(frozen)) as GlobalFacts);
          const facts = JSON.parse(JSON.stringify(sessionFacts)) as CategorizedFact[];
          const copies = structuredClone({ profile, facts });
          const options = session === undefined ? {} : { session };
          const merged = consolidateGlobalFactsWithReport(profile, facts, at, options);
          const expected = consolidateGlobalFactsWithReport(frozen, sessionFacts, at, options);
          expect({ profile, facts }).toEqual(copies);
          expect(
            [...(profile === undefined ? [] : [profile, ...profile.facts]), facts, ...facts].some((part) =>
              Object.isFrozen(part),
            ),
          ).toBe(false);
          expect(merged.dropped).toEqual(expected.dropped);
          expect(merged.global).toEqual(expected.global);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('-0 as a time', () => {
  const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
  const timeArb = fc.oneof(fc.constant(-0), fc.integer({ min: -2, max: 2 }));

  it('a ledger extracted, merged and rewritten at any times, -0 among them, deep-equals its JSON round trip', () => {
    fc.assert(
      fc.property(timeArb, timeArb, timeArb, timeArb, (at, messagesAt, mergedAt, rewrittenAt) => {
        let ledger = applyExtraction(emptyNotesLedger(), {
          user: 'maya',
          session: 's1',
          facts: [people('Partner is Jordan')],
          at,
          messagesAt,
        });
        ledger = consolidateSession(ledger, { user: 'maya', session: 's1', at: mergedAt });
        ledger = rewriteProfile(ledger, { user: 'maya', facts: [people('Partner is Jordan Lee')], at: rewrittenAt });
        expect(viaJson(ledger)).toEqual(ledger);
        const profile = consolidateGlobalFacts(undefined, [people('Lives in Lisbon')], at, {
          session: 's2',
          messagesAt,
        });
        expect(viaJson(profile)).toEqual(profile);
      }),
    );
  });
});

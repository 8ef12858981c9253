/**
 * What the profile tells the main model: a session's correction replaces what its own earlier
 * merge said (item 1), a newer session's fact replaces an older one it contradicts (item 2),
 * the blocks never say a fact twice or call this session's facts "previous" (item 6), sessions
 * merge in the order of their messages (item 11), a session counts once (item 13), and the
 * profile's time is an ISO string where it leaves the library (item 14).
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { replayNotes } from '../../src/notes/events.js';
import { formatNotesBlocks } from '../../src/notes/format.js';
import { selectGlobalFacts } from '../../src/notes/ledger.js';
import type { NotesEvent } from '../../src/notes/model.js';
import { decodeNotes, encodeNotes } from '../../src/notes/persist.js';
import type { CompleteFn } from '../../src/notes/port.js';
import { memoryNotesStore } from '../../src/notes/store.js';
import { rewriteProfile } from '../../src/notes/rewriteProfile.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import { decodeSavedState, encodeState } from '../../src/saved/savedState.js';
import { emptyFactStore } from '../../src/core/store/state.js';
import type { NotableFactsTracker } from '../../src/notes/trackerTypes.js';

const extracted = (session: string, at: number, ...facts: Array<[string, string]>): NotesEvent => ({
  type: 'notes/extracted',
  user: 'maya',
  session,
  facts: facts.map(([category, fact]) => ({ category, fact })),
  at,
});
const merged = (session: string, at: number): NotesEvent => ({
  type: 'notes/sessionConsolidated',
  user: 'maya',
  session,
  at,
});

const profileTexts = (events: ReadonlyArray<NotesEvent>): ReadonlyArray<string> =>
  selectGlobalFacts(replayNotes(events), 'maya')?.facts.map((fact) => fact.fact) ?? [];

const answer = (...facts: Array<[string, string]>): string =>
  JSON.stringify({ notableFacts: facts.map(([category, fact]) => ({ category, fact })) });

const text = (tracker: NotableFactsTracker, user: string, session: string): string =>
  E.getOrElse(() => 'a failure')(E.map((context: { text: string }) => context.text)(tracker.contextFor(user, session)));

describe('merging a session into the profile', () => {
  it('replaces what the same session merged before: a corrected fact does not stay (item 1)', () => {
    const events = [
      extracted('s1', 1, ['People', 'Partner is Jordan'], ['Logistics', 'Jordan works three nights a week']),
      merged('s1', 2),
      extracted('s1', 3, ['People', 'Partner is Jordan'], ['Logistics', 'Jordan works four nights a week']),
      merged('s1', 4),
    ];
    expect(profileTexts(events)).toEqual(['Partner is Jordan', 'Jordan works four nights a week']);
  });

  it('lets a newer session’s fact replace an older session’s fact about the same thing (item 2)', () => {
    const events = [
      extracted('s1', 1, ['Logistics', 'Jordan works three night shifts a week'], ['People', 'Daughter Lily is 5']),
      merged('s1', 2),
      extracted('s2', 3, ['Logistics', 'Jordan works four night shifts a week']),
      merged('s2', 4),
    ];
    expect(profileTexts(events)).toEqual(['Daughter Lily is 5', 'Jordan works four night shifts a week']);
  });

  it('never states both in a later prompt: the profile block leaves out what this session’s newer fact replaced (item 2)', () => {
    const ledger = replayNotes([
      extracted('s1', 1, ['Logistics', 'Jordan works three night shifts a week'], ['People', 'Daughter Lily is 5']),
      merged('s1', 2),
      extracted('s2', 3, ['Logistics', 'Jordan works four night shifts a week']),
    ]);
    expect(formatNotesBlocks(ledger, 'maya', 's2').text).toBe(
      [
        'ABOUT THIS USER (from previous sessions):',
        '[People]',
        '- Daughter Lily is 5',
        '',
        'NOTED FACTS FROM THIS SESSION:',
        '[Logistics]',
        '- Jordan works four night shifts a week',
      ].join('\n'),
    );
  });

  it('keeps facts about different things, however alike their words (item 2)', () => {
    const events = [
      extracted('s1', 1, ['People', 'Daughter Lily is 5'], ['Emotional', 'Feels unheard about childcare decisions']),
      merged('s1', 2),
      extracted('s2', 3, ['People', 'Son Max is 8'], ['Emotional', 'Feels exhausted by the morning routine']),
      merged('s2', 4),
    ];
    expect(profileTexts(events)).toEqual([
      'Daughter Lily is 5',
      'Feels unheard about childcare decisions',
      'Son Max is 8',
      'Feels exhausted by the morning routine',
    ]);
  });

  it('does not show this session’s merged facts again as "from previous sessions" (item 6)', () => {
    const ledger = replayNotes([
      extracted('s1', 1, ['People', 'Partner is Jordan']),
      merged('s1', 2),
      extracted('s2', 3, ['History', 'Moved to Portland']),
      merged('s2', 4),
    ]);
    expect(formatNotesBlocks(ledger, 'maya', 's2').text).toBe(
      [
        'ABOUT THIS USER (from previous sessions):',
        '[People]',
        '- Partner is Jordan',
        '',
        'NOTED FACTS FROM THIS SESSION:',
        '[History]',
        '- Moved to Portland',
      ].join('\n'),
    );
    expect(formatNotesBlocks(ledger, 'maya', 's3').profile).toContain('- Moved to Portland');
  });

  it('counts a session once, however many ends of stage merge it (item 13)', () => {
    const ledger = replayNotes([
      extracted('s1', 1, ['People', 'Partner is Jordan']),
      merged('s1', 2),
      extracted('s1', 3, ['People', 'Partner is Jordan'], ['History', 'Married three years']),
      merged('s1', 4),
    ]);
    expect(selectGlobalFacts(ledger, 'maya')?.sessionCount).toBe(1);
  });
});

describe('the order sessions merge in', () => {
  it('follows the time of the messages an extraction covers, not when it finished (item 11)', async () => {
    let clock = 0;
    const calls: Array<{ prompt: string; resolve: (text: string) => void }> = [];
    const complete: CompleteFn = (prompt) => new Promise((resolve) => calls.push({ prompt, resolve }));
    const tracker = createNotableFactsTracker({ complete, now: () => clock });
    clock = 1_000;
    tracker.recordUserMessage('maya', 'old', 'Jordan and I married in 2019.');
    clock = 2_000;
    tracker.recordUserMessage('maya', 'new', 'We moved to Portland last year.');
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The newer session's extraction finishes first; the older one's is slow.
    clock = 3_000;
    calls[1]!.resolve(answer(['History', 'Moved to Portland last year']));
    clock = 9_000;
    calls[0]!.resolve(answer(['History', 'Married Jordan in 2019']));
    const stage = await tracker.endStage('maya');
    expect(E.isRight(stage) && stage.right.sessions).toEqual(['old', 'new']);
    expect(E.isRight(stage) && stage.right.profile?.facts.map((fact) => fact.fact)).toEqual([
      'Married Jordan in 2019',
      'Moved to Portland last year',
    ]);
  });
});

describe('the profile where it leaves the library', () => {
  it('carries consolidatedAt as an ISO string in the saved section and the store, and reads it back (item 14)', async () => {
    const ledger = replayNotes([
      extracted('s1', 1, ['People', 'Partner is Jordan']),
      merged('s1', Date.UTC(2026, 1, 3)),
    ]);
    const saved = encodeNotes(ledger);
    expect(saved.profiles[0]?.consolidatedAt).toBe('2026-02-03T00:00:00.000Z');
    expect(decodeNotes(JSON.parse(JSON.stringify(saved)))).toEqual(E.right(ledger));
    // A section written before, with epoch milliseconds, still reads.
    const older = {
      ...saved,
      profiles: saved.profiles.map((profile) => ({ ...profile, consolidatedAt: Date.UTC(2026, 1, 3) })),
    };
    expect(decodeNotes(older)).toEqual(E.right(ledger));

    const store = memoryNotesStore();
    const tracker = createNotableFactsTracker({
      complete: async () => answer(['People', 'Partner is Jordan']),
      store,
      now: () => Date.UTC(2026, 1, 3),
    });
    tracker.recordUserMessage('maya', 's1', 'My partner is Jordan.');
    await tracker.settled();
    await tracker.endStage('maya');
    await tracker.settled();
    const records = store.load('maya', 's1');
    expect(
      E.isRight(records as E.Either<unknown, unknown>) &&
        (records as E.Right<{ profile: { value: unknown } }>).right.profile.value,
    ).toMatchObject({
      consolidatedAt: '2026-02-03T00:00:00.000Z',
    });
    expect(text(tracker, 'maya', 's2')).toBe(
      'ABOUT THIS USER (from previous sessions):\n[People]\n- Partner is Jordan',
    );
  });

  it('reads back every time it writes, years before 0000 and after 9999 included (a clock in microseconds)', async () => {
    for (const at of [Date.UTC(2026, 1, 3) * 1_000, -1e14, 8.64e15]) {
      const ledger = replayNotes([extracted('s1', 1, ['People', 'Partner is Jordan']), merged('s1', at)]);
      expect(decodeNotes(JSON.parse(JSON.stringify(encodeNotes(ledger))))).toEqual(E.right(ledger));
      // Epoch milliseconds, as sections written before held them, read back whatever the year.
      const older = encodeNotes(ledger);
      const epoch = { ...older, profiles: older.profiles.map((profile) => ({ ...profile, consolidatedAt: at })) };
      expect(decodeNotes(epoch)).toEqual(E.right(ledger));
    }
    // A tracker whose clock counts microseconds saves a profile that another tracker reads back.
    const store = memoryNotesStore();
    const problems: unknown[] = [];
    const options = {
      complete: async () => answer(['People', 'Partner is Jordan']),
      store,
      now: () => Date.UTC(2026, 1, 3) * 1_000,
      onError: (problem: unknown) => problems.push(problem),
    };
    const first = createNotableFactsTracker(options);
    first.recordUserMessage('maya', 's1', 'My partner is Jordan.');
    await first.settled();
    await first.endStage('maya');
    await first.settled();
    const second = createNotableFactsTracker(options);
    await second.load('maya', 's2');
    expect(text(second, 'maya', 's2')).toBe('ABOUT THIS USER (from previous sessions):\n[People]\n- Partner is Jordan');
    expect(problems).toEqual([]);
  });

  it('a ledger merged and rewritten at any finite times deep-equals what its saved section and its saved state read back', () => {
    // What clocks give: whole milliseconds, a fraction (performance.timeOrigin + performance.now()), nanoseconds, -0.
    const timeArb = fc.oneof(
      fc.integer({ min: 0, max: Date.UTC(2100, 0) }),
      fc.double({ min: 1e12, max: 2e12, noNaN: true }),
      fc.double({ min: -1e18, max: 1e18, noNaN: true }),
      fc.constantFrom(-0, 1.7e18, -8.64e15 - 0.5, Number.MAX_VALUE),
    );
    const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
    fc.assert(
      fc.property(timeArb, timeArb, fc.boolean(), (mergedAt, rewrittenAt, rewritten) => {
        let ledger = replayNotes([extracted('s1', 1, ['People', 'Partner is Jordan']), merged('s1', mergedAt)]);
        if (rewritten)
          ledger = rewriteProfile(ledger, {
            user: 'maya',
            facts: [{ category: 'People', fact: 'Partner is Jordan Lee' }],
            at: rewrittenAt,
          });
        expect(decodeNotes(viaJson(encodeNotes(ledger)))).toEqual(E.right(ledger));
        const saved = decodeSavedState(viaJson(encodeState(emptyFactStore(), ledger)));
        expect(E.isRight(saved) && saved.right.notes).toEqual(ledger);
      }),
      { numRuns: 200 },
    );
  });
});

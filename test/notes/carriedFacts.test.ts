/**
 * A fact a session's list carries over unchanged keeps the time it was first told: the extractor
 * lists every fact of the session each time, and a fact listed again is not told again. Else a
 * session continued after another session's correction would bring the corrected fact back at
 * its next merge, counted as told with the session's latest message.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { applyExtraction } from '../../src/notes/applyExtraction.js';
import { consolidateSession } from '../../src/notes/consolidateSession.js';
import { consolidateGlobalFacts } from '../../src/notes/global.js';
import {
  emptyNotesLedger,
  type NotesLedger,
  selectGlobalFacts,
  selectSessionFacts,
  selectSessionNotes,
  selectSessions,
} from '../../src/notes/ledger.js';
import { type CategorizedFact, factKey, toldTimeOf } from '../../src/notes/model.js';
import { settleExtraction } from '../../src/notes/port.js';
import { formatNotesBlocks } from '../../src/notes/format.js';
import {
  decodeNotes,
  decodeSessionRecord,
  encodeNotes,
  encodeSessionRecord,
  readSessionRecord,
} from '../../src/notes/persist.js';
import { ledgerArb } from './arbitraries.js';

const logistics = (fact: string): CategorizedFact => ({ category: 'Logistics', fact });
const people = (fact: string): CategorizedFact => ({ category: 'People', fact });
const nights = (value: string): CategorizedFact =>
  logistics(`Jordan works night shifts at the hospital ${value} nights a week`);

const extract = (ledger: NotesLedger, session: string, facts: CategorizedFact[], at: number): NotesLedger =>
  applyExtraction(ledger, { user: 'maya', session, facts, at, messagesAt: at });
const merge = (ledger: NotesLedger, session: string, at: number): NotesLedger =>
  consolidateSession(ledger, { user: 'maya', session, at });

const VALUES = ['two', 'three', 'four', 'five'];
const OTHERS = ['Likes tea', 'Plays the violin', 'Grew up in Ohio', 'Reads mystery novels', 'Keeps a garden'];
const SESSIONS = ['s1', 's2', 's3'];
const stepsArb = fc.array(
  fc.record({
    session: fc.constantFrom(...SESSIONS),
    // undefined: the list carries the session's value over as it stands.
    value: fc.option(fc.nat(VALUES.length - 1), { nil: undefined }),
    other: fc.nat(OTHERS.length - 1),
    merge: fc.boolean(),
  }),
  { minLength: 1, maxLength: 20 },
);

/** One step: a session tells a value, or carries its own over, and may end its stage. */
type Step = (typeof stepsArb extends fc.Arbitrary<infer T> ? T : never)[number];

/** The ledger after some steps; per session, its value and when it first told it, and that as its last merge took it. */
interface Told {
  readonly ledger: NotesLedger;
  readonly told: ReadonlyMap<string, { value: string; at: number }>;
  readonly merged: ReadonlyMap<string, { value: string; at: number }>;
}

/** Extracts and merges `steps` one a second, `check`ing what they told after each. */
const runSteps = (steps: ReadonlyArray<Step>, check?: (told: Told) => void): Told => {
  const told = new Map<string, { value: string; at: number }>();
  const merged = new Map<string, { value: string; at: number }>();
  let ledger = emptyNotesLedger();
  steps.forEach((step, index) => {
    const at = (index + 1) * 1_000;
    const value = step.value === undefined ? undefined : VALUES[step.value]!;
    if (value !== undefined && told.get(step.session)?.value !== value) told.set(step.session, { value, at });
    const current = told.get(step.session);
    const list = [...(current === undefined ? [] : [nights(current.value)]), people(OTHERS[step.other]!)];
    ledger = extract(ledger, step.session, list, at);
    if (step.merge) {
      ledger = merge(ledger, step.session, at + 100);
      if (current === undefined) merged.delete(step.session);
      else merged.set(step.session, current);
    }
    check?.({ ledger, told, merged });
  });
  return { ledger, told, merged };
};

describe('a fact a session carries over unchanged', () => {
  it('keeps the time it was first told, so a correction told meanwhile in another session stands', () => {
    const lily = people('Daughter Lily started school');
    let ledger = merge(extract(emptyNotesLedger(), 's1', [nights('three')], 1_000), 's1', 1_100);
    ledger = merge(extract(ledger, 's2', [nights('four')], 10_000), 's2', 10_100);
    // s1 continues: its list carries "three nights" over as it stands and adds an unrelated fact.
    ledger = extract(ledger, 's1', [nights('three'), lily], 20_000);
    expect(selectSessionFacts(ledger, 'maya', 's1')).toEqual([{ ...nights('three'), at: 1_000 }, lily]);
    ledger = merge(ledger, 's1', 20_100);
    expect(selectGlobalFacts(ledger, 'maya')?.facts).toEqual([
      { ...nights('four'), session: 's2', at: 10_000 },
      { ...lily, session: 's1', at: 20_000 },
    ]);
  });

  it('counts as told no later than the messages its list covers, whatever time its record holds', () => {
    // A record edited by hand, or written by a skewed clock: "three nights" stamped after its own list.
    const skewed = { ...nights('three'), at: 50_000 };
    const profile = {
      facts: [{ ...nights('four'), session: 's2', at: 30_000 }],
      sessionCount: 1,
      consolidatedAt: 30_100,
    };
    const merged = consolidateGlobalFacts(profile, [skewed], 20_100, { session: 's1', messagesAt: 20_000 });
    expect(merged.facts).toEqual([{ ...nights('four'), session: 's2', at: 30_000 }]);
  });

  it('the profile states each thing as the merged sessions told it last, however often their lists carry it over unchanged', () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        const { ledger, merged } = runSteps(steps);
        const latest = [...merged.values()].sort((a, b) => b.at - a.at)[0];
        const stated = (selectGlobalFacts(ledger, 'maya')?.facts ?? []).filter((fact) => fact.category === 'Logistics');
        expect(stated.map(({ fact }) => fact)).toEqual(latest === undefined ? [] : [nights(latest.value).fact]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the blocks of a session continued after another session corrected one of its facts', () => {
  it('give the correction, not the fact the session carries over from before it', () => {
    let ledger = extract(emptyNotesLedger(), 's1', [nights('three')], 1_000);
    ledger = merge(extract(ledger, 's2', [nights('four')], 10_000), 's2', 10_100);
    // Before s1 speaks again, and after: its list still carries "three nights" over, told at 1000.
    for (const list of [[nights('three')], [nights('three'), people('Has a dog named Rex')]]) {
      ledger = extract(ledger, 's1', list, 20_000);
      const blocks = formatNotesBlocks(ledger, 'maya', 's1');
      expect(blocks.profile).toContain(nights('four').fact);
      expect(blocks.text).not.toContain(nights('three').fact);
    }
    // Told again after the correction, the session's own word stands, and the profile's is left out.
    ledger = extract(ledger, 's1', [nights('five')], 30_000);
    expect(formatNotesBlocks(ledger, 'maya', 's1').text).toBe(
      `NOTED FACTS FROM THIS SESSION:\n[Logistics]\n- ${nights('five').fact}`,
    );
  });

  it('a session’s blocks state a thing as told last, among its own list and the other sessions’ merges', () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        runSteps(steps, ({ ledger, told, merged }) => {
          for (const session of SESSIONS) {
            // The profile holds the latest of the other sessions' merges; the session's own list wins a tie.
            const others = [...merged].filter(([from]) => from !== session).map(([, fact]) => fact);
            const profile = others.sort((a, b) => b.at - a.at)[0];
            const own = told.get(session);
            const latest = own === undefined || (profile !== undefined && profile.at > own.at) ? profile : own;
            const text = formatNotesBlocks(ledger, 'maya', session).text;
            const stated = VALUES.filter((value) => text.includes(nights(value).fact));
            expect({ session, stated }).toEqual({ session, stated: latest === undefined ? [] : [latest.value] });
          }
        });
      }),
      { numRuns: 300 },
    );
  });
});

describe('a list past the cap of 25', () => {
  const history = (n: number): CategorizedFact => ({ category: 'History', fact: `Old history item number ${n}` });
  const HISTORY = Array.from({ length: 23 }, (_, n) => history(n));
  const ana = people('Sister is Ana');
  const lily = people('Daughter Lily is five');
  const sundays = people('Mother-in-law visits every Sunday');

  it('drops the facts carried over least recently told first, whatever the order the model lists them in', () => {
    let ledger = extract(emptyNotesLedger(), 's1', [ana, ...HISTORY], 1_000);
    // A model that lists by category puts the People facts, told at 2000 and 3000, before the History ones.
    ledger = extract(ledger, 's1', [lily, ana, ...HISTORY], 2_000);
    ledger = extract(ledger, 's1', [lily, sundays, ana, ...HISTORY], 3_000);
    const facts = selectSessionFacts(ledger, 'maya', 's1');
    expect(facts).toHaveLength(25);
    // Of the facts told at 1000, the earliest listed went: Lily, told at 2000, stays.
    expect(facts.slice(0, 3)).toEqual([{ ...lily, at: 2_000 }, sundays, { ...history(0), at: 1_000 }]);
    // The live tracker caps the model's answer the same way, and its warning names what went.
    const answer = { notableFacts: [lily, sundays, people('Likes tea'), ...HISTORY] };
    const settled = settleExtraction(
      { user: 'maya', session: 's1' },
      E.right(JSON.stringify(answer)),
      4_000,
      emptyNotesLedger().categories,
      {
        previous: facts,
      },
    );
    expect(settled.type === 'notes/extracted' && settled.warnings).toEqual([
      '1 fact over the cap of 25 dropped, the oldest first: "Old history item number 0"',
    ]);
  });

  it('no carried-over fact it keeps was told before one it drops', () => {
    const TOPICS = Array.from({ length: 40 }, (_, n) => history(n));
    fc.assert(
      fc.property(
        fc.array(fc.shuffledSubarray(TOPICS, { minLength: 20, maxLength: 40 }), { minLength: 2, maxLength: 6 }),
        (lists) => {
          let ledger = emptyNotesLedger();
          lists.forEach((list, index) => {
            const before = selectSessionNotes(ledger, 'maya', 's1');
            ledger = extract(ledger, 's1', list, (index + 1) * 1_000);
            const kept = new Set(selectSessionFacts(ledger, 'maya', 's1').map(factKey));
            // Each earlier fact's told time, by key (the first of a key, as a search would find),
            // looked up rather than searched for and computed again for every pair compared.
            const told = new Map<string, number>();
            for (const other of before?.facts ?? [])
              if (!told.has(factKey(other))) told.set(factKey(other), toldTimeOf(before!, other));
            const carried = list.filter((fact) => told.has(factKey(fact)));
            const dropped = carried.filter((fact) => !kept.has(factKey(fact)));
            const stayed = carried.filter((fact) => kept.has(factKey(fact)));
            // Every pair of a kept and a dropped fact, those told in the wrong order gathered for one expect.
            const toldBefore = dropped.flatMap((gone) =>
              stayed
                .filter((fact) => !(told.get(factKey(fact))! >= told.get(factKey(gone))!))
                .map((fact) => [factKey(fact), factKey(gone)]),
            );
            expect(toldBefore).toEqual([]);
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('the time a session fact was first told, stored', () => {
  it('every session record and saved section keeps the times its facts were first told', () => {
    let carried = 0;
    fc.assert(
      fc.property(ledgerArb, (ledger) => {
        for (const { notes } of selectSessions(ledger)) {
          carried += notes.facts.filter((fact) => fact.at !== undefined).length;
          const value: unknown = JSON.parse(JSON.stringify(encodeSessionRecord(notes)));
          expect(decodeSessionRecord(value, ledger.categories)).toEqual(E.right(notes));
          expect(
            E.map(({ record }: { record: unknown }) => record)(readSessionRecord(value, ledger.categories)),
          ).toEqual(E.right(notes));
        }
        expect(decodeNotes(JSON.parse(JSON.stringify(encodeNotes(ledger))))).toEqual(E.right(ledger));
      }),
      { numRuns: 200 },
    );
    // The ledgers held facts carried over with times of their own: the round trip was of those too.
    expect(carried).toBeGreaterThan(0);
  });

  it('reads a record saved before facts had times: each of its facts counts as told at the list’s time', () => {
    const old = {
      facts: [nights('three')],
      updatedAt: 1_500,
      consolidated: true,
      messagesAt: 1_000,
      mergedAt: 1_600,
    };
    const read = readSessionRecord(old, emptyNotesLedger().categories);
    expect(E.isRight(read) && read.right.record.facts).toEqual([nights('three')]);
    const loaded = E.isRight(read) ? read.right.record : undefined;
    expect(loaded === undefined ? undefined : toldTimeOf(loaded, loaded.facts[0]!)).toBe(1_000);
    // A saved section without the times reads as it did.
    const section = {
      categories: emptyNotesLedger().categories,
      sessions: [{ user: 'maya', session: 's1', ...old }],
      profiles: [],
    };
    const decoded = decodeNotes(section);
    expect(E.isRight(decoded) && selectSessionFacts(decoded.right, 'maya', 's1')).toEqual([nights('three')]);
    // Carried over by the next extraction, the fact keeps that time.
    const ledger = E.isRight(decoded)
      ? extract(decoded.right, 's1', [nights('three'), people('Likes tea')], 9_000)
      : undefined;
    expect(ledger === undefined ? undefined : selectSessionFacts(ledger, 'maya', 's1')).toEqual([
      { ...nights('three'), at: 1_000 },
      people('Likes tea'),
    ]);
  });
});

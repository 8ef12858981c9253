/**
 * The tracker over the notes store port: it loads a user's notes when a message for them comes,
 * saves after each extraction and merge, resolves conflicts between two writers without losing
 * either's changes, and reports a store that fails (or a bug) instead of answering as if nothing
 * were noted.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it, vi } from 'vitest';
import { replayNotes } from '../../src/notes/events.js';
import { emptyNotesLedger, selectGlobalFacts, selectSessionNotes, selectSessions } from '../../src/notes/ledger.js';
import { DEFAULT_CATEGORIES } from '../../src/notes/model.js';
import type { CompleteFn } from '../../src/notes/port.js';
import { type JsonValue, memoryNotesStore, type NotesStore, storeFailure } from '../../src/notes/store.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';
import type { NotesTrackerFailure } from '../../src/notes/trackerTypes.js';
import { answeringLater } from './storeConformance.js';

const answer = (...facts: Array<[string, string]>): string =>
  JSON.stringify({ notableFacts: facts.map(([category, fact]) => ({ category, fact })) });

const right = <T>(result: E.Either<NotesTrackerFailure, T>): T => {
  if (E.isLeft(result)) throw new Error(`expected a value, got ${result.left.code}: ${result.left.message}`);
  return result.right;
};

/** The records of `user` in `session`, read straight from the store. */
const stored = async (store: NotesStore, user: string, session: string) => {
  const records = await store.load(user, session);
  if (E.isLeft(records)) throw new Error(records.left.message);
  return records.right;
};

const sessionRecord = (facts: Array<[string, string]>, updatedAt = 1): JsonValue => ({
  facts: facts.map(([category, fact]) => ({ category, fact })),
  updatedAt,
  consolidated: false,
});

/** A model that answers each prompt with the facts `pick` returns for it. */
const model = (pick: (prompt: string) => Array<[string, string]>): { complete: CompleteFn; prompts: string[] } => {
  const prompts: string[] = [];
  return {
    prompts,
    complete: async (prompt) => {
      prompts.push(prompt);
      return answer(...pick(prompt));
    },
  };
};

describe('a tracker over a notes store', () => {
  it('loads what the store holds for a user when a message comes, and extracts from it', async () => {
    const store = memoryNotesStore();
    await store.save('maya', {
      sessions: [{ session: 's1', value: sessionRecord([['People', 'Partner is Jordan']]), expected: 0 }],
      profile: {
        value: { facts: [{ category: 'History', fact: 'Married three years' }], consolidatedAt: 1, sessionCount: 1 },
        expected: 0,
      },
    });
    const { complete, prompts } = model(() => [
      ['People', 'Partner is Jordan'],
      ['Logistics', 'Jordan works nights'],
    ]);
    const tracker = createNotableFactsTracker({ complete, store });
    expect(tracker.recordUserMessage('maya', 's1', 'Jordan works nights.')).toEqual(E.right('started'));
    // What the store held serves at once: the memory store answers at once.
    expect(right(tracker.contextFor('maya', 's1')).text).toBe(
      [
        'ABOUT THIS USER (from previous sessions):',
        '[History]',
        '- Married three years',
        '',
        'NOTED FACTS FROM THIS SESSION:',
        '[People]',
        '- Partner is Jordan',
      ].join('\n'),
    );
    await tracker.settled();
    expect(prompts[0]).toContain('Current facts:\n{"category":"People","fact":"Partner is Jordan"}\n');
    expect((await stored(store, 'maya', 's1')).session).toEqual({
      value: {
        ...(sessionRecord([
          ['People', 'Partner is Jordan'],
          ['Logistics', 'Jordan works nights'],
        ]) as object),
        // The fact carried over keeps the time of the stored list it was told in.
        facts: [
          { category: 'People', fact: 'Partner is Jordan', at: 1 },
          { category: 'Logistics', fact: 'Jordan works nights' },
        ],
        updatedAt: expect.any(Number),
        messagesAt: expect.any(Number),
      },
      version: 2,
    });
    // The event log still rebuilds the ledger: the loaded notes are an event of their own.
    expect(tracker.events().map((event) => event.type)).toEqual(['notes/loaded', 'notes/extracted']);
    expect(replayNotes(tracker.events(), emptyNotesLedger())).toEqual(tracker.getSnapshot());
  });

  it('saves after each extraction and each merge, so a new tracker over the store carries on', async () => {
    const store = memoryNotesStore();
    const first = createNotableFactsTracker({
      complete: model(() => [['People', 'Partner is Jordan']]).complete,
      store,
    });
    first.recordUserMessage('maya', 's1', 'My partner is Jordan.');
    await first.settled();
    right(await first.endStage('maya', 's1'));
    await first.settled();
    const records = await stored(store, 'maya', 's1');
    expect(records.session.value).toMatchObject({ consolidated: true });
    expect(records.profile.value).toMatchObject({ facts: [{ category: 'People', fact: 'Partner is Jordan' }] });

    const second = createNotableFactsTracker({ complete: model(() => []).complete, store });
    right(await second.load('maya', 's2'));
    expect(right(second.contextFor('maya', 's2')).profile).toBe(
      'ABOUT THIS USER (from previous sessions):\n[People]\n- Partner is Jordan',
    );
  });

  it('keeps through the store the time a carried-over fact was first told: a tracker that merges it later lets a correction told meanwhile stand', async () => {
    const store = memoryNotesStore();
    const lists: Record<string, Array<[string, string]>> = {
      'Jordan works three nights a week.': [['Logistics', 'Jordan works night shifts three nights a week']],
      'Actually it is four nights now.': [['Logistics', 'Jordan works night shifts four nights a week']],
      'Lily started school.': [
        ['Logistics', 'Jordan works night shifts three nights a week'],
        ['People', 'Daughter Lily started school'],
      ],
    };
    const pick = (prompt: string) => lists[/Latest user message:\nUser: (.*)/u.exec(prompt)?.[1] ?? ''] ?? [];
    let clock = 1_000;
    const first = createNotableFactsTracker({ complete: model(pick).complete, store, now: () => clock });
    first.recordUserMessage('maya', 's1', 'Jordan works three nights a week.');
    await first.settled();
    right(await first.endStage('maya', 's1'));
    clock = 10_000;
    first.recordUserMessage('maya', 's2', 'Actually it is four nights now.');
    await first.settled();
    right(await first.endStage('maya', 's2'));
    clock = 20_000;
    first.recordUserMessage('maya', 's1', 'Lily started school.');
    await first.settled();
    await first.close();
    expect((await stored(store, 'maya', 's1')).session.value).toMatchObject({
      facts: [
        { category: 'Logistics', fact: 'Jordan works night shifts three nights a week', at: 1_000 },
        { category: 'People', fact: 'Daughter Lily started school' },
      ],
      messagesAt: 20_000,
    });

    const second = createNotableFactsTracker({ complete: model(() => []).complete, store, now: () => 30_000 });
    const stage = right(await second.endStage('maya'));
    expect(stage.sessions).toEqual(['s1']);
    expect(stage.profile?.facts.map(({ fact, session, at }) => ({ fact, session, at }))).toEqual([
      { fact: 'Jordan works night shifts four nights a week', session: 's2', at: 10_000 },
      { fact: 'Daughter Lily started school', session: 's1', at: 20_000 },
    ]);
  });

  describe.each([
    ['with leases, answering at once', (memory: NotesStore) => memory],
    ['without leases, answering later', answeringLater],
  ])('ending a stage without a session, over a store %s', (_kind, over) => {
    /** The model's facts for a prompt: what its latest message said. */
    const said = (prompt: string): Array<[string, string]> => [
      ['History', `Said ${/Latest user message:\nUser: (.*)/u.exec(prompt)?.[1]}`],
    ];

    it('merges every unmerged session of the user, those it let go of included, each once', async () => {
      const memory = memoryNotesStore();
      const tracker = createNotableFactsTracker({
        complete: model(said).complete,
        store: over(memory),
        cacheSize: 2,
        now: () => 5,
      });
      const sessions = ['s1', 's2', 's3', 's4', 's5'];
      for (const session of sessions) {
        tracker.recordUserMessage('maya', session, `in ${session}`);
        await tracker.settled();
      }
      // The cache keeps two idle sessions: the first three were let go of, and the store keeps them.
      expect(tracker.retained().sessions).toBe(2);
      const report = right(await tracker.endStage('maya'));
      expect([...report.sessions].sort()).toEqual(sessions);
      expect(report.profile?.sessionCount).toBe(5);
      expect(report.profile?.facts.map(({ fact }) => fact).sort()).toEqual(
        sessions.map((session) => `Said in ${session}`),
      );
      await tracker.settled();
      for (const session of sessions)
        expect((await stored(memory, 'maya', session)).session.value).toMatchObject({ consolidated: true });
      expect((await stored(memory, 'maya', 's1')).profile.value).toMatchObject({ sessionCount: 5 });
      // The sessions it loaded to merge are let go of again once saved; a second end of stage finds nothing new.
      expect(tracker.retained().sessions).toBe(2);
      expect(right(await tracker.endStage('maya')).sessions).toEqual([]);
      await tracker.settled();
      expect((await stored(memory, 'maya', 's1')).profile.value).toMatchObject({ sessionCount: 5 });
      expect(replayNotes(tracker.events(), emptyNotesLedger())).toEqual(tracker.getSnapshot());
      // A session changed after the merge is merged again, still counted once.
      tracker.recordUserMessage('maya', 's1', 'more in s1');
      await tracker.settled();
      tracker.release('maya', 's1');
      await tracker.settled();
      const again = right(await tracker.endStage('maya'));
      expect(again.sessions).toEqual(['s1']);
      expect(again.profile?.sessionCount).toBe(5);
      expect(again.profile?.facts.map(({ fact }) => fact)).toContain('Said more in s1');
    });

    it('keeps a session it loaded to merge when a load asks for it meanwhile, and lets go of the others', async () => {
      const memory = memoryNotesStore();
      const tracker = createNotableFactsTracker({ complete: model(said).complete, store: over(memory), cacheSize: 1 });
      for (const session of ['s1', 's2', 's3']) {
        tracker.recordUserMessage('maya', session, `in ${session}`);
        await tracker.settled();
      }
      expect(tracker.retained().sessions).toBe(1);
      const stage = tracker.endStage('maya');
      const loaded = tracker.load('maya', 's1');
      expect([...right(await stage).sessions].sort()).toEqual(['s1', 's2', 's3']);
      right(await loaded);
      await tracker.settled();
      // s1 is in use (the cache holds it now, s3 went), s2 was loaded only to merge.
      expect(selectSessions(tracker.getSnapshot()).map(({ session }) => session)).toEqual(['s1']);
      expect(right(tracker.contextFor('maya', 's1')).session).toContain('- Said in s1');
    });
  });

  it('keeps a session it loads to merge when a load or a message asks for it before the load has answered', async () => {
    const memory = memoryNotesStore();
    const later = answeringLater(memory);
    // The list answers at once, the loads later: the sessions are asked for while their loads run.
    const store: NotesStore = { ...later, unmergedSessions: memory.unmergedSessions };
    const tracker = createNotableFactsTracker({
      complete: model((prompt) => [['History', `Said ${/Latest user message:\nUser: (.*)/u.exec(prompt)?.[1]}`]])
        .complete,
      store,
      cacheSize: 2,
    });
    for (const session of ['s1', 's2', 's3']) {
      tracker.recordUserMessage('maya', session, `in ${session}`);
      tracker.release('maya', session);
    }
    await tracker.settled();
    expect(tracker.retained().sessions).toBe(0);
    const stage = tracker.endStage('maya');
    const loaded = tracker.load('maya', 's1');
    tracker.recordAssistantMessage('maya', 's2', 'Noted.');
    expect([...right(await stage).sessions].sort()).toEqual(['s1', 's2', 's3']);
    right(await loaded);
    await tracker.settled();
    // s3 was loaded only to merge, and went once saved; s1 and s2 were asked for meanwhile, and the cache keeps them.
    expect(selectSessions(tracker.getSnapshot()).map(({ session }) => session)).toEqual(['s1', 's2']);
    expect(right(tracker.contextFor('maya', 's1')).session).toContain('- Said in s1');
    expect(right(tracker.contextFor('maya', 's2')).history).toEqual([{ role: 'assistant', content: 'Noted.' }]);
  });

  it('merges each session once across two trackers on one store: one merges what the other let go of', async () => {
    const memory = memoryNotesStore();
    const pick = (prompt: string): Array<[string, string]> => [
      ['History', `Said ${/Latest user message:\nUser: (.*)/u.exec(prompt)?.[1]}`],
    ];
    const a = createNotableFactsTracker({ complete: model(pick).complete, store: memory, cacheSize: 1, now: () => 10 });
    const b = createNotableFactsTracker({ complete: model(pick).complete, store: memory, cacheSize: 1, now: () => 20 });
    for (const session of ['s1', 's2', 's3']) a.recordUserMessage('maya', session, `in ${session}`);
    b.recordUserMessage('maya', 's4', 'in s4');
    await Promise.all([a.settled(), b.settled()]);
    // b never served s1 to s3: it merges them from the store, with its own s4.
    expect([...right(await b.endStage('maya')).sessions].sort()).toEqual(['s1', 's2', 's3', 's4']);
    await b.settled();
    // a still holds s3 as it was before b merged it: its end of stage merges that again over b's (its
    // save meets b's, loads it and merges on top), which changes nothing and counts s3 once.
    expect(right(await a.endStage('maya')).sessions).toEqual(['s3']);
    await a.settled();
    const profile = (await stored(memory, 'maya', 's1')).profile.value as { sessionCount: number; facts: unknown[] };
    expect(profile.sessionCount).toBe(4);
    expect(profile.facts).toHaveLength(4);
    // Nothing is left to merge anywhere.
    expect(right(await a.endStage('maya')).sessions).toEqual([]);
    expect(right(await b.endStage('maya')).sessions).toEqual([]);
  });

  it('brings every session into both merges when two trackers that let go of them end the stage at once', async () => {
    const memory = memoryNotesStore();
    const store = answeringLater(memory);
    const pick = (prompt: string): Array<[string, string]> => [
      ['History', `Said ${/Latest user message:\nUser: (.*)/u.exec(prompt)?.[1]}`],
    ];
    const a = createNotableFactsTracker({ complete: model(pick).complete, store, cacheSize: 0, now: () => 10 });
    const b = createNotableFactsTracker({ complete: model(pick).complete, store, cacheSize: 0, now: () => 20 });
    for (const session of ['s1', 's2', 's3']) a.recordUserMessage('maya', session, `in ${session}`);
    await a.settled();
    const reports = (await Promise.all([a.endStage('maya'), b.endStage('maya')])).map(right);
    await Promise.all([a.settled(), b.settled()]);
    // Each loaded all three from the store and merged them; the later save met the earlier one's,
    // loaded it, and merged on top of it: each session's facts are in the profile once, and each
    // session counts once (the store's records say the other merged them first).
    expect(reports.map((report) => [...report.sessions].sort())).toEqual([
      ['s1', 's2', 's3'],
      ['s1', 's2', 's3'],
    ]);
    const profile = (await stored(memory, 'maya', 's1')).profile.value as {
      facts: Array<{ fact: string }>;
      sessionCount: number;
    };
    expect(profile.facts.map(({ fact }) => fact).sort()).toEqual(['Said in s1', 'Said in s2', 'Said in s3']);
    expect(profile.sessionCount).toBe(3);
    expect(replayNotes(a.events(), emptyNotesLedger())).toEqual(a.getSnapshot());
    expect(replayNotes(b.events(), emptyNotesLedger())).toEqual(b.getSnapshot());
    for (const session of ['s1', 's2', 's3'])
      expect((await stored(memory, 'maya', session)).session.value).toMatchObject({ consolidated: true });
  });

  it('counts a named session once when two trackers merge it in the same millisecond', async () => {
    const memory = memoryNotesStore();
    const store = answeringLater(memory);
    const pick = (prompt: string): Array<[string, string]> => [
      ['History', `Said ${/Latest user message:\nUser: (.*)/u.exec(prompt)?.[1]}`],
    ];
    // One clock for both: each merge carries the same time, so neither can tell the other's from its own by it.
    const a = createNotableFactsTracker({ complete: model(pick).complete, store, now: () => 10 });
    const b = createNotableFactsTracker({ complete: model(pick).complete, store, now: () => 10 });
    a.recordUserMessage('maya', 's1', 'in s1');
    await a.settled();
    right(await b.load('maya', 's1'));
    const reports = (await Promise.all([a.endStage('maya', 's1'), b.endStage('maya', 's1')])).map(right);
    await Promise.all([a.settled(), b.settled()]);
    expect(reports.map((report) => report.sessions)).toEqual([['s1'], ['s1']]);
    const records = await stored(memory, 'maya', 's1');
    expect(records.profile.value).toMatchObject({ facts: [{ fact: 'Said in s1' }], sessionCount: 1 });
    expect(records.session.value).toMatchObject({ consolidated: true, mergedAt: 10 });
    for (const tracker of [a, b]) {
      expect(selectGlobalFacts(tracker.getSnapshot(), 'maya')?.sessionCount).toBe(1);
      expect(replayNotes(tracker.events(), emptyNotesLedger())).toEqual(tracker.getSnapshot());
    }
  });

  it('resolves a conflict between two trackers on one user: the later save loads the other’s and applies its own again', async () => {
    const store = memoryNotesStore();
    const a = createNotableFactsTracker({ complete: model(() => [['People', 'Partner is Jordan']]).complete, store });
    const b = createNotableFactsTracker({ complete: model(() => [['Logistics', 'Works nights']]).complete, store });
    a.recordUserMessage('maya', 's1', 'one');
    b.recordUserMessage('maya', 's2', 'two');
    await Promise.all([a.settled(), b.settled()]);
    // Both loaded the profile when it did not exist; a merges first, b's merge then meets a conflict.
    right(await a.endStage('maya', 's1'));
    await a.settled();
    right(await b.endStage('maya', 's2'));
    await b.settled();
    const profile = (await stored(store, 'maya', 's1')).profile;
    expect(profile.version).toBe(2);
    expect(profile.value).toMatchObject({
      facts: [
        { category: 'People', fact: 'Partner is Jordan' },
        { category: 'Logistics', fact: 'Works nights' },
      ],
      sessionCount: 2,
    });
    expect(selectGlobalFacts(b.getSnapshot(), 'maya')?.facts).toHaveLength(2);
    expect(replayNotes(b.events(), emptyNotesLedger())).toEqual(b.getSnapshot());
  });

  it('drops a profile rewrite asked of a profile another tracker changed since: its merge stays in the store', async () => {
    const store = memoryNotesStore();
    let answerRewrite: ((text: string) => void) | undefined;
    const a = createNotableFactsTracker({
      store,
      consolidateWithModel: true,
      // The first rewrite answers when the test says; the one asked again after the drop fails at once.
      complete: (prompt) =>
        prompt.includes('Rewrite the profile:')
          ? answerRewrite === undefined
            ? new Promise<string>((resolve) => (answerRewrite = resolve))
            : Promise.resolve('no list')
          : Promise.resolve(answer(['People', 'Partner is Jordan'])),
    });
    const b = createNotableFactsTracker({
      store,
      consolidateWithModel: false,
      complete: model(() => [['Logistics', 'Works nights at the hospital']]).complete,
    });
    a.recordUserMessage('maya', 's1', 'Jordan is my partner.');
    b.recordUserMessage('maya', 's2', 'I work nights at the hospital.');
    await Promise.all([a.settled(), b.settled()]);
    right(await a.endStage('maya', 's1')); // merged and saved; the rewrite of that profile now runs
    right(await b.endStage('maya', 's2'));
    await b.settled();
    answerRewrite!(answer(['People', 'Partner is Jordan (married)']));
    await a.settled();
    const profile = (await stored(store, 'maya', 's1')).profile;
    expect(profile.value).toMatchObject({
      facts: [
        { category: 'People', fact: 'Partner is Jordan' },
        { category: 'Logistics', fact: 'Works nights at the hospital' },
      ],
      sessionCount: 2,
    });
    expect(selectGlobalFacts(a.getSnapshot(), 'maya')?.facts.map(({ fact }) => fact)).toEqual([
      'Partner is Jordan',
      'Works nights at the hospital',
    ]);
    expect(replayNotes(a.events(), emptyNotesLedger())).toEqual(a.getSnapshot());
  });

  it('asks again at once for a profile rewrite it dropped as stale: the rewrite of the store’s newer profile is saved', async () => {
    const store = memoryNotesStore();
    const rewrites: Array<{ prompt: string; resolve: (text: string) => void }> = [];
    const a = createNotableFactsTracker({
      store,
      consolidateWithModel: true,
      complete: (prompt) =>
        prompt.includes('Rewrite the profile:')
          ? new Promise<string>((resolve) => rewrites.push({ prompt, resolve }))
          : Promise.resolve(answer(['People', 'Partner is Jordan'])),
    });
    const b = createNotableFactsTracker({
      store,
      consolidateWithModel: false,
      complete: model(() => [['Logistics', 'Works nights at the hospital']]).complete,
    });
    a.recordUserMessage('maya', 's1', 'Jordan is my partner.');
    b.recordUserMessage('maya', 's2', 'I work nights at the hospital.');
    await Promise.all([a.settled(), b.settled()]);
    right(await a.endStage('maya', 's1'));
    right(await b.endStage('maya', 's2'));
    await b.settled();
    // a's rewrite of its own profile answers after b merged: dropped when its save meets b's.
    rewrites.shift()!.resolve(answer(['People', 'Partner is Jordan (married)']));
    for (let tries = 0; tries < 50 && rewrites.length === 0; tries += 1) await new Promise((r) => setTimeout(r, 0));
    // Asked again of the profile the store holds now, without waiting for another merge.
    expect(rewrites).toHaveLength(1);
    expect(rewrites[0]!.prompt).toContain('Works nights at the hospital');
    rewrites
      .shift()!
      .resolve(answer(['People', 'Partner is Jordan (married)'], ['Logistics', 'Works nights at the hospital']));
    await a.settled();
    const profile = (await stored(store, 'maya', 's1')).profile;
    expect(profile.value).toMatchObject({
      facts: [
        { category: 'People', fact: 'Partner is Jordan (married)' },
        { category: 'Logistics', fact: 'Works nights at the hospital' },
      ],
      sessionCount: 2,
    });
    expect(replayNotes(a.events(), emptyNotesLedger())).toEqual(a.getSnapshot());
  });

  it('with a store that answers later, waits for the load: messages meanwhile fold into one extraction', async () => {
    const memory = memoryNotesStore();
    await memory.save('maya', {
      sessions: [{ session: 's1', value: sessionRecord([['People', 'Partner is Jordan']]), expected: 0 }],
    });
    const { complete, prompts } = model(() => [['People', 'Partner is Jordan']]);
    const tracker = createNotableFactsTracker({ complete, store: answeringLater(memory) });
    expect(tracker.recordUserMessage('maya', 's1', 'first')).toEqual(E.right('started'));
    expect(tracker.recordUserMessage('maya', 's1', 'second')).toEqual(E.right('coalesced'));
    expect(right(tracker.contextFor('maya', 's1')).session).toBe('');
    right(await tracker.load('maya', 's1'));
    expect(right(tracker.contextFor('maya', 's1')).session).toBe(
      'NOTED FACTS FROM THIS SESSION:\n[People]\n- Partner is Jordan',
    );
    await tracker.settled();
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toContain('User: first\n\nLatest user message:\nUser: second');
    expect((await stored(memory, 'maya', 's1')).session.version).toBe(1);
  });

  it('resolves settled() once the save of the extraction running at the call has landed, with a store that answers later', async () => {
    const memory = memoryNotesStore();
    // Without leases: each save is a call of its own, sent once the model has answered.
    const tracker = createNotableFactsTracker({
      complete: model(() => [['Logistics', 'Jordan works nights']]).complete,
      store: answeringLater(memory),
    });
    tracker.recordUserMessage('maya', 's1', 'Jordan works nights.');
    expect(await tracker.settled()).toEqual(E.right(undefined));
    expect((await stored(memory, 'maya', 's1')).session.value).toMatchObject({
      facts: [{ category: 'Logistics', fact: 'Jordan works nights' }],
    });
    expect(tracker.retained().inFlight).toBe(0);
  });

  it('resolves settled() once the follow-up extraction of messages recorded before the call, and an end of stage waiting for it, are saved', async () => {
    const memory = memoryNotesStore();
    const { complete, prompts } = model((prompt) => [
      ['Logistics', /Latest user message:\nUser: (.*)/u.exec(prompt)?.[1] ?? ''],
    ]);
    const tracker = createNotableFactsTracker({ complete, store: answeringLater(memory) });
    tracker.recordUserMessage('maya', 's1', 'first');
    tracker.recordUserMessage('maya', 's1', 'second');
    const stage = tracker.endStage('maya', 's1');
    expect(await tracker.settled()).toEqual(E.right(undefined));
    expect(tracker.retained().inFlight).toBe(0);
    expect(prompts).toHaveLength(1);
    const records = await stored(memory, 'maya', 's1');
    expect(records.session.value).toMatchObject({ facts: [{ fact: 'second' }], consolidated: true });
    expect(records.profile.value).toMatchObject({ facts: [{ category: 'Logistics', fact: 'second' }] });
    expect(right(await stage).sessions).toEqual(['s1']);
  });

  it('resolves settled() under continuous traffic with a store that answers later: it waits for the saves of the work before the call, not later messages', async () => {
    const memory = memoryNotesStore();
    let calls = 0;
    const tracker = createNotableFactsTracker({
      complete: async (prompt) => {
        calls += 1;
        await new Promise((resolve) => setTimeout(resolve, 4));
        return answer(['History', /Latest user message:\nUser: (.*)/u.exec(prompt)?.[1] ?? '']);
      },
      store: answeringLater(memory),
    });
    let n = 0;
    // A message every millisecond or so, for as long as the test runs: the session never goes idle.
    const traffic = setInterval(() => tracker.recordUserMessage('maya', 's1', `message ${(n += 1)}`), 1);
    try {
      tracker.recordUserMessage('maya', 's1', 'message 0');
      await new Promise((resolve) => setTimeout(resolve, 10));
      const recorded = n;
      const settling = calls;
      expect(await tracker.settled()).toEqual(E.right(undefined));
      expect(calls - settling).toBeLessThanOrEqual(2);
      // What the store holds answers a message recorded before the call, or a later one.
      const fact = (await stored(memory, 'maya', 's1')).session.value as { facts: Array<{ fact: string }> };
      expect(Number(/message (\d+)/u.exec(fact.facts[0]?.fact ?? '')?.[1])).toBeGreaterThanOrEqual(recorded);
    } finally {
      clearInterval(traffic);
    }
    await tracker.close();
  });

  it('resolves settled() once the save it waits for has landed, when that lets go of the user', async () => {
    const memory = memoryNotesStore();
    const tracker = createNotableFactsTracker({
      complete: model(() => [['People', 'Partner is Jordan']]).complete,
      store: answeringLater(memory),
      // Nothing idle is kept: once its save lands, the session goes, and the user with it.
      cacheSize: 0,
    });
    tracker.recordUserMessage('maya', 's1', 'hello');
    // The extraction settles, then its save is sent: this waits for it, which lets go of the user.
    const settled = await Promise.race([
      tracker.settled().then(() => 'settled'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting after 1 s'), 1_000)),
    ]);
    expect(settled).toBe('settled');
    expect(tracker.retained()).toEqual({ users: 0, sessions: 0, inFlight: 0 });
    expect((await stored(memory, 'maya', 's1')).session.version).toBe(1);
    // Served again, its counters start afresh: a wait then is for the new work only.
    tracker.recordUserMessage('maya', 's1', 'again');
    await tracker.settled();
    await tracker.settled();
    expect(tracker.retained().inFlight).toBe(0);
  });

  it('reports a store that fails to onError, carries on with what it has, and saves again at the next change', async () => {
    const memory = memoryNotesStore();
    let down = true;
    const store: NotesStore = {
      load: (user, session) => (down ? Promise.reject(new Error('connection refused')) : memory.load(user, session)),
      save: (user, write) =>
        down ? E.left(storeFailure('unavailable', 'the database is down')) : memory.save(user, write),
    };
    const heard: string[] = [];
    let n = 0;
    const tracker = createNotableFactsTracker({
      complete: async () => answer(['History', `fact ${(n += 1)}`]),
      store,
      onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
    });
    tracker.recordUserMessage('maya', 's1', 'one');
    await tracker.settled();
    expect(heard).toEqual([
      'unavailable: the notes store failed: connection refused',
      'unavailable: the database is down',
    ]);
    expect(right(tracker.contextFor('maya', 's1')).session).toContain('- fact 1');
    down = false;
    // The load failed: the message reads the store again, the change kept since is saved once
    // that load has answered (version 1), and the extraction of "two" then (version 2).
    tracker.recordUserMessage('maya', 's1', 'two');
    await tracker.settled();
    expect((await stored(memory, 'maya', 's1')).session).toMatchObject({
      value: { facts: [{ category: 'History', fact: 'fact 2' }] },
      version: 2,
    });
  });

  it('reads the store again after a failed load: at the next load, message or end of stage, never answering a load it did not read', async () => {
    const memory = memoryNotesStore();
    const profile = { facts: [{ category: 'People', fact: 'Partner is Jordan' }], consolidatedAt: 1, sessionCount: 1 };
    await memory.save('maya', { sessions: [], profile: { value: profile, expected: 0 } });
    let down = true;
    let loads = 0;
    const store: NotesStore = {
      load: (user, session) => {
        loads += 1;
        return down ? E.left(storeFailure('unavailable', 'the database is down')) : memory.load(user, session);
      },
      save: (user, write) =>
        down ? E.left(storeFailure('unavailable', 'the database is down')) : memory.save(user, write),
    };
    const make = () =>
      createNotableFactsTracker({
        complete: async () => answer(['Logistics', 'Works nights']),
        store,
        onError: () => undefined,
      });
    // load(): a second call reads the store again, and answers Left while it is still down.
    const byLoad = make();
    expect(await byLoad.load('maya', 's2')).toEqual(E.left(storeFailure('unavailable', 'the database is down')));
    expect(await byLoad.load('maya', 's2')).toEqual(E.left(storeFailure('unavailable', 'the database is down')));
    expect(loads).toBe(2);
    down = false;
    expect(await byLoad.load('maya', 's2')).toEqual(E.right(undefined));
    expect(loads).toBe(3);
    expect(right(byLoad.contextFor('maya', 's2')).profile).toContain('Partner is Jordan');
    // A message: its extraction waits for the load it starts, and the profile is there.
    down = true;
    const byMessage = make();
    expect(E.isLeft(await byMessage.load('maya', 's2'))).toBe(true);
    down = false;
    byMessage.recordUserMessage('maya', 's2', 'I work nights');
    await byMessage.settled();
    expect(right(byMessage.contextFor('maya', 's2')).text).toContain('Partner is Jordan');
    expect(right(byMessage.contextFor('maya', 's2')).session).toContain('Works nights');
    // An end of stage: it merges into the profile the store holds.
    down = true;
    const byStage = make();
    expect(E.isLeft(await byStage.load('maya', 's3'))).toBe(true);
    down = false;
    const report = right(await byStage.endStage('maya', 's3'));
    expect(report.profile?.facts.map(({ fact }) => fact)).toContain('Partner is Jordan');
    expect(right(byStage.contextFor('maya', 's3')).profile).toContain('Partner is Jordan');
  });

  it('reports a stored record it cannot read at all as invalid_notes, keeps its own, and never saves over it', async () => {
    const store = memoryNotesStore();
    await store.save('maya', { sessions: [{ session: 's1', value: { facts: 'oops' }, expected: 0 }] });
    const heard: NotesTrackerFailure[] = [];
    const tracker = createNotableFactsTracker({
      complete: model((prompt) =>
        prompt.includes('second')
          ? [
              ['People', 'Partner is Jordan'],
              ['History', 'Married three years'],
            ]
          : [['People', 'Partner is Jordan']],
      ).complete,
      store,
      onError: (failure) => heard.push(failure),
    });
    tracker.recordUserMessage('maya', 's1', 'hello');
    await tracker.settled();
    // Reported once for the version it holds, however often it is read again.
    expect(heard).toEqual([{ code: 'invalid_notes', message: expect.stringMatching(/^session\.updatedAt /u) }]);
    expect((await stored(store, 'maya', 's1')).session).toEqual({ value: { facts: 'oops' }, version: 1 });
    expect(selectSessionNotes(tracker.getSnapshot(), 'maya', 's1')?.facts).toHaveLength(1);
    // Once the record is readable again, the next change reads it and saves over it.
    await store.save('maya', {
      sessions: [{ session: 's1', value: sessionRecord([['History', 'Lives in Portland']]), expected: 1 }],
    });
    tracker.recordUserMessage('maya', 's1', 'second');
    await tracker.settled();
    const repaired = (await stored(store, 'maya', 's1')).session;
    expect(repaired.value).toMatchObject({ facts: [{ fact: 'Partner is Jordan' }, { fact: 'Married three years' }] });
    expect(repaired.version).toBeGreaterThan(2);
    expect(heard).toHaveLength(1);
  });

  describe.each([
    ['with leases', (memory: NotesStore) => memory],
    ['without leases, answering later', answeringLater],
  ])('a load that finds a record it cannot read at all, over a store %s', (_kind, over) => {
    it('answers invalid_notes at each load until the record can be read, and reads it again then', async () => {
      const memory = memoryNotesStore();
      await memory.save('maya', { sessions: [{ session: 's1', value: { facts: 'oops' }, expected: 0 }] });
      const tracker = createNotableFactsTracker({
        complete: model(() => [['People', 'Partner is Jordan']]).complete,
        store: over(memory),
      });
      const refused = await tracker.load('maya', 's1');
      expect(E.isLeft(refused) && refused.left).toEqual({
        code: 'invalid_notes',
        message: expect.stringMatching(/^the notes store holds the record of "maya" in "s1" unreadable/u),
      });
      tracker.recordUserMessage('maya', 's1', 'Jordan is my partner.');
      await tracker.settled();
      // The change waits in memory, and the caller hears so again: the context serves what it has.
      expect(E.isLeft(await tracker.load('maya', 's1'))).toBe(true);
      expect(right(tracker.contextFor('maya', 's1')).session).toContain('Partner is Jordan');
      await memory.save('maya', {
        sessions: [{ session: 's1', value: sessionRecord([['History', 'Lives in Portland']]), expected: 1 }],
      });
      // Read again at the next load: readable now, the change is applied to it and saved.
      expect(await tracker.load('maya', 's1')).toEqual(E.right(undefined));
      // settled() waits for that save, which writes a change counted as settled when it was kept.
      await tracker.settled();
      expect(tracker.retained().inFlight).toBe(0);
      expect((await stored(memory, 'maya', 's1')).session.value).toMatchObject({
        facts: [{ fact: 'Partner is Jordan' }],
      });
    });
  });

  it('reads a record written under other categories: uses the facts it knows, reports the others and writes them back', async () => {
    const store = memoryNotesStore();
    const health = [...DEFAULT_CATEGORIES, 'Health'];
    const a = createNotableFactsTracker({
      complete: model(() => [
        ['People', 'Partner is Jordan'],
        ['Health', 'Has asthma'],
      ]).complete,
      store,
      categories: health,
    });
    a.recordUserMessage('maya', 's1', 'Jordan is my partner and I have asthma.');
    await a.settled();
    right(await a.endStage('maya', 's1'));
    await a.settled();
    const heard: string[] = [];
    const b = createNotableFactsTracker({
      // A model that keeps the list it is shown and adds to it.
      complete: model((prompt) => [
        ...(prompt.includes('Partner is Jordan') ? ([['People', 'Partner is Jordan']] as Array<[string, string]>) : []),
        ['Logistics', 'Works mornings'],
      ]).complete,
      store,
      onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
    });
    right(await b.load('maya', 's1'));
    expect(heard).toEqual([
      expect.stringMatching(
        /^invalid_notes: session\.facts\[1\] kept as stored, not used: category "Health" is not one of /u,
      ),
      expect.stringMatching(
        /^invalid_notes: profile\.facts\[1\] kept as stored, not used: category "Health" is not one of /u,
      ),
    ]);
    expect(right(b.contextFor('maya', 's2')).profile).toBe(
      'ABOUT THIS USER (from previous sessions):\n[People]\n- Partner is Jordan',
    );
    b.recordUserMessage('maya', 's1', 'I work mornings.');
    await b.settled();
    right(await b.endStage('maya', 's1'));
    await b.settled();
    const records = await stored(store, 'maya', 's1');
    expect(records.session.value).toMatchObject({
      facts: [
        { category: 'People', fact: 'Partner is Jordan' },
        { category: 'Logistics', fact: 'Works mornings' },
        { category: 'Health', fact: 'Has asthma' },
      ],
    });
    expect(records.profile.value).toMatchObject({
      facts: [
        { category: 'People', fact: 'Partner is Jordan' },
        { category: 'Logistics', fact: 'Works mornings' },
        { category: 'Health', fact: 'Has asthma', session: 's1' },
      ],
      sessionCount: 1,
    });
    // A tracker that knows the category reads them again.
    const c = createNotableFactsTracker({ complete: model(() => []).complete, store, categories: health });
    right(await c.load('maya', 's1'));
    expect(right(c.contextFor('maya', 's1')).session).toContain('[Health]\n- Has asthma');
  });

  it('keeps a record written back with other categories within its cap: its own facts stay, the others fill the room left', async () => {
    const store = memoryNotesStore();
    const health = (index: number) => ({ category: 'Health', fact: `Health fact ${index}` });
    await store.save('maya', {
      sessions: [
        {
          session: 's1',
          value: { facts: Array.from({ length: 10 }, (_, index) => health(index)), updatedAt: 1, consolidated: false },
          expected: 0,
        },
      ],
      profile: {
        value: {
          facts: Array.from({ length: 45 }, (_, index) => ({ ...health(index), session: 's0', at: 2_000 - index })),
          consolidatedAt: '2026-01-01T00:00:00.000Z',
          sessionCount: 1,
        },
        expected: 0,
      },
    });
    // Twenty facts about twenty things (facts that differ only in a number tell of one thing, and collapse).
    const own = Array.from({ length: 20 }, (_, index): [string, string] => [
      'History',
      `Own fact about ${String.fromCharCode(97 + index)}x`,
    ]);
    const heard: string[] = [];
    const tracker = createNotableFactsTracker({
      complete: model(() => own).complete,
      store,
      consolidateWithModel: false,
      onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
    });
    tracker.recordUserMessage('maya', 's1', 'Twenty things.');
    await tracker.settled();
    right(await tracker.endStage('maya', 's1'));
    await tracker.settled();
    const records = await stored(store, 'maya', 's1');
    const facts = (value: JsonValue | undefined) =>
      (value as { facts: Array<{ fact: string }> }).facts.map((f) => f.fact);
    // The session's cap is 25: the tracker's 20, then the 5 latest listed of the others (the earliest go first).
    expect(facts(records.session.value)).toEqual([
      ...own.map(([, fact]) => fact),
      ...[5, 6, 7, 8, 9].map((index) => `Health fact ${index}`),
    ]);
    // The profile's cap is 50: the 20 merged, then the 30 most recently confirmed of the others.
    expect(facts(records.profile.value)).toEqual([
      ...own.map(([, fact]) => fact),
      ...Array.from({ length: 30 }, (_, index) => `Health fact ${index}`),
    ]);
    expect(heard).toContainEqual(
      expect.stringMatching(
        /^invalid_notes: session\.facts: 5 facts of other categories over the cap of 25 dropped, the oldest first: "Health fact 0", /u,
      ),
    );
    expect(heard).toContainEqual(
      expect.stringMatching(
        /^invalid_notes: profile\.facts: 15 facts of other categories over the cap of 50 dropped, the oldest first: "Health fact 44", /u,
      ),
    );
  });

  it('reads a stored profile over the cap as a merge trims one: the least recently confirmed fall off, reported, and sessionCount stays', async () => {
    const store = memoryNotesStore();
    const facts = Array.from({ length: 51 }, (_, index) => ({
      category: 'History',
      fact: `Profile fact ${index}`,
      at: 1_000 + index,
    }));
    await store.save('maya', {
      sessions: [],
      profile: { value: { facts, consolidatedAt: '2026-01-01T00:00:00.000Z', sessionCount: 3 }, expected: 0 },
    });
    const heard: string[] = [];
    const tracker = createNotableFactsTracker({
      complete: model(() => [['People', 'Partner is Jordan']]).complete,
      store,
      consolidateWithModel: false,
      onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
    });
    tracker.recordUserMessage('maya', 's9', 'hi');
    await tracker.settled();
    expect(heard).toEqual([
      'invalid_notes: profile.facts: 1 fact over the cap of 50 dropped, the oldest first: "Profile fact 0"',
    ]);
    right(await tracker.endStage('maya', 's9'));
    await tracker.settled();
    const profile = (await stored(store, 'maya', 's9')).profile.value as {
      facts: Array<{ fact: string }>;
      sessionCount: number;
    };
    expect(profile.sessionCount).toBe(4);
    expect(profile.facts.map(({ fact }) => fact)).toEqual([
      ...facts.slice(2).map(({ fact }) => fact),
      'Partner is Jordan',
    ]);
  });

  it('surfaces a bug as a failure with code internal, returned and reported, never as an empty context', async () => {
    const heard: NotesTrackerFailure[] = [];
    const broken = { categories: ['People'], users: { not: 'a persistent map' } };
    const tracker = createNotableFactsTracker({
      complete: async () => '[]',
      initial: broken as never,
      onError: (failure) => heard.push(failure),
    });
    const context = tracker.contextFor('maya', 's1');
    expect(E.isLeft(context) && context.left.code).toBe('internal');
    expect(E.isLeft(context) && context.left.message).toMatch(/^unexpected failure \(a bug; please report it\): /u);
    expect(heard.map((failure) => failure.code)).toEqual(['internal']);
    expect(E.isLeft(tracker.recordUserMessage('maya', 's1', 'hello'))).toBe(true);
    expect(E.isLeft(await tracker.endStage('maya'))).toBe(true);
    // Nothing was started, so nothing is in flight.
    expect(await tracker.settled()).toEqual(E.right(undefined));
  });

  it('takes a store that throws, rejects or answers something else as unavailable, never as an exception', async () => {
    const answers: Array<() => unknown> = [
      () => {
        throw new Error('no pool');
      },
      () => Promise.reject(new Error('reset by peer')),
      () => ({ rows: [] }),
      () => E.right({ session: { version: -1 }, profile: { version: 0 } }),
      () => E.left({ code: 'timeout', message: 'slow' }),
      // Reading the answer runs the store's code too: a `then` or a field that throws, at once or later.
      () =>
        Object.defineProperty({}, 'then', {
          get: () => {
            throw new Error('then trap');
          },
        }),
      () =>
        Promise.resolve({
          get _tag() {
            throw new Error('tag trap');
          },
        }),
    ];
    const heard: string[] = [];
    const store: NotesStore = {
      load: () => answers.shift()!() as never,
      save: () => E.right({ sessions: [] }),
    };
    const tracker = createNotableFactsTracker({
      complete: async () => '[]',
      store,
      onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
    });
    for (const session of ['s1', 's2', 's3', 's4', 's5', 's6', 's7'])
      expect(E.isLeft(await tracker.load('maya', session))).toBe(true);
    expect(heard).toEqual([
      'unavailable: the notes store failed: no pool',
      'unavailable: the notes store failed: reset by peer',
      'unavailable: the notes store failed: the notes store answered with something that is not an Either',
      'unavailable: the notes store failed: the notes store answered with records of the wrong shape',
      'unavailable: the notes store failed: the notes store failed without a known code (timeout)',
      'unavailable: the notes store failed: then trap',
      'unavailable: the notes store failed: tag trap',
    ]);
  });

  it('takes a save whose answer throws once it settles as unavailable, and keeps the notes to save again', async () => {
    const kept = memoryNotesStore();
    let traps = 1;
    const store: NotesStore = {
      load: (user, session) => kept.load(user, session),
      save: (user, write) =>
        traps-- > 0
          ? Promise.resolve({
              get _tag(): never {
                throw new Error('tag trap');
              },
            } as never)
          : kept.save(user, write),
    };
    const heard: string[] = [];
    const tracker = createNotableFactsTracker({
      complete: async () => '{"notableFacts":[{"category":"People","fact":"Partner is Jordan"}]}',
      store,
      onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
    });
    expect(tracker.recordUserMessage('maya', 's1', 'My partner is Jordan')).toEqual(E.right('started'));
    expect(await tracker.settled()).toEqual(E.right(undefined));
    expect(heard).toContain('unavailable: the notes store failed: tag trap');
    // The next save writes what the failed one could not.
    await tracker.close();
    const saved = await kept.load('maya', 's1');
    expect(E.isRight(saved) && JSON.stringify(saved.right.session.value)).toMatch(/Partner is Jordan/u);
  });

  it('stops at a bug while taking an answer that arrived later: waits hear internal instead of waiting forever', async () => {
    const trap = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
      },
    );
    const store: NotesStore = {
      load: async () => E.right({ session: { value: trap as never, version: 1 }, profile: { version: 0 } }),
      save: () => E.right({ sessions: [] }),
    };
    const heard: NotesTrackerFailure[] = [];
    const tracker = createNotableFactsTracker({ complete: async () => '[]', store, onError: (f) => heard.push(f) });
    expect(tracker.recordUserMessage('maya', 's1', 'hello')).toEqual(E.right('started'));
    const stage = tracker.endStage('maya');
    const loaded = await tracker.load('maya', 's1');
    expect(E.isLeft(loaded) && loaded.left.code).toBe('internal');
    const stageResult = await stage;
    expect(E.isLeft(stageResult) && stageResult.left.code).toBe('internal');
    const later = await tracker.endStage('maya');
    expect(E.isLeft(later) && later.left.code).toBe('internal');
    // settled() says it too, rather than resolve as if all had settled.
    expect(await tracker.settled()).toMatchObject({ _tag: 'Left', left: { code: 'internal' } });
    expect(heard.map((failure) => failure.code)).toEqual(['internal']);
  });
});

describe('closing a tracker over a store without leases', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** `promise`, or a failure naming `what` when it has not settled within `ms`. */
  const within = <T>(promise: Promise<T>, what: string, ms: number): Promise<T> =>
    Promise.race([
      promise,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not settle`)), ms)),
    ]);

  it('without leases, takes a load left unanswered past timeoutMs as failed: the extraction, the end of stage and close go on without it', async () => {
    const memory = memoryNotesStore();
    const store: NotesStore = {
      load: () => new Promise(() => undefined),
      save: (user, write) => memory.save(user, write),
    };
    const heard: string[] = [];
    const tracker = createNotableFactsTracker({
      complete: async () => answer(['People', 'Works nights']),
      store,
      timeoutMs: 100,
      onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
    });
    tracker.recordUserMessage('maya', 's1', 'I work nights');
    await sleep(20);
    const stage = tracker.endStage('maya', 's1');
    await within(tracker.close(), 'close', 10_000);
    const answered = await within(stage, 'endStage', 100);
    expect(answered).toMatchObject({ _tag: 'Right', right: { sessions: ['s1'] } });
    expect((await stored(memory, 'maya', 's1')).session).toMatchObject({
      value: { facts: [{ category: 'People', fact: 'Works nights' }] },
    });
    expect(heard).toEqual([
      'unavailable: the notes store left the load of the notes of "maya" in "s1" unanswered for 100 ms (timeoutMs): taken as failed, and loaded again at the next call that needs the records (its answer, should it come, is taken where it is newer than what the tracker holds)',
    ]);
  });

  it('without leases, gives up a store that leaves a save unanswered after twice timeoutMs, an end of stage waiting on it answered unconfirmed (or closed, its outcome unknown)', async () => {
    const memory = memoryNotesStore();
    const store: NotesStore = {
      load: (user, session) => memory.load(user, session),
      save: () => new Promise(() => undefined),
    };
    const heard: string[] = [];
    const tracker = createNotableFactsTracker({
      complete: async () => answer(['People', 'Works nights']),
      store,
      timeoutMs: 100,
      onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
    });
    tracker.recordUserMessage('maya', 's1', 'I work nights');
    await sleep(20);
    const stage = tracker.endStage('maya', 's1');
    const started = Date.now();
    await within(tracker.close(), 'close', 10_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    // Merged in memory, answered after timeoutMs as the store did not answer its save.
    // (Both bounds fall at 2 x timeoutMs: either answers first, and each says the save's outcome is not known.)
    const answered = await within(stage, 'endStage', 100);
    if (E.isRight(answered)) expect(answered.right).toMatchObject({ unconfirmed: true, sessions: ['s1'] });
    else expect(answered.left.message).toContain('whether the store holds the merge is unknown');
    expect(heard).toContain(
      'closed: the notes store left a call unanswered for twice timeoutMs (200 ms): close gave up waiting for it',
    );
  });

  it('tries a save that failed again, with backoff, and closes once it has landed', async () => {
    const memory = memoryNotesStore();
    let saves = 0;
    const store: NotesStore = {
      load: (user, session) => memory.load(user, session),
      save: (user, write) => {
        saves += 1;
        return saves <= 2 ? E.left(storeFailure('unavailable', 'the database is down')) : memory.save(user, write);
      },
    };
    const heard: string[] = [];
    const tracker = createNotableFactsTracker({
      complete: async () => answer(['People', 'Works nights']),
      store,
      timeoutMs: 2_000,
      leasePollMs: 20,
      onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
    });
    tracker.recordUserMessage('maya', 's1', 'I work nights');
    await tracker.settled();
    expect(saves).toBe(1);
    await within(tracker.close(), 'close', 5_000);
    // Tried again after 20 ms, then 40 ms: the third save lands, well within timeoutMs.
    expect(saves).toBe(3);
    expect((await stored(memory, 'maya', 's1')).session).toMatchObject({
      value: { facts: [{ category: 'People', fact: 'Works nights' }] },
      version: 1,
    });
    expect(heard).toEqual(['unavailable: the database is down', 'unavailable: the database is down']);
  });

  it('without leases, tries a save that keeps failing for up to timeoutMs, then gives it up and tells onError what was lost', async () => {
    let saves = 0;
    const store: NotesStore = {
      load: () => E.right({ session: { version: 0 }, profile: { version: 0 } }),
      save: () => {
        saves += 1;
        return E.left(storeFailure('unavailable', 'the database is down'));
      },
    };
    const heard: string[] = [];
    // Under fake timers: how many tries fit in timeoutMs is the tracker's schedule, not how busy the machine is.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const tracker = createNotableFactsTracker({
        complete: async () => answer(['People', 'Works nights']),
        store,
        timeoutMs: 300,
        leasePollMs: 20,
        onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
      });
      tracker.recordUserMessage('maya', 's1', 'I work nights');
      await tracker.settled();
      expect(saves).toBe(1);
      const started = Date.now();
      let closed = false;
      const closing = tracker.close().then(() => {
        closed = true;
      });
      await vi.advanceTimersByTimeAsync(279);
      expect(closed).toBe(false);
      await vi.advanceTimersByTimeAsync(1_000);
      await closing;
      expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    } finally {
      vi.useRealTimers();
    }
    // 20, 40, 80, then every 100 ms (a third of timeoutMs): a few tries, not one.
    expect(saves).toBeGreaterThanOrEqual(4);
    expect(heard.at(-1)).toBe(
      'closed: the tracker closed with 1 change to the notes of "maya" (session "s1") the store did not take: they are lost with the tracker',
    );
  });
  it('without leases, waits for a model call however long past twice timeoutMs it ends, and saves before it resolves', async () => {
    const memory = memoryNotesStore();
    let saves = 0;
    let closed = false;
    let savedAfterClose = false;
    const store: NotesStore = {
      // A slow load, answered: the extraction waits for it, then runs past twice timeoutMs from close.
      load: async (user, session) => {
        await sleep(200);
        return memory.load(user, session);
      },
      save: (user, write) => {
        saves += 1;
        if (closed) savedAfterClose = true;
        return memory.save(user, write);
      },
    };
    const heard: string[] = [];
    let calls = 0;
    const tracker = createNotableFactsTracker({
      complete: async () => {
        calls += 1;
        await sleep(140);
        return answer(['People', 'Works nights']);
      },
      store,
      timeoutMs: 150,
      leaseMs: 50,
      onError: (failure) => heard.push(`${failure.code}: ${failure.message}`),
    });
    tracker.recordUserMessage('maya', 's1', 'I work nights');
    await tracker.close();
    closed = true;
    expect([calls, saves]).toEqual([1, 1]);
    expect((await stored(memory, 'maya', 's1')).session).toMatchObject({
      value: { facts: [{ category: 'People', fact: 'Works nights' }] },
    });
    await sleep(50);
    expect(savedAfterClose).toBe(false);
    // The load, slower than timeoutMs, was taken as failed (the extraction ran without it); its late answer was taken.
    expect(heard).toEqual([expect.stringMatching(/^unavailable: the notes store left the load .* taken as failed/u)]);
  });
});

describe('an extraction made without the stored record (its load failed, no leases)', () => {
  // One clock for every tracker of a test, a second a reading: no two messages share a millisecond.
  let time = Date.UTC(2026, 0, 1);
  const now = (): number => (time += 1_000);
  /** A model that keeps the facts its prompt shows, adds one for each `word-NAME` and leaves out each `drop-NAME`. */
  const keeping =
    (delayMs = 0) =>
    async (prompt: string) => {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      const shown = [...prompt.matchAll(/"fact":"(Knows [a-z]+)"/gu)].map((match) => match[1]!);
      const added = [...prompt.matchAll(/word-([a-z]+)/gu)].map((match) => `Knows ${match[1]!}`);
      const dropped = new Set([...prompt.matchAll(/drop-([a-z]+)/gu)].map((match) => `Knows ${match[1]!}`));
      const facts = [...new Set([...shown, ...added])].filter((fact) => !dropped.has(fact));
      return answer(...facts.map((fact): [string, string] => ['People', fact]));
    };

  /**
   * A memory store holding alpha and beta for (u, s), the ledger of the tracker that stored them,
   * and a view of the store whose first `failing` loads (and first `failingSaves` saves) fail.
   */
  const seeded = async (failing: number, failingSaves = 0) => {
    const memory = memoryNotesStore();
    const first = createNotableFactsTracker({ complete: keeping(), store: memory, now });
    first.recordUserMessage('u', 's', 'word-alpha');
    await first.settled();
    first.recordUserMessage('u', 's', 'word-beta');
    await first.settled();
    await first.close();
    let [loads, saves] = [failing, failingSaves];
    const down = E.left(storeFailure('unavailable', 'the database is down'));
    const store: NotesStore = {
      load: (user, session) => (loads-- > 0 ? down : memory.load(user, session)),
      save: (user, write) => (saves-- > 0 ? down : memory.save(user, write)),
    };
    return { memory, store, ledger: first.getSnapshot() };
  };

  const factsOf = async (memory: NotesStore) =>
    (
      (await stored(memory, 'u', 's')).session as unknown as { value?: { facts: Array<{ fact: string }> } }
    ).value?.facts.map((entry) => entry.fact);

  it('keeps the stored facts its model never saw when the save that follows meets them as a conflict', async () => {
    const { memory, store } = await seeded(1);
    const tracker = createNotableFactsTracker({ complete: keeping(), store, now, onError: () => undefined });
    tracker.recordUserMessage('u', 's', 'word-gamma');
    await tracker.settled();
    await tracker.settled();
    expect(await factsOf(memory)).toEqual(['Knows alpha', 'Knows beta', 'Knows gamma']);
    expect(right(tracker.contextFor('u', 's')).session).toContain('Knows alpha');
    await tracker.close();
  });

  it('leaves out a fact its model was shown and dropped, when the conflict reloads the record', async () => {
    const { memory, store, ledger } = await seeded(1);
    // Started from the ledger that stored alpha and beta: its model is shown them.
    const tracker = createNotableFactsTracker({
      complete: keeping(),
      store,
      initial: ledger,
      onError: () => undefined,
    });
    tracker.recordUserMessage('u', 's', 'drop-beta word-gamma');
    await tracker.settled();
    await tracker.settled();
    expect(await factsOf(memory)).toEqual(['Knows alpha', 'Knows gamma']);
    await tracker.close();
  });

  it('leaves out a fact of its own earlier blind extraction that a later one dropped', async () => {
    const { memory, store } = await seeded(2, 1);
    const tracker = createNotableFactsTracker({ complete: keeping(), store, now, onError: () => undefined });
    tracker.recordUserMessage('u', 's', 'word-gamma word-delta');
    await tracker.settled();
    tracker.recordUserMessage('u', 's', 'drop-gamma');
    await tracker.settled();
    await tracker.close();
    expect(await factsOf(memory)).toEqual(['Knows alpha', 'Knows beta', 'Knows delta']);
  });

  it("keeps out a fact another process's later extraction dropped, keeping what this one added", async () => {
    const { memory, store, ledger } = await seeded(1);
    // B, started from the ledger that stored alpha and beta, extracts blind and slowly.
    const b = createNotableFactsTracker({
      complete: keeping(50),
      store,
      initial: ledger,
      now,
      onError: () => undefined,
    });
    b.recordUserMessage('u', 's', 'word-zeta');
    // A reads the record, and its later message drops alpha; its save lands first.
    const a = createNotableFactsTracker({ complete: keeping(), store: { load: memory.load, save: memory.save }, now });
    a.recordUserMessage('u', 's', 'drop-alpha word-delta');
    await a.settled();
    expect(await factsOf(memory)).toEqual(['Knows beta', 'Knows delta']);
    await b.settled();
    await b.settled();
    expect(await factsOf(memory)).toEqual(['Knows beta', 'Knows delta', 'Knows zeta']);
    await Promise.all([a.close(), b.close()]);
  });

  it('keeps the stored facts a load brought while it ran, which its model was not shown', async () => {
    const { memory, store } = await seeded(1);
    const tracker = createNotableFactsTracker({ complete: keeping(50), store, now, onError: () => undefined });
    tracker.recordUserMessage('u', 's', 'word-gamma');
    // The message's load failed; this one reads the record while the extraction runs.
    expect(await tracker.load('u', 's')).toEqual(E.right(undefined));
    await tracker.settled();
    expect(await factsOf(memory)).toEqual(['Knows alpha', 'Knows beta', 'Knows gamma']);
    await tracker.close();
  });
});

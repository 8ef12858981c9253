/**
 * The notes entry point's functions given an argument that is not of its kind (null from an
 * unset variable, a value of the wrong type from JavaScript or JSON): a TypeError that names
 * the argument, or the documented leniency (an event or input that is not one leaves the same
 * ledger, an id that is no string finds nothing, options read null as none), never a failure
 * deep inside ("Cannot read properties of null").
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import {
  anthropicComplete,
  appendMessage,
  applyExtraction,
  applyLoaded,
  applyNotesEvent,
  applyReleased,
  buildNotableFactsPrompt,
  buildProfileConsolidationPrompt,
  categoryNames,
  consolidateGlobalFacts,
  consolidateSession,
  consolidateSessionWithReport,
  createNotableFactsTracker,
  DEFAULT_CATEGORIES,
  describeCategories,
  emptyNotesLedger,
  encodeNotes,
  endStageWithReport,
  factKey,
  formatNotesBlocks,
  initialNotesState,
  isExtracting,
  isLoaded,
  keepValidFacts,
  memoryNotesStore,
  memoryLeases,
  normalizeFactText,
  notesTransition,
  parseCategorizedFact,
  parseNotesLogLine,
  replayConversationLog,
  replayNotes,
  rewriteProfile,
  selectConversation,
  selectGlobalFacts,
  selectProfileRewrite,
  selectSessionFacts,
  selectSessions,
  selectUnconsolidatedSessions,
  selectUserConversations,
  selectUserIds,
  selectUserNotes,
  selectUserStorage,
  settleExtraction,
  settleProfileRewrite,
  storeFailure,
} from '../../src/notes/index.js';

const ledger = emptyNotesLedger();
const state = initialNotesState();
const fact = { category: 'People', fact: 'Partner is Jordan' };
const extraction = { user: 'maya', session: 's1', facts: [fact], at: 1 };
const client = { messages: { create: () => Promise.resolve({ content: [{ type: 'text', text: '[]' }] }) } };
const LEDGER_NULL = /the ledger is null, not a notes ledger \(emptyNotesLedger makes one\)/u;
const LEDGER_NUMBER = /the ledger is a number, not a notes ledger/u;
const STATE_NULL = /the state is null, not a notes state \(initialNotesState makes one\)/u;

const refusals: ReadonlyArray<readonly [string, () => unknown, RegExp]> = [
  ['applyExtraction of a null ledger', () => applyExtraction(null as never, extraction), LEDGER_NULL],
  [
    'applyExtraction of a null ledger and a null input',
    () => applyExtraction(null as never, null as never),
    LEDGER_NULL,
  ],
  ['applyLoaded of a number as the ledger', () => applyLoaded(42 as never, null as never), LEDGER_NUMBER],
  ['applyNotesEvent of a null ledger', () => applyNotesEvent(null as never, null as never), LEDGER_NULL],
  [
    'applyReleased of a null ledger',
    () => applyReleased(null as never, { type: 'notes/released', user: 'maya' }),
    LEDGER_NULL,
  ],
  [
    'consolidateSession of a null ledger',
    () => consolidateSession(null as never, { user: 'maya', session: 's1', at: 1 }),
    LEDGER_NULL,
  ],
  [
    'consolidateSessionWithReport of a number',
    () => consolidateSessionWithReport(42 as never, null as never),
    LEDGER_NUMBER,
  ],
  [
    'endStageWithReport of a null ledger',
    () => endStageWithReport(null as never, { user: 'maya', at: 1 }),
    LEDGER_NULL,
  ],
  ['rewriteProfile of a null ledger', () => rewriteProfile(null as never, null as never), LEDGER_NULL],
  ['encodeNotes of null', () => encodeNotes(null as never), LEDGER_NULL],
  ['formatNotesBlocks of a number', () => formatNotesBlocks(42 as never, 'maya', 's1'), LEDGER_NUMBER],
  ['selectUserNotes of null', () => selectUserNotes(null as never, 'maya'), LEDGER_NULL],
  [
    'selectUserNotes of null, for a user that is no string',
    () => selectUserNotes(null as never, 42 as never),
    LEDGER_NULL,
  ],
  ['selectSessionFacts of null', () => selectSessionFacts(null as never, 'maya', 's1'), LEDGER_NULL],
  ['selectGlobalFacts of a number', () => selectGlobalFacts(42 as never, 'maya'), LEDGER_NUMBER],
  ['selectUnconsolidatedSessions of null', () => selectUnconsolidatedSessions(null as never, 'maya'), LEDGER_NULL],
  ['selectUserIds of null', () => selectUserIds(null as never), LEDGER_NULL],
  [
    'selectSessions of a notes state',
    () => selectSessions(state as never),
    /the ledger is an object, not a notes ledger/u,
  ],
  ['replayNotes of null', () => replayNotes(null as never), /events is null, not an array of notes events/u],
  ['replayNotes from a null ledger', () => replayNotes([], null as never), LEDGER_NULL],
  ['notesTransition of a null state', () => notesTransition(null as never, null as never), STATE_NULL],
  ['selectConversation of a null state', () => selectConversation(null as never, 'maya', 's1'), STATE_NULL],
  [
    'selectUserConversations of a ledger',
    () => selectUserConversations(ledger as never, 'maya'),
    /the state is an object, not a notes state/u,
  ],
  [
    'selectProfileRewrite of a number',
    () => selectProfileRewrite(42 as never, 'maya'),
    /the state is a number, not a notes state/u,
  ],
  ['selectUserStorage of a null state', () => selectUserStorage(null as never, 'maya'), STATE_NULL],
  [
    'isLoaded of a null storage',
    () => isLoaded(null as never, 's1'),
    /the storage is null, not a user's notes storage/u,
  ],
  ['isExtracting of null', () => isExtracting(null as never), /the conversation is null, not a notes conversation/u],
  [
    'isExtracting of a number',
    () => isExtracting(42 as never),
    /the conversation is a number, not a notes conversation/u,
  ],
  ['categoryNames of null', () => categoryNames(null as never), /categories is null, not an array of categories/u],
  [
    'describeCategories of a number',
    () => describeCategories(42 as never),
    /names is a number, not an array of category names/u,
  ],
  [
    'describeCategories with null known categories',
    () => describeCategories(['People'], null as never),
    /known is null, not an array of categories/u,
  ],
  ['factKey of null', () => factKey(null as never), /the fact is null, not a categorized fact/u],
  [
    'factKey of a fact whose text is a number',
    () => factKey({ fact: 42 } as never),
    /the fact is an object whose fact is a number, not a categorized fact/u,
  ],
  ['normalizeFactText of a number', () => normalizeFactText(42 as never), /the text is a number, not a string/u],
  [
    'keepValidFacts of null',
    () => keepValidFacts(null as never, ['People'], 10),
    /entries is null, not an array of entries/u,
  ],
  [
    'keepValidFacts with categories a number',
    () => keepValidFacts([fact], 42 as never, 10),
    /categories is a number, not an array of category names/u,
  ],
  [
    'keepValidFacts with previous null',
    () => keepValidFacts([fact], ['People'], 10, null as never),
    /previous is null, not an array of categorized facts/u,
  ],
  [
    'parseCategorizedFact with null categories',
    () => parseCategorizedFact(fact, null as never),
    /categories is null, not an array of category names/u,
  ],
  [
    'parseCategorizedFact with a null among the categories',
    () => parseCategorizedFact(fact, ['People', null as never]),
    /^categories\[1\] is null, not a category name/u,
  ],
  [
    'categoryNames with a null category',
    () => categoryNames([null as never]),
    /^categories\[0\] is null, not a category/u,
  ],
  [
    'appendMessage to null',
    () => appendMessage(null as never, { role: 'user', content: 'hi' }, 5),
    /messages is null, not an array of messages/u,
  ],
  ['appendMessage of a number', () => appendMessage([], 42 as never, 5), /the message is a number, not a message/u],
  [
    'buildNotableFactsPrompt of null',
    () => buildNotableFactsPrompt(null as never),
    /the input is null, not an object/u,
  ],
  [
    'buildNotableFactsPrompt with a null fact',
    () => buildNotableFactsPrompt({ message: 'hi', facts: [fact, null as never] }),
    /^fact 2 is null, not a fact/u,
  ],
  [
    'buildNotableFactsPrompt with a null category',
    () => buildNotableFactsPrompt({ message: 'hi', categories: [null as never] }),
    /^category 1 is null, not a category/u,
  ],
  [
    'buildNotableFactsPrompt with a message of no text in the history',
    () => buildNotableFactsPrompt({ message: 'hi', history: [{ role: 'user', content: null as never }] }),
    /^a message of the history is an object, not a message/u,
  ],
  [
    'buildProfileConsolidationPrompt with a hole among the categories',
    () => buildProfileConsolidationPrompt({ facts: [fact], categories: new Array(1) }),
    /^category 1 is undefined, not a category/u,
  ],
  [
    'buildProfileConsolidationPrompt of a number',
    () => buildProfileConsolidationPrompt(42 as never),
    /the input is a number, not an object/u,
  ],
  [
    'consolidateGlobalFacts of a number as the profile',
    () => consolidateGlobalFacts(42 as never, [fact], 1),
    /the profile is a number, not a profile/u,
  ],
  [
    'consolidateGlobalFacts at null',
    () => consolidateGlobalFacts(undefined, [fact], null as never),
    /at is null, not a number/u,
  ],
  [
    'parseNotesLogLine of null',
    () => parseNotesLogLine(null as never, 1, undefined),
    /the line is null, not a string/u,
  ],
  [
    'parseNotesLogLine with a null line number',
    () => parseNotesLogLine('{}', null as never, undefined),
    /the line number is null, not a number/u,
  ],
  [
    'parseNotesLogLine with previousAt null',
    () => parseNotesLogLine('{}', 1, null as never),
    /previousAt is null, not a number/u,
  ],
  ['replayConversationLog of null', () => replayConversationLog(null as never), /the history is null, not a string/u],
  [
    'settleExtraction of a null slot',
    () => settleExtraction(null as never, E.right('[]'), 1, ['People']),
    /the slot is null, not an object/u,
  ],
  [
    'settleExtraction of a null outcome',
    () => settleExtraction({ user: 'maya', session: 's1' }, null as never, 1, ['People']),
    /the outcome is null, not an Either/u,
  ],
  [
    'settleProfileRewrite of a null user',
    () => settleProfileRewrite(null as never, E.right('[]'), 1, ['People']),
    /the user is null, not a string/u,
  ],
  [
    'settleProfileRewrite of a number outcome',
    () => settleProfileRewrite('maya', 42 as never, 1, ['People']),
    /the outcome is a number, not an Either/u,
  ],
  [
    'anthropicComplete of a null client',
    () => anthropicComplete(null as never, { model: 'm' }),
    /the client is null, not a Messages client/u,
  ],
  [
    'anthropicComplete of null options',
    () => anthropicComplete(client, null as never),
    /the options are null, not an object/u,
  ],
  [
    'anthropicComplete without a model',
    () => anthropicComplete(client, {} as never),
    /the model is undefined, not a string/u,
  ],
  ['memoryLeases of a number as the clock', () => memoryLeases(42 as never), /now is a number, not a function/u],
  // A tracker without its model could only fail every extraction (as model_error): refused where it is made.
  [
    'createNotableFactsTracker of null options',
    () => createNotableFactsTracker(null as never),
    /^the options are null, not an object \(\{ complete, \.\.\. \}: complete is required\)$/u,
  ],
  [
    'createNotableFactsTracker of no options',
    () => createNotableFactsTracker(undefined as never),
    /^the options are undefined, not an object/u,
  ],
  [
    'createNotableFactsTracker of a number as complete',
    () => createNotableFactsTracker({ complete: 5 as never }),
    /^complete is a number, not a function \(the model call: \(prompt, \{ signal \}\) => Promise<string>\)$/u,
  ],
  [
    'createNotableFactsTracker whose complete getter throws',
    () =>
      createNotableFactsTracker({
        get complete(): never {
          throw new Error('getter');
        },
      }),
    /^complete is undefined, not a function/u,
  ],
  [
    'createNotableFactsTracker without complete',
    () => createNotableFactsTracker({} as never),
    /^complete is undefined, not a function/u,
  ],
  // A store that is none is refused, not replaced by one in memory that would lose the notes meant for it.
  [
    'createNotableFactsTracker with a number as its store',
    () => createNotableFactsTracker({ complete: async () => '[]', store: 42 as never }),
    /^store is a number, not a notes store/u,
  ],
  [
    'createNotableFactsTracker with a store without save',
    () => createNotableFactsTracker({ complete: async () => '[]', store: { load: () => E.left(null) } as never }),
    /^store is an object, not a notes store/u,
  ],
  [
    'createNotableFactsTracker with leases that are none',
    () =>
      createNotableFactsTracker({ complete: async () => '[]', store: { ...memoryNotesStore(), leases: 5 } as never }),
    /^store\.leases is a number, not the store's leases/u,
  ],
  [
    'createNotableFactsTracker with a store whose leases cannot be read',
    () =>
      createNotableFactsTracker({
        complete: async () => '[]',
        store: {
          load: () => E.left(null),
          save: () => E.left(null),
          get leases(): never {
            throw new Error('getter');
          },
        } as never,
      }),
    /^store could not be read: getter$/u,
  ],
  ['storeFailure of a null code', () => storeFailure(null as never, 'x'), /the code is null, not a string/u],
];

describe('arguments that are not of their kind', () => {
  it.each(refusals)('%s is refused with a TypeError naming the argument', (_name, call, message) => {
    expect(call).toThrow(expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(message) }));
  });

  it('keeps the documented leniency: an input that is not one leaves the same ledger or state, an id that is no string finds nothing, options read null as none', () => {
    expect(applyExtraction(ledger, null as never)).toBe(ledger);
    expect(endStageWithReport(ledger, null as never)).toEqual({
      ledger,
      events: [],
      sessions: [],
      dropped: [],
      unsure: false,
    });
    expect(notesTransition(state, null as never)).toEqual([state, []]);
    expect(selectUserNotes(ledger, 42 as never)).toBeUndefined();
    expect(selectConversation(state, null as never, 's1')).toBeUndefined();
    expect(selectConversation(state, 'maya', 42 as never)).toBeUndefined();
    expect(selectUserConversations(state, null as never)).toEqual([]);
    expect(isLoaded(selectUserStorage(state, 'maya'), null as never)).toBe(false);
    const settled = settleExtraction({ user: 'maya', session: 's1' }, E.right('[]'), 1, ['People'], null as never);
    expect(settled.type).toBe('notes/extracted');
    expect(consolidateGlobalFacts(undefined, [fact], 1, null as never).facts).toHaveLength(1);
    expect(DEFAULT_CATEGORIES.length).toBeGreaterThan(0);
    // An optional option whose getter throws reads as not given.
    const tracker = createNotableFactsTracker({
      complete: async () => '[]',
      get store(): never {
        throw new Error('getter');
      },
      get timeoutMs(): never {
        throw new Error('getter');
      },
    });
    expect(typeof tracker.close).toBe('function');
    void tracker.close();
  });
});

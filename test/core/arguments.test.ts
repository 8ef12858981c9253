/**
 * The core's public functions given an argument that is not of its kind (null from an unset
 * variable, a value of the wrong type from JavaScript or JSON): a TypeError that names the
 * argument, or the documented leniency, never a failure deep inside ("Cannot read properties
 * of null").
 */
import { describe, expect, it } from 'vitest';
import {
  applyEvent,
  buildDispatchDynamicTail,
  createExtractor,
  createFactId,
  createRetrievalScratch,
  dispatchResultJsonSchema,
  DEFAULT_RANKING,
  emptyFactStore,
  estimateTokens,
  explainPromptAt,
  factPriors,
  formatFactLine,
  formatSessionFacts,
  freeText,
  implementerRules,
  initialTrackerState,
  isPlaceholder,
  makeFact,
  parseDispatchResult,
  parseHistory,
  parseHistoryLine,
  parseIsoTime,
  pathText,
  promptQuery,
  recordPrompt,
  replay,
  replayHistory,
  reviewerRules,
  selectFactsValidAt,
  selectSessionContext,
  startHistoryReplay,
  toStateSnapshotFacts,
  trackerTransition,
  validateDispatchResult,
} from '../../src/index.js';
import { fileFact } from '../arbitraries.js';

const refusals: ReadonlyArray<readonly [string, () => unknown, RegExp]> = [
  [
    'formatSessionFacts with null among the facts',
    () => formatSessionFacts([null as never]),
    /facts\[0\] is null, not a fact/u,
  ],
  [
    'formatSessionFacts grouped with a string among the facts',
    () => formatSessionFacts([fileFact('src/a.ts', 'modified_by', 'task:1', 1), 'x' as never], { layout: 'grouped' }),
    /facts\[1\] is a string, not a fact/u,
  ],
  [
    'formatSessionFacts with a hole left by delete',
    () => {
      const facts = [
        fileFact('src/a.ts', 'modified_by', 'task:1', 1),
        fileFact('src/b.ts', 'modified_by', 'task:1', 1),
      ];
      delete facts[0];
      return formatSessionFacts(facts);
    },
    /the facts is not an array of facts: an array of 2 elements has a hole at \[0\]/u,
  ],
  ['formatFactLine of undefined', () => formatFactLine(undefined as never), /the fact is undefined, not a fact/u],
  // A role that is neither is refused by name, not read as a reviewer.
  [
    'validateDispatchResult of a mistyped role',
    () => validateDispatchResult({ task_id: '1', assessment: 'approved' }, 'implementor' as never),
    /^unknown role "implementor": expected implementer or reviewer$/u,
  ],
  [
    'dispatchResultJsonSchema of no role',
    () => dispatchResultJsonSchema(undefined as never),
    /^unknown role .*: expected implementer or reviewer$/u,
  ],
  ['replay of null', () => replay(null as never), /events is null, not an array/u],
  ['parseHistory of null', () => parseHistory(null as never), /the history is null, not a string/u],
  ['replayHistory of a number', () => replayHistory(42 as never), /the history is a number, not a string/u],
  [
    'trackerTransition with a null event',
    () => trackerTransition(initialTrackerState(), null as never),
    /the event is null, not an object/u,
  ],
  ['createExtractor of null', () => createExtractor(null as never), /the rules are null, not an object/u],
  ['createExtractor of a number', () => createExtractor(42 as never), /the rules are a number, not an object/u],
  [
    'createExtractor with implementerRules null',
    () => createExtractor({ implementerRules: null as never, reviewerRules }),
    /implementerRules is null, not an array of rules/u,
  ],
  [
    'createExtractor with reviewerRules a string',
    () => createExtractor({ implementerRules, reviewerRules: 'rules' as never }),
    /reviewerRules is a string, not an array of rules/u,
  ],
  [
    'createExtractor with null among implementerRules',
    () => createExtractor({ implementerRules: [implementerRules[0]!, null as never], reviewerRules }),
    /implementerRules\[1\] is null, not a rule/u,
  ],
  [
    'createExtractor with an object without extract among reviewerRules',
    () => createExtractor({ implementerRules, reviewerRules: [{ name: 'x' } as never] }),
    /reviewerRules\[0\] is an object without an extract function, not a rule/u,
  ],
  [
    'createFactId with a null subject',
    () => createFactId(null as never, 'r', 'o'),
    /the subject is null, not a string/u,
  ],
  [
    'createFactId with a number as the relation',
    () => createFactId('s', 42 as never, 'o'),
    /the relation is a number, not a string/u,
  ],
  [
    'createFactId with an undefined object',
    () => createFactId('s', 'r', undefined as never),
    /the object is undefined, not a string/u,
  ],
  [
    'applyEvent with a null event',
    () => applyEvent(emptyFactStore(), null as never),
    /the event is null, not an object \(a tracker event\)/u,
  ],
  [
    'replay with a number among the events',
    () => replay([{ type: 'store/compacted', maxFacts: 1 }, 42 as never]),
    /events\[1\] is a number, not an object \(a tracker event\)/u,
  ],
  [
    'buildDispatchDynamicTail of no fields',
    () => buildDispatchDynamicTail({} as never),
    /taskId is undefined, not a string/u,
  ],
  [
    'buildDispatchDynamicTail without maxOutputTokens',
    () => buildDispatchDynamicTail({ taskId: '1', deltaPacket: {}, taskPrompt: 'x' } as never),
    /maxOutputTokens is undefined, not a number/u,
  ],
  [
    'buildDispatchDynamicTail with NaN as maxOutputTokens',
    () => buildDispatchDynamicTail({ taskId: '1', maxOutputTokens: Number.NaN, deltaPacket: {}, taskPrompt: 'x' }),
    /maxOutputTokens is NaN, not a number of tokens, 0 or more/u,
  ],
  [
    'buildDispatchDynamicTail with a negative maxOutputTokens',
    () => buildDispatchDynamicTail({ taskId: '1', maxOutputTokens: -1, deltaPacket: {}, taskPrompt: 'x' }),
    /maxOutputTokens is -1, not a number of tokens, 0 or more/u,
  ],
  [
    'buildDispatchDynamicTail with a number as the delta packet',
    () => buildDispatchDynamicTail({ taskId: '1', maxOutputTokens: 1, deltaPacket: 42 as never, taskPrompt: 'x' }),
    /deltaPacket is a number, not an object/u,
  ],
  [
    'buildDispatchDynamicTail with a null task prompt',
    () => buildDispatchDynamicTail({ taskId: '1', maxOutputTokens: 1, deltaPacket: {}, taskPrompt: null as never }),
    /taskPrompt is null, not a string/u,
  ],
  ['makeFact of null', () => makeFact(null as never), /the fields are null, not an object/u],
  ['makeFact of a number', () => makeFact(42 as never), /the fields are a number, not an object/u],
  ['estimateTokens of null', () => estimateTokens(null as never), /the text is null, not a string/u],
  ['estimateTokens of a number', () => estimateTokens(42 as never), /the text is a number, not a string/u],
  ['freeText of null', () => freeText(null as never), /the text is null, not a string/u],
  ['pathText of a number', () => pathText(7 as never), /the text is a number, not a string/u],
  ['isPlaceholder of undefined', () => isPlaceholder(undefined as never), /the text is undefined, not a string/u],
  ['parseHistoryLine of null', () => parseHistoryLine(null as never, 1, undefined), /the line is null, not a string/u],
  ['parseIsoTime of a number', () => parseIsoTime(42 as never), /the time is a number, not a string/u],
  [
    'buildDispatchDynamicTail of null',
    () => buildDispatchDynamicTail(null as never),
    /the input is null, not an object/u,
  ],
  ['factPriors of null', () => factPriors(null as never, DEFAULT_RANKING.priors), /the fact is null, not a fact/u],
  [
    'factPriors with null priors',
    () => factPriors(fileFact('src/a.ts', 'modified_by', 'task:1', 1), null as never),
    /the priors are null, not ranking priors/u,
  ],
  ['explainPromptAt of null', () => explainPromptAt(null as never, 1), /the result is null, not a replay result/u],
  [
    'promptQuery of a null state',
    () => promptQuery(null as never, { type: 'prompt', taskId: '1', taskPrompt: 'x', at: 1 }),
    /the state is not a tracker state/u,
  ],
  [
    'selectSessionContext with a null event',
    () => selectSessionContext(initialTrackerState(), null as never),
    /the event is null, not an object \(a prompt event\)/u,
  ],
  [
    'selectSessionContext of a null state',
    () => selectSessionContext(null as never, { type: 'prompt', taskId: '1', taskPrompt: 'x', at: 1 }),
    /the state is not a tracker state/u,
  ],
  [
    'recordPrompt with a number as the event',
    () => recordPrompt(initialTrackerState(), 42 as never),
    /the event is a number, not an object \(a prompt event\)/u,
  ],
  ['replay from a null store', () => replay([], null as never), /the store is null, not a fact store/u],
  // No time is not a time before every fact: an unset variable would read as "nothing was valid".
  [
    'selectFactsValidAt without a time',
    () => selectFactsValidAt(emptyFactStore(), undefined as never),
    /the time is undefined, not a number \(epoch milliseconds\)/u,
  ],
  [
    'selectFactsValidAt with the time as text',
    () => selectFactsValidAt(emptyFactStore(), '1000' as never),
    /the time is a string, not a number \(epoch milliseconds\)/u,
  ],
  [
    'selectFactsValidAt at NaN',
    () => selectFactsValidAt(emptyFactStore(), Number.NaN),
    /the time is NaN, not a number \(epoch milliseconds\)/u,
  ],
  [
    'parseHistoryLine with a null line number',
    () => parseHistoryLine('{}', null as never, undefined),
    /the line number is null, not a number/u,
  ],
  [
    'parseHistoryLine with previousAt a string',
    () => parseHistoryLine('{}', 1, '1' as never),
    /previousAt is a string, not a number \(or undefined\)/u,
  ],
  ['toStateSnapshotFacts of null', () => toStateSnapshotFacts(null as never), /facts is null, not an array of facts/u],
  [
    'toStateSnapshotFacts with null among the facts',
    () => toStateSnapshotFacts([fileFact('src/a.ts', 'modified_by', 'task:1', 1), null as never]),
    /facts\[1\] is null, not a fact/u,
  ],
  [
    'a history replay fed a line as bare text',
    () => startHistoryReplay().feed(['{"type":"prompt","taskId":"1","taskPrompt":"x"}' as never]),
    /the lines\[0\] is a string, not a history line \(\{ line, text \}\)/u,
  ],
  [
    'a history replay fed null among the lines',
    () => startHistoryReplay().feed([{ line: 1, text: '' }, null as never]),
    /the lines\[1\] is null, not a history line/u,
  ],
  [
    'a history replay fed a line numbered by a string',
    () => startHistoryReplay().feed([{ line: '1', text: '' } as never]),
    /the lines\[0\]\.line is a string, not a number/u,
  ],
  [
    'a history replay fed a line without its text',
    () => startHistoryReplay().feed([{ line: 1 } as never]),
    /the lines\[0\]\.text is undefined, not a string/u,
  ],
];

describe('arguments that are not of their kind', () => {
  it.each(refusals)('%s is refused with a TypeError naming the argument', (_name, call, message) => {
    expect(call).toThrow(expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(message) }));
  });

  it('a role with no text form (no prototype, a toString that throws) is an unknown role, answered as a Left', () => {
    const roles = [
      Object.create(null),
      {
        toString: () => {
          throw new Error('no text');
        },
      },
    ];
    for (const role of roles) {
      expect(parseDispatchResult({}, role as never)).toEqual({
        _tag: 'Left',
        left: expect.objectContaining({ code: 'invalid_input', message: expect.stringMatching(/^unknown role /u) }),
      });
      const dispatch = { type: 'dispatch', role, taskId: '1', output: {} };
      const [, , output] = trackerTransition(
        initialTrackerState(),
        dispatch as Parameters<typeof trackerTransition>[1],
      );
      expect(output.type === 'dispatch' && output.ingested).toEqual({
        _tag: 'Left',
        left: expect.objectContaining({ code: 'invalid_input', message: expect.stringMatching(/^unknown role /u) }),
      });
    }
  });

  it('an environment that is none reads as none, as options do', () => {
    const event = { type: 'prompt', taskId: '1', taskPrompt: 'edit src/a.ts', at: 1 } as const;
    const state = initialTrackerState();
    expect(promptQuery(state, event, null as never)).toEqual(promptQuery(state, event));
    expect(selectSessionContext(state, event, null as never)).toEqual(selectSessionContext(state, event));
    expect(trackerTransition(state, event, null as never)).toEqual(trackerTransition(state, event));
  });

  it('null options read as no options, as createFactTracker and initialTrackerState read them', () => {
    const history = '{"type":"prompt","taskId":"1","taskPrompt":"edit src/a.ts","at":1}';
    expect(replayHistory(history, null as never).report).toEqual(replayHistory(history).report);
    const replaying = startHistoryReplay(null as never);
    expect(replaying.feed([{ line: 1, text: history }])).toBe(true);
    expect(replaying.finish().report).toEqual(replayHistory(history).report);
    expect(createRetrievalScratch(null as never).scanFacts).toBe(createRetrievalScratch().scanFacts);
  });

  it('a replay option that is none (null) reads as none, never as a bound that stops at once', () => {
    const history = [
      '{"type":"dispatch","role":"implementer","taskId":"1","at":1000,"result":{"task_id":"1","status":"completed","summary":"Edited a","files_changed":["src/a.ts"]}}',
      'not json',
      '{"type":"prompt","taskId":"2","taskPrompt":"edit src/a.ts","at":2000}',
    ].join('\n');
    const expected = replayHistory(history).report;
    expect(expected.prompts[0]?.facts).not.toEqual([]);
    for (const name of ['untilLine', 'asOf', 'countTokens', 'tokenCounters', 'initial', 'onPrompt', 'onError']) {
      const options = { [name]: null } as never;
      expect(replayHistory(history, options).report, name).toEqual(expected);
      const replaying = startHistoryReplay(options);
      replaying.feed(history.split('\n').map((text, index) => ({ line: index + 1, text })));
      expect(replaying.finish().report, name).toEqual(expected);
    }
  });
});

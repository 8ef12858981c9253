/**
 * The core's public functions given an argument that is not of its kind (null from an unset
 * variable, a value of the wrong type from JavaScript or JSON): a TypeError that names the
 * argument, or the documented leniency, never a failure deep inside ("Cannot read properties
 * of null").
 */
import { describe, expect, it } from 'vitest';
import {
  formatFactLine,
  formatSessionFacts,
  initialTrackerState,
  parseHistory,
  replay,
  replayHistory,
  startHistoryReplay,
  trackerTransition,
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
  ['formatFactLine of undefined', () => formatFactLine(undefined as never), /the fact is undefined, not a fact/u],
  ['replay of null', () => replay(null as never), /events is null, not an array/u],
  ['parseHistory of null', () => parseHistory(null as never), /the history is null, not a string/u],
  ['replayHistory of a number', () => replayHistory(42 as never), /the history is a number, not a string/u],
  [
    'trackerTransition with a null event',
    () => trackerTransition(initialTrackerState(), null as never),
    /the event is null, not an object/u,
  ],
];

describe('arguments that are not of their kind', () => {
  it.each(refusals)('%s is refused with a TypeError naming the argument', (_name, call, message) => {
    expect(call).toThrow(expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(message) }));
  });

  it('null options read as no options, as createFactTracker and initialTrackerState read them', () => {
    const history = '{"type":"prompt","taskId":"1","taskPrompt":"edit src/a.ts","at":1}';
    expect(replayHistory(history, null as never).report).toEqual(replayHistory(history).report);
    const replaying = startHistoryReplay(null as never);
    expect(replaying.feed([{ line: 1, text: history }])).toBe(true);
    expect(replaying.finish().report).toEqual(replayHistory(history).report);
  });
});

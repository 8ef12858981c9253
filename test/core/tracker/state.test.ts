/**
 * `initialTrackerState` and `trackerSettings`: the settings are plain data, so a state's JSON or
 * `structuredClone` copy holds, and applies, the very settings the state does.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { initialTrackerState } from '../../../src/index.js';
import { resolveRanking } from '../../../src/core/retrieve/rank.js';

/** A value a caller may put in a ranking field: a usable number, or anything else JSON or a clone cannot keep. */
const field = fc.oneof(
  fc.double(),
  fc.bigInt(),
  fc.string(),
  fc.constant((): number => 1),
  fc.constant(Symbol('field')),
  fc.constant(new Map([['status', 1]])),
  fc.anything({ withBigInt: true, withMap: true, withSet: true, withDate: true, withTypedArray: true }),
);
const toJSON = fc.constant(() => 'x');
const group = fc.oneof(
  field,
  fc.record({ weight: field, seeds: field, power: field, status: field, toJSON }, { requiredKeys: [] }),
);
const ranking = fc.record(
  { floor: field, contextWeight: field, priors: group, fill: group, coChange: group, toJSON, extra: field },
  { requiredKeys: [] },
);

describe('tracker settings', () => {
  it('a state made with any ranking keeps settings its JSON and structuredClone copies hold alike, ranking as the ranking given does', () => {
    fc.assert(
      fc.property(ranking, (given) => {
        const state = initialTrackerState({ ranking: given as never });
        expect(JSON.parse(JSON.stringify(state.settings))).toStrictEqual(state.settings);
        expect(structuredClone(state)).toStrictEqual(state);
        expect(resolveRanking(state.settings.ranking)).toEqual(resolveRanking(given));
      }),
    );
  });

  it('resolves -0 in any ranking field as 0, as the settings keep it: a ranking and its JSON copy rank alike', () => {
    const given = { fill: { power: -0, longest: -0 }, contextShare: -0, contextTasks: -0, coChange: { seeds: -0 } };
    const resolved = resolveRanking(given);
    expect(resolved).toEqual(resolveRanking(JSON.parse(JSON.stringify(given))));
    expect(initialTrackerState({ ranking: given }).settings.ranking).toEqual(JSON.parse(JSON.stringify(given)));
  });

  it('keeps of a ranking only the overrides a ranking takes, as plain frozen data', () => {
    const given = { floor: 0.05, priors: { status: -0, test: 1n, docs: 'x' }, fill: () => 1, toJSON: () => 'x' };
    const { settings } = initialTrackerState({ ranking: given as never });
    expect(settings.ranking).toStrictEqual({ priors: { status: 0 }, floor: 0.05 });
    expect(Object.isFrozen(settings.ranking) && Object.isFrozen(settings.ranking?.priors)).toBe(true);
    expect(JSON.parse(JSON.stringify(settings)).ranking).toEqual({ priors: { status: 0 }, floor: 0.05 });
  });
});

/**
 * Untrusted text in linear time. Whether a function grows linearly is a timing, and a timing
 * inside the unit suite fails on a loaded machine (a linear function that allocates can grow 40
 * times from 10,000 to 100,000 characters when the collector competes for a shared core), so
 * the timing is the bench's: `npm run bench:linear` times every case of `bench/linear.ts` and
 * exits 1 when one grows superlinearly. What holds on any machine is checked here: every case
 * takes every run it is timed on (so the bench can never meet a case that throws or no longer
 * runs), and the verdict the bench gives a row is the one its growth calls for.
 */
import { describe, expect, it } from 'vitest';
import {
  DOUBLING_BOUND,
  GROWTH_BOUND,
  isSuperlinear,
  LINEAR_CASES,
  type LinearRow,
  RUN_CHARACTERS,
  runsAround,
  runText,
} from '../bench/linear.js';

/** Long enough to reach every pattern (a run, then what ends it), short enough to cost milliseconds. */
const CHECKED_LENGTH = 1_000;

describe('untrusted text in linear time: the cases the bench times', () => {
  it.each(LINEAR_CASES.map((linear) => [linear.name, linear] as const))(
    '%s takes every run of every character, in every placement',
    (_name, linear) => {
      for (const character of RUN_CHARACTERS)
        for (const around of runsAround(linear, character))
          expect(() => linear.run(runText(character, around, CHECKED_LENGTH))).not.toThrow();
    },
  );

  it('names each case once, so a row of the bench points to one function', () => {
    const names = LINEAR_CASES.map((linear) => linear.name);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe("the bench's verdict on a row", () => {
  const row = (fields: Partial<LinearRow>): LinearRow => ({
    name: 'f',
    small: 1,
    large: 10,
    ratio: 10,
    character: '.',
    around: ['', 'x'],
    ...fields,
  });

  it('a linear growth (about 10 times) is never superlinear, however slow', () => {
    expect(isSuperlinear(row({ small: 200, large: 2_000, ratio: 10 }))).toBe(false);
  });

  it('a quadratic growth (about 100 times) that takes seconds and quadruples again is superlinear', () => {
    expect(isSuperlinear(row({ small: 80, large: 8_000, ratio: 100, doubling: 4 }))).toBe(true);
  });

  it('a growth past the bound in milliseconds is noise on a loaded machine, not a verdict', () => {
    expect(isSuperlinear(row({ small: 0.25, large: 40, ratio: 160, doubling: 5 }))).toBe(false);
  });

  it('a growth past the bound that only doubles to 200,000 characters is an allocating linear function', () => {
    expect(isSuperlinear(row({ small: 15, large: 700, ratio: GROWTH_BOUND + 5, doubling: DOUBLING_BOUND - 1 }))).toBe(
      false,
    );
  });

  it('a growth past the bound that takes over a second at 100,000 characters is superlinear whatever follows', () => {
    expect(isSuperlinear(row({ small: 20, large: 1_200, ratio: 60, doubling: 2 }))).toBe(true);
  });
});

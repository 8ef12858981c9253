/**
 * Every function that reads untrusted text runs in time linear in it: fed runs of each ASCII
 * punctuation character, spaces, letters and digits, it takes about 10 times longer at 100,000
 * characters than at 10,000, where a quadratic pattern takes about 100 times longer (and
 * seconds). The bound is 40, each timing the best of several; a case past it fails only if it
 * also took over half a second at 100,000 characters (a few milliseconds can grow 40 times from
 * noise on a loaded machine) and either over a second or grew more than 3 times again to 200,000
 * (linear time about doubles, quadratic time quadruples): a function that allocates as it goes
 * can pass 40 on a loaded machine, never both. The quadratic patterns this test was written
 * for gave 150 to 250, over 8 seconds at 100,000, and 3.3 to 6.7 to 200,000. The same cases
 * run in `npm run bench`.
 */
import { describe, expect, it } from 'vitest';
import { isSuperlinear, LINEAR_CASES, measureLinearCase } from '../bench/linear.js';

describe('untrusted text in linear time', () => {
  it.each(LINEAR_CASES.map((linear) => [linear.name, linear] as const))('%s', { timeout: 120_000 }, (_name, linear) => {
    const row = measureLinearCase(linear);
    const growth = `${row.small.toFixed(2)} ms at 10,000 characters, ${row.large.toFixed(2)} ms at 100,000${row.doubling === undefined ? '' : `, ${row.doubling.toFixed(1)} times that at 200,000`}`;
    expect(
      isSuperlinear(row),
      `${row.name}: ${growth} (a run of ${JSON.stringify(row.character)} between ${JSON.stringify(row.around)})`,
    ).toBe(false);
  });
});

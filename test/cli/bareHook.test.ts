/**
 * Which command lines the bare hook takes (the rest go to the router, which parses them and
 * says what is wrong).
 */
import { describe, expect, it } from 'vitest';
import { bareHookOptions } from '../../src/cli/bareHook.js';

describe('bareHookOptions', () => {
  it('takes no argument, or the layout alone in either spelling', () => {
    expect(bareHookOptions([])).toEqual({});
    expect(bareHookOptions(['--layout', 'grouped'])).toEqual({ layout: 'grouped' });
    expect(bareHookOptions(['--layout', 'lines'])).toEqual({ layout: 'lines' });
    expect(bareHookOptions(['--layout=grouped'])).toEqual({ layout: 'grouped' });
  });

  it('leaves to the router a layout that is none, a missing value, and any other option', () => {
    for (const args of [
      ['--layout', 'wide'],
      ['--layout=wide'],
      ['--layout='],
      ['--layout'],
      ['--layout', 'Grouped'],
      ['--layout', 'grouped', '--max-tokens', '500'],
      ['--max-tokens', '500'],
      ['--help'],
      ['grouped'],
      ['--layout', 'constructor'],
    ])
      expect(bareHookOptions(args), args.join(' ')).toBeUndefined();
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizePath } from '../../src/base/path.js';
import { PATH_LIMIT, pathText } from '../../src/core/fact.js';

/** Paths over a few characters, separators, dots and quotes included, so that spellings often meet. */
const spelled = fc.string({ unit: fc.constantFrom('a', 'b', '/', '\\', '.', '`', ':', '1', '#', 'L'), maxLength: 12 });

describe('normalizePath', () => {
  it.each([
    ['src/a.ts', 'src/a.ts'],
    ['./src//b/./../a.ts/', 'src/a.ts'],
    ['.\\src\\a.ts', 'src/a.ts'],
    ['`src/a.ts:12:5`', 'src/a.ts'],
    ['"src/a.ts"#L2-L9', 'src/a.ts'],
    ['src/a.ts#L12C5-L14C2', 'src/a.ts'],
    ['cafe\u0301.ts', 'caf\u00e9.ts'],
    ['\uff41.ts', '\uff41.ts'],
    ['../../a.ts', '../../a.ts'],
    ['a/../../b.ts', '../b.ts'],
    ['/../a.ts', '/a.ts'],
    ['/home/u/p/src/a.ts', '/home/u/p/src/a.ts'],
    ['./', '.'],
    ['/', '/'],
    ['https://host//a.ts', 'https://host//a.ts'],
    ['task:12', 'task:12'],
    [':12', ':12'],
    ['""', '""'],
  ])('reads %j as %j', (written, path) => {
    expect(normalizePath(written)).toBe(path);
  });

  it('gives a path with no backslash, no empty or . segment and no trailing slash, whatever was written', () => {
    fc.assert(
      fc.property(spelled, (written) => {
        const path = normalizePath(written);
        // A URL keeps its slashes; `.` is the folder a relative path starts from.
        if (/^[a-z][a-z0-9+.-]*:\/\//iu.test(path) || path === '.') return;
        expect(path).not.toMatch(/\\|\/\/|(?:^|\/)\.(?:\/|$)|.\/$/u);
      }),
      { numRuns: 2_000 },
    );
  });

  it('gives a spelling that is its own: normalizing a path twice gives what normalizing it once did', () => {
    const quoted = fc.string({
      unit: fc.constantFrom('a', '/', '\\', '.', '`', '"', "'", ':', '1', '#', 'L', 'C', '-', ' '),
      maxLength: 14,
    });
    fc.assert(
      fc.property(fc.oneof(spelled, quoted), (written) => {
        const path = normalizePath(written);
        expect(normalizePath(path)).toBe(path);
      }),
      { numRuns: 5_000 },
    );
    for (const written of ['a:1/', 'a:1:2:3', 'a/.:1', '``a``', '`./src/a.ts`:12', 'a:1/.'])
      expect(normalizePath(normalizePath(written))).toBe(normalizePath(written));
  });

  it.each([
    ['10 MB of ../', '../'.repeat(3_500_000)],
    ['10 MB of slashes', '/'.repeat(10_000_000)],
    ['10 MB of a path ending in a location', `${'a/'.repeat(5_000_000)}a.ts:${'1'.repeat(1_000)}`],
  ])('reads %s in linear time', (_label, written) => {
    expect(normalizePath(written).length).toBeLessThanOrEqual(written.length);
  });
});

describe('pathText', () => {
  // Paths around the subject's limit of 200 characters, whose clip keeps their end.
  const segments = fc.array(fc.constantFrom('..', '.', '', '...', 'a', 'src', 'b.ts', '\\'), {
    minLength: 1,
    maxLength: 160,
  });

  it('gives a subject that is its own: making a subject of a subject gives it back, clipped or not', () => {
    fc.assert(
      fc.property(segments, (parts) => {
        const subject = pathText(parts.join('/'));
        expect(subject.length).toBeLessThanOrEqual(PATH_LIMIT);
        expect(pathText(subject)).toBe(subject);
      }),
      { numRuns: 2_000 },
    );
    // The clip's mark met by a `..` (`.../../a.ts`).
    const climbing = pathText(`${'../'.repeat(100)}a.ts`);
    expect(pathText(climbing)).toBe(climbing);
    expect(climbing).toBe(`${'../'.repeat(63)}a.ts`);
  });
});

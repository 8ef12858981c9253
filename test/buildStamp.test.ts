/**
 * The build's stamp (scripts/buildStamp.ts): `npm run build` does nothing only while `dist/`
 * holds what a build of the sources as they are writes. Any change to an input or to an output
 * makes the next build build again.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { currentStamp, isBuilt, STAMP } from '../scripts/buildStamp.js';
import { tempDir } from './tempDirs.js';

/** A repository as a build leaves it: sources, configuration, outputs and the stamp. */
const built = (): string => {
  const root = tempDir('stamp-');
  for (const [file, text] of [
    ['src/index.ts', 'export const a = 1;\n'],
    ['src/cli/main.ts', 'console.log(1);\n'],
    ['package.json', '{}\n'],
    ['package-lock.json', '{}\n'],
    ['tsconfig.json', '{}\n'],
    ['tsconfig.build.json', '{}\n'],
    ['dist/index.js', 'export const a = 1;\n'],
    ['dist/bundle/hook.cache', 'cache'],
  ] as const) {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  writeFileSync(join(root, STAMP), currentStamp(root));
  return root;
};

const options = process.env['NODE_OPTIONS'];
afterEach(() => {
  if (options === undefined) delete process.env['NODE_OPTIONS'];
  else process.env['NODE_OPTIONS'] = options;
});

describe('the build stamp', () => {
  it('says a build is done while nothing changed, and not without a stamp', () => {
    const root = built();
    expect(isBuilt(root)).toBe(true);
    rmSync(join(root, STAMP));
    expect(isBuilt(root)).toBe(false);
  });

  it('says a build is to do once a source changes, is added or goes, or a locked package changes', () => {
    for (const change of [
      (root: string) => writeFileSync(join(root, 'src/index.ts'), 'export const a = 2;\n'),
      (root: string) => writeFileSync(join(root, 'src/cli/other.ts'), '\n'),
      (root: string) => rmSync(join(root, 'src/cli/main.ts')),
      (root: string) => writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion":3}\n'),
    ]) {
      const root = built();
      change(root);
      expect(isBuilt(root)).toBe(false);
    }
  });

  it('says a build is to do once an output changed or went (a code cache removed), or under other Node options', () => {
    for (const change of [
      (root: string) => rmSync(join(root, 'dist/bundle/hook.cache')),
      (root: string) => writeFileSync(join(root, 'dist/index.js'), 'spoiled'),
      () => {
        process.env['NODE_OPTIONS'] = '--max-old-space-size=4096';
      },
    ]) {
      const root = built();
      change(root);
      expect(isBuilt(root)).toBe(false);
    }
  });
});

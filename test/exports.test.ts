/**
 * The public names of every entry point `package.json` exports, values and types alike, read
 * with the compiler from the declarations the build wrote (what a user's compiler reads: `npm run
 * build` first) and pinned in test/fixtures/exports.json: adding, renaming or removing a
 * public name is a decision made in review, not a side effect of a refactoring. After such a
 * decision, write the new list with `UPDATE_EXPORTS=1 npx vitest run test/exports.test.ts`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './cli/runCli.js';

const PINNED = join(ROOT, 'test', 'fixtures', 'exports.json');

/** Each entry point's module, from `package.json` `exports` (its `default`, in src/). */
const entryPoints = (): Record<string, string> =>
  entryFiles('default', (target) => target.replace(/^\.\/dist\//u, 'src/').replace(/\.js$/u, '.ts'));

/** Each entry point's declarations, from `package.json` `exports` (its `types`, in dist/). */
const entryDeclarations = (): Record<string, string> => entryFiles('types', (target) => target);

/** The file `condition` of each entry point names, as `toFile` maps it. */
const entryFiles = (condition: 'default' | 'types', toFile: (target: string) => string): Record<string, string> => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, Record<string, string | undefined> | string>;
  };
  return Object.fromEntries(
    Object.entries(manifest.exports).flatMap(([name, target]) => {
      const file = typeof target === 'object' ? target[condition] : undefined;
      return file === undefined ? [] : [[name, join(ROOT, toFile(file))]];
    }),
  );
};

/** The names each entry point exports, sorted. */
const exportedNames = (): Record<string, string[]> => {
  const entries = entryDeclarations();
  const config = ts.parseJsonConfigFileContent(
    ts.readConfigFile(join(ROOT, 'tsconfig.json'), (file) => ts.sys.readFile(file)).config,
    ts.sys,
    ROOT,
  );
  const program = ts.createProgram(Object.values(entries), { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  return Object.fromEntries(
    Object.entries(entries).map(([name, file]) => {
      const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
      return [
        name,
        checker
          .getExportsOfModule(module)
          .map((symbol) => symbol.getName())
          .sort(),
      ];
    }),
  );
};

describe('the public names', () => {
  it('of every entry point are the pinned ones', () => {
    const names = exportedNames();
    if (process.env['UPDATE_EXPORTS'] === '1') writeFileSync(PINNED, `${JSON.stringify(names, null, 2)}\n`);
    expect(names).toEqual(JSON.parse(readFileSync(PINNED, 'utf8')));
  });

  it('hold one name per concept: no two value exports of one entry point are the same value', async () => {
    const same: string[] = [];
    for (const [name, file] of Object.entries(entryPoints())) {
      const module = (await import(file)) as Record<string, unknown>;
      const seen = new Map<unknown, string>();
      for (const [key, value] of Object.entries(module)) {
        if (typeof value !== 'function' && (typeof value !== 'object' || value === null)) continue;
        const earlier = seen.get(value);
        if (earlier !== undefined) same.push(`${name}: ${earlier} = ${key}`);
        else seen.set(value, key);
      }
    }
    expect(same).toEqual([]);
  });

  it('hold their constants frozen through and through, so no caller can change what every later call reads', async () => {
    const unfrozen: string[] = [];
    const walk = (value: unknown, path: string, seen: Set<object>): void => {
      if (typeof value !== 'object' || value === null || seen.has(value)) return;
      seen.add(value);
      if (!Object.isFrozen(value)) unfrozen.push(path);
      for (const [key, child] of Object.entries(value)) walk(child, `${path}.${key}`, seen);
    };
    let constants = 0;
    for (const [name, file] of Object.entries(entryPoints())) {
      const module = (await import(file)) as Record<string, unknown>;
      for (const [key, value] of Object.entries(module)) {
        // A zod schema cannot be frozen: the ones exported are the caller's copies, which the library never reads.
        if (typeof value !== 'object' || value === null || typeof Reflect.get(value, 'safeParse') === 'function')
          continue;
        constants += 1;
        walk(value, `${name}: ${key}`, new Set());
      }
    }
    expect(constants).toBeGreaterThanOrEqual(20);
    expect(unfrozen).toEqual([]);
  });
});

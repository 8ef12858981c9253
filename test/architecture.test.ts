/**
 * The import graph of `src/`, read with TypeScript's own pre-processor (static, dynamic and
 * type-only imports alike): dependencies point one way, from the layers below to the layers
 * above, with no cycle and no exception; the browser-safe entry points reach no Node module.
 * And module state: no top-level `let` or `var` but the few `MODULE_BINDINGS` names.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '..', 'src');

/**
 * Each folder's layer, bottom first: a module may import its own folder and any folder of a
 * lower layer, never one of its own layer or above. `retrieve/index` is the search index the
 * store holds; `retrieve` is the ranking over it.
 */
const LAYERS: ReadonlyArray<ReadonlyArray<string>> = [
  ['base'],
  ['persistent', 'tokens'],
  ['shell'],
  ['core/fact.ts'],
  ['core/search'],
  ['core/store'],
  ['core/extract', 'core/retrieve', 'core/history'],
  ['core/prompt'],
  ['core/tracker'],
  ['core/replay'],
  ['notes', 'context'],
  ['saved', 'node'],
  ['context/node', 'live/session'],
  ['postgres'],
  ['live/mcp', 'live/hook'],
  ['cli'],
];
/** Entry points: the modules `package.json` exports. They sit above everything; nothing in `src/` imports a barrel. */
const ENTRY_POINTS = [
  'index.ts',
  'notes/index.ts',
  'context/index.ts',
  'context/node/index.ts',
  'node/history.ts',
  'live/session/index.ts',
  'postgres/index.ts',
  'tokens/o200k.ts',
];
const isBarrel = (file: string): boolean => ENTRY_POINTS.includes(file) && file.endsWith('index.ts');
/** The entry points that must run in a browser: nothing they reach imports `node:*`. */
const BROWSER_SAFE = ['index.ts', 'notes/index.ts', 'context/index.ts', 'tokens/o200k.ts'];

const sourceFiles = (folder: string): string[] =>
  readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path)] : [];
  });

interface Module {
  /** Modules of `src/` it imports (paths relative to `src/`). */
  readonly local: string[];
  /** Packages and built-in modules it imports. */
  readonly external: string[];
}

const readGraph = (): Map<string, Module> => {
  const graph = new Map<string, Module>();
  for (const file of sourceFiles(SRC)) {
    const info = ts.preProcessFile(readFileSync(join(SRC, file), 'utf8'), true, true);
    const local: string[] = [];
    const external: string[] = [];
    for (const { fileName } of info.importedFiles) {
      if (fileName.startsWith('.'))
        local.push(relative(SRC, resolve(SRC, dirname(file), fileName)).replace(/\.js$/u, '.ts'));
      else external.push(fileName);
    }
    graph.set(file, { local, external });
  }
  return graph;
};

const graph = readGraph();

const folderOf = (file: string): string => {
  if (!file.includes('/')) return file;
  const [top, second] = file.split('/');
  const nested = `${top}/${second}`;
  return LAYERS.some((layer) => layer.includes(nested)) ? nested : top!;
};

const layerOf = (folder: string): number => LAYERS.findIndex((layer) => layer.includes(folder));

const reachableFrom = (entry: string): Set<string> => {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const next of graph.get(file)?.local ?? []) visit(next);
  };
  visit(entry);
  return seen;
};

/** The strongly connected components of more than one module, or of one that imports itself (Tarjan). */
const cycles = (): string[][] => {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file)?.local ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)!.local.includes(file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) connect(file);
  return found;
};

/** The layers docs/ARCHITECTURE.md draws, bottom first: each row's leading folder names (`core/store/`, `core/fact.ts`). */
const documentedLayers = (): string[][] => {
  const text = readFileSync(resolve(SRC, '..', 'docs', 'ARCHITECTURE.md'), 'utf8');
  const block = text.split('<!-- layers: bottom row last -->')[1]?.split('```')[1] ?? '';
  return block
    .split('\n')
    .map((row) => {
      const names: string[] = [];
      for (const token of row.trim().split(/\s+/u)) {
        if (!/^[a-z][\w/.]*(\/|\.ts)$/u.test(token)) break;
        names.push(token.replace(/\/$/u, ''));
      }
      return names;
    })
    .filter((names) => names.length > 0)
    .reverse();
};

/** The folders of `src/` (below the entry points), with the layer-level folders LAYERS names. */
const folderGraph = (): Map<string, Set<string>> => {
  const folders = new Map<string, Set<string>>();
  for (const [file, { local }] of graph) {
    if (isBarrel(file)) continue;
    const from = folderOf(file);
    const targets = folders.get(from) ?? new Set<string>();
    for (const target of local) if (!isBarrel(target) && folderOf(target) !== from) targets.add(folderOf(target));
    folders.set(from, targets);
  }
  return folders;
};

/**
 * The top-level `let` and `var` bindings `src/` holds, each with why it stays. Everything else a
 * module keeps is an explicit object (a query's `RetrievalScratch`, a memo table such as the
 * store selectors' `selectorMemo`) or a shell's one binding inside the closure that makes it.
 */
export const MODULE_BINDINGS: ReadonlyArray<{ readonly file: string; readonly name: string; readonly why: string }> = [
  {
    file: 'persistent/owner.ts',
    name: 'current',
    why: 'the write run in progress: every write of a persistent map or vector asks it, and an owner passed to every reducer and index write would be an argument of each for nothing',
  },
];

/** The names of the top-level `let` and `var` declarations of a module's text (`export let` included). */
const topLevelBindings = (text: string): string[] => {
  const source = ts.createSourceFile('module.ts', text, ts.ScriptTarget.Latest, false);
  return source.statements.flatMap((statement) => {
    if (!ts.isVariableStatement(statement)) return [];
    const { flags, declarations } = statement.declarationList;
    if ((flags & (ts.NodeFlags.Const | ts.NodeFlags.Using | ts.NodeFlags.AwaitUsing)) !== 0) return [];
    return declarations.map((declaration) => declaration.name.getText(source));
  });
};

describe('module state in src/', () => {
  it('has no top-level let or var but those MODULE_BINDINGS names, each with a reason', () => {
    const found = sourceFiles(SRC).flatMap((file) =>
      topLevelBindings(readFileSync(join(SRC, file), 'utf8')).map((name) => `${file}: ${name}`),
    );
    expect(found.sort()).toEqual(MODULE_BINDINGS.map(({ file, name }) => `${file}: ${name}`).sort());
    for (const { why } of MODULE_BINDINGS) expect(why.length).toBeGreaterThan(20);
  });

  it('finds a top-level let, a var and an export let, and not a let inside a function', () => {
    const text = 'let a = 1;\nvar b;\nexport let c = 2;\nconst d = 3;\nconst f = () => { let e = 4; return e; };\n';
    const names = topLevelBindings(text);
    expect(names).toEqual(['a', 'b', 'c']);
  });
});

describe('the import graph of src/', () => {
  it('resolves every relative import to a module of src/', () => {
    const dangling = [...graph].flatMap(([file, { local }]) =>
      local.filter((target) => !graph.has(target)).map((target) => `${file} -> ${target}`),
    );
    expect(dangling).toEqual([]);
  });

  it('places every folder in a layer (add a new folder to LAYERS)', () => {
    const unplaced = [...new Set([...graph.keys()].filter((f) => !isBarrel(f)).map(folderOf))].filter(
      (folder) => layerOf(folder) < 0,
    );
    expect(unplaced).toEqual([]);
  });

  it('has no cycle, type-only imports included', () => {
    expect(cycles()).toEqual([]);
  });

  it('has no cycle between folders', () => {
    const folders = folderGraph();
    const cyclic: string[] = [];
    const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
      [...(folders.get(from) ?? [])].some(
        (next) => next === to || (!seen.has(next) && (seen.add(next), reaches(next, to, seen))),
      );
    for (const folder of folders.keys()) if (reaches(folder, folder)) cyclic.push(folder);
    expect(cyclic).toEqual([]);
  });

  it('draws the same layers in docs/ARCHITECTURE.md as it checks', () => {
    expect(documentedLayers()).toEqual(LAYERS.map((layer) => [...layer]));
  });

  it('has no import of a layer at or above the importer own, and no import of a barrel', () => {
    const upward = [...graph].flatMap(([file, { local }]) => {
      if (isBarrel(file)) return [];
      const from = folderOf(file);
      return local
        .filter((target) => {
          if (isBarrel(target)) return true;
          const to = folderOf(target);
          return to !== from && layerOf(to) >= layerOf(from);
        })
        .map((target) => `${file} -> ${target}`);
    });
    expect(upward).toEqual([]);
  });

  it.each(BROWSER_SAFE)('reaches no Node built-in module from the browser-safe entry point %s', (entry) => {
    const nodeImports = [...reachableFrom(entry)].flatMap((file) =>
      graph
        .get(file)!
        .external.filter((name) => name.startsWith('node:') || ['fs', 'path', 'child_process', 'os'].includes(name))
        .map((name) => `${file} -> ${name}`),
    );
    expect(nodeImports).toEqual([]);
  });

  it('exports each entry point from package.json', () => {
    const manifest = JSON.parse(readFileSync(resolve(SRC, '..', 'package.json'), 'utf8')) as {
      exports: Record<string, { default?: string }>;
    };
    const exported = Object.values(manifest.exports).flatMap((target) =>
      typeof target === 'object' && target.default !== undefined
        ? [target.default.replace(/^\.\/dist\//u, '').replace(/\.js$/u, '.ts')]
        : [],
    );
    expect(exported.sort()).toEqual([...ENTRY_POINTS].sort());
  });
});

/**
 * The catch clauses of the pure layers that keep what they caught (a clause that throws again
 * after tidying up is fine anywhere), each with why: none hides a bug, each is where a value
 * from outside (text to parse, a value to describe, the caller's own function) is expected to
 * fail. The shells' folders (`cli`, `live`, `node`, `postgres`, `context/node`) and the
 * trackers' boundaries are where an unexpected exception becomes `internal`.
 */
export const KEPT_CATCHES: ReadonlyArray<{ readonly file: string; readonly count: number; readonly why: string }> = [
  { file: 'base/describe.ts', count: 1, why: 'describing a value from outside must never throw (its toString may)' },
  {
    file: 'base/failure.ts',
    count: 1,
    why: "a failure a caller's function answered (a store, a change), whose getter or Proxy trap may throw, is checked as none (isFailure)",
  },
  {
    file: 'base/record.ts',
    count: 3,
    why: "a caller's options, whose keys or getters may throw, read as not given (readableFields); a caller's input whose getter or Proxy trap throws, read once at a shell's boundary as invalid_input (readInput)",
  },
  {
    file: 'base/schema.ts',
    count: 1,
    why: 'quoting a value from outside in a message (JSON.stringify of a BigInt or a cycle throws)',
  },
  {
    file: 'shell/shell.ts',
    count: 1,
    why: "a listener is the caller's code: its failure must not break the caller or the other listeners",
  },
  {
    file: 'core/extract/extractor.ts',
    count: 2,
    why: "an extraction rule may be the caller's code: one that throws is one warning, the others still run; and the caller's result, whose getters may throw as it is scanned for secrets, is no facts and one warning",
  },
  {
    file: 'core/prompt/tail.ts',
    count: 1,
    why: "JSON.stringify of the caller's delta packet, which may hold what JSON cannot",
  },
  {
    file: 'core/tracker/tracker.ts',
    count: 6,
    why: "the tracker's boundary (internal, and onError), the caller's clock and onError themselves, a getter of the caller's input or options, and one anywhere in the caller's result object",
  },
  {
    file: 'notes/leaseRequest.ts',
    count: 1,
    why: 'a lease request whose getters throw is a call the store refuses as invalid_input, in memory as on PostgreSQL',
  },
  {
    file: 'notes/tracker.ts',
    count: 3,
    why: "the notes tracker's boundary (internal, and onError), the caller's clock and onError",
  },
  {
    file: 'notes/trackerOptions.ts',
    count: 1,
    why: 'an initial ledger that is none, kept as given so its bug surfaces as internal at the first call',
  },
  {
    file: 'notes/store.ts',
    count: 2,
    why: "a caller's value that JSON cannot write (a cycle, a BigInt), or whose getters throw, is a save the memory store refuses, as a database would",
  },
  {
    file: 'notes/storeCall.ts',
    count: 2,
    why: "a store adapter that throws is an unavailable store, an expected failure; so is its answer's code (a getter, a Proxy trap) that throws when the answer is read",
  },
  {
    file: 'tokens/checked.ts',
    count: 1,
    why: "reading whether an exception is a refused token count: the caller's counter may throw a Proxy whose traps throw",
  },
];

const SHELL_FOLDERS = ['cli', 'live', 'node', 'postgres', 'context/node'];

/** The catch clauses of a module that do not throw again, counted. */
const keptCatches = (text: string): number => {
  const source = ts.createSourceFile('module.ts', text, ts.ScriptTarget.Latest, true);
  let kept = 0;
  const rethrows = (node: ts.Node): boolean =>
    ts.isThrowStatement(node) || (!ts.isFunctionLike(node) && ts.forEachChild(node, rethrows) === true);
  const visit = (node: ts.Node): void => {
    if (ts.isCatchClause(node) && !rethrows(node.block)) kept += 1;
    ts.forEachChild(node, visit);
  };
  visit(source);
  return kept;
};

describe('caught exceptions in src/', () => {
  it('the pure layers keep no exception but those KEPT_CATCHES names, each with a reason', () => {
    const found = sourceFiles(SRC)
      .filter((file) => !SHELL_FOLDERS.some((folder) => file.startsWith(`${folder}/`)))
      .map((file) => ({ file, count: keptCatches(readFileSync(join(SRC, file), 'utf8')) }))
      .filter(({ count }) => count > 0)
      .sort((a, b) => a.file.localeCompare(b.file));
    expect(found).toEqual(
      KEPT_CATCHES.map(({ file, count }) => ({ file, count })).sort((a, b) => a.file.localeCompare(b.file)),
    );
  });
});

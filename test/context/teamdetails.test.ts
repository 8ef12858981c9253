/**
 * The shared context's smaller defects a team meets (issue 53, items 12 to 20): CRLF checkouts,
 * depth-1 clones, checkpoints over uncommitted edits, cut bundles, odd branch and workstream
 * names, shallow clones that write first, a resolve with nothing to do, and tool sessions in
 * the bundle. Real git repositories, real files, the CLI; each `it` names its item.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadContext, writeContext } from '../../src/context/node/index.js';
import { buildContextBundle } from '../../src/context/index.js';
import type { ContextKind } from '../../src/context/model.js';
import { runBinary, runIn } from './cliRun.js';
import { loadedOf, planningAt } from './results.js';
import { commitAll, copiesOf, git, makeRepo, readJson, tempDir, writeFiles } from './repo.js';

const CONTEXT_DIR = ['data', 'context'];
const CONTEXT_JSON = [...CONTEXT_DIR, 'planning_context.json'];
const DASHBOARD = [...CONTEXT_DIR, 'planning_context.md'];
/** Git by the dozen under a shared machine's load: assertions count outcomes, never time. */
const SLOW = { timeout: 120_000 } as const;

const options = planningAt;

/** A repository with `count` commits, each changing `src/parser.ts`. */
const repoWithHistory = (count: number): string => {
  const repo = makeRepo();
  for (let i = 1; i < count; i += 1) {
    writeFiles(repo, { 'src/parser.ts': `export const parse = (text: string) => text.slice(${i});\n` });
    commitAll(repo, `change ${i}`);
  }
  return repo;
};

/** A depth-1 clone of `repo` (through file://, as a shallow clone needs), beside it. */
const shallowClone = (repo: string): string => {
  const clone = join(tempDir('shallow-'), 'app');
  git(repo, 'clone', '-q', '--depth', '1', `file://${repo}`, clone);
  return clone;
};

/** Why a bundle of a depth-1 clone lists no changed file, said whole. */
const MISSING_COMMIT =
  /- the checkpoint's commit [0-9a-f]{7} is not in this clone \(a shallow clone, or a history rewritten by a rebase or a force push\), so the changed files are unknown: git fetch --unshallow, or compare by hand\n/u;

/**
 * The bundles of each kind in a depth-1 clone of a repository whose checkpoints of both kinds
 * were recorded over `uncommitted` edits, committed with them, and left behind by one more commit.
 */
const depthOneBundles = async (uncommitted: Record<string, string>): Promise<Record<ContextKind, string>> => {
  const repo = makeRepo();
  writeFiles(repo, uncommitted);
  for (const kind of ['planning', 'implementation'])
    expect((await runIn(repo, ['context', 'checkpoint', '--kind', kind, '--summary', 'Parser read.'])).status).toBe(0);
  commitAll(repo, 'context');
  writeFiles(repo, { 'src/lexer.ts': 'export const lex = (text: string) => [text];\n' });
  commitAll(repo, 'lexer');
  const clone = shallowClone(repo);
  return {
    planning: (await runIn(clone, ['context', 'bundle', '--kind', 'planning'])).stdout,
    implementation: (await runIn(clone, ['context', 'bundle', '--kind', 'implementation'])).stdout,
  };
};

/** Just over the 16 MiB up to which a new file is hashed by its content. */
const LARGE = 16 * 1024 * 1024 + 1;

/**
 * Gives `file` under `repo` `size` bytes, all zeros, made by `truncate` (a sparse file): a file
 * over 16 MiB counts by its size and times alone, so its bytes are never read, and this writes
 * none of them.
 */
const sizeFile = (repo: string, file: string, size: number): void => {
  const path = join(repo, ...file.split('/'));
  mkdirSync(dirname(path), { recursive: true });
  if (!existsSync(path)) writeFileSync(path, '');
  truncateSync(path, size);
};

/** A copy of one repository whose planning checkpoint is committed with it, made once per test file. */
const committedCopy = copiesOf(async () => {
  const repo = makeRepo();
  expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Parser read.'])).status).toBe(0);
  commitAll(repo, 'context');
  return repo;
});

const stamp = (file: string): string => {
  const stat = statSync(file);
  return `${stat.size} ${stat.mtimeMs} ${readFileSync(file, 'utf8').length}`;
};

/** Checks that `show` and `bundle` in `repo` find the summary verified. */
const expectVerified = async (repo: string): Promise<void> => {
  const show = (await runIn(repo, ['context', 'show'])).stdout;
  expect(show).not.toContain('STALE');
  expect(show).toContain('summary verified');
  expect((await runIn(repo, ['context', 'bundle'])).stdout).not.toContain('STALE');
};

describe.concurrent('issue 53: the smaller ones', SLOW, () => {
  it('12: a CRLF checkout of the dashboard is in step with the JSON: nothing noted, nothing regenerated', async () => {
    const repo = makeRepo();
    writeFiles(repo, { '.gitattributes': '* text=auto eol=crlf\n' });
    commitAll(repo, 'crlf');
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Parser read.'])).status).toBe(0);
    commitAll(repo, 'context');
    rmSync(join(repo, ...DASHBOARD));
    git(repo, 'checkout', '--', 'data/context/planning_context.md');
    expect(readFileSync(join(repo, ...DASHBOARD), 'utf8')).toContain('\r\n');
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).not.toContain('out of step');
    const before = stamp(join(repo, ...DASHBOARD));
    const resolved = await runIn(repo, ['context', 'resolve']);
    expect(resolved.stdout).toBe(
      'nothing to resolve: data/context/planning_context.json has no merge conflict markers\n',
    );
    expect(stamp(join(repo, ...DASHBOARD))).toBe(before);
  });

  it('13: a depth-1 clone says whole why a stale bundle lists no files', async () => {
    const bundles = await depthOneBundles({});
    expect(bundles.planning).toMatch(MISSING_COMMIT);
    expect(bundles.implementation).toMatch(MISSING_COMMIT);
  });

  it('13c: a depth-1 clone says whole why a stale bundle lists no files after a checkpoint over uncommitted edits', async () => {
    const bundles = await depthOneBundles({
      'src/parser.ts': 'export const parse = (text: string) => text.trimEnd();\n',
    });
    expect(bundles.planning).toMatch(MISSING_COMMIT);
    expect(bundles.implementation).toMatch(MISSING_COMMIT);
    // The edits are a line of their own, which the implementation bundle's larger section has room for.
    expect(bundles.implementation).toContain(
      '- the checkpoint was recorded over uncommitted edits of src/parser.ts: a checkout without them sees the summary stale until they are committed\n',
    );
  });

  it('13b: a partial clone whose remote is gone lists the changes since a checkpoint it has, never calling the commit missing', async () => {
    const repo = makeRepo();
    git(repo, 'config', 'uploadpack.allowFilter', 'true');
    const lines = Array.from({ length: 40 }, (_, i) => `export const line${i} = ${i};\n`).join('');
    writeFiles(repo, { 'src/table.ts': lines });
    commitAll(repo, 'table');
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Table read.'])).status).toBe(0);
    commitAll(repo, 'context');
    // A renamed and edited file: git compares the two blobs to find the rename.
    git(repo, 'mv', 'src/table.ts', 'src/rows.ts');
    writeFiles(repo, { 'src/rows.ts': `${lines}export const more = 1;\n` });
    commitAll(repo, 'rename');
    // A blobless clone holds every commit but fetches older blobs on demand, from a remote now gone.
    const clone = join(tempDir('partial-'), 'app');
    git(repo, 'clone', '-q', '--filter=blob:none', `file://${repo}`, clone);
    git(clone, 'remote', 'set-url', 'origin', join(tempDir('gone-'), 'nothing'));
    const show = await runIn(clone, ['context', 'show']);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain('STALE');
    expect(show.stdout).not.toContain('not in this clone');
    const bundle = (await runIn(clone, ['context', 'bundle'])).stdout;
    expect(bundle).not.toContain('not in this clone');
    expect(bundle).toContain('- D src/table.ts');
    expect(bundle).toContain('- A src/rows.ts');
  });

  it('14: a checkpoint over uncommitted edits warns, and names them for the teammates who see it stale', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'src/parser.ts': 'export const parse = (text: string) => text.trim();\n' });
    const checkpoint = await runIn(repo, ['context', 'checkpoint', '--summary', 'Trimmed the input.']);
    expect(checkpoint.status).toBe(0);
    expect(checkpoint.stderr).toMatch(
      /warning: the checkpoint was recorded over uncommitted edits of src\/parser\.ts: commit them with the context/u,
    );
    // Only the context is committed; a teammate's clone has no such edit.
    git(repo, 'add', 'data/context');
    git(repo, 'commit', '-q', '-m', 'context only');
    const clone = join(tempDir('teammate-'), 'app');
    git(repo, 'clone', '-q', repo, clone);
    const show = await runIn(clone, ['context', 'show']);
    expect(show.stdout).toContain('STALE');
    expect(show.stdout).toMatch(/note: the checkpoint was recorded over uncommitted edits of src\/parser\.ts/u);
  });

  it('14b: a checkpoint over an uncommitted edit of a path over 300 characters records it clipped at its start', async () => {
    const repo = makeRepo();
    const long = `${'d'.repeat(150)}/${'e'.repeat(160)}.txt`;
    writeFiles(repo, { [long]: 'one\n' });
    commitAll(repo, 'a long path');
    writeFiles(repo, { [long]: 'one\ntwo\n' });
    const checkpoint = await runIn(repo, ['context', 'checkpoint', '--summary', 'Work on the long one.']);
    expect(checkpoint.status).toBe(0);
    const clipped = `...${long.slice(long.length - 297)}`;
    expect(checkpoint.stderr).toContain(`warning: the checkpoint was recorded over uncommitted edits of ${clipped}:`);
    const stored = readJson(join(repo, ...CONTEXT_JSON)) as {
      contexts: Array<{ checkpoint: { uncommitted: string[] } }>;
    };
    expect(stored.contexts[0]!.checkpoint.uncommitted).toEqual([clipped]);
    expect((await runIn(repo, ['context', 'show'])).status).toBe(0);
  });

  it('14c: work that adds new files stays verified once committed with the context; a new file after it makes it stale and is listed', async () => {
    const repo = makeRepo();
    writeFiles(repo, {
      '.gitignore': 'build/\n',
      'src/parser.ts': 'export const parse = (text: string) => text.trim();\n',
      'src/lexer.ts': 'export const lex = (text: string) => text.split(" ");\n',
      'scripts/run.sh': '#!/bin/sh\necho run\n',
      'build/out.js': 'ignored\n',
    });
    chmodSync(join(repo, 'scripts', 'run.sh'), 0o755);
    symlinkSync('lexer.ts', join(repo, 'src', 'tokens.ts'));
    const checkpoint = await runIn(repo, ['context', 'checkpoint', '--summary', 'Lexer added, parser trims.']);
    expect(checkpoint.status).toBe(0);
    expect(checkpoint.stderr).toMatch(
      /warning: the checkpoint was recorded over uncommitted edits of (?=[^:]*src\/parser\.ts)(?=[^:]*src\/lexer\.ts)(?=[^:]*scripts\/run\.sh)(?=[^:]*src\/tokens\.ts)(?![^:]*build)[^:]*: commit them with the context \(new files too: git add -A\)/u,
    );
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'lexer, with the context');
    await expectVerified(repo);
    // An ignored file changes nothing; a new file the work has not committed makes it stale, and is named.
    writeFiles(repo, { 'build/more.js': 'ignored\n' });
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('summary verified');
    writeFiles(repo, { 'src/extra.ts': 'export {};\n' });
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).toContain('STALE');
    expect(show.stdout).toContain('  ? src/extra.ts\n');
    expect((await runIn(repo, ['context', 'bundle'])).stdout).toContain('- ? src/extra.ts\n');
  });

  it('14d: a new file over 16 MiB counts by its size and times, others by their content however many: committing only the work keeps it verified', async () => {
    const repo = makeRepo();
    // A folder of new files git does not ignore, sorting before the work, and a large data file.
    writeFiles(repo, {
      ...Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`.venv/f${String(i).padStart(3, '0')}.txt`, 'x\n'])),
      'src/feature.ts': 'export const retries = 1;\n',
    });
    sizeFile(repo, 'data/big.bin', LARGE);
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Retries added.'])).status).toBe(0);
    // An edit of the work that keeps its size is seen, past 300 other new files.
    writeFiles(repo, { 'src/feature.ts': 'export const retries = 2;\n' });
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('STALE');
    writeFiles(repo, { 'src/feature.ts': 'export const retries = 1;\n' });
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('summary verified');
    // Committing only the work and the context, the large file left as it is, keeps the summary verified.
    git(repo, 'add', 'src/feature.ts', 'data/context');
    git(repo, 'commit', '-q', '-m', 'the work alone');
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('summary verified');
    sizeFile(repo, 'data/big.bin', LARGE + 1);
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('STALE');
  });

  it('14d2: an edit of a new file over 16 MiB that keeps its size is seen: it counts by its size and times', async () => {
    const repo = makeRepo();
    const big = join(repo, 'data', 'big.bin');
    sizeFile(repo, 'data/big.bin', LARGE);
    // Written long ago, so the edit below gives it another write time however coarse the clock.
    utimesSync(big, new Date('2001-01-01T00:00:00Z'), new Date('2001-01-01T00:00:00Z'));
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Data read.'])).status).toBe(0);
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('summary verified');
    // One byte changed in place: the same size.
    const handle = openSync(big, 'r+');
    writeSync(handle, 'b', 1000);
    closeSync(handle);
    expect(statSync(big).size).toBe(LARGE);
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).toContain('STALE');
    expect(show.stdout).toContain('  ? data/big.bin\n');
  });

  it('14d3: a new file over 16 MiB whose times are not older than the read (racily clean) counts as changed at the next read', async () => {
    const repo = makeRepo();
    const big = join(repo, 'data', 'big.bin');
    sizeFile(repo, 'data/big.bin', LARGE);
    // Its write time after the read, as a same-second edit leaves it on a filesystem that keeps whole seconds.
    const later = new Date(Date.now() + 3_600_000);
    utimesSync(big, later, later);
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Data read.'])).status).toBe(0);
    // Nothing changed since, but its times could not vouch that nothing did: stale, and named.
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).toContain('STALE');
    expect(show.stdout).toContain('  ? data/big.bin\n');
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('STALE');
  });

  it('14e: a new file gone between git listing it and reading it (a build’s temporary file) is left out, not a failure; new links are hashed as git records them', async () => {
    const repo = await committedCopy();
    writeFiles(repo, { 'tmp/build.o': 'temporary\n', 'src/kept.ts': 'export {};\n' });
    // A git that removes the temporary file once the new files are listed, the first time it is asked for their blobs.
    const shim = tempDir('git-shim-');
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFiles(shim, {
      git: `#!/bin/sh\nif [ "$1" = hash-object ] && [ -f "${repo}/tmp/build.o" ]; then rm -f "${repo}/tmp/build.o"; fi\nexec "${real}" "$@"\n`,
    });
    chmodSync(join(shim, 'git'), 0o755);
    const shown = await runBinary(['context', 'show'], { cwd: repo, env: { PATH: `${shim}:${process.env['PATH']}` } });
    expect(shown.status).toBe(0);
    expect(shown.stdout).toContain('  ? src/kept.ts\n');
    // New links are hashed as git add records them, all at once: committing them keeps the summary
    // verified (twenty links take the path two hundred would: their targets are hashed in the
    // process, with no git process per link).
    for (let i = 0; i < 20; i += 1) symlinkSync(`target-${i}`, join(repo, `link-${i}`));
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Links made.'])).status).toBe(0);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'links');
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('summary verified');
  });

  it('14f: a checkpoint an older version recorded over new files, a large one and an edited link stays verified until the next checkpoint', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'src/lexer.ts': 'export const lex = (text: string) => text.split(" ");\n' });
    symlinkSync('lexer.ts', join(repo, 'src', 'tokens.ts'));
    commitAll(repo, 'lexer');
    // The uncommitted work the older version recorded its checkpoint over: an edit, a link
    // pointed elsewhere, a new file and a new file over 16 MiB.
    writeFiles(repo, {
      'src/parser.ts': 'export const parse = (text: string) => text.trim();\n',
      'src/extra.ts': 'export {};\n',
    });
    sizeFile(repo, 'data/big.bin', LARGE);
    rmSync(join(repo, 'src', 'tokens.ts'));
    symlinkSync('parser.ts', join(repo, 'src', 'tokens.ts'));
    // The file the build of 2a90deb wrote over that very state (its files hash covers the index
    // alone), its commit and first commit swapped for this repository's.
    const fixture = readFileSync(new URL('./fixtures/checkpointBeforeNewFiles.json', import.meta.url), 'utf8');
    const recorded = fixture
      .replaceAll('2f807162b42b2d2bbab018feac567c3f8841e078', git(repo, 'rev-parse', 'HEAD').trim())
      .replaceAll('fc27abe75de3', git(repo, 'rev-list', '--max-parents=0', 'HEAD').trim().slice(0, 12));
    writeFiles(repo, { 'data/context/planning_context.json': recorded });
    await expectVerified(repo);
    // An edit of a file it counted still makes it stale.
    writeFiles(repo, { 'src/lexer.ts': 'export const lex = (text: string) => text.split(",");\n' });
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('  M src/lexer.ts\n');
    writeFiles(repo, { 'src/lexer.ts': 'export const lex = (text: string) => text.split(" ");\n' });
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('summary verified');
    // The next checkpoint holds this version's hash, and says so: a new file counts again.
    expect((await runIn(repo, ['context', 'checkpoint'])).status).toBe(0);
    const stored = readJson(join(repo, ...CONTEXT_JSON)) as {
      contexts: Array<{ checkpoint: { tracked_files_hash_version?: number } }>;
    };
    expect(stored.contexts[0]!.checkpoint.tracked_files_hash_version).toBe(2);
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('summary verified');
    // An older release that rewrites the file drops the version: its hash still matches.
    delete stored.contexts[0]!.checkpoint.tracked_files_hash_version;
    writeFiles(repo, { 'data/context/planning_context.json': JSON.stringify(stored, null, 2) });
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('summary verified');
    writeFiles(repo, { 'src/more.ts': 'export {};\n' });
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('  ? src/more.ts\n');
  });

  it('15: every cut is counted: the decisions shown, and the open steps left out', async () => {
    const repo = makeRepo();
    const decisions = Array.from({ length: 5 }, (_, i) => [
      '--decision',
      `Decision ${i + 1}: ${'which way to go with this part of the parser, and why it matters here '.repeat(4)}`.slice(
        0,
        300,
      ),
    ]).flat();
    const steps = Array.from({ length: 6 }, (_, i) => ['--step', `Step ${i + 1}`]).flat();
    expect(
      (await runIn(repo, ['context', 'checkpoint', '--summary', 'Parser read.', ...decisions, ...steps])).status,
    ).toBe(0);
    const bundle = (await runIn(repo, ['context', 'bundle'])).stdout;
    const header = /## Decisions \(last (\d) of 5, newest first\)\n/u.exec(bundle);
    expect(header).not.toBeNull();
    const shown = bundle.split('\n').filter((line) => /^- D\d \[open\] Decision/u.test(line)).length;
    expect(Number(header![1])).toBe(shown);
    expect(shown).toBeLessThan(5);
    expect(bundle).toContain('- 3 more open steps not shown');
  });

  it('16: the hint for a branch named --force names it so the command takes it', async () => {
    const repo = makeRepo();
    loadedOf(
      await writeContext(options(repo, 1_000, { branch: '--force' }), { status: 'succeeded', summary: 'Forced.' }),
    );
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).toContain('fact-tracker context move --from=--force --remove-source');
    const moved = await runIn(repo, ['context', 'move', '--from=--force', '--remove-source']);
    expect(moved.status).toBe(0);
    expect((await runIn(repo, ['context', 'show'])).stdout).toContain('Forced.');
  });

  it('17: workstreams that only look alike are one: api and "api " and a decomposed café', async () => {
    const repo = makeRepo();
    for (const workstream of ['api', 'api ', ' api'])
      expect((await runIn(repo, ['context', 'claim', `Read ${workstream}`, '--workstream', workstream])).status).toBe(
        0,
      );
    for (const workstream of ['caf\u00e9', 'cafe\u0301'])
      expect((await runIn(repo, ['context', 'claim', 'Read it', '--workstream', workstream])).status).toBe(0);
    const ids = (
      readJson(join(repo, ...CONTEXT_JSON)) as { contexts: Array<{ key: { workstream_id: string } }> }
    ).contexts.map((context) => context.key.workstream_id);
    expect(ids).toEqual(['api', 'caf\u00e9']);
  });

  it('18: a shallow clone that writes first records no identity; a full clone then walks the history once', async () => {
    const repo = repoWithHistory(3);
    const clone = shallowClone(repo);
    loadedOf(await writeContext(options(clone, 1_000), { status: 'succeeded', summary: 'From a shallow clone.' }));
    const written = readJson(join(clone, ...CONTEXT_JSON)) as { contexts: Array<{ key: { repo: string } }> };
    const boundary = `first-commit:${git(clone, 'rev-parse', 'HEAD').trim().slice(0, 12)}`;
    expect(JSON.stringify(written)).not.toContain(boundary);
    // What an older version wrote there: the boundary commit recorded as the first one.
    const older = {
      schema_version: 1,
      kind: 'planning',
      repository: { id: boundary, source: 'first_commit' },
      contexts: written.contexts.map((context) => ({ ...context, key: { ...context.key, repo: boundary } })),
    };
    const root = `first-commit:${git(repo, 'rev-list', '--max-parents=0', 'HEAD').trim().slice(0, 12)}`;
    for (const file of [written, older]) {
      // The file reaches the full clone (a pull), which writes once and reads: a walk at each
      // command would be two.
      writeFiles(repo, { 'data/context/planning_context.json': JSON.stringify(file, null, 2) });
      const trace = join(tempDir('trace-'), 'git.trace');
      const env = { GIT_TRACE: trace };
      expect((await runBinary(['context', 'claim', 'Read the parser'], { cwd: repo, env })).status).toBe(0);
      const show = await runBinary(['context', 'show'], { cwd: repo, env });
      expect(show.stdout).toContain(`repo ${root} · branch main`);
      expect(show.stdout).toContain('From a shallow clone.');
      expect(show.stdout).not.toMatch(/this checkout computes/u);
      const walks = readFileSync(trace, 'utf8')
        .split('\n')
        .filter((line) => /rev-list.*--max-parents=0/u.test(line));
      expect(walks.length).toBeLessThanOrEqual(1);
    }
  });

  it('19: resolve with nothing to resolve writes nothing', async () => {
    const repo = await committedCopy();
    writeFiles(repo, { 'src/parser.ts': 'export const parse = (text: string) => text.trim();\n' });
    commitAll(repo, 'the summary is stale now');
    const before = stamp(join(repo, ...CONTEXT_JSON));
    const resolved = await runIn(repo, ['context', 'resolve']);
    expect(resolved.stdout).toBe(
      'nothing to resolve: data/context/planning_context.json has no merge conflict markers\n',
    );
    expect(stamp(join(repo, ...CONTEXT_JSON))).toBe(before);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    // Where nothing is stored at all, it makes no folder either.
    const bare = makeRepo();
    expect((await runIn(bare, ['context', 'resolve'])).stdout).toBe(
      'nothing to resolve: data/context/planning_context.json has no merge conflict markers\n',
    );
    expect(existsSync(join(bare, 'data'))).toBe(false);
  });

  it('20: the bundle carries this machine’s tool sessions; no committed file does', async () => {
    const repo = makeRepo();
    const sessions = { codex: { id: 'sess-4242', localPath: '/home/me/.codex' } };
    loadedOf(await writeContext(options(repo, 1_000), { status: 'succeeded', summary: 'Parser read.', sessions }));
    const loaded = loadedOf(await loadContext(options(repo, 2_000)));
    for (const kind of ['planning', 'implementation'] as const)
      expect(buildContextBundle(loaded, { kind }).text).toContain('codex sess-4242');
    expect((await runIn(repo, ['context', 'bundle'])).stdout).toContain('codex sess-4242');
    for (const file of [CONTEXT_JSON, DASHBOARD])
      expect(readFileSync(join(repo, ...file), 'utf8')).not.toContain('sess-4242');
    writeFileSync(join(repo, 'README.md'), 'x\n');
    git(repo, 'add', '-A');
    expect(git(repo, 'diff', '--cached', '--name-only')).not.toContain('sessions.local.json');
  });
});

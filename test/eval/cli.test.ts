/**
 * `npm run eval` as a user meets it: `--help` prints the usage, a wrong option and a history
 * that cannot be replayed each end the run with one line of why and a status, never a stack trace.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../cli/runCli.js';
import { bundledFixture } from '../fixtures/bundled.js';
import { tempDir } from '../tempDirs.js';

/**
 * eval/run.ts bundled once for the file (as `npm run eval`'s tsx compiles it, with esbuild), to
 * be run by node rather than through tsx's loader, which cost about 0.8 s of CPU a process to
 * start. It finds its hand-written histories from its own folder: given one beside a copy of the
 * first of the seven, a whole run takes under a second of CPU where the seven took four. What
 * these tests check (options, exits, the notes of a real-world folder) is said before the tables
 * or beside them, whatever the hand-written histories hold; the tables of the seven are
 * tables.test.ts's.
 */
const evalScript = (): string => {
  const home = join(tempDir('eval-home-'), 'eval');
  mkdirSync(join(home, 'histories'), { recursive: true });
  copyFileSync(join(ROOT, 'eval', 'histories', 'cli-tool.jsonl'), join(home, 'histories', 'cli-tool.jsonl'));
  return bundledFixture(join(ROOT, 'eval', 'run.ts'), home);
};
let script: string | undefined;

/** `npm run eval -- ...args`, run by node from the bundle of `evalScript`. */
const evaluate = (...args: ReadonlyArray<string | { readonly timeout: number }>) =>
  spawnSync(process.execPath, [(script ??= evalScript()), ...args.filter((arg) => typeof arg === 'string')], {
    cwd: ROOT,
    encoding: 'utf8',
    ...args.find((arg) => typeof arg !== 'string'),
  });

describe('npm run eval, on bad input', () => {
  it('--help prints the usage and every option', () => {
    const run = evaluate('--help');
    expect(run.status).toBe(0);
    for (const option of [
      '--fit',
      '--json',
      '--json-file FILE',
      '--misses',
      '--no-ablations',
      '--realworld DIR',
      '--layout LAYOUT',
    ])
      expect(run.stdout).toContain(option);
  });

  it('an unknown option exits 2 with the usage and no stack trace', () => {
    const run = evaluate('--bogus');
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^npm run eval: Unknown option '--bogus'/u);
    expect(run.stderr).toContain('Usage: npm run eval');
    expect(run.stderr).not.toMatch(/\n\s+at /u);
  });

  it('a layout that is none exits 2 naming it, with the usage and no stack trace', () => {
    const run = evaluate('--layout', 'wide');
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^npm run eval: --layout is lines or grouped, not "wide"\n/u);
    expect(run.stderr).toContain('Usage: npm run eval');
    expect(run.stderr).not.toMatch(/\n\s+at /u);
  });

  it('a --realworld folder that is absent exits 2 naming it, before any history is replayed', () => {
    const absent = join(tempDir('eval-absent-'), 'realwrold');
    // Bounded: taken as absent data, the run would go on to the whole evaluation of the hand-written histories.
    const run = evaluate({ timeout: 30_000 }, '--realworld', absent);
    expect(run.status).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe(`npm run eval: --realworld ${absent} is absent`);
    expect(run.stderr).toContain('Usage: npm run eval');
    expect(run.stderr).not.toContain('hand-written');
    expect(run.stderr).not.toMatch(/\n\s+at /u);
  });

  it('a --realworld that holds neither histories/ nor scale/ exits 2 naming it, before any history is replayed', () => {
    const empty = tempDir('eval-empty-');
    const histories = join(tempDir('eval-one-level-'), 'histories');
    mkdirSync(histories);
    writeFileSync(join(histories, 'jq.jsonl'), '');
    const file = join(tempDir('eval-file-'), 'realworld');
    writeFileSync(file, '');
    // A folder one level off (its histories/ itself) or a file: taken as data, every real history was skipped unsaid.
    for (const dir of [empty, histories, file]) {
      const run = evaluate({ timeout: 30_000 }, '--realworld', dir);
      expect(run.status).toBe(2);
      expect(run.stderr.split('\n')[0]).toBe(`npm run eval: --realworld ${dir} holds neither histories/ nor scale/`);
      expect(run.stderr).toContain('Usage: npm run eval');
      expect(run.stderr).not.toContain('hand-written');
      expect(run.stderr).not.toMatch(/\n\s+at /u);
    }
  });

  it('a --json-file that cannot be written exits 2 naming it, before any history is replayed', () => {
    const dir = tempDir('eval-json-');
    // The document is written at the end: found then, a full run of minutes was lost.
    for (const [file, why] of [
      [join(dir, 'absent', 'eval.json'), `there is no folder ${join(dir, 'absent')}`],
      [dir, 'it is a folder'],
      // Taken as files whose folder is there, these failed to be written after the whole run, with status 1.
      ['', 'it names no file'],
      [`${join(dir, 'eval')}/`, 'it names no file'],
    ] as const) {
      const run = evaluate({ timeout: 30_000 }, '--json-file', file);
      expect(run.status).toBe(2);
      expect(run.stderr.split('\n')[0]).toBe(`npm run eval: cannot write --json-file ${file}: ${why}`);
      expect(run.stderr).toContain('Usage: npm run eval');
      expect(run.stderr).not.toContain('hand-written');
      expect(run.stderr).not.toMatch(/\n\s+at /u);
    }
  });

  it('a real history that cannot be replayed exits 1 naming its folder and line, with no stack trace', () => {
    const realworld = tempDir('eval-bad-');
    mkdirSync(join(realworld, 'histories'));
    writeFileSync(join(realworld, 'histories', 'broken.jsonl'), '{"type":"nonsense"}\n');
    const run = evaluate('--realworld', realworld);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`cannot read the histories in ${join(realworld, 'histories')}: broken: line 1:`);
    expect(run.stderr).not.toMatch(/\n\s+at /u);
  });
});

/** A labeled history of two tasks, the second asking for the file the first changed. */
const TINY_HISTORY = [
  { type: 'prompt', taskId: '1', at: '2026-03-09T13:30:00Z', taskPrompt: 'Add the parser' },
  {
    type: 'dispatch',
    role: 'implementer',
    taskId: '1',
    at: '2026-03-09T13:40:00Z',
    result: { task_id: '1', status: 'completed', summary: 'Added the parser', files_changed: ['src/parser.ts'] },
  },
  {
    type: 'prompt',
    taskId: '2',
    at: '2026-03-09T14:30:00Z',
    taskPrompt: 'Fix the parser',
    expect: [{ subject: 'src/parser.ts', relation: 'modified_by', object: 'task:1' }],
  },
]
  .map((event) => JSON.stringify(event))
  .join('\n');

describe('npm run eval, on a real-world folder with one group', () => {
  /** A real-world folder holding `files` (each path under it, a name ending in `/` an empty folder). */
  const realworldWith = (...files: string[]): string => {
    const dir = tempDir('eval-part-');
    for (const file of files) {
      mkdirSync(join(dir, file.endsWith('/') ? file : join(file, '..')), { recursive: true });
      if (!file.endsWith('/')) writeFileSync(join(dir, file), TINY_HISTORY);
    }
    return dir;
  };

  /**
   * The notes `npm run eval -- ...args` says on stderr before any history is replayed: the run
   * is stopped once it says it has read the long sessions, as what follows (every table of the
   * hand-written histories, some seconds of CPU) is the other tests' to check.
   */
  const earlyNotes = (...args: string[]): Promise<string[]> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [(script ??= evalScript()), ...args], { cwd: ROOT });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        if (/ s: read \d+ long sessions\n/u.test(stderr)) child.kill();
      });
      child.on('error', reject);
      child.on('close', () => resolve(stderr.split('\n').filter((line) => line.startsWith('Note: '))));
    });

  it('says on stderr, before the tables and in the JSON document which group it skipped and why, and exits 0', () => {
    // Skipped unsaid, a copy with one group read as a measure of both.
    const dir = realworldWith('histories/tiny.jsonl');
    const file = join(tempDir('eval-notes-'), 'eval.json');
    const run = evaluate('--realworld', dir, '--no-ablations', '--json-file', file);
    expect(run.status).toBe(0);
    const note = `${join(dir, 'scale')} is absent: the long sessions are skipped.`;
    expect(run.stderr.split('\n').filter((line) => line.startsWith('Note: '))).toEqual([`Note: ${note}`]);
    expect(run.stderr).toContain('and 1 real histories');
    expect(run.stdout.split('\n')[0]).toBe(`Note: ${note}`);
    expect((JSON.parse(readFileSync(file, 'utf8')) as { notes: string[] }).notes).toEqual([note]);
  });

  it('says so for either group, absent or holding no history', async () => {
    for (const [dir, group, why] of [
      [realworldWith('scale/tiny-2.jsonl'), 'histories', 'is absent: the real histories'],
      [realworldWith('histories/tiny.jsonl', 'scale/'), 'scale', 'holds no .jsonl file: the long sessions'],
      [realworldWith('scale/tiny-2.jsonl', 'histories/'), 'histories', 'holds no .jsonl file: the real histories'],
    ] as const)
      expect(await earlyNotes('--realworld', dir, '--no-ablations')).toEqual([
        `Note: ${join(dir, group)} ${why} are skipped.`,
      ]);
  });
});

describe("the evaluation's other scripts, on bad input", () => {
  /** `npx tsx eval/NAME.ts ...args` bundled and run as `evaluate` runs eval/run.ts; bounded, as a run that goes on replays every history. */
  const script = (name: string, ...args: string[]) =>
    spawnSync(process.execPath, [bundledFixture(join(ROOT, 'eval', `${name}.ts`)), ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    });

  it('eval/loop.ts: an unknown option exits 2 with one line and the usage, no stack trace', () => {
    const run = script('loop', '--bogus', 'shipped');
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^eval\/loop\.ts: Unknown option '--bogus'/u);
    expect(run.stderr).toContain('Usage: npx tsx eval/loop.ts');
    expect(run.stderr).not.toMatch(/\n\s+at /u);
  });

  it('eval/loop.ts: an unknown variant exits 2 naming it before any history is replayed', () => {
    const run = script('loop', 'shipped', 'shiped');
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^eval\/loop\.ts: unknown variant "shiped": one of shipped, /u);
    expect(run.stderr).not.toContain('replayed');
    expect(run.stderr).not.toMatch(/\n\s+at /u);
  });

  it('eval/rerank.ts: an unknown option exits 2 with one line and the usage, no stack trace', () => {
    const run = script('rerank', '--bogus');
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^eval\/rerank\.ts: Unknown option '--bogus'/u);
    expect(run.stderr).not.toMatch(/\n\s+at /u);
  });

  it('eval/checkLabels.ts: an option, or a file that cannot be read, exits 2 with one line, no stack trace', () => {
    const option = script('checkLabels', '--bogus');
    expect(option.status).toBe(2);
    expect(option.stderr).toMatch(/^eval\/checkLabels\.ts: unknown option --bogus/u);
    const missing = script('checkLabels', 'no-such-history.jsonl');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^eval\/checkLabels\.ts: cannot read no-such-history\.jsonl: /u);
    for (const run of [option, missing]) expect(run.stderr).not.toMatch(/\n\s+at /u);
  });
});

/**
 * The shared context as a team works it (issue 53, the four that lose or leak context): a
 * workstream edited by hand past a cap or with a typo, a context folder git ignores, a
 * `.gitignore` of the team's own in the context folder, and a committed link to a device.
 * Real git repositories, real files, the CLI; each `it` names its item.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ContextOptions, loadContext, writeContext } from '../../src/context/node/index.js';
import { runIn } from './cliRun.js';
import { errorOf, loadedOf } from './results.js';
import { commitAll, git, makeRepo, readJson, tempDir, writeFiles } from './repo.js';

const CONTEXT_DIR = ['data', 'context'];
const CONTEXT_JSON = [...CONTEXT_DIR, 'planning_context.json'];
/** Git and processes under a shared machine's load: assertions count outcomes, never time. */
const SLOW = { timeout: 120_000 } as const;

const options = (cwd: string, workstreamId: string, now = 1_000): ContextOptions => ({
  kind: 'planning',
  cwd,
  enabled: true,
  workstreamId,
  now: () => now,
});

interface RawContext {
  readonly key: { readonly workstream_id: string };
  open_decisions: Array<{ id: string; text: string; status: string }>;
}

const rawFile = (repo: string): { contexts: RawContext[] } =>
  readJson(join(repo, ...CONTEXT_JSON)) as { contexts: RawContext[] };

const rawContext = (repo: string, workstream: string): RawContext | undefined =>
  rawFile(repo).contexts.find((context) => context.key.workstream_id === workstream);

describe.concurrent('issue 53: what loses or leaks context', SLOW, () => {
  it('1: a workstream past a cap is kept apart and untouched; the others are served and written; a trailing comma is read', async () => {
    const repo = makeRepo();
    loadedOf(await writeContext(options(repo, 'api'), { status: 'succeeded', summary: 'API: routes first.' }));
    loadedOf(await writeContext(options(repo, 'web'), { status: 'succeeded', summary: 'Web: forms first.' }));
    // A hand edit gives `web` 101 decisions, one past the cap.
    const file = rawFile(repo);
    const web = file.contexts.find((context) => context.key.workstream_id === 'web')!;
    web.open_decisions = Array.from({ length: 101 }, (_, i) => ({ id: `D${i + 1}`, text: `q${i}`, status: 'open' }));
    writeFileSync(join(repo, ...CONTEXT_JSON), JSON.stringify(file, null, 2));

    const api = loadedOf(await loadContext(options(repo, 'api')));
    expect(api.context.workingSummary.text).toBe('API: routes first.');
    expect(api.warnings.join('\n')).toMatch(/workstream web .*kept apart.*open_decisions/u);
    // Asked for by name, the broken workstream is refused in one line, naming the field.
    expect(errorOf(await loadContext(options(repo, 'web'))).message).toMatch(/workstream web .*open_decisions/u);
    // Two writes of another workstream: the broken one stays exactly as it was, nothing is moved aside.
    for (const now of [2_000, 3_000])
      loadedOf(await writeContext(options(repo, 'api', now), { status: 'succeeded', summary: `API at ${now}.` }));
    expect(rawContext(repo, 'web')).toEqual(web);
    expect(rawContext(repo, 'api')).toBeDefined();
    expect(readdirSync(join(repo, ...CONTEXT_DIR)).filter((name) => name.endsWith('.corrupt'))).toEqual([]);
    // Writing the broken workstream itself is refused: it is fixed by hand, never replaced.
    expect(
      errorOf(await writeContext(options(repo, 'web', 4_000), { status: 'succeeded', summary: 'Web again.' })).message,
    ).toMatch(/workstream web .*fix it by hand/u);

    // A trailing comma from a hand edit: read as meant, said, and written back clean.
    const text = readFileSync(join(repo, ...CONTEXT_JSON), 'utf8');
    writeFileSync(join(repo, ...CONTEXT_JSON), text.replace(/"stale": (true|false)\n/u, '"stale": $1,\n'));
    const typo = loadedOf(await loadContext(options(repo, 'api')));
    expect(typo.context.workingSummary.text).toBe('API at 3000.');
    expect(typo.warnings.join('\n')).toMatch(/trailing comma at line \d+/u);
    loadedOf(await writeContext(options(repo, 'api', 5_000), { status: 'succeeded', summary: 'API at 5000.' }));
    expect(rawContext(repo, 'web')).toEqual(web);
    expect(readdirSync(join(repo, ...CONTEXT_DIR)).filter((name) => name.endsWith('.corrupt'))).toEqual([]);
  });

  it('2: a context folder that git ignores is said on every write, with the fix', async () => {
    const repo = makeRepo();
    writeFiles(repo, { '.gitignore': 'node_modules/\ndata/\n' });
    commitAll(repo, 'ignore data');
    for (const argv of [
      ['context', 'checkpoint', '--summary', 'Parser read.'],
      ['context', 'claim', 'Looked at the parser'],
    ]) {
      const ran = await runIn(repo, argv);
      expect(ran.status).toBe(0);
      expect(ran.stderr).toMatch(
        /warning: data\/context\/planning_context\.json is ignored by git \(\.gitignore:2: data\/\).*never reaches a teammate.*data\/\*.*!data\/context\//u,
      );
    }
  });

  it('3: tool sessions are never staged, even when the context folder has a .gitignore of its own', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'data/context/.gitignore': '# ours\n*.tmp\n' });
    commitAll(repo, 'our own ignore file');
    loadedOf(
      await writeContext(options(repo, 'default'), {
        status: 'succeeded',
        summary: 'Parser read.',
        sessions: { codex: { id: 'sess-42', localPath: '/home/me/.codex' } },
      }),
    );
    git(repo, 'add', '-A');
    expect(git(repo, 'diff', '--cached', '--name-only')).not.toMatch(/sessions\.local\.json/u);
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).toMatch(/tool sessions: codex sess-42 .*git ignores it/u);
  });

  it('4: bundle --facts reads only regular files: a committed link to /dev/zero and a FIFO are refused at once', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'data/memory/.keep': '' });
    symlinkSync('/dev/zero', join(repo, 'data', 'memory', 'history.jsonl'));
    commitAll(repo, 'a link to a device');
    const fifo = join(tempDir('fifo-'), 'history.jsonl');
    execFileSync('mkfifo', [fifo]);
    for (const [facts, said] of [
      [
        join(repo, 'data', 'memory', 'history.jsonl'),
        /data\/memory\/history\.jsonl is a symbolic link to \/dev\/zero, outside the repository/u,
      ],
      [fifo, /history\.jsonl: is a FIFO \(named pipe\), not a regular file/u],
    ] as const) {
      const ran = await runIn(repo, ['context', 'bundle', '--facts', facts]);
      expect(ran.status).toBe(1);
      expect(ran.stdout).toBe('');
      expect(ran.stderr).toMatch(said);
    }
    expect(existsSync(join(repo, ...CONTEXT_JSON))).toBe(false);
  });

  it('8: evidence past the end of a file a teammate shrank is flagged in a verified bundle', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'src/lexer.ts': Array.from({ length: 10 }, (_, i) => `// line ${i + 1}`).join('\n') });
    commitAll(repo, 'lexer');
    expect(
      (await runIn(repo, ['context', 'claim', 'Implemented the lexer', '--file', 'src/lexer.ts:L5-L9'])).status,
    ).toBe(0);
    writeFiles(repo, { 'src/lexer.ts': '// one\n// two\n// three\n' });
    commitAll(repo, 'a teammate shrank the lexer');
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'Lexer shrunk.'])).status).toBe(0);
    const bundle = await runIn(repo, ['context', 'bundle']);
    expect(bundle.stdout).toContain('summary verified');
    expect(bundle.stdout).toMatch(/- PAST END evidence src\/lexer\.ts:L5-L9 \(3 lines\)/u);
    expect(bundle.stdout).not.toMatch(/- evidence src\/lexer\.ts:L5-L9/u);
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).toMatch(
      /PAST END src\/lexer\.ts:L5-L9: the file has 3 lines \(cited by: Implemented the lexer\)/u,
    );
  });

  it('10: the tool’s own rules cannot be unpinned; a user’s rule is marked as theirs, with who pinned it', async () => {
    const repo = makeRepo();
    git(repo, 'config', 'user.name', 'Alice Doe');
    git(repo, 'config', 'user.email', 'alice@example.com');
    const unpin = await runIn(repo, [
      'context',
      'checkpoint',
      '--unpin',
      'Never put secrets or credentials in context files, claims or prompts.',
    ]);
    expect(unpin.status).toBe(1);
    expect(unpin.stderr).toMatch(/comes with the tool and cannot be unpinned/u);
    expect((await runIn(repo, ['context', 'checkpoint', '--pin', 'curl x.sh | sh'])).status).toBe(0);
    const bundle = await runIn(repo, ['context', 'bundle']);
    expect(bundle.stdout).toContain('- [pinned by Alice Doe] curl x.sh | sh');
    expect(bundle.stdout).toContain('- Never put secrets or credentials in context files, claims or prompts.');
    const show = await runIn(repo, ['context', 'show']);
    expect(show.stdout).toContain('  curl x.sh | sh (pinned by Alice Doe <alice@example.com>)');
    // A hand edit that removes a rule of the tool's does not remove it from what a session gets.
    const raw = readJson(join(repo, ...CONTEXT_JSON)) as { contexts: Array<{ pinned_rules: string[] }> };
    raw.contexts[0]!.pinned_rules = raw.contexts[0]!.pinned_rules.filter((rule) => !rule.startsWith('Never'));
    writeFileSync(join(repo, ...CONTEXT_JSON), JSON.stringify(raw, null, 2));
    expect((await runIn(repo, ['context', 'bundle'])).stdout).toContain(
      '- Never put secrets or credentials in context files, claims or prompts.',
    );
  });

  it('11: a lock folder with files in it (committed by mistake) is set aside and said, not waited on', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'data/context/planning_context.json.lock/owner': 'a teammate committed this\n' });
    commitAll(repo, 'a lock folder, by mistake');
    const ran = await runIn(repo, ['context', 'claim', 'Looked at the parser']);
    expect(ran.status).toBe(0);
    expect(ran.stderr).toMatch(
      /warning: data\/context\/planning_context\.json\.lock held files, so no writer made it .*set aside to data\/context\/planning_context\.json\.lock\..*\.stale/u,
    );
    expect(rawFile(repo).contexts).toHaveLength(1);
  });
});

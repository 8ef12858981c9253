/**
 * `fact-tracker sessions export|delete` on a folder store: a log's bytes exported as they are,
 * and the files a session whose log is gone left beside it deleted. The binary runs where its
 * standard output, a pipe between two runs or another user matters; the other cases run the
 * same built code in this process (`runCliHere`).
 */
import { execFile } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { readSessionText } from '../../src/cli/commands/storedSession.js';
import { memorySessionStore } from '../../src/live/session/memoryStore.js';
import type { SessionStore, StoredLine } from '../../src/live/session/store.js';
import { MAIN, projectWithSessions, ROOT, runCli, runCliHere } from './runCli.js';

/** Runs `fact-tracker ...args` in `cwd` with its standard output as bytes. */
const runForBytes = (args: ReadonlyArray<string>, cwd: string): Promise<{ status: number; stdout: Buffer }> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { cwd, env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' }, encoding: 'buffer', maxBuffer: 1 << 26 },
      (error, stdout) => {
        const status = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ status, stdout });
      },
    ).stdin?.end();
  });

/** Runs `fact-tracker ...first | fact-tracker ...second` in `cwd` through a shell's pipe: the second's status and output. */
const runPipe = (
  first: ReadonlyArray<string>,
  second: ReadonlyArray<string>,
  cwd: string,
): Promise<{ status: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const words = (args: ReadonlyArray<string>): string => args.map((arg) => `'${arg}'`).join(' ');
    execFile(
      'sh',
      ['-c', `"$0" "$1" ${words(first)} | "$0" "$1" ${words(second)}`, process.execPath, MAIN],
      { cwd, env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' }, encoding: 'utf8', maxBuffer: 1 << 26 },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ status, stdout, stderr });
      },
    ).stdin?.end();
  });

describe('fact-tracker sessions', () => {
  it('exports a log holding bytes that are not UTF-8 byte for byte, as replay reads the file', async () => {
    const { project, sessions } = projectWithSessions('export-bytes-');
    const events = readFileSync(join(ROOT, 'examples', 'web-api-session.jsonl'), 'utf8')
      .split('\n')
      .slice(0, 6);
    // A lone continuation byte, a cut sequence and 0xFF inside a prompt's text, written by another tool.
    const broken = Buffer.concat([
      Buffer.from('{"type":"prompt","taskId":"9","taskPrompt":"caf'),
      Buffer.from([0xc3, 0x20, 0x80, 0xff]),
      Buffer.from('"}\n'),
    ]);
    const log = Buffer.concat([
      Buffer.from(`${events.slice(0, 3).join('\n')}\n`),
      broken,
      Buffer.from(`${events[3]!}\n`),
    ]);
    writeFileSync(join(sessions, 'raw.jsonl'), log);
    const exported = await runForBytes(['sessions', 'export', 'raw'], project);
    expect(exported.status).toBe(0);
    expect(exported.stdout.equals(log)).toBe(true);
  });

  it('reads a session log as a history whatever its first line holds, exported and piped to replay - too, and says in one line that a store folder is a file', async () => {
    const { project, sessions } = projectWithSessions('session-reads-');
    const events = readFileSync(join(ROOT, 'examples', 'web-api-session.jsonl'), 'utf8')
      .split('\n')
      .slice(0, 4);
    writeFileSync(join(sessions, 'odd.jsonl'), `${['{"note":"written by another tool"}', ...events].join('\n')}\n`);
    const place = { cwd: project, env: {} };
    const replayed = await runCliHere(['replay', '--session', 'odd', '--json'], '', place);
    expect(replayed.status).toBe(2);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ errors: [{ line: 1, code: 'missing_field' }] });
    // Exported and piped, the log reads as it does in the store: its first line is no saved state's.
    for (const note of ['{"note":"written by another tool"}', '{"format":"hand note"}']) {
      writeFileSync(join(sessions, 'odd.jsonl'), `${[note, ...events].join('\n')}\n`);
      const [piped, fromSession] = await Promise.all([
        runPipe(['sessions', 'export', 'odd'], ['replay', '-', '--json'], project),
        runCliHere(['replay', '--session', 'odd', '--json'], '', place),
      ]);
      expect(piped).toEqual(fromSession);
    }
    writeFileSync(join(project, 'afile'), 'hi\n');
    for (const [command, ...more] of [['facts'], ['replay'], ['explain', '--line', '1']])
      expect(await runCliHere([command!, ...more, '--session', 's1', '--store', 'afile'], '', place)).toEqual({
        status: 1,
        stdout: '',
        stderr: expect.stringMatching(
          new RegExp(
            `^fact-tracker ${command}: io: cannot read \\S+afile/s1\\.jsonl: a part of the path is not a directory\\n$`,
            'u',
          ),
        ) as string,
      });
  });

  it('reads a log with a torn last line up to its last complete line with --session, as export piped to replay - does, and says the torn line was left out', async () => {
    const { project, sessions } = projectWithSessions('torn-last-line-');
    const events = readFileSync(join(ROOT, 'examples', 'web-api-session.jsonl'), 'utf8')
      .split('\n')
      .slice(0, 4);
    // A writer killed mid-append: the bytes of a prompt's line, and no line break after them.
    writeFileSync(join(sessions, 'torn.jsonl'), `${events.join('\n')}\n{"type":"prompt","taskId":"9","taskPr`);
    const place = { cwd: project, env: {} };
    const notice =
      "fact-tracker: the session log's torn last line (line 5, no line break after it: a writer killed mid-append) was left out\n";
    const [piped, replayed] = await Promise.all([
      runPipe(['sessions', 'export', 'torn'], ['replay', '-', '--json'], project),
      runCliHere(['replay', '--session', 'torn', '--json'], '', place),
    ]);
    expect(piped.status).toBe(0);
    expect(replayed).toEqual({ status: 0, stdout: piped.stdout, stderr: notice });
    const facts = await runCliHere(['facts', '--session', 'torn', '--json'], '', place);
    expect([facts.status, JSON.parse(facts.stdout).errors, facts.stderr]).toEqual([0, [], notice]);
    // Explained up to a line before it, the torn line is never read, so nothing is said of it.
    const explained = await runCliHere(['explain', '--session', 'torn', '--line', '4'], '', place);
    expect([explained.status, explained.stderr]).toEqual([0, '']);
  });

  it("deletes the files a session whose log is gone left beside it, names them, and leaves another session's", async () => {
    const { project, sessions } = projectWithSessions('delete-leftovers-');
    const mine = ['x.jsonl.snapshot', 'x.jsonl.snapshot.previous', 'x.jsonl.hooks', 'x.jsonl.set-aside'];
    // Sessions x.jsonl and x.jsonl.snapshot: their files start with x's log name, and are theirs.
    const others = [
      'x.jsonl.jsonl',
      'x.jsonl.jsonl.snapshot',
      'x.jsonl.snapshot.jsonl',
      'x.jsonl.snapshot.jsonl.hooks',
    ];
    for (const name of [...mine, ...others]) writeFileSync(join(sessions, name), '{}\n');
    const place = { cwd: project, env: {} };
    expect(await runCliHere(['sessions', 'delete', 'x'], '', place)).toEqual({
      status: 0,
      stdout: `deleted the files session x left beside its log, which was gone, from ${sessions}: ${[...mine].sort().join(', ')}\n`,
      stderr: '',
    });
    expect(readdirSync(sessions).sort()).toEqual([...others].sort());
    // Nothing of x is left: a second delete finds no session.
    const again = await runCliHere(['sessions', 'delete', 'x'], '', place);
    expect([again.status, again.stdout, again.stderr]).toEqual([
      1,
      '',
      `fact-tracker sessions: unknown_session: there is no session x in ${sessions}\n`,
    ]);
    rmSync(join(sessions, 'x.jsonl.jsonl'));
    expect((await runCliHere(['sessions', 'delete', 'x.jsonl'], '', place)).stdout).toBe(
      `deleted the files session x.jsonl left beside its log, which was gone, from ${sessions}: x.jsonl.jsonl.snapshot\n`,
    );
  });

  it('says a session it cannot look at cannot be deleted, never that there is no such session, and deletes nothing', async () => {
    const { project, sessions } = projectWithSessions('delete-unseen-');
    writeFileSync(join(sessions, 'web.jsonl'), '{}\n');
    for (const dir of [project, join(project, '.fact-tracker')]) chmodSync(dir, 0o755);
    // A folder this process may not search; root searches any: run as nobody, whom the mode binds.
    chmodSync(sessions, 0o000);
    const place = { cwd: project, env: {}, ...(process.getuid?.() === 0 ? { uid: 65534 } : {}) };
    const denied = await runCli(['sessions', 'delete', 'web'], '', place);
    chmodSync(sessions, 0o755);
    expect([denied.status, denied.stdout, denied.stderr]).toEqual([
      1,
      '',
      `fact-tracker sessions: io: cannot delete session web in ${sessions}: permission denied\n`,
    ]);
    expect(readdirSync(sessions)).toContain('web.jsonl');
    // A file where the sessions folder belongs: said as `export` says it.
    rmSync(sessions, { recursive: true });
    writeFileSync(sessions, 'not a folder\n');
    const blocked = await runCliHere(['sessions', 'delete', 'web'], '', { cwd: project, env: {} });
    expect([blocked.status, blocked.stderr]).toEqual([
      1,
      `fact-tracker sessions: io: cannot delete session web in ${sessions}: a part of the path is not a directory\n`,
    ]);
  });

  it('says a session whose lock it cannot take was not deleted, naming it, and deletes nothing', async () => {
    const { project, sessions } = projectWithSessions('delete-unlocked-');
    writeFileSync(join(sessions, 'web.jsonl'), '{}\n');
    writeFileSync(join(sessions, 'web.jsonl.snapshot'), '{}\n');
    // A file where the lock folder belongs: no writer's lock, named at once rather than waited on.
    writeFileSync(join(sessions, 'web.jsonl.lock'), '');
    const run = await runCliHere(['sessions', 'delete', 'web'], '', { cwd: project, env: {} });
    expect([run.status, run.stdout, run.stderr]).toEqual([
      1,
      '',
      `fact-tracker sessions: io: session web in ${sessions} was not deleted: ${join(sessions, 'web.jsonl')}.lock is a file, not a lock (a writer's lock is a folder it makes and removes): remove it and try again\n`,
    ]);
    expect(readdirSync(sessions).sort()).toEqual(['web.jsonl', 'web.jsonl.lock', 'web.jsonl.snapshot']);
  });

  it("exports a database's session whose rows were edited by hand to number lines past what one text holds, blank lines in bounded pieces, numbered as the store numbers them", async () => {
    // A line moved to 600,000,000 and the session's count set to the most a log holds, by SQL:
    // the gaps are more blank lines than the longest text Node makes (536,870,888 characters).
    const lines: StoredLine[] = [
      { line: 1, text: '{"type":"prompt","taskId":"1","taskPrompt":"a"}' },
      { line: 3, text: '{"type":"prompt","taskId":"2","taskPrompt":"b"}' },
      { line: 600_000_000, text: '{"type":"prompt","taskId":"3","taskPrompt":"c"}' },
    ];
    const position = 2 ** 31 - 1;
    const store: SessionStore = {
      ...memorySessionStore(),
      location: 'postgres://db/memory',
      read: () => Promise.resolve(E.right({ exists: true, restarted: false, lines, position, torn: false })),
    };
    const text = await readSessionText(store, undefined, 'edited');
    if (E.isLeft(text)) throw new Error(text.left);
    const found: StoredLine[] = [];
    let line = 1;
    let longest = 0;
    for (const piece of text.right) {
      if (typeof piece !== 'string') throw new Error('a database session is exported as text');
      longest = Math.max(longest, piece.length);
      // A piece holding no line of the log (each starts with `{`) is blank lines only.
      if (!piece.includes('{')) line += piece.length;
      else
        for (const part of piece.slice(0, -1).split('\n')) {
          if (part !== '') found.push({ line, text: part });
          line += 1;
        }
    }
    expect(found).toEqual(lines);
    expect(line - 1).toBe(position);
    expect(longest).toBeLessThanOrEqual(1 << 20);
  });
});

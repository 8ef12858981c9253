/**
 * `facts` on a broken state, `explain`, `schema`, `--help`, `--version`, the sessions of a
 * store and a standard output that cannot be written. What needs a process (its streams, a
 * reader that goes, another user) runs the binary; the other cases run the same built code in
 * this process (`runCliHere`), and the finer ones through the router in run.test.ts.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, type ExpectStatic, it } from 'vitest';
import {
  type CliRun,
  historyRounds,
  MAIN,
  projectWithSessions,
  ROOT,
  runCli,
  runCliCut,
  runCliHere,
} from './runCli.js';
import { findSecret } from '../../src/base/secrets.js';
import { DEFAULT_MAX_FACTS } from '../../src/index.js';
import { tempDir } from '../tempDirs.js';

const EXAMPLE = 'examples/web-api-session.jsonl';
const workDir = tempDir('cli-');

/** A one-line stderr message, nothing on stdout and exit 1: how every failure must look. */

const expectOneLineFailure = (expect: ExpectStatic, run: CliRun, pattern: RegExp): void => {
  expect(run.status).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/^fact-tracker[^\n]*\n$/u);
  expect(run.stderr).toMatch(pattern);
};

/** Writes `events` into `file` as a history, one JSON line each. */
const writeHistory = (file: string, events: ReadonlyArray<object>): void =>
  writeFileSync(file, events.map((event) => `${JSON.stringify(event)}\n`).join(''));

describe.concurrent('fact-tracker commands', () => {
  it('refuses a truncated state file with one line and exit 1', async ({ expect }) => {
    const state = {
      format: 'session-fact-tracker/state',
      version: 1,
      maxValidFacts: 500,
      pairs: [],
    };
    const truncated = join(workDir, 'truncated.json');
    writeFileSync(truncated, JSON.stringify(state, null, 2).slice(0, 60));
    expectOneLineFailure(
      expect,
      await runCliHere(['facts', truncated]),
      /truncated\.json: not a readable saved state: the JSON is truncated or corrupt/u,
    );
  });

  it('refuses a state that gives a key twice in one object, whose first JSON.parse would drop unsaid (every pair lost)', async ({
    expect,
  }) => {
    const saved = await runCliHere(['replay', EXAMPLE, '--save', join(workDir, 'twice-source.json')]);
    expect(saved.status).toBe(0);
    const state = readFileSync(join(workDir, 'twice-source.json'), 'utf8').trimEnd();
    // Edited by hand: an empty list given after the real one, as a merge of two files leaves it.
    const twice = join(workDir, 'twice.json');
    writeFileSync(twice, `${state.slice(0, -1)},"pairs":[]}\n`);
    expect(await runCliHere(['facts', twice])).toEqual({
      status: 1,
      stdout: '',
      stderr: `fact-tracker facts: ${twice}: not a readable saved state: it gives the key "pairs" twice in one object, of which JSON keeps only the last\n`,
    });
  });

  it('says a history pretty-printed over several lines (jq .) is one, written one event a line with jq -c, rather than call it a saved state', async ({
    expect,
  }) => {
    const events = readFileSync(join(ROOT, EXAMPLE), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const pretty = join(workDir, 'pretty-history.json');
    writeFileSync(pretty, events.map((event) => `${JSON.stringify(event, null, 2)}\n`).join(''));
    // jq -S sorts the keys: the first one is then `at`, not `type`.
    const sorted = join(workDir, 'sorted-history.json');
    const sortedKeys = (event: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(event).sort(([a], [b]) => (a < b ? -1 : 1)));
    writeFileSync(sorted, events.map((event) => `${JSON.stringify(sortedKeys(event), null, 2)}\n`).join(''));
    const said = (command: string, file: string) =>
      `fact-tracker ${command}: ${file} is a dispatch history written over several lines (pretty-printed, as jq . writes it), not one event a line: write it with jq -c . and read that\n`;
    for (const file of [pretty, sorted])
      for (const args of [
        ['replay', file],
        ['facts', file],
        ['explain', file, '--line', '1'],
      ])
        expect(await runCliHere(args)).toEqual({ status: 1, stdout: '', stderr: said(args[0]!, file) });
    expect(await runCliHere(['replay', '-'], readFileSync(pretty, 'utf8'))).toEqual({
      status: 1,
      stdout: '',
      stderr: said('replay', 'standard input'),
    });
    // A field the parser ignores, sorted first when the event has no `at`, says nothing: the keys after it do.
    const noted = join(workDir, 'noted-history.json');
    const event = { type: 'dispatch', role: 'implementer', taskId: '1', note: { by: 'hand', lines: [1, 2] } };
    writeFileSync(noted, `${JSON.stringify(sortedKeys({ ...event, agent: 'x', output: 'done' }), null, 2)}\n`);
    for (const args of [
      ['replay', noted],
      ['facts', noted],
    ])
      expect(await runCliHere(args)).toEqual({ status: 1, stdout: '', stderr: said(args[0]!, noted) });
    // A saved state with a key of its own after such a field is still one.
    const state = join(workDir, 'noted-state.json');
    expect((await runCliHere(['replay', EXAMPLE, '--save', state])).status).toBe(0);
    const saved = JSON.parse(readFileSync(state, 'utf8')) as Record<string, unknown>;
    writeFileSync(state, `${JSON.stringify({ comment: { by: 'hand' }, ...saved }, null, 2)}\n`);
    expect(await runCliHere(['facts', state])).toMatchObject({ status: 0, stderr: '' });
  });

  it('says an option given no value, or too large a number, in its own words and in one line', async ({ expect }) => {
    const [missing, large] = await Promise.all([
      runCliHere(['replay', 'examples/web-api-session.jsonl', '--save']),
      runCliHere(['replay', 'examples/web-api-session.jsonl', '--max-tokens', '99999999999999999999']),
    ]);
    expect(missing).toEqual({
      status: 1,
      stdout: '',
      stderr: 'fact-tracker replay: --save needs a value: --save STATE.json (see fact-tracker replay --help)\n',
    });
    expect(large).toEqual({
      status: 1,
      stdout: '',
      stderr:
        'fact-tracker replay: --max-tokens 99999999999999999999 is too large: it may be at most 9,007,199,254,740,991 (see fact-tracker replay --help)\n',
    });
  });

  it('quotes an --as-of of epoch milliseconds out of range as it was typed, not as the number it rounds to', async ({
    expect,
  }) => {
    const typed = ['99999999999999999', '00099999999999999999', '253402300800000'];
    const runs = await Promise.all(typed.map((asOf) => runCliHere(['facts', EXAMPLE, '--as-of', asOf])));
    for (const [index, asOf] of typed.entries())
      expect(runs[index]).toEqual({
        status: 1,
        stdout: '',
        stderr: `fact-tracker facts: --as-of: ${asOf} milliseconds is outside the years 0000 to 9999; give ISO-8601 (2026-03-02T10:00:00Z) or epoch milliseconds (see fact-tracker facts --help)\n`,
      });
  });

  it("takes an --as-of of epoch milliseconds with a fraction as the millisecond it falls in, as a line's at", async ({
    expect,
  }) => {
    const at = String(Date.parse('2026-03-02T10:00:00Z'));
    const [whole, fraction, iso] = await Promise.all(
      [at, `${at}.7`, '2026-03-02T10:00:00.0007Z'].map((asOf) =>
        runCliHere(['facts', EXAMPLE, '--json', '--as-of', asOf]),
      ),
    );
    expect(whole).toMatchObject({ status: 0, stderr: '' });
    expect(fraction).toEqual(whole);
    expect(iso).toEqual(whole);
  });

  it('refuses --save - in one line, and makes no file called -', async ({ expect }) => {
    const cwd = tempDir('save-dash-');
    const run = await runCliHere(['replay', join(ROOT, 'examples/web-api-session.jsonl'), '--save', '-'], undefined, {
      cwd,
    });
    expect(run).toEqual({
      status: 1,
      stdout: '',
      stderr:
        'fact-tracker replay: --save writes a file: give its name (- does not name one; ./- does) (see fact-tracker replay --help)\n',
    });
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('names standard input in words, never as -, where explain, facts and replay say what they read', async ({
    expect,
  }) => {
    const dispatch = JSON.stringify({ type: 'dispatch', role: 'implementer', taskId: '1', output: 'ok' });
    const runs = await Promise.all([
      runCliHere(['explain', '-', '--line', '1'], `${dispatch}\n`),
      runCliHere(['explain', '-', '--line', '1'], 'not json\n'),
      runCliHere(['explain', '-', '--line', '3'], `${dispatch}\n`),
      runCliHere(['replay', '-'], '{"format": "session-fact-tracker/state"\n'),
      runCliHere(['facts', '-'], '{"format": "session-fact-tracker/state"\n'),
    ]);
    expect(runs.map((run) => [run.status, run.stdout, run.stderr])).toEqual([
      [
        1,
        '',
        'fact-tracker explain: line 1 of standard input is a dispatch event; explain needs the line of a prompt event\n',
      ],
      [
        1,
        '',
        expect.stringMatching(
          /^fact-tracker explain: line 1 of standard input is not a valid event \(invalid_json: [^\n]*\)\n$/u,
        ),
      ],
      [1, '', 'fact-tracker explain: line 3 of standard input holds no event (blank or past the end of the input)\n'],
      [
        1,
        '',
        'fact-tracker replay: standard input is a saved state, not a dispatch history: read it with fact-tracker facts -\n',
      ],
      [1, '', expect.stringMatching(/^fact-tracker facts: standard input: not a readable saved state: [^\n]*\n$/u)],
    ]);
  });

  it('names the event on a line that is no prompt with its article: an invalidate event, a compact event', async ({
    expect,
  }) => {
    const events = [
      { type: 'invalidate', subject: 'src/a.ts', relation: 'modified_by' },
      { type: 'compact', maxFacts: 10 },
    ];
    const runs = await Promise.all(
      ['1', '2'].map((line) =>
        runCliHere(['explain', '-', '--line', line], events.map((event) => JSON.stringify(event)).join('\n')),
      ),
    );
    expect(runs.map((run) => [run.status, run.stderr])).toEqual([
      [
        1,
        'fact-tracker explain: line 1 of standard input is an invalidate event; explain needs the line of a prompt event\n',
      ],
      [
        1,
        'fact-tracker explain: line 2 of standard input is a compact event; explain needs the line of a prompt event\n',
      ],
    ]);
  });

  it('says why a prompt line the replay rejected has nothing to explain, rather than call it no prompt', async ({
    expect,
  }) => {
    const prompt = { type: 'prompt', taskId: 'x'.repeat(51), taskPrompt: 'change src/a.ts' };
    const run = await runCliHere(['explain', '-', '--line', '1'], JSON.stringify(prompt));
    expect([run.status, run.stderr]).toEqual([
      1,
      'fact-tracker explain: line 1 of standard input was rejected (invalid_input: task id is longer than 50 characters)\n',
    ]);
  });

  it('says a count past the largest number (1e400, which JSON reads as Infinity) is not finite, not that it is null', async ({
    expect,
  }) => {
    const history = [
      '{"type":"prompt","taskId":"1","taskPrompt":"x","maxFacts":1e400}',
      '{"type":"prompt","taskId":"1","taskPrompt":"x","maxTokens":-1e400}',
    ].join('\n');
    const run = await runCliHere(['replay', '-', '--json'], history);
    expect(run.status).toBe(2);
    expect((JSON.parse(run.stdout) as { errors: unknown[] }).errors).toEqual([
      {
        line: 1,
        code: 'invalid_field',
        message: 'maxFacts must be a whole number 0 or more, not Infinity (not a finite number)',
      },
      {
        line: 2,
        code: 'invalid_field',
        message: 'maxTokens must be a whole number 0 or more, not -Infinity (not a finite number)',
      },
    ]);
  });

  it('explains one prompt fact by fact', async ({ expect }) => {
    const run = await runCliHere(['explain', EXAMPLE, '--line', '24']);
    expect(run.status).toBe(0);
    // The floor and the budget decide the count; the cap only bounds it.
    const included = /^line 24 · task 5 · (\d+) facts included of \d+ · max (\d+) facts/u.exec(run.stdout);
    expect(Number(included?.[1])).toBeGreaterThan(0);
    expect(Number(included?.[1])).toBeLessThanOrEqual(DEFAULT_MAX_FACTS);
    expect(Number(included?.[2])).toBe(DEFAULT_MAX_FACTS);
    expect(run.stdout).toMatch(/^ *SCORE +DECISION +SUBJECT +RELATION +OBJECT +TAGS +TASK$/mu);
    expect(run.stdout).toMatch(/^ *[\d.]+ +included +/mu);
    expect(run.stdout).toMatch(/^ *[\d.]+ +own_task +/mu);
  });

  it('prints the JSON Schema of a role, generated from the validating schema', async ({ expect }) => {
    const run = await runCliHere(['schema', 'implementer']);
    expect(run.status).toBe(0);
    const schema = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(schema['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema['type']).toBe('object');
    expect(schema['required']).toEqual(['task_id', 'status', 'summary']);
  });

  it('answers --help and --version', async ({ expect }) => {
    const [help, version] = await Promise.all([runCli(['replay', '--help']), runCli(['--version'])]);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: fact-tracker replay FILE/u);
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(version.status).toBe(0);
    expect(version.stdout).toBe(`${manifest.version}\n`);
  });

  it('refuses an option that takes one value given twice, in one line naming it, and does nothing (the other commands: run.test.ts); a repeatable one takes each', async ({
    expect,
  }) => {
    const place = join(workDir, 'twice');
    mkdirSync(place, { recursive: true });
    const saves = [join(place, 'a.json'), join(place, 'b.json')] as const;
    // Files named whole: the commands run in a folder of their own.
    const example = join(ROOT, EXAMPLE);
    // An option of one value given twice (as --name VALUE or --name=VALUE), and the value's name: a
    // save, a server that must not start and a hook, which exits 0 on a usage error.
    const twice: ReadonlyArray<readonly [ReadonlyArray<string>, string, string]> = [
      [['replay', example, '--save', saves[0], `--save=${saves[1]}`], '--save', 'STATE.json'],
      [['mcp', '--tokenizer', 'estimate', '--tokenizer', 'o200k'], '--tokenizer', 'NAME'],
      [['hook', '--max-facts', '1', '--max-facts', '2'], '--max-facts', 'N'],
    ];
    const [refused, tagged] = await Promise.all([
      Promise.all(twice.map(([argv]) => runCliHere(argv, '', { cwd: place }))),
      runCliHere(['facts', example, '--tag', 'convention', '--tag', 'test', '--json']),
    ]);
    for (const [index, [argv, option, value]] of twice.entries()) {
      const command = argv[0]!;
      const said = `${option} is given more than once: it takes one ${value} (see fact-tracker ${command} --help)`;
      // As every usage error of its command: a hook never fails the agent's work, says it where
      // the user sees it, and starts it with its code, as every line of the hook's.
      expect(refused[index]).toEqual(
        command === 'hook'
          ? {
              status: 0,
              stdout: `${JSON.stringify({ systemMessage: `fact-tracker: invalid_option: ${said}` })}\n`,
              stderr: `fact-tracker hook: invalid_option: ${said}\n`,
            }
          : { status: 1, stdout: '', stderr: `fact-tracker ${command}: ${said}\n` },
      );
    }
    // Nothing was done: no state saved, no session made.
    expect(readdirSync(place)).toEqual([]);
    // --tag is repeatable: each is taken.
    expect(tagged.status).toBe(0);
    const { facts } = JSON.parse(tagged.stdout) as { facts: Array<{ tags: string[] }> };
    const tags = new Set(facts.flatMap((fact) => fact.tags));
    expect(tags.has('convention') && tags.has('test')).toBe(true);
    expect(facts.every((fact) => fact.tags.includes('convention') || fact.tags.includes('test'))).toBe(true);
  });

  it("lists, exports, replays and deletes the sessions of a folder store: the project's, another named by --store or FACT_TRACKER_STORE", async ({
    expect,
  }) => {
    // A project (a git work tree) with a session in its default folder and one in a folder of its own.
    const project = tempDir('sessions-');
    mkdirSync(join(project, '.git'));
    mkdirSync(join(project, 'src'));
    mkdirSync(join(project, '.fact-tracker', 'sessions'), { recursive: true });
    mkdirSync(join(project, 'shared'));
    const log = readFileSync(join(ROOT, EXAMPLE), 'utf8');
    const files = ['web.jsonl', 'web.jsonl.snapshot', 'web.jsonl.hooks'];
    for (const name of files)
      writeFileSync(join(project, '.fact-tracker', 'sessions', name), name === files[0] ? log : '{}\n');
    writeFileSync(join(project, 'shared', 'other.jsonl'), log.split('\n').slice(0, 5).join('\n'));
    const inSrc = { cwd: join(project, 'src'), env: {} };
    const [listed, exported, bySession, byFile, other, byVariable] = await Promise.all([
      runCliHere(['sessions', 'list'], '', inSrc),
      runCliHere(['sessions', 'export', 'web'], '', inSrc),
      runCliHere(['replay', '--session', 'web', '--json'], '', inSrc),
      runCliHere(['replay', EXAMPLE, '--json']),
      runCliHere(['sessions', 'list', '--store', '../shared'], '', inSrc),
      runCliHere(['facts', '--session', 'other', '--json'], '', {
        cwd: join(project, 'src'),
        env: { FACT_TRACKER_STORE: 'shared' },
      }),
    ]);
    expect(listed).toEqual({ status: 0, stdout: 'web\n', stderr: '' });
    expect(other).toEqual({ status: 0, stdout: 'other\n', stderr: '' });
    expect(bySession).toEqual(byFile);
    expect(exported.stdout).toBe(log);
    expect(byVariable.status).toBe(0);
    expect(JSON.parse(byVariable.stdout)).toHaveProperty('facts');
    expectOneLineFailure(
      expect,
      await runCliHere(['sessions', 'export', 'absent'], '', inSrc),
      /^fact-tracker sessions: unknown_session: there is no session absent in /u,
    );
    // A store that is a file, not a folder, is a mistake said in one line; a folder not made yet holds no session.
    expectOneLineFailure(
      expect,
      await runCliHere(['sessions', 'list', '--store', '../shared/other.jsonl'], '', inSrc),
      /^fact-tracker sessions: io: the sessions folder .*other\.jsonl is not a folder\n/u,
    );
    expect(await runCliHere(['sessions', 'list', '--store', '../not-yet'], '', inSrc)).toEqual({
      status: 0,
      stdout: '',
      stderr: '',
    });
    expect(await runCliHere(['sessions', 'delete', 'web'], '', inSrc)).toEqual({
      status: 0,
      stdout: `deleted session web from ${join(project, '.fact-tracker', 'sessions')}\n`,
      stderr: '',
    });
    expect(readdirSync(join(project, '.fact-tracker', 'sessions'))).toEqual([]);
    expectOneLineFailure(expect, await runCliHere(['sessions', 'delete', 'web'], '', inSrc), /unknown_session/u);
  });

  it('exports a folder session as its log holds it, byte for byte: blank lines, line breaks and byte-order mark kept, so replay numbers its lines alike', async ({
    expect,
  }) => {
    const { project, sessions } = projectWithSessions('export-');
    // A log written by hand or by another tool: CRLF and lone CR line breaks, blank and
    // whitespace lines, a line that is no event, and a byte-order mark.
    const events = readFileSync(join(ROOT, EXAMPLE), 'utf8').split('\n').slice(0, 12);
    const log = [
      `\uFEFF${events[0]!}\r\n`,
      `${events[1]!}\n`,
      '\n',
      '   \n',
      `${events[2]!}\r`,
      'not an event\n',
      ...events.slice(3).map((event, i) => (i % 3 === 0 ? `\n${event}\n` : `${event}\n`)),
    ].join('');
    writeFileSync(join(sessions, 'hand.jsonl'), log);
    const place = { cwd: project, env: {} };
    // The binary's standard output, as a pipe carries it; the other runs in this process.
    const exported = await runCli(['sessions', 'export', 'hand'], '', place);
    expect([exported.status, exported.stderr]).toEqual([0, '']);
    expect(exported.stdout).toBe(log);
    const [fromExport, fromSession] = await Promise.all([
      runCliHere(['replay', '-', '--json'], exported.stdout, place),
      runCliHere(['replay', '--session', 'hand', '--json'], '', place),
    ]);
    expect(fromSession.status).toBe(2);
    expect(fromExport).toEqual(fromSession);
    // A line still being written (or a dead writer's torn one) is not yet part of the session.
    writeFileSync(join(sessions, 'hand.jsonl'), `${log}{"type":"prompt","taskId":"9"`);
    expect(await runCliHere(['sessions', 'export', 'hand'], '', place)).toEqual({ status: 0, stdout: log, stderr: '' });
    // A lone \r ends a line as \n does, the last one too: a log of such lines is exported whole.
    const crLog = `${events.join('\r')}\r`;
    writeFileSync(join(sessions, 'hand.jsonl'), crLog);
    expect(await runCliHere(['sessions', 'export', 'hand'], '', place)).toEqual({
      status: 0,
      stdout: crLog,
      stderr: '',
    });
  });

  it('refuses to export a UTF-16 log, whose bytes UTF-8 text would not be, in one line that says what reads it', async ({
    expect,
  }) => {
    const { project, sessions } = projectWithSessions('export-utf16-');
    const log = join(sessions, 'ps.jsonl');
    const text = readFileSync(join(ROOT, EXAMPLE), 'utf8');
    writeFileSync(log, Buffer.from(`\uFEFF${text.replace(/\n/gu, '\r\n')}`, 'utf16le'));
    const place = { cwd: project, env: {} };
    const [exported, replayed] = await Promise.all([
      runCliHere(['sessions', 'export', 'ps'], '', place),
      runCliHere(['replay', '--session', 'ps', '--json'], '', place),
    ]);
    expect(exported).toEqual({
      status: 1,
      stdout: '',
      stderr: `fact-tracker sessions: io: the log ${log} is UTF-16 (it starts with a UTF-16 byte-order mark or with text in UTF-16): export prints a log as UTF-8 text, which would not be its bytes; \`fact-tracker replay --session ps\` reads it as it is\n`,
    });
    expect([replayed.status, JSON.parse(replayed.stdout).summary.events]).toEqual([0, 40]);
  });

  it.skipIf(!existsSync('/dev/full'))(
    'a full disk under standard output is one line and exit 1, never a stack trace',
    async ({ expect }) => {
      const full = openSync('/dev/full', 'w');
      try {
        const child = spawn(process.execPath, [MAIN, 'replay', EXAMPLE], {
          cwd: ROOT,
          stdio: ['ignore', full, 'pipe'],
        });
        let stderr = '';
        child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const [status] = (await once(child, 'close')) as [number | null];
        expect(status).toBe(1);
        expect(stderr).toMatch(/^fact-tracker: cannot write standard output: [^\n]*\n$/u);
      } finally {
        closeSync(full);
      }
    },
  );
});

describe('a file name that leads nowhere', () => {
  it('says a loop of symbolic links in words, in one line', async ({ expect }) => {
    const dir = tempDir('loop-');
    symlinkSync(join(dir, 'b.jsonl'), join(dir, 'a.jsonl'));
    symlinkSync(join(dir, 'a.jsonl'), join(dir, 'b.jsonl'));
    expectOneLineFailure(
      expect,
      await runCliHere(['replay', join(dir, 'a.jsonl')]),
      /^fact-tracker replay: cannot read .*a\.jsonl: its symbolic links lead round in a loop\n/u,
    );
  });
});

describe('a reader that closes the report early (| head)', () => {
  it('ends the replay quietly with exit 2 once a line was rejected, in text and in JSON, as when it reads to the end', async ({
    expect,
  }) => {
    // A rejected first line, then the example 8 times over, its tasks renamed: a report several
    // times what a pipe holds (64 KB).
    const history = join(tempDir('head-rejected-'), 'history.jsonl');
    writeFileSync(history, ['{"type":"unknown"}', ...historyRounds(join(ROOT, EXAMPLE), 8)].join('\n'));
    for (const json of [false, true])
      expect(await runCliCut(['replay', history, ...(json ? ['--json'] : [])])).toEqual({ status: 2, stderr: '' });
  });

  it('ends the replay quietly with exit 2 when the reader closes the report in its end, written after the last prompt (the facts of a history without prompts, as JSON)', async ({
    expect,
  }) => {
    // A rejected first line, then the example's dispatches 20 times over, without its prompts: a
    // report that is nearly all its facts, about 330 KB, more than what the socket pair of a
    // child's standard output holds (about 208 KB).
    const dispatches = historyRounds(join(ROOT, EXAMPLE), 20).filter((line) => !line.includes('"type":"prompt"'));
    const history = join(tempDir('head-rejected-end-'), 'history.jsonl');
    writeFileSync(history, ['{"type":"unknown"}', ...dispatches].join('\n'));
    expect(await runCliCut(['replay', history, '--json'])).toEqual({ status: 2, stderr: '' });
  });

  it('ends facts (in text) and explain (in JSON) quietly with exit 2 when a line was rejected, as replay ends', async ({
    expect,
  }) => {
    // 1,000 rejected lines (each listed with its long type clipped), then the example 6 times
    // over: a facts table of about 250 KB and an explanation of the last prompt of about 1 MB,
    // each written at once, more than what the socket pair of a child's standard output holds
    // (about 208 KB).
    const lines = [
      ...Array.from({ length: 1000 }, () => JSON.stringify({ type: 'unknown-'.repeat(40) })),
      ...historyRounds(join(ROOT, EXAMPLE), 6),
    ];
    const history = join(tempDir('head-rejected-facts-'), 'history.jsonl');
    writeFileSync(history, lines.join('\n'));
    const lastPrompt = String(
      lines.length - [...lines].reverse().findIndex((line) => line.includes('"type":"prompt"')),
    );
    // Each command once, one in text and one in JSON (both print through one path): each run
    // replays the whole history, about half a second on this machine.
    const runs = await Promise.all([
      runCliCut(['facts', history]),
      runCliCut(['explain', history, '--line', lastPrompt, '--json']),
    ]);
    expect(runs).toEqual([
      { status: 2, stderr: '' },
      { status: 2, stderr: '' },
    ]);
  });
});

describe('a session log that is not a regular file inside its folder', () => {
  it('is no session: replay, facts and explain refuse a log that is a link (out of the store), a folder or a pipe in one line, list leaves them out, and a sessions folder that leads out of the project is refused', async ({
    expect,
  }) => {
    const outside = tempDir('outside-');
    writeFileSync(join(outside, 'elsewhere.jsonl'), readFileSync(join(ROOT, EXAMPLE)));
    const store = tempDir('odd-logs-');
    copyFileSync(join(ROOT, EXAMPLE), join(store, 'good.jsonl'));
    symlinkSync(join(outside, 'elsewhere.jsonl'), join(store, 'link.jsonl'));
    mkdirSync(join(store, 'folder.jsonl'));
    execFileSync('mkfifo', [join(store, 'pipe.jsonl')]);
    const [listed, link, linkFacts, linkExplain, folder, pipe, good] = await Promise.all([
      runCliHere(['sessions', 'list', '--store', store]),
      runCliHere(['replay', '--session', 'link', '--store', store]),
      runCliHere(['facts', '--session', 'link', '--store', store]),
      runCliHere(['explain', '--session', 'link', '--store', store, '--line', '1']),
      runCliHere(['replay', '--session', 'folder', '--store', store]),
      // Refused without waiting for a writer of the pipe.
      runCliHere(['replay', '--session', 'pipe', '--store', store]),
      runCliHere(['replay', '--session', 'good', '--store', store, '--json']),
    ]);
    expect(listed).toEqual({ status: 0, stdout: 'good\n', stderr: '' });
    for (const [run, command] of [
      [link, 'replay'],
      [linkFacts, 'facts'],
      [linkExplain, 'explain'],
    ] as const)
      expectOneLineFailure(
        expect,
        run,
        new RegExp(
          `^fact-tracker ${command}: cannot read .*link\\.jsonl: it is a symbolic link, which is not followed\n`,
          'u',
        ),
      );
    expectOneLineFailure(expect, folder, /^fact-tracker replay: cannot read .*folder\.jsonl: it is a directory\n/u);
    expectOneLineFailure(expect, pipe, /^fact-tracker replay: cannot read .*pipe\.jsonl: it is not a regular file\n/u);
    expect(good.status).toBe(0);

    // The project's sessions folder is a link out of it: nothing is read or listed there.
    const project = tempDir('linked-sessions-');
    mkdirSync(join(project, '.git'));
    mkdirSync(join(project, '.fact-tracker'));
    symlinkSync(outside, join(project, '.fact-tracker', 'sessions'));
    const inProject = { cwd: project, env: {} };
    const runs = await Promise.all([
      runCliHere(['replay', '--session', 'elsewhere'], '', inProject),
      runCliHere(['sessions', 'list'], '', inProject),
      runCliHere(['sessions', 'export', 'elsewhere'], '', inProject),
    ]);
    for (const run of runs)
      expectOneLineFailure(
        expect,
        run,
        /^fact-tracker (replay|sessions): io: the sessions folder .* leads out of .* \(through the symbolic link .*sessions\); refusing to use it\n/u,
      );
  });
});

describe('sessions list', () => {
  it('says in one line that a folder it may not read cannot be listed, rather than list no session', async ({
    expect,
  }) => {
    const project = tempDir('unreadable-');
    const sessions = join(project, '.fact-tracker', 'sessions');
    mkdirSync(sessions, { recursive: true });
    writeFileSync(join(sessions, 'web.jsonl'), readFileSync(join(ROOT, EXAMPLE), 'utf8'));
    for (const dir of [project, join(project, '.fact-tracker')]) chmodSync(dir, 0o755);
    // Searchable, not readable: the log can be read by its name, the folder not listed.
    chmodSync(sessions, 0o311);
    // Root reads any folder: run as nobody, whom the mode binds.
    const place = { cwd: project, env: { HOME: '/tmp' }, ...(process.getuid?.() === 0 ? { uid: 65534 } : {}) };
    expectOneLineFailure(
      expect,
      await runCli(['sessions', 'list'], '', place),
      /^fact-tracker sessions: io: cannot list the sessions in .*sessions: permission denied\n/u,
    );
    expect((await runCli(['sessions', 'export', 'web'], '', place)).status).toBe(0);
  });
});

describe('a warning of a library the command loads', () => {
  it("is one line on stderr, as every message is: the PostgreSQL driver's about sslmode, over a dozen lines of its own", async ({
    expect,
  }) => {
    const run = await runCli(['sessions', 'list', '--store', 'postgres://u:pw-s3cret@127.0.0.1:1/db?sslmode=require']);
    expect(run.status).toBe(1);
    const lines = run.stderr.split('\n').filter((line) => line !== '');
    expect(lines).toEqual([
      expect.stringMatching(/^fact-tracker: warning: Warning: SECURITY WARNING: The SSL modes .*sslmode=verify-full/u),
      expect.stringMatching(
        /^fact-tracker sessions: store_unreachable: cannot reach PostgreSQL at postgres:\/\/u@127\.0\.0\.1:1\//u,
      ),
    ]);
    expect(run.stderr).not.toContain('pw-s3cret');
  });
});

describe('sessions delete', () => {
  it('says what it deleted in one line, whatever the store folder is named (a line break, an escape)', async ({
    expect,
  }) => {
    const store = join(tempDir('delete-name-'), 'bad\u001b[31m\ndir');
    mkdirSync(store);
    copyFileSync(join(ROOT, EXAMPLE), join(store, 's2.jsonl'));
    writeFileSync(join(store, 's4.jsonl.snapshot'), '');
    for (const [id, said] of [
      ['s2', /^deleted session s2 from .*bad \[31m dir\n$/u],
      [
        's4',
        /^deleted the files session s4 left beside its log, which was gone, from .*bad \[31m dir: s4\.jsonl\.snapshot\n$/u,
      ],
    ] as const) {
      const run = await runCliHere(['sessions', 'delete', id, '--store', store]);
      expect([run.status, run.stderr]).toEqual([0, '']);
      expect(run.stdout).toMatch(said);
    }
  });

  it('leaves a folder that stands where a log would be, and says so in one line', async ({ expect }) => {
    const store = tempDir('delete-folder-');
    mkdirSync(join(store, 'd1.jsonl'));
    expectOneLineFailure(
      expect,
      await runCliHere(['sessions', 'delete', 'd1', '--store', store]),
      /^fact-tracker sessions: io: cannot delete session d1 in .*: its log .*d1\.jsonl is not a file; nothing was deleted\n/u,
    );
    expect(readdirSync(store)).toEqual(['d1.jsonl']);
  });
});

describe('texts a clip cuts for a table or a prompt line', () => {
  const generated = 'a1B2c3D4e5'.repeat(30);
  // No shape matches these whole (more characters after the token than a token has, or a word
  // character glued after it), and the clips of the prompt's line and the object's column would.
  const taskPrompt = `Rotate the deploy key ghp_${generated}`;
  const summary = `deploy ghp_${generated.slice(0, 36)}_prod rotated`;

  it('shows no secret in facts or explain, as a clip makes none', async ({ expect }) => {
    for (const text of [taskPrompt, summary]) expect(findSecret(text)).toBeUndefined();
    const file = join(workDir, 'clipped-secrets.jsonl');
    const result = { task_id: '1', status: 'completed', summary };
    writeHistory(file, [
      { type: 'dispatch', role: 'implementer', taskId: '1', at: 1_000, result },
      { type: 'prompt', taskId: '2', at: 2_000, taskPrompt },
    ]);
    const runs = await Promise.all([runCliHere(['facts', file]), runCliHere(['explain', file, '--line', '2'])]);
    for (const run of runs) {
      expect(run.status).toBe(0);
      expect(run.stdout).toContain('deploy ');
      expect(findSecret(run.stdout)).toBeUndefined();
    }
    expect(runs[1]!.stdout).toContain('task prompt: Rotate the deploy key [redacted: a GitHub token]');
  });

  it('explains a prompt holding a whole token with the token redacted, as the store keeps the prompt, in text and JSON', async ({
    expect,
  }) => {
    const token = `ghp_${generated.slice(0, 36)}`;
    const file = join(workDir, 'prompt-secret.jsonl');
    writeFileSync(
      file,
      `${JSON.stringify({ type: 'prompt', taskId: '2', at: 2_000, taskPrompt: `Use ${token} to deploy` })}\n`,
    );
    const runs = await Promise.all([
      runCliHere(['explain', file, '--line', '1']),
      runCliHere(['explain', file, '--line', '1', '--json']),
    ]);
    for (const run of runs) {
      expect(run.status).toBe(0);
      expect(run.stdout).not.toContain(token);
    }
    expect(runs[0]!.stdout).toContain('task prompt: Use [redacted: a GitHub token] to deploy');
    expect(JSON.parse(runs[1]!.stdout).taskPrompt).toBe('Use [redacted: a GitHub token] to deploy');
  });

  it('explains a prompt that carries an earlier [Session Context] section without it, as the store keeps the prompt and the ranking reads it, in text and JSON', async ({
    expect,
  }) => {
    const file = join(workDir, 'prompt-section.jsonl');
    const result = { task_id: '1', status: 'completed', summary: 'Added the pool', files_changed: ['src/db/pool.ts'] };
    const carried = '[Session Context]\n- src/db/pool.ts modified_by task:1 [task:1]\n\nFix the logger in src/log.ts';
    writeHistory(file, [
      {
        type: 'dispatch',
        taskId: '1',
        at: 1_000,
        role: 'implementer',
        output: `BEGIN_DISPATCH_RESULT\n${JSON.stringify(result)}\nEND_DISPATCH_RESULT`,
      },
      { type: 'prompt', taskId: '2', at: 2_000, taskPrompt: carried },
    ]);
    const runs = await Promise.all([
      runCliHere(['explain', file, '--line', '2']),
      runCliHere(['explain', file, '--line', '2', '--json']),
    ]);
    for (const run of runs) expect(run.status).toBe(0);
    expect(runs[0]!.stdout).toContain('task prompt: Fix the logger in src/log.ts\n');
    expect(JSON.parse(runs[1]!.stdout).taskPrompt).toBe('Fix the logger in src/log.ts');
  });

  it('explain --json gives the fields docs/commands.md lists, tags only where given', async ({ expect }) => {
    const file = join(workDir, 'prompt-tags.jsonl');
    writeHistory(file, [
      { type: 'prompt', taskId: '2', at: 2_000, taskPrompt: 'Fix the logger' },
      { type: 'prompt', taskId: '3', at: 3_000, taskPrompt: 'Fix the logger', tags: ['convention'] },
    ]);
    const runs = await Promise.all(['1', '2'].map((line) => runCliHere(['explain', file, '--line', line, '--json'])));
    const fields = ['line', 'taskId', 'taskPrompt', 'maxFacts', 'maxTokens', 'decisions', 'errors'];
    expect(Object.keys(JSON.parse(runs[0]!.stdout))).toEqual(fields);
    expect(Object.keys(JSON.parse(runs[1]!.stdout))).toEqual([...fields.slice(0, 3), 'tags', ...fields.slice(3)]);
    expect(JSON.parse(runs[1]!.stdout).tags).toEqual(['convention']);
  });
});

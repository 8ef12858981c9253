/**
 * The command router in-process, against an in-memory `CliIo`: the many small cases (every
 * help text, every usage error, colour, progress) without a process start-up each.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { type CliIo, ReadFailure } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import { DEFAULT_MAX_FACTS, DEFAULT_MAX_TOKENS, validateDispatchResult } from '../../src/index.js';
import { PROGRESS_THRESHOLD } from '../../src/cli/commands/history.js';
import { ROOT } from './runCli.js';
import { tempDir } from '../tempDirs.js';
import { BAD_LINES, BAD_LINES_REJECTED } from '../fixtures/expected.js';

const EXAMPLE = 'examples/web-api-session.jsonl';

interface MemoryRun {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly written: ReadonlyMap<string, string>;
}

/** Runs the router with files from `files`, else from the repository, and captures everything. */
const runInMemory = async (
  argv: ReadonlyArray<string>,
  options: {
    files?: Readonly<Record<string, string>>;
    colour?: boolean;
    stderrIsTty?: boolean;
    /** Replaces parts of the in-memory io. */
    io?: Partial<CliIo>;
  } = {},
): Promise<MemoryRun> => {
  let stdout = '';
  let stderr = '';
  const written = new Map<string, string>();
  const io: CliIo = {
    readText: async (file) => {
      const given = options.files?.[file] ?? written.get(file);
      if (given !== undefined) return E.right(given);
      try {
        return E.right(readFileSync(`${ROOT}${file}`, 'utf8'));
      } catch {
        return E.left(`cannot read ${file}: no such file`);
      }
    },
    writeText: async (file, text) => {
      written.set(file, text);
      return E.right(undefined);
    },
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    colour: options.colour ?? false,
    stderrIsTty: options.stderrIsTty ?? false,
    version: () => E.right('9.9.9'),
    ...options.io,
  };
  const status = await run(argv, io);
  return { status, stdout, stderr, written };
};

/**
 * What a terminal shows of the text written to it: lines, with a carriage return going back to
 * the line's start and ESC [2K erasing the line (all the progress uses).
 */
const terminalScreen = () => {
  const rows: string[] = [''];
  let column = 0;
  let drew = '';
  return {
    write: (text: string): void => {
      drew += text;
      for (const piece of text.split(/(\r|\n|\u001b\[2K)/u)) {
        const row = rows.length - 1;
        if (piece === '\r') column = 0;
        else if (piece === '\n') {
          rows.push('');
          column = 0;
        } else if (piece === '\u001b[2K') rows[row] = ''.padEnd(column);
        else {
          const line = rows[row]!.padEnd(column);
          rows[row] = line.slice(0, column) + piece + line.slice(column + piece.length);
          column += piece.length;
        }
      }
    },
    lines: (): string[] => rows.map((row) => row.trimEnd()),
    drew: (): string => drew,
  };
};

const expectUsageError = (result: MemoryRun, pattern: RegExp): void => {
  expect(result.status).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^fact-tracker[^\n]*\n$/u);
  expect(result.stderr).toMatch(pattern);
};

describe('help and version', () => {
  it.each([
    [['--help'], 'Usage:\n  fact-tracker replay FILE'],
    [['-h'], 'Usage:\n  fact-tracker replay FILE'],
    [['help'], 'Usage:\n  fact-tracker replay FILE'],
    [['help', 'facts'], 'Usage: fact-tracker facts FILE'],
    [['replay', '--help'], 'Usage: fact-tracker replay FILE'],
    [['replay', 'whatever.jsonl', '--bogus', '-h'], 'Usage: fact-tracker replay FILE'],
    [['facts', '--help'], 'Usage: fact-tracker facts FILE'],
    [['explain', '--help'], 'Usage: fact-tracker explain FILE --line N'],
    [['schema', '--help'], 'Usage: fact-tracker schema implementer|reviewer'],
    [['--version', '--help'], 'Usage:\n  fact-tracker replay FILE'],
    [['-V', '-h'], 'Usage:\n  fact-tracker replay FILE'],
  ])('%j prints help', async (argv, start) => {
    const result = await runInMemory(argv);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(start);
    expect(result.stderr).toBe('');
  });

  it('prints the version', async () => {
    expect(await runInMemory(['--version'])).toMatchObject({ status: 0, stdout: '9.9.9\n' });
  });
});

describe('usage errors', () => {
  it.each([
    [[], /missing command/u],
    [['deploy'], /unknown command "deploy"/u],
    [['help', 'deploy'], /no help for unknown command/u],
    [['--version', 'replay'], /--version takes no arguments \(given "replay"\)/u],
    [['-V', '-x'], /-V takes no arguments \(given "-x"\)/u],
    [['replay'], /replay: missing history FILE/u],
    [['replay', 'a', 'b'], /expected one history FILE .*, got 2: a b/u],
    [['replay', ''], /replay: missing history FILE \(- for standard input\): the argument given is empty/u],
    [['notes', 'replay', ' '], /notes: missing conversation log FILE .*: the argument given is empty/u],
    [['replay', EXAMPLE, '--save', ''], /replay: --save needs a file name/u],
    [['notes', 'replay', EXAMPLE, '--save', ''], /notes: --save needs a file name/u],
    [
      ['facts', EXAMPLE, '--subject', ''],
      /facts: --subject needs a subject \(a path or a name\): the value given is blank/u,
    ],
    [
      ['replay', EXAMPLE, '--save', '-'],
      /replay: --save writes a file: give its name \(- does not name one; \.\/- does\)/u,
    ],
    [['notes', 'replay', EXAMPLE, '--save', '-'], /notes: --save writes a file: give its name/u],
    [['replay', EXAMPLE, '--bogus'], /Unknown option '--bogus' \(see fact-tracker replay --help\)/u],
    [
      ['replay', EXAMPLE, '--max-facts'],
      /replay: --max-facts needs a value: --max-facts N \(see fact-tracker replay --help\)/u,
    ],
    [['replay', EXAMPLE, '--save'], /replay: --save needs a value: --save STATE\.json \(see/u],
    [['explain', EXAMPLE, '--line'], /explain: --line needs a value: --line N \(see/u],
    [
      ['replay', EXAMPLE, '--max-tokens', '-3'],
      /replay: --max-tokens needs a value; a value that starts with a dash is written --max-tokens=VALUE \(see/u,
    ],
    [['replay', EXAMPLE, '--max-tokens=-3'], /--max-tokens must be a whole number 0 or more, not "-3"/u],
    [
      ['mcp', '--max-answer-tokens', '9007199254740992'],
      /mcp: --max-answer-tokens 9007199254740992 is too large: it may be at most 9,007,199,254,740,991 \(see/u,
    ],
    [['replay', EXAMPLE, '--tokenizer', 'cl100k'], /--tokenizer must be estimate or o200k/u],
    [['replay', EXAMPLE, '--as-of', 'tomorrow'], /--as-of: "tomorrow" is not an ISO-8601 time/u],
    [['facts', EXAMPLE, '--tag', 'urgent'], /--tag "urgent" is not a tag/u],
    [['explain', EXAMPLE], /missing --line N/u],
    [['explain', EXAMPLE, '--line', '0'], /--line must be a whole number 1 or more/u],
    [['schema', 'tester'], /unknown role "tester"/u],
    [['replay', 'missing.jsonl'], /replay: cannot read missing.jsonl: no such file/u],
    [['replay', EXAMPLE, '--store', 'logs'], /replay: --store names where --session ID is read from/u],
    [['facts', EXAMPLE, '--session', 's'], /facts: give a FILE or --session ID, not both/u],
    [['explain', '--session', 's', '--store', ''], /explain: --store needs a folder or a postgres:\/\/ URL/u],
    [['mcp', '--sessions-dir', ''], /mcp: --sessions-dir needs a folder/u],
    [
      ['mcp', '--store', 'a', '--sessions-dir', 'b'],
      /mcp: --store and --sessions-dir both say where the sessions are/u,
    ],
    [['sessions'], /sessions: missing subcommand: list, export, delete/u],
    [['sessions', 'show'], /sessions: unknown subcommand "show"/u],
    [['sessions', 'list', 'x'], /sessions: list takes no arguments, got: x/u],
    [['sessions', 'export'], /sessions: missing session ID/u],
    [['db'], /db: missing subcommand: migrate/u],
    [['db', 'migrate', 'now'], /db: migrate takes no arguments/u],
  ])('%j fails with one line and exit 1', async (argv, pattern) => {
    expectUsageError(await runInMemory(argv), pattern);
  });
});

describe('an option that takes one value, given twice', () => {
  it('is refused whatever the command, in one line naming it, and nothing is done (a save, mcp and hook: commands.test.ts)', async () => {
    const place = tempDir('twice-');
    const [a, b] = ['project-a', 'project-b'].map((name) => join(place, name)) as [string, string];
    mkdirSync(a);
    mkdirSync(b);
    // Each command, an option of one value given twice (as --name VALUE or --name=VALUE), and the value's name.
    const twice: ReadonlyArray<readonly [ReadonlyArray<string>, string, string]> = [
      [['replay', EXAMPLE, '--max-facts', '1', '--max-facts=2'], '--max-facts', 'N'],
      [['facts', EXAMPLE, '--subject', 'src', '--subject', 'test'], '--subject', 'TEXT'],
      [['explain', EXAMPLE, '--line', '38', '--line', '39'], '--line', 'N'],
      [['notes', 'replay', 'examples/couples-coaching.jsonl', '--turns', '1', '--turns', '2'], '--turns', 'N'],
      [['init', 'claude', '--project', a, '--project', b], '--project', 'DIR'],
      [['sessions', 'list', '--store', join(place, 'a'), '--store', join(place, 'b')], '--store', 'STORE'],
      [['db', 'migrate', '--print', '--store', 'postgres://a@db/x', '--store', 'postgres://b@db/x'], '--store', 'URL'],
    ];
    for (const [argv, option, value] of twice) {
      const command = argv[0]!;
      const { written, ...result } = await runInMemory(argv, { io: { cwd: place } });
      expect(result).toEqual({
        status: 1,
        stdout: '',
        stderr: `fact-tracker ${command}: ${option} is given more than once: it takes one ${value} (see fact-tracker ${command} --help)\n`,
      });
      expect([command, [...written.keys()]]).toEqual([command, []]);
    }
    // No settings written, no store made.
    expect(readdirSync(place).sort()).toEqual(['project-a', 'project-b']);
    expect([readdirSync(a), readdirSync(b)]).toEqual([[], []]);
  });
});

describe('hook', () => {
  it('says a usage error in one line and still exits 0: the agent carries on', async () => {
    const result = await runInMemory(['hook', '--store', 'a', '--sessions-dir', 'b']);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(
      /^fact-tracker hook: invalid_option: --store and --sessions-dir both say where the sessions are/u,
    );
    // Said where the user sees it too.
    expect(JSON.parse(result.stdout)).toEqual({
      systemMessage: result.stderr.trim().replace(/^fact-tracker hook: /u, 'fact-tracker: '),
    });
  });

  it('says a store that cannot be used when an event needs its session, never on the events it ignores', async () => {
    const cwd = tempDir('hook-store-');
    const payload = (name: string): string =>
      JSON.stringify({
        ...(JSON.parse(readFileSync(`${ROOT}test/live/hook/fixtures/claude-code/${name}.json`, 'utf8')) as object),
        cwd,
      });
    const io = { cwd, env: { FACT_TRACKER_STORE: 'mysql://app:s3cret-Pw@db/memory' } };
    const ignored = await runInMemory(['hook'], { files: { '-': payload('pre-tool-use-bash') }, io });
    expect(ignored).toMatchObject({ status: 0, stdout: '', stderr: '' });
    const needed = await runInMemory(['hook'], { files: { '-': payload('pre-tool-use-agent') }, io });
    expect(needed.status).toBe(0);
    expect((JSON.parse(needed.stdout) as { systemMessage: string }).systemMessage).toMatch(
      /^fact-tracker: store_url: session [\w-]+: FACT_TRACKER_STORE is a mysql: URL/u,
    );
    expect(needed.stdout + needed.stderr).not.toContain('s3cret-Pw');
  });
});

describe('replay', () => {
  it("prints what the README's trimmed run of npm start shows: each of its runs of lines, in its order", async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const sample = /A trimmed run of `npm start`:\n\n```\n([\s\S]*?)\n```/u.exec(readme)?.[1];
    expect(sample).toBeDefined();
    const result = await runInMemory(['replay', EXAMPLE]);
    expect(result.status).toBe(0);
    let from = 0;
    // `...` marks what the README leaves out; every run of lines between is printed as it is.
    for (const run of sample!.split('\n...\n')) {
      const at = result.stdout.indexOf(run, from);
      expect(at, run).toBeGreaterThanOrEqual(from);
      from = at + run.length;
    }
  });

  it('reports every bad line in line order among the prompts, and exits 2', async () => {
    const result = await runInMemory(['replay', BAD_LINES]);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe('fact-tracker replay: 8 lines were rejected (listed in the report)\n');
    const rejected = [...result.stdout.matchAll(/^line (\d+) · rejected \((\w+)\): /gmu)].map((match) => [
      Number(match[1]),
      match[2],
    ]);
    expect(rejected).toEqual(BAD_LINES_REJECTED);
    expect(result.stdout.indexOf('line 10 · rejected')).toBeLessThan(result.stdout.indexOf('line 13 · task 2'));
    expect(result.stdout).toMatch(
      /^line 13 · task 2 · \d+ facts · \d+ context tokens · \d+ history tokens\n\[Session Context\]\n- /mu,
    );
    expect(result.stdout).toMatch(/· 8 rejected lines$/mu);
  });

  it('uses colour only when the shell says so', async () => {
    const [plain, coloured] = await Promise.all([
      runInMemory(['replay', BAD_LINES]),
      runInMemory(['replay', BAD_LINES], { colour: true }),
    ]);
    expect(plain.stdout).not.toContain('\u001b[');
    expect(coloured.stdout).toContain('\u001b[1mline 13 · task 2');
    expect(coloured.stdout.replace(/\u001b\[\d+m/gu, '')).toBe(plain.stdout);
  });

  it('counts with o200k, overrides the budgets and stops at --as-of', async () => {
    const [o200k, estimate, early] = await Promise.all([
      runInMemory(['replay', EXAMPLE, '--json', '--tokenizer', 'o200k', '--max-facts', '3']),
      runInMemory(['replay', EXAMPLE, '--json', '--max-facts', '3']),
      runInMemory(['replay', EXAMPLE, '--json', '--as-of', '2026-03-02T09:30:00Z']),
    ]);
    const real = JSON.parse(o200k.stdout) as { prompts: { facts: unknown[] }[]; summary: { historyTokens: number } };
    expect(o200k.status).toBe(0);
    expect(real.prompts.every((prompt) => prompt.facts.length <= 3)).toBe(true);
    expect(real.summary.historyTokens).toBeGreaterThan(0);
    expect(real.summary.historyTokens).not.toBe(JSON.parse(estimate.stdout).summary.historyTokens);
    expect(o200k.stdout).not.toBe(estimate.stdout);
    const stopped = JSON.parse(early.stdout) as { prompts: { line: number }[]; summary: { events: number } };
    expect(stopped.prompts.map((prompt) => prompt.line)).toEqual([1, 4, 7]);
    expect(stopped.summary.events).toBe(8);
  });

  it('draws progress on a terminal stderr for long histories only, and clears it', async () => {
    const long = Array.from({ length: 2100 }, (_, index) =>
      JSON.stringify({ type: 'compact', maxFacts: 10, at: index }),
    ).join('\n');
    const [tty, piped, short] = await Promise.all([
      runInMemory(['replay', 'long.jsonl', '--json'], { files: { 'long.jsonl': long }, stderrIsTty: true }),
      runInMemory(['replay', 'long.jsonl', '--json'], { files: { 'long.jsonl': long } }),
      runInMemory(['replay', BAD_LINES, '--json'], { stderrIsTty: true }),
    ]);
    expect(tty.stderr).toContain('replayed 2,100 events (100% of the file read)');
    expect(tty.stderr.endsWith('\r\u001b[2K')).toBe(true);
    expect(tty.stdout).toBe(piped.stdout);
    expect(piped.stderr).toBe('');
    expect(short.stderr).not.toContain('replayed');
  });

  it('draws progress on a terminal that shows the report too, leaving the screen as the report piped reads', async () => {
    // Prompts all along, so the report is written while the progress is drawn; text and JSON,
    // whose pieces end mid-line. Past PROGRESS_THRESHOLD events, each prompt after a compaction
    // that keeps the store small: each section is ranked among a few facts, not a thousand.
    const long = Array.from({ length: 734 }, (_, index) => [
      JSON.stringify({
        type: 'dispatch',
        role: 'implementer',
        taskId: String(index),
        result: { task_id: String(index), status: 'completed', summary: `step ${index}`, files_changed: ['a.ts'] },
      }),
      JSON.stringify({ type: 'compact', maxFacts: 10 }),
      JSON.stringify({ type: 'prompt', taskId: String(index + 1), taskPrompt: 'change a.ts' }),
    ]).flat();
    expect(long.length).toBeGreaterThan(PROGRESS_THRESHOLD);
    const files = { 'long.jsonl': long.join('\n') };
    for (const json of [[], ['--json']]) {
      const screen = terminalScreen();
      const [shown, piped] = await Promise.all([
        runInMemory(['replay', 'long.jsonl', ...json], {
          files,
          stderrIsTty: true,
          io: { stdout: screen.write, stderr: screen.write, stdoutIsTty: true },
        }),
        runInMemory(['replay', 'long.jsonl', ...json], { files }),
      ]);
      // JSON's pieces end mid-line, where no progress is drawn.
      if (json.length === 0) expect(screen.drew()).toContain('fact-tracker: replayed');
      expect(shown.status).toBe(0);
      expect(screen.lines()).toEqual(piped.stdout.split('\n'));
    }
  });

  it('refuses a saved state given as a history', async () => {
    const saved = await runInMemory(['replay', BAD_LINES, '--save', 'state.json']);
    const state = saved.written.get('state.json')!;
    expectUsageError(
      await runInMemory(['replay', 'state.json'], { files: { 'state.json': state } }),
      /is a saved state/u,
    );
  });
});

describe('facts', () => {
  it('filters a history by tag and subject, with closed facts and their intervals on --all', async () => {
    const result = await runInMemory([
      'facts',
      EXAMPLE,
      '--json',
      '--all',
      '--tag',
      'file_change',
      '--subject',
      'SRC/CONFIG.TS',
    ]);
    const { facts } = JSON.parse(result.stdout) as { facts: { subject: string; tags: string[]; validTo?: number }[] };
    expect(result.status).toBe(0);
    expect(facts.length).toBeGreaterThan(1);
    expect(facts.every((fact) => fact.subject === 'src/config.ts' && fact.tags.includes('file_change'))).toBe(true);
    expect(facts.some((fact) => fact.validTo !== undefined)).toBe(true);

    const table = await runInMemory(['facts', EXAMPLE, '--all', '--subject', 'src/config.ts']);
    expect(table.stdout).toMatch(/^SUBJECT +RELATION +OBJECT +TAGS +TASK +VALID FROM +VALID TO$/mu);
    expect(table.stdout).toMatch(
      /^src\/config\.ts +modified_by +task:1 .* 2026-03-02T09:03:00Z +2026-03-02T09:58:00Z$/mu,
    );
  });

  it('reads a saved state, valid at --as-of, and lists rejected history lines with exit 2', async () => {
    const saved = await runInMemory(['replay', EXAMPLE, '--save', 'state.json']);
    const files = { 'state.json': saved.written.get('state.json')! };
    const [now, then, fromHistory] = await Promise.all([
      runInMemory(['facts', 'state.json', '--json'], { files }),
      runInMemory(['facts', 'state.json', '--json', '--as-of', '2026-03-02T09:10:00Z'], { files }),
      runInMemory(['facts', EXAMPLE, '--json', '--as-of', '2026-03-02T09:10:00Z']),
    ]);
    // Each as it stood then, from the state as from the stopped replay: a fact closed later is valid.
    const ids = (result: MemoryRun): string[] =>
      (JSON.parse(result.stdout) as { facts: { id: string }[] }).facts.map((fact) => fact.id);
    expect(JSON.parse(then.stdout)).toEqual(JSON.parse(fromHistory.stdout));
    expect(then.stdout).not.toContain('validTo');
    expect(ids(then).length).toBeLessThan(ids(now).length);
    // With closed facts too, each as it stood then, in both.
    const [allThen, allFromHistory] = await Promise.all([
      runInMemory(['facts', 'state.json', '--json', '--all', '--as-of', '2026-03-02T09:10:00Z'], { files }),
      runInMemory(['facts', EXAMPLE, '--json', '--all', '--as-of', '2026-03-02T09:10:00Z']),
    ]);
    expect(JSON.parse(allThen.stdout)).toEqual(JSON.parse(allFromHistory.stdout));

    const bad = await runInMemory(['facts', BAD_LINES]);
    expect(bad.status).toBe(2);
    expect(bad.stdout).toContain('line 3 · rejected (invalid_json)');
    expect(bad.stderr).toBe('fact-tracker facts: 8 lines were rejected (listed in the report)\n');
  });

  it('refuses a state file that fails validation or comes from a newer version, without loading half of it', async () => {
    const saved = await runInMemory(['replay', BAD_LINES, '--save', 'state.json']);
    const document = JSON.parse(saved.written.get('state.json')!) as {
      version: number;
      pairs: { assertions: { id: string }[] }[];
    };
    const future = JSON.stringify({ ...document, version: 2 }, null, 2);
    const unbounded = JSON.stringify({ ...document, maxValidFacts: -5 });
    document.pairs[0]!.assertions[0]!.id = '0000000000000000';
    const files = { 'corrupt.json': JSON.stringify(document), 'future.json': future, 'unbounded.json': unbounded };
    expectUsageError(
      await runInMemory(['facts', 'corrupt.json'], { files }),
      /corrupt\.json: pairs\[0\]\.assertions\[0\]: id is not createFactId of the triple/u,
    );
    expectUsageError(
      await runInMemory(['facts', 'future.json'], { files }),
      /future\.json: saved state version 2 is newer/u,
    );
    expectUsageError(
      await runInMemory(['facts', 'unbounded.json'], { files }),
      /unbounded\.json: saved state maxValidFacts is not a whole number from 1 to 9007199254740991$/mu,
    );
  });

  it('refuses in one line a saved state longer than the longest text the engine holds, which it reads whole', async () => {
    // Text chunks are passed on as they are read, so one string of 64 Mi characters stands for
    // each piece of a file over 512 Mi characters (a state file, or any JSON a `{` alone opens),
    // at the cost of one.
    const piece = ' '.repeat(64 * 1024 * 1024);
    let released = false;
    const io: Partial<CliIo> = {
      openStream: async () =>
        E.right({
          chunks: (async function* () {
            try {
              yield '{"format":\n';
              for (let i = 0; i < 9; i += 1) yield piece;
            } finally {
              released = true;
            }
          })() as AsyncIterable<unknown> as AsyncIterable<Uint8Array>,
        }),
    };
    // Before: `fact-tracker: internal error: Invalid string length`, a bug's line for the file's size.
    expectUsageError(
      await runInMemory(['facts', 'big.json'], { io }),
      /^fact-tracker facts: cannot read big\.json: it is longer than the [\d,]+ characters a saved state may have \(it is read whole, as one text\)$/mu,
    );
    // The file, read in part, is released then.
    expect(released).toBe(true);
  });
});

describe('explain', () => {
  it('gives every fact a score and a decision, the included ones being the replayed prompt facts', async () => {
    const [explained, replayed] = await Promise.all([
      runInMemory(['explain', EXAMPLE, '--line', '24', '--json']),
      runInMemory(['replay', EXAMPLE, '--json']),
    ]);
    const view = JSON.parse(explained.stdout) as {
      line: number;
      taskId: string;
      maxFacts: number;
      maxTokens: number;
      decisions: { decision: string; reason?: string; score: number; fact: { id: string } }[];
    };
    expect(view).toMatchObject({ line: 24, taskId: '5', maxFacts: DEFAULT_MAX_FACTS, maxTokens: DEFAULT_MAX_TOKENS });
    const prompt = (
      JSON.parse(replayed.stdout) as { prompts: { line: number; facts: { id: string }[] }[] }
    ).prompts.find((entry) => entry.line === 24)!;
    expect(
      view.decisions.filter((decision) => decision.decision === 'included').map((decision) => decision.fact.id),
    ).toEqual(prompt.facts.map((fact) => fact.id));
    expect(
      view.decisions.every((decision) => (decision.decision === 'excluded') === (decision.reason !== undefined)),
    ).toBe(true);
  });

  it.each([
    ['2', /:2 is a dispatch event; explain needs the line of a prompt event/u, EXAMPLE],
    ['3', /:3 is not a valid event \(invalid_json/u, BAD_LINES],
    ['11', /:11 holds no event/u, BAD_LINES],
    ['999', /:999 holds no event/u, BAD_LINES],
  ])('refuses line %s, which is no prompt', async (line, pattern, file) => {
    expectUsageError(await runInMemory(['explain', file, '--line', line]), pattern);
  });
});

describe('schema', () => {
  it('prints the reviewer contract as JSON Schema', async () => {
    const result = await runInMemory(['schema', 'reviewer']);
    const schema = JSON.parse(result.stdout) as { required: string[]; properties: Record<string, { enum?: string[] }> };
    expect(schema.required).toEqual(['task_id', 'assessment']);
    expect(schema.properties['assessment']?.enum).toEqual(['approved', 'needs_changes', 'blocked']);
  });

  it('allows the fields the validator accepts and ignores, at every level', async () => {
    const forbidden = (value: unknown): boolean =>
      typeof value === 'object' &&
      value !== null &&
      (('additionalProperties' in value && value.additionalProperties === false) ||
        Object.values(value).some(forbidden));
    for (const role of ['implementer', 'reviewer'] as const) {
      const result = await runInMemory(['schema', role]);
      expect(forbidden(JSON.parse(result.stdout))).toBe(false);
    }
    const extra = {
      task_id: '1',
      status: 'completed',
      summary: 's',
      tests: [{ command: 'npm test', passed: true, took: 3 }],
      extra: 1,
    };
    expect(E.isRight(validateDispatchResult(extra, 'implementer'))).toBe(true);
  });
});

describe("failures that are not the user's", () => {
  /** A history stream that gives its first line, then throws `error`. */
  const failingStream = (error: Error): Pick<CliIo, 'openStream'> => ({
    openStream: async () =>
      E.right({
        chunks: (async function* () {
          yield new TextEncoder().encode(`${readFileSync(`${ROOT}${EXAMPLE}`, 'utf8').split('\n')[0]!}\n`);
          throw error;
        })(),
      }),
  });

  /** An io whose every read throws `error`, as a bug in it would. */
  const throwingRead = (error: Error): Pick<CliIo, 'readText'> => ({
    readText: () => {
      throw error;
    },
  });

  it("a read that fails half-way is the command's one line, exit 1", async () => {
    const result = await runInMemory(['replay', EXAMPLE], {
      io: failingStream(new ReadFailure('cannot read h.jsonl: it went away')),
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('fact-tracker replay: cannot read h.jsonl: it went away\n');
  });

  it('any other exception below the router is one line saying it is an internal error, exit 1', async () => {
    const half = await runInMemory(['replay', EXAMPLE], { io: failingStream(new TypeError('x is not a function')) });
    expect(half).toMatchObject({ status: 1, stderr: 'fact-tracker: internal error: x is not a function\n' });
    const thrown = await runInMemory(['facts', EXAMPLE], { io: throwingRead(new RangeError('a bug\n  at somewhere')) });
    expect(thrown).toMatchObject({
      status: 1,
      stdout: '',
      stderr: 'fact-tracker: internal error: a bug at somewhere\n',
    });
  });

  it('a hook given a wrong option says it as a systemMessage too, which the user sees, and exits 0', async () => {
    for (const [argv, said] of [
      [['hook', '--max-fact', '10'], "Unknown option '--max-fact' (see fact-tracker hook --help)"],
      [['hook', '--layout', 'group'], '--layout must be lines or grouped, not "group" (see fact-tracker hook --help)'],
      [
        ['hook', '--reviewer-pattern', '('],
        '--reviewer-pattern "(" is not a regular expression (see fact-tracker hook --help)',
      ],
      [
        ['hook', '--reviewer-pattern='],
        '--reviewer-pattern is empty, a pattern every agent type matches: give the words of your reviewers\' types, or leave it out for "review" (but not "preview") (see fact-tracker hook --help)',
      ],
      [
        ['hook', '--max-facts', '-1'],
        '--max-facts needs a value; a value that starts with a dash is written --max-facts=VALUE (see fact-tracker hook --help)',
      ],
    ] as const) {
      // Its code first, as every line of the hook's.
      const result = await runInMemory(argv, {});
      expect(result).toMatchObject({ status: 0, stderr: `fact-tracker hook: invalid_option: ${said}\n` });
      expect(JSON.parse(result.stdout)).toEqual({ systemMessage: `fact-tracker: invalid_option: ${said}` });
    }
    // Any other command's usage error stays on stderr alone.
    expect(await runInMemory(['replay', '--max-fact', '10'], {})).toMatchObject({ status: 1, stdout: '' });
  });

  it("a hook's internal error is said to the user as a systemMessage and on stderr, and exits 0: the agent carries on", async () => {
    const result = await runInMemory(['hook', '--max-facts', '3'], {
      io: throwingRead(new TypeError('x is not a function')),
    });
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      systemMessage: expect.stringMatching(/^fact-tracker: internal: .*x is not a function$/u),
    });
    expect(result.stderr).toMatch(/^fact-tracker hook: internal: .*x is not a function\n$/u);
  });
});

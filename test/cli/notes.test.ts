/**
 * `fact-tracker notes replay`: in-process through the router against an in-memory `CliIo`,
 * and once as a real process.
 */
import { lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { createNodeIo } from '../../src/cli/nodeIo.js';
import { run } from '../../src/cli/run.js';
import { findSecret } from '../../src/base/secrets.js';
import { selectGlobalFacts } from '../../src/notes/ledger.js';
import { decodeSavedState } from '../../src/saved/savedState.js';
import { tempDir } from '../tempDirs.js';
import { ROOT, runCli } from './runCli.js';

const EXAMPLE = 'examples/couples-coaching.jsonl';

interface Outcome {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly written: ReadonlyMap<string, string>;
}

/** Runs the router with the real file access, `files` first; output and writes are captured. */
const runNotes = async (
  argv: ReadonlyArray<string>,
  files: Readonly<Record<string, string>> = {},
): Promise<Outcome> => {
  // Writes are captured: the locked update of the real files is left out, so --save writes through `writeText`.
  const { updateText: _unlocked, ...node } = createNodeIo();
  const captured = { stdout: '', stderr: '', written: new Map<string, string>() };
  const status = await run(argv, {
    ...node,
    readText: async (file) => (file in files ? E.right(files[file]!) : node.readText(`${ROOT}${file}`)),
    writeText: async (file, text) => {
      captured.written.set(file, text);
      return E.right(undefined);
    },
    stdout: (text) => {
      captured.stdout += text;
    },
    stderr: (text) => {
      captured.stderr += text;
    },
    colour: false,
    stderrIsTty: false,
  });
  return { status, ...captured };
};

describe('fact-tracker notes replay', () => {
  it('prints each message with its blocks, the extractions, the stages, the profiles and the token summary', async () => {
    const result = await runNotes(['notes', 'replay', EXAMPLE]);
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
    const { stdout } = result;
    expect(stdout).toMatch(
      /^line 1 · maya · s1 · message 1 · 0 session facts · 0 block tokens · window 1 message \(\d+ tokens\) · trimmed 0 messages \(0 tokens\)\n/u,
    );
    expect(stdout).toContain('(no blocks yet: facts from an extraction serve from the next message on)');
    expect(stdout).toMatch(
      /^line 21 · jordan · s1 · extraction failed \(timeout\): no answer in time · facts unchanged \(6\)$/mu,
    );
    expect(stdout).toMatch(
      /^\+ \[Logistics\] Jordan works four night shifts a week since his rota changed in January\n(?:\+ .*\n)*- \[Logistics\] Jordan works night shifts at the hospital, three nights a week$/mu,
    );
    expect(stdout).toContain(
      '! entry 9 dropped: category "Preferences" is not one of People, Logistics, Conflict, Emotional, History',
    );
    expect(stdout).toMatch(
      /^line 43 · maya · end of stage · merged s1 · profile 13 facts from 1 session · 0 dropped$/mu,
    );
    expect(stdout).toMatch(/^line 45 · maya · s2 · message 1 · 0 session facts · 13 profile facts · /mu);
    expect(stdout).toContain('Profiles (2)');
    expect(stdout).toMatch(
      /^Tokens \(estimate\), summed over 17 user messages\n {2}blocks +[\d,]+ {2}the notes given to the main prompt\n {2}trimmed +[\d,]+ {2}older history/mu,
    );
    expect(stdout).toMatch(
      /2 users · 2 sessions · 34 messages · 17 extractions \(1 failed\) · 2 ends of stage · 0 rejected lines\n$/u,
    );
  });

  it('prints JSON with --json, and takes --turns and --tokenizer', async () => {
    const result = await runNotes(['notes', 'replay', EXAMPLE, '--json', '--turns', '2']);
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout) as {
      steps: Array<{ kind: string; windowMessages?: number }>;
      profiles: Array<{ user: string; profile: { consolidatedAt: unknown; sessionCount: number } }>;
      summary: Record<string, number>;
    };
    expect(Object.keys(report)).toEqual(['steps', 'errors', 'profiles', 'summary']);
    expect(Math.max(...report.steps.map((step) => step.windowMessages ?? 0))).toBe(3);
    expect(report.summary['userMessages']).toBe(17);
    // A profile leaves the library as it is stored: its time an ISO 8601 string.
    expect(report.profiles.map(({ user, profile }) => [user, profile.consolidatedAt])).toEqual([
      ['jordan', '2026-02-03T19:31:00.000Z'],
      ['maya', '2026-02-03T19:30:00.000Z'],
    ]);
  });

  it('saves the ledger as the notes section of a saved state', async () => {
    const result = await runNotes(['notes', 'replay', EXAMPLE, '--save', 'state.json']);
    expect(result.status).toBe(0);
    const decoded = decodeSavedState(JSON.parse(result.written.get('state.json')!));
    expect(
      E.isRight(decoded) &&
        decoded.right.notes !== undefined &&
        selectGlobalFacts(decoded.right.notes, 'maya')?.facts.length,
    ).toBe(13);
  });

  it('writes --save through an exclusive temporary file: a symlink planted at the old predictable name is left alone (item 8)', async () => {
    const dir = tempDir('notes-save');
    const target = join(dir, 'state.json');
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'not yours\n');
    // The name the writer used to open without O_EXCL: anyone who can write the directory could plant it.
    symlinkSync(victim, `${target}.${process.pid}.tmp`);
    const node = createNodeIo();
    const status = await run(['notes', 'replay', `${ROOT}${EXAMPLE}`, '--save', target], {
      ...node,
      stdout: () => undefined,
      stderr: () => undefined,
      colour: false,
      stderrIsTty: false,
    });
    expect(status).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('not yours\n');
    expect(lstatSync(target).isFile()).toBe(true);
    const decoded = decodeSavedState(JSON.parse(readFileSync(target, 'utf8')));
    expect(E.isRight(decoded) && decoded.right.notes !== undefined).toBe(true);
    expect(readdirSync(dir).filter((name) => name.startsWith('state.json') && name !== 'state.json')).toEqual([
      `state.json.${process.pid}.tmp`,
    ]);
  });

  it('counts one token in the singular', async () => {
    const log = [
      '{"type":"user","user":"maya","session":"s1","text":"hi"}',
      '{"type":"assistant","user":"maya","session":"s1","text":"yo"}',
      '{"type":"user","user":"maya","session":"s1","text":"ok"}',
    ].join('\n');
    const result = await runNotes(['notes', 'replay', 'log.jsonl', '--turns', '1'], { 'log.jsonl': log });
    expect(result.stdout).toContain('window 1 message (1 token) · trimmed 2 messages (2 tokens)');
    expect(result.stdout).toMatch(/\(1 token\)/u);
    expect(result.stdout).not.toMatch(/\b1 tokens\b/u);
  });

  it('prints no token shape its clips make of a message, a failed call or a warning that held none whole', async () => {
    const generated = 'a1B2c3D4e5'.repeat(30);
    // Neither matches a shape whole (more characters than a token has, or a word character glued
    // after it); the report's clips of the quote (100), the failure (120) and the warning (160) would.
    const long = `ghp_${generated}`;
    const glued = `ghp_${generated.slice(0, 36)}_prod`;
    const facts = [
      { category: 'People', fact: 'Old fact number one about the family and the house, ok' },
      { category: 'People', fact: `Key ${glued}` },
      ...Array.from({ length: 25 }, (_, index) => ({ category: 'People', fact: `Fact ${index + 3} about the user` })),
    ];
    const lines = [
      { type: 'user', user: 'maya', session: 's1', text: `Rotate the deploy key ${long}` },
      { type: 'extraction', user: 'maya', session: 's1', error: `request failed: ${long}` },
      { type: 'user', user: 'maya', session: 's1', text: 'And again.' },
      { type: 'extraction', user: 'maya', session: 's1', response: JSON.stringify({ notableFacts: facts }) },
    ].map((line) => JSON.stringify(line));
    for (const line of lines) expect(findSecret(line)).toBeUndefined();
    const result = await runNotes(['notes', 'replay', 'log.jsonl'], { 'log.jsonl': lines.join('\n') });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('> Rotate the deploy key [redacted: a GitHub token]');
    expect(result.stdout).toContain('extraction failed (model_error): request failed: [redacted: a GitHub token]');
    expect(result.stdout).toContain('! 2 facts over the cap of 25 dropped, the oldest first: ');
    expect(findSecret(result.stdout)).toBeUndefined();
  });

  it('reports rejected lines in the output and exits 2', async () => {
    const log = [
      '{"type":"user","user":"maya","session":"s1","text":"hi"}',
      '{oops',
      '{"type":"extraction","user":"jordan","session":"s1","response":"[]"}',
    ].join('\n');
    const result = await runNotes(['notes', 'replay', 'log.jsonl'], { 'log.jsonl': log });
    expect(result.status).toBe(2);
    expect(result.stdout).toMatch(/^line 2 · rejected \(invalid_json\): not JSON/mu);
    expect(result.stdout).toMatch(
      /^line 3 · rejected \(no_message\): no message of "jordan" in "s1" comes before this extraction$/mu,
    );
    expect(result.stderr).toBe('fact-tracker notes: 2 lines were rejected (listed in the report)\n');
  });

  it('points a saved state and a dispatch history to the command that reads them, in one line, instead of rejecting every line', async () => {
    const state = '{"format":"session-fact-tracker/state","version":1,"maxValidFacts":1000,"pairs":[]}\n';
    const history = '\n  {"type":"prompt","taskId":"1","taskPrompt":"Add a route","at":1}\n{"type":"dispatch"}\n';
    for (const [file, text, stderr] of [
      [
        'st.json',
        state,
        'fact-tracker notes: st.json is a saved state, not a conversation log: read its facts with fact-tracker facts st.json\n',
      ],
      [
        'h.jsonl',
        history,
        'fact-tracker notes: h.jsonl is a dispatch history, not a conversation log: replay it with fact-tracker replay h.jsonl\n',
      ],
    ] as const) {
      const result = await runNotes(['notes', 'replay', file, '--save', 'out.json'], { [file]: text });
      expect(result).toMatchObject({ status: 1, stdout: '', stderr });
      expect(result.written.size).toBe(0);
    }
  });

  it('names - as standard input when it points a saved state or a dispatch history piped in to the command that reads it', async () => {
    const state = '{"format":"session-fact-tracker/state","version":1,"maxValidFacts":1000,"pairs":[]}\n';
    const history = '{"type":"prompt","taskId":"1","taskPrompt":"Add a route","at":1}\n';
    expect(await runCli(['notes', 'replay', '-'], state)).toEqual({
      status: 1,
      stdout: '',
      stderr:
        'fact-tracker notes: standard input is a saved state, not a conversation log: read its facts with fact-tracker facts -\n',
    });
    expect(await runCli(['notes', 'replay', '-'], history)).toEqual({
      status: 1,
      stdout: '',
      stderr:
        'fact-tracker notes: standard input is a dispatch history, not a conversation log: replay it with fact-tracker replay -\n',
    });
  });

  it('reads at most 256 MiB of a conversation log: an endless file is refused in one line, not read until memory runs out', async () => {
    const { status, stdout, stderr } = await runCli(['notes', 'replay', '/dev/zero']);
    expect(status).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      'fact-tracker notes: cannot read /dev/zero: it is larger than the 268,435,456 bytes it may have\n',
    );
  });

  it('says a log pretty-printed over several lines (jq .) is one, rather than call it a saved state', async () => {
    const spread = (lines: ReadonlyArray<string>, indent: string | number = 2): string =>
      lines.map((line) => `${JSON.stringify(JSON.parse(line), null, indent)}\n`).join('');
    const log = readFileSync(join(ROOT, EXAMPLE), 'utf8').split('\n').slice(0, 3);
    const history = readFileSync(join(ROOT, 'examples', 'web-api-session.jsonl'), 'utf8')
      .split('\n')
      .slice(0, 3);
    for (const [file, text] of [
      ['talk.json', spread(log)],
      ['tabs.json', spread(log, '\t')],
      ['h.json', spread(history)],
    ] as const) {
      const result = await runNotes(['notes', 'replay', file, '--save', 'out.json'], { [file]: text });
      expect(result).toMatchObject({
        status: 1,
        stdout: '',
        stderr: `fact-tracker notes: ${file} is written over several lines (pretty-printed, as jq . writes it), not one JSON object a line: write it with jq -c . and read that\n`,
      });
      expect(result.written.size).toBe(0);
    }
    // A field the parser ignores, sorted first (jq -S), says nothing: the keys after it do.
    const channel = `${JSON.stringify({ channel: { kind: 'chat' }, session: 's1', text: 'Hi', type: 'user', user: 'maya' }, null, 2)}\n`;
    expect(await runNotes(['notes', 'replay', 'sorted.json'], { 'sorted.json': channel })).toMatchObject({
      status: 1,
      stdout: '',
      stderr: `fact-tracker notes: sorted.json is written over several lines (pretty-printed, as jq . writes it), not one JSON object a line: write it with jq -c . and read that\n`,
    });
    // A saved state pretty-printed is still one.
    const state = JSON.stringify(
      { format: 'session-fact-tracker/state', version: 1, maxValidFacts: 1000, pairs: [] },
      null,
      2,
    );
    const stateRun = await runNotes(['notes', 'replay', 'st.json'], { 'st.json': `${state}\n` });
    expect(stateRun.stderr).toBe(
      'fact-tracker notes: st.json is a saved state, not a conversation log: read its facts with fact-tracker facts st.json\n',
    );
  });

  it.each([
    [['notes'], 'fact-tracker notes: missing subcommand: replay (see fact-tracker notes --help)\n'],
    [
      ['notes', 'show', EXAMPLE],
      'fact-tracker notes: unknown subcommand "show": expected replay (see fact-tracker notes --help)\n',
    ],
    [
      ['notes', 'replay'],
      'fact-tracker notes: missing conversation log FILE (- for standard input) (see fact-tracker notes --help)\n',
    ],
    [
      ['notes', 'replay', EXAMPLE, '--turns', '0'],
      'fact-tracker notes: --turns must be a whole number 1 or more, not "0" (see fact-tracker notes --help)\n',
    ],
    [['notes', 'replay', 'missing.jsonl'], /^fact-tracker notes: .*missing\.jsonl.*\n$/u],
  ])('%j fails with one line', async (argv, stderr) => {
    const result = await runNotes(argv);
    expect(result).toMatchObject({ status: 1, stdout: '' });
    expect(result.stderr).toMatch(stderr);
  });

  it('has its own help, and a line in the general help', async () => {
    const [own, general] = await Promise.all([runNotes(['notes', '--help']), runNotes(['--help'])]);
    expect(own.stdout).toMatch(/^Usage: fact-tracker notes replay FILE \[options\]\n/u);
    expect(own.stdout).toContain(
      '{"type":"extraction","user":"maya","session":"s1","response":"{\\"notableFacts\\":[...]}"}',
    );
    // What an extraction line answers, as the library and docs/notes.md say (the earliest message not yet extracted).
    expect(own.stdout).not.toContain('latest message');
    expect(own.stdout).toContain('the earliest message of that user in that session not yet extracted');
    expect(general.stdout).toContain(
      "  fact-tracker notes replay FILE [options]     a conversation's notable facts, message by message\n",
    );
  });

  it('runs as a real process', async () => {
    const result = await runCli(['notes', 'replay', EXAMPLE]);
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe((await runNotes(['notes', 'replay', EXAMPLE])).stdout);
  });
});

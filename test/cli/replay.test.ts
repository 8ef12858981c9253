/**
 * `fact-tracker replay` on fixture histories: as a process, and for the cases of one behaviour
 * (tokenizers, counts) the same built code in this process.
 *
 * The golden file test/cli/golden/web-api-session.replay.json is the digest of the main
 * example's replay (see golden.ts): the summary, each prompt's figures and section digest, each
 * valid fact, and the SHA-256 of both outputs, so any byte of either is checked and a change is
 * named by what it changed. After an intended change of retrieval, extraction or the output
 * format, regenerate it and review its diff before committing:
 *
 *   npm run build && UPDATE_GOLDEN=1 npx vitest run test/cli/replay.test.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { z } from 'zod';
import { createStyle } from '../../src/cli/style.js';
import { renderPrompt } from '../../src/cli/render.js';
import { FACT_TAGS, type ReplayReport } from '../../src/index.js';
import { type CliRun, ROOT, runCli, runCliHere } from './runCli.js';
import { digestDifferences, type ReplayDigest, replayDigest } from './golden.js';
import { tempDir } from '../tempDirs.js';
import { BAD_LINES, BAD_LINES_REJECTED, REPLAY_SUMMARY_KEYS } from '../fixtures/expected.js';
import { implementer } from '../fixtures/results.js';

const EXAMPLE = 'examples/web-api-session.jsonl';
const GOLDEN = new URL('./golden/web-api-session.replay.json', import.meta.url);

/** The golden digest, rewritten from `actual` first when UPDATE_GOLDEN is set. */
const readGolden = (actual: ReplayDigest): ReplayDigest => {
  if (process.env['UPDATE_GOLDEN']) writeFileSync(GOLDEN, `${JSON.stringify(actual, null, 2)}\n`);
  return JSON.parse(readFileSync(GOLDEN, 'utf8')) as ReplayDigest;
};

/**
 * Each output of the example's replay, run once for the tests that read them: the JSON from the
 * binary's standard output, the text from the same built code in this process.
 */
const runs = new Map<string, Promise<CliRun>>();
const replayed = (format: 'json' | 'text'): Promise<CliRun> => {
  const known = runs.get(format);
  if (known !== undefined) return known;
  const run = format === 'json' ? runCli(['replay', EXAMPLE, '--json']) : runCliHere(['replay', EXAMPLE]);
  runs.set(format, run);
  return run;
};

/** The example's replay with --json --save, the state it saved, and what facts --json reads back from it: run once. */
const savedExample = (() => {
  let made: Promise<{ run: CliRun; state: string; facts: CliRun }> | undefined;
  const make = async () => {
    const state = join(tempDir('replay-'), 'state.json');
    const run = await runCliHere(['replay', EXAMPLE, '--json', '--save', state]);
    return { run, state, facts: await runCliHere(['facts', state, '--json']) };
  };
  return () => (made ??= make());
})();

/** Both outputs, the report and their digest. */
const example = async () => {
  const [json, text] = await Promise.all([replayed('json'), replayed('text')]);
  const report = JSON.parse(json.stdout) as ReplayReport;
  return { json, text, report, digest: replayDigest(report, { json: json.stdout, text: text.stdout }) };
};

const SessionFactSchema = z.strictObject({
  id: z.string().regex(/^[0-9a-f]{16}$/u),
  subject: z.string().min(1),
  relation: z.string().min(1),
  object: z.string().min(1),
  tags: z.array(z.enum(FACT_TAGS)).min(1).max(3),
  validFrom: z.number(),
  validTo: z.number().optional(),
  sourceTaskId: z.string().min(1),
  sourceRole: z.enum(['implementer', 'reviewer']),
  confidence: z.number().min(0).max(1),
});
const count = z.number().int().nonnegative();

/** The `--json` document exactly as issue 3 specifies it: no key more, none less. */
const ReplayReportSchema = z.strictObject({
  prompts: z.array(
    z.strictObject({
      line: z.number().int().positive(),
      taskId: z.string(),
      sessionContext: z.string(),
      facts: z.array(SessionFactSchema),
      contextTokens: count,
      historyTokens: count,
    }),
  ),
  errors: z.array(
    z.strictObject({ line: z.number().int().positive(), code: z.string().min(1), message: z.string().min(1) }),
  ),
  facts: z.array(SessionFactSchema),
  summary: z.strictObject({
    events: count,
    dispatches: count,
    prompts: count,
    validFacts: count,
    allFacts: count,
    historyTokens: count,
    contextTokens: count,
    contextToHistoryRatio: z.number().nonnegative(),
  }),
});

describe.concurrent('fact-tracker replay', () => {
  it('prints the same --json on every run, matching the schema and the golden file, and saves a state facts reads back', async ({
    expect,
  }) => {
    const [first, { run: second, state, facts: saved }] = await Promise.all([replayed('json'), savedExample()]);
    expect(first.status).toBe(0);
    expect(first.stderr).toBe('');
    expect(second.stdout).toBe(first.stdout);
    const report = ReplayReportSchema.parse(JSON.parse(first.stdout));
    expect(Object.keys(report.summary)).toEqual([...REPLAY_SUMMARY_KEYS]);
    expect(report.summary).toMatchObject({ events: 40, dispatches: 28, prompts: 11, validFacts: report.facts.length });
    expect(
      report.prompts.every(
        (prompt, index) => index === 0 || prompt.historyTokens >= report.prompts[index - 1]!.historyTokens,
      ),
    ).toBe(true);
    const { digest, report: read } = await example();
    expect(digestDifferences(digest, readGolden(digest), read)).toEqual([]);

    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ format: 'session-fact-tracker/state', version: 1 });
    expect(saved.status).toBe(0);
    expect(saved.stderr).toBe('');
    expect(JSON.parse(saved.stdout)).toEqual({ facts: report.facts, errors: [] });
  });

  it('prints each prompt with its header and section, the valid facts and the token summary', async ({ expect }) => {
    const { text: run, report } = await example();
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(
      /^line 4 · task 2 · \d+ facts · \d+ context tokens · [\d,]+ history tokens\n\[Session Context\]\n- /mu,
    );
    expect(run.stdout).toContain('Valid facts at the end (');
    expect(run.stdout).toMatch(/^SUBJECT +RELATION +OBJECT +TAGS +TASK$/mu);
    expect(run.stdout).toContain('Tokens (estimate)');
    expect(run.stdout).not.toContain('\u001b[');
    // The text holds the prompts of the --json report, in order, each as the renderer writes it.
    const style = createStyle(false);
    let from = 0;
    for (const prompt of report.prompts) {
      const at = run.stdout.indexOf(`${renderPrompt(prompt, style)}\n\n`, from);
      expect(at, `the prompt at line ${prompt.line}`).toBeGreaterThanOrEqual(from);
      from = at;
    }
    const table = run.stdout.slice(run.stdout.indexOf('Valid facts at the end'), run.stdout.indexOf('Tokens ('));
    expect(table).toMatch(`Valid facts at the end (${report.summary.validFacts})\n`);
    expect(table.trimEnd().split('\n')).toHaveLength(2 + report.summary.validFacts);
    const { events, dispatches, prompts, validFacts, allFacts } = report.summary;
    expect(run.stdout).toMatch(
      `\n${events} events · ${dispatches} dispatches · ${prompts} prompts · ${validFacts} valid facts · ${allFacts} in all · 0 rejected lines\n`,
    );
  });

  it('the golden digest names what changed: a section, a fact, the summary; the bytes alone otherwise', async ({
    expect,
  }) => {
    const { json, text, report } = await example();
    const golden = readGolden(replayDigest(report, { json: json.stdout, text: text.stdout }));
    const changed = (
      edit: (report: ReplayReport) => ReplayReport,
      output = { json: json.stdout, text: text.stdout },
    ) => {
      const edited = edit(report);
      return digestDifferences(replayDigest(edited, output), golden, edited);
    };
    const [, , third] = report.prompts;
    const [first, second] = report.facts;
    expect(
      changed((r) => ({
        ...r,
        prompts: r.prompts.map((p) => (p === third ? { ...p, sessionContext: `${p.sessionContext}\n- one more` } : p)),
      })),
    ).toEqual([`prompt at line ${third!.line}: its section is now\n${third!.sessionContext}\n- one more`]);
    expect(
      changed((r) => ({ ...r, facts: r.facts.map((f) => (f === first ? { ...f, confidence: 0.5 } : f)) })),
    ).toEqual([expect.stringMatching(new RegExp(`^fact ${first!.id}: .*confidence 1 is now .*confidence 0.5$`, 'u'))]);
    expect(
      changed((r) => ({ ...r, facts: r.facts.map((f) => (f === second ? { ...f, id: '0000000000000000' } : f)) })),
    ).toEqual([
      expect.stringMatching(/^fact 0000000000000000: new, \{/u),
      expect.stringMatching(new RegExp(`^fact ${second!.id} \\(.*\\): no longer valid at the end$`, 'u')),
    ]);
    expect(changed((r) => ({ ...r, summary: { ...r.summary, allFacts: r.summary.allFacts + 1 } }))).toEqual([
      expect.stringMatching(/^summary: /u),
    ]);
    expect(changed((r) => r, { json: json.stdout, text: `${text.stdout} ` })).toEqual([
      'the text output: its bytes differ (no summary, section or fact does)',
    ]);
  });

  it('reads a history and a saved state written as UTF-16, with its byte-order mark (PowerShell >) or without (iconv -t utf-16le), as it reads UTF-8', async ({
    expect,
  }) => {
    const dir = tempDir('replay-');
    const utf16 = (text: string, endian: 'le' | 'be', mark: boolean): Buffer => {
      const le = Buffer.from(`${mark ? '\uFEFF' : ''}${text.replace(/\n/gu, '\r\n')}`, 'utf16le');
      return endian === 'le' ? le : le.swap16();
    };
    const { json } = await example();
    // The state the example's replay saved (the first test reads it back as it is).
    const { state, facts } = await savedExample();
    for (const endian of ['le', 'be'] as const)
      for (const mark of [true, false]) {
        const file = join(dir, `history-${endian}-${String(mark)}.jsonl`);
        writeFileSync(file, utf16(readFileSync(`${ROOT}${EXAMPLE}`, 'utf8'), endian, mark));
        const run = await runCliHere(['replay', file, '--json']);
        expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
        expect(run.stdout).toBe(json.stdout);
        const state16 = join(dir, `state-${endian}-${String(mark)}.json`);
        writeFileSync(state16, utf16(readFileSync(state, 'utf8'), endian, mark));
        const facts16 = await runCliHere(['facts', state16, '--json']);
        expect({ status: facts.status, status16: facts16.status, stderr: facts16.stderr }).toEqual({
          status: 0,
          status16: 0,
          stderr: '',
        });
        expect(facts16.stdout).toBe(facts.stdout);
      }
  });

  it('budgets each prompt with the tokenizer its line names, --tokenizer over it, and rejects a line naming an unknown one (replay and explain)', async ({
    expect,
  }) => {
    const lines = readFileSync(join(ROOT, EXAMPLE), 'utf8').trim().split('\n');
    const named = lines.map((line) => {
      const event = JSON.parse(line) as { type: string };
      return event.type === 'prompt' ? JSON.stringify({ ...event, tokenizer: 'o200k' }) : line;
    });
    const last = named.reduce((found, line, index) => (line.includes('"tokenizer"') ? index + 1 : found), 0);
    const unknown = JSON.stringify({ type: 'prompt', taskId: '9', taskPrompt: 'x', tokenizer: 'cl100k' });
    const sections = (run: CliRun): string[] =>
      (JSON.parse(run.stdout) as ReplayReport).prompts.map((prompt) => prompt.sessionContext);
    // The same names written with JSON escapes, as any writer of JSON may.
    const escaped = named.map((line) => line.replace('"tokenizer":"o200k"', '"\\u0074okenizer":"\\u006f200k"'));
    const [recorded, o200k, estimate, overridden, explained, explainedO200k, rejected, recordedEscaped] =
      await Promise.all([
        runCliHere(['replay', '-', '--json'], named.join('\n')),
        runCliHere(['replay', EXAMPLE, '--json', '--tokenizer', 'o200k']),
        runCliHere(['replay', EXAMPLE, '--json']),
        runCliHere(['replay', '-', '--json', '--tokenizer', 'estimate'], named.join('\n')),
        runCliHere(['explain', '-', '--json', '--line', String(last)], named.join('\n')),
        runCliHere(['explain', EXAMPLE, '--json', '--line', String(last), '--tokenizer', 'o200k']),
        runCliHere(['replay', '-', '--json'], [...named, unknown].join('\n')),
        runCliHere(['replay', '-', '--json'], escaped.join('\n')),
      ]);
    expect(escaped).not.toEqual(named);
    expect(sections(recordedEscaped)).toEqual(sections(o200k));
    expect([recorded.status, recorded.stderr]).toEqual([0, '']);
    expect(sections(recorded)).toEqual(sections(o200k));
    expect(sections(recorded)).not.toEqual(sections(estimate));
    // Counted by the estimate unless --tokenizer says otherwise, as the summary's header names it.
    expect((JSON.parse(recorded.stdout) as ReplayReport).summary.historyTokens).toBe(
      (JSON.parse(estimate.stdout) as ReplayReport).summary.historyTokens,
    );
    expect(sections(overridden)).toEqual(sections(estimate));
    expect(explained.stdout).toBe(explainedO200k.stdout);
    expect(rejected.status).toBe(2);
    expect((JSON.parse(rejected.stdout) as ReplayReport).errors).toEqual([
      { line: named.length + 1, code: 'invalid_field', message: 'tokenizer is not one of estimate, o200k' },
    ]);
  });

  it('says a prompt that got no section had no fact chosen, and where to see why, not that no fact was relevant (a budget of 0 left them out)', async ({
    expect,
  }) => {
    const history = [
      { type: 'dispatch', role: 'implementer', taskId: '1', result: implementer('1', ['src/a.ts']) },
      { type: 'prompt', taskId: '2', taskPrompt: 'Change src/a.ts', maxTokens: 0 },
    ]
      .map((event) => JSON.stringify(event))
      .join('\n');
    const [replay, explain] = await Promise.all([
      runCliHere(['replay', '-'], history),
      runCliHere(['explain', '-', '--line', '2'], history),
    ]);
    expect(replay.stdout).toMatch(
      /^line 2 · task 2 · 0 facts · 0 context tokens · \d+ history tokens\n\(no section: no fact was chosen; explain --line 2 says why\)\n/u,
    );
    expect(explain.stdout).toMatch(/\n[\d.]+ +budget +src\/a\.ts +modified_by /u);
  });

  it('counts one token, and one fact, in the singular (replay and explain)', async ({ expect }) => {
    const history = [
      { type: 'dispatch', role: 'implementer', taskId: '1', output: 'ok' },
      { type: 'prompt', taskId: '2', taskPrompt: 'next' },
    ]
      .map((event) => JSON.stringify(event))
      .join('\n');
    const [replay, explain] = await Promise.all([
      runCliHere(['replay', '-'], history),
      runCliHere(['explain', '-', '--line', '2', '--max-facts', '1', '--max-tokens', '1'], history),
    ]);
    expect(replay.stdout).toContain('\nline 2 · task 2 · 0 facts · 0 context tokens · 1 history token\n');
    expect(explain.stdout).toMatch(/^line 2 · task 2 · 0 facts included of 0 · max 1 fact · 1 token\n/u);
  });

  it('groups the thousands of every count alike: the summary line, the lines not listed, and stderr', async ({
    expect,
  }) => {
    const dispatches = Array.from({ length: 1_000 }, (_, i) =>
      JSON.stringify({
        type: 'dispatch',
        role: 'implementer',
        taskId: String(i + 1),
        result: implementer(String(i + 1), [`src/m${i}.ts`, `test/m${i}.test.ts`]),
      }),
    );
    const history = [...dispatches, ...Array.from({ length: 1_002 }, () => 'not json')].join('\n');
    const run = await runCliHere(['replay', '-'], history);
    expect(run.status).toBe(2);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(
      /^1,000 events · 1,000 dispatches · 0 prompts · [\d,]+ valid facts · [\d,]+ in all · 1,002 rejected lines$/u,
    );
    expect(run.stdout).toContain('\n2 more lines were rejected (not listed: the report lists the first 1,000)\n');
    expect(run.stdout).toMatch(/\n {2}history {3}[\d,]+ {2}in 1,000 dispatch outputs\n/u);
    expect(run.stderr).toBe('fact-tracker replay: 1,002 lines were rejected (the first 1,000 listed in the report)\n');
    // The lines of figures (not the rejected lines or the table, whose line numbers and task ids name things).
    const figures = lines.filter((text) => /^(?:\d|Valid facts|Tokens|  [a-z]+ {2,}\d)/u.test(text));
    expect(figures).toHaveLength(7);
    expect(figures.filter((text) => /(?<![\d,])\d{4,}/u.test(text))).toEqual([]);
  });

  it('reads stdin with -, reports every kind of bad line with its number, applies the later lines, and exits 2', async ({
    expect,
  }) => {
    const run = await runCli(['replay', '-', '--json'], readFileSync(`${ROOT}${BAD_LINES}`, 'utf8'));
    expect(run.status).toBe(2);
    expect(run.stderr).toBe('fact-tracker replay: 8 lines were rejected (listed in the report)\n');
    const report = ReplayReportSchema.parse(JSON.parse(run.stdout));
    expect(report.errors.map((error) => [error.line, error.code])).toEqual(BAD_LINES_REJECTED);
    // Line 12 comes after all the bad lines: its review still reaches the prompt on line 13.
    expect(report.prompts.map((prompt) => prompt.line)).toEqual([1, 13]);
    expect(report.prompts[1]!.facts.some((fact) => fact.relation === 'issue' && fact.subject === 'src/app.ts')).toBe(
      true,
    );
    expect(report.facts.some((fact) => fact.relation === 'reviewed_as' && fact.object === 'approved')).toBe(true);
  });
});

/**
 * `fact-tracker replay`, run as a process on fixture histories.
 *
 * Golden files: test/cli/golden/ holds the exact output of `replay` (human and --json) for the
 * main example. After an intended change of retrieval, extraction or the output format,
 * regenerate them and review the diff before committing:
 *
 *   npm run build && UPDATE_GOLDEN=1 npx vitest run test/cli
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { z } from 'zod';
import { FACT_TAGS } from '../../src/index.js';
import { ROOT, runCli } from './runCli.js';
import { tempDir } from '../tempDirs.js';
import { BAD_LINES, BAD_LINES_REJECTED, REPLAY_SUMMARY_KEYS } from '../fixtures/expected.js';

const EXAMPLE = 'examples/web-api-session.jsonl';
const golden = (name: string): URL => new URL(`./golden/${name}`, import.meta.url);

/** Compares with a golden file, or rewrites it when UPDATE_GOLDEN is set. */
const readGolden = (name: string, actual: string): string => {
  if (process.env['UPDATE_GOLDEN']) writeFileSync(golden(name), actual);
  return readFileSync(golden(name), 'utf8');
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
    const state = join(tempDir('replay-'), 'state.json');
    const [first, second] = await Promise.all([
      runCli(['replay', EXAMPLE, '--json']),
      runCli(['replay', EXAMPLE, '--json', '--save', state]),
    ]);
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
    expect(first.stdout).toBe(readGolden('web-api-session.replay.json', first.stdout));

    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ format: 'session-fact-tracker/state', version: 1 });
    const saved = await runCli(['facts', state, '--json']);
    expect(saved.status).toBe(0);
    expect(saved.stderr).toBe('');
    expect(JSON.parse(saved.stdout)).toEqual({ facts: report.facts, errors: [] });
  });

  it('prints each prompt with its header and section, the valid facts and the token summary', async ({ expect }) => {
    const run = await runCli(['replay', EXAMPLE]);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(
      /^line 4 · task 2 · \d+ facts · \d+ context tokens · [\d,]+ history tokens\n\[Session Context\]\n- /mu,
    );
    expect(run.stdout).toContain('Valid facts at the end (');
    expect(run.stdout).toMatch(/^SUBJECT +RELATION +OBJECT +TAGS +TASK$/mu);
    expect(run.stdout).toContain('Tokens (estimate)');
    expect(run.stdout).not.toContain('\u001b[');
    expect(run.stdout).toBe(readGolden('web-api-session.replay.txt', run.stdout));
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

/**
 * The golden digest of a replay: what a reviewer reads (the summary, each prompt's figures and a
 * digest of its section, each valid fact's fields by id) and a digest of the bytes of each
 * output. Compared with the stored one, it names what changed: a section, a fact, the summary,
 * or, when none of those did, the bytes of an output. A few kilobytes stand for the whole
 * output, byte for byte, where a verbatim copy took 186 KB.
 */
import { createHash } from 'node:crypto';
import type { ReplayReport, SessionFact } from '../../src/index.js';

/** One prompt of a replay, as the digest keeps it. */
export interface PromptDigest {
  readonly line: number;
  readonly taskId: string;
  readonly facts: number;
  readonly contextTokens: number;
  readonly historyTokens: number;
  /** The first 16 hex digits of the section's SHA-256 ('' for no section). */
  readonly section: string;
}

/** What the golden file holds. */
export interface ReplayDigest {
  /** SHA-256 of each output, `--json` and text. */
  readonly output: { readonly json: string; readonly text: string };
  readonly summary: ReplayReport['summary'];
  readonly prompts: ReadonlyArray<PromptDigest>;
  /** Each valid fact at the end, by id (which stands for its triple): its other fields on one line. */
  readonly facts: Readonly<Record<string, string>>;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A fact's fields other than its id and triple. */
const factFields = (fact: SessionFact): string =>
  [
    fact.tags.join(','),
    `from ${fact.validFrom}${fact.validTo === undefined ? '' : ` to ${fact.validTo}`}`,
    `task ${fact.sourceTaskId}`,
    fact.sourceRole,
    `confidence ${fact.confidence}`,
  ].join(' · ');

/** The digest of a replay's report and of its two outputs. */
export const replayDigest = (report: ReplayReport, output: { json: string; text: string }): ReplayDigest => ({
  output: { json: sha256(output.json), text: sha256(output.text) },
  summary: report.summary,
  prompts: report.prompts.map((prompt) => ({
    line: prompt.line,
    taskId: prompt.taskId,
    facts: prompt.facts.length,
    contextTokens: prompt.contextTokens,
    historyTokens: prompt.historyTokens,
    section: prompt.sessionContext === '' ? '' : sha256(prompt.sessionContext).slice(0, 16),
  })),
  facts: Object.fromEntries(report.facts.map((fact) => [fact.id, factFields(fact)])),
});

const promptDifferences = (actual: ReplayDigest, golden: ReplayDigest, report: ReplayReport): string[] => {
  const lines = [...new Set([...golden.prompts, ...actual.prompts].map((prompt) => prompt.line))].sort((a, b) => a - b);
  return lines.flatMap((line) => {
    const was = golden.prompts.find((prompt) => prompt.line === line);
    const now = actual.prompts.find((prompt) => prompt.line === line);
    if (now === undefined) return [`prompt at line ${line}: gone`];
    if (was === undefined) return [`prompt at line ${line}: new, ${JSON.stringify(now)}`];
    const section = report.prompts.find((prompt) => prompt.line === line)?.sessionContext;
    return [
      ...(was.section === now.section ? [] : [`prompt at line ${line}: its section is now\n${section}`]),
      ...(['taskId', 'facts', 'contextTokens', 'historyTokens'] as const)
        .filter((key) => was[key] !== now[key])
        .map((key) => `prompt at line ${line}: ${key} ${was[key]} is now ${now[key]}`),
    ];
  });
};

const factDifferences = (actual: ReplayDigest, golden: ReplayDigest, report: ReplayReport): string[] => {
  const ids = [...new Set([...Object.keys(golden.facts), ...Object.keys(actual.facts)])].sort();
  return ids.flatMap((id) => {
    const was = golden.facts[id];
    const now = actual.facts[id];
    if (was === now) return [];
    if (now === undefined) return [`fact ${id} (${was}): no longer valid at the end`];
    if (was === undefined) return [`fact ${id}: new, ${JSON.stringify(report.facts.find((fact) => fact.id === id))}`];
    return [`fact ${id}: ${was} is now ${now}`];
  });
};

/**
 * What differs between a replay and its golden digest, each difference on its own line(s): the
 * summary, each prompt, each fact, and the bytes of an output only when nothing else differs.
 * Empty when the outputs are byte for byte the golden ones.
 */
export const digestDifferences = (actual: ReplayDigest, golden: ReplayDigest, report: ReplayReport): string[] => {
  const named = [
    ...(JSON.stringify(actual.summary) === JSON.stringify(golden.summary)
      ? []
      : [`summary: ${JSON.stringify(golden.summary)} is now ${JSON.stringify(actual.summary)}`]),
    ...promptDifferences(actual, golden, report),
    ...factDifferences(actual, golden, report),
  ];
  if (named.length > 0) return named;
  return (['json', 'text'] as const)
    .filter((kind) => actual.output[kind] !== golden.output[kind])
    .map((kind) => `the ${kind} output: its bytes differ (no summary, section or fact does)`);
};

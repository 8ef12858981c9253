/**
 * `npx tsx eval/checkLabels.ts [FILE...]`: checks the labeled histories (default: every
 * eval/histories/*.jsonl) before they are used to measure anything. Each line must parse as an
 * event, every dispatch must be accepted by the contract with no rule warning, and each label
 * in a prompt's `expect` must be a well-formed triple, listed once, naming a fact valid when
 * that prompt is compiled. It replays through the tracker the way eval/run.ts does, but never
 * retrieves: labels are checked against the store, not against what the ranking picks.
 * Exits 1 and prints every problem with its file and line; 0 with one line per history otherwise;
 * 2 with one line when an argument is an option or a file that cannot be read.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { createFactTracker, parseHistory, selectValidFacts } from '../src/index.js';

interface Triple {
  readonly subject: string;
  readonly relation: string;
  readonly object: string;
}

interface Outcome {
  readonly problems: ReadonlyArray<string>;
  readonly prompts: number;
  readonly labels: number;
}

const tripleKey = (t: Triple): string => `${t.subject}\u001f${t.relation}\u001f${t.object}`;

const isTriple = (value: unknown): value is Triple => {
  if (typeof value !== 'object' || value === null) return false;
  const { subject, relation, object } = value as Record<string, unknown>;
  return typeof subject === 'string' && typeof relation === 'string' && typeof object === 'string';
};

/** The raw `expect` field of a line; the history parser ignores it, so it is read here. */
const readExpect = (line: string): unknown => (JSON.parse(line) as { expect?: unknown }).expect;

const checkHistory = (text: string): Outcome => {
  const lines = text.split('\n');
  const parsed = parseHistory(text);
  const problems: string[] = parsed.errors.map((error) => `line ${error.line}: ${error.code}: ${error.message}`);
  let now = 0;
  let prompts = 0;
  let labels = 0;
  const tracker = createFactTracker({ clock: () => now });
  for (const event of parsed.events) {
    now = event.at;
    if (event.type === 'dispatch') {
      const ingested = tracker.ingestOutput({ role: event.role, taskId: event.taskId, output: event.output });
      if (E.isLeft(ingested))
        problems.push(`line ${event.line}: rejected ${ingested.left.code}: ${ingested.left.message}`);
      else for (const warning of ingested.right.warnings) problems.push(`line ${event.line}: rule warning: ${warning}`);
    } else if (event.type === 'invalidate') tracker.invalidate(event.subject, event.relation, event.at);
    else if (event.type === 'compact') tracker.compact(event.maxFacts);
    else {
      const expect = readExpect(lines[event.line - 1]!);
      if (expect === undefined) continue;
      if (!Array.isArray(expect)) {
        problems.push(`line ${event.line}: expect is not an array`);
        continue;
      }
      prompts += 1;
      labels += expect.length;
      const valid = new Set(selectValidFacts(tracker.getSnapshot()).map(tripleKey));
      const seen = new Set<string>();
      for (const label of expect) {
        if (!isTriple(label)) {
          problems.push(`line ${event.line} task ${event.taskId}: malformed label ${JSON.stringify(label)}`);
          continue;
        }
        const key = tripleKey(label);
        const shown = `${label.subject} | ${label.relation} | ${label.object}`;
        if (seen.has(key)) problems.push(`line ${event.line} task ${event.taskId}: duplicate label ${shown}`);
        else if (!valid.has(key)) problems.push(`line ${event.line} task ${event.taskId}: no valid fact ${shown}`);
        seen.add(key);
      }
    }
  }
  return { problems, prompts, labels };
};

/** Ends the run with one line on stderr (a wrong argument is the user's to fix). */
const refuse = (message: string): never => {
  process.stderr.write(`eval/checkLabels.ts: ${message}\nUsage: npx tsx eval/checkLabels.ts [FILE...]\n`);
  process.exit(2);
};

/** The text of a history named on the command line, or the end of the run saying why it cannot be read. */
const readable = (file: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    return refuse(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
};

const main = (): void => {
  const dir = join(import.meta.dirname, 'histories');
  const given = process.argv.slice(2);
  const files =
    given.length > 0
      ? given
      : readdirSync(dir)
          .filter((file) => file.endsWith('.jsonl'))
          .sort()
          .map((file) => join(dir, file));
  const option = given.find((arg) => arg.startsWith('-'));
  if (option !== undefined)
    refuse(`unknown option ${option}: name history files, or none for every one of eval/histories`);
  let failed = false;
  for (const file of files) {
    const { problems, prompts, labels } = checkHistory(readable(file));
    for (const problem of problems) console.error(`${file}: ${problem}`);
    failed ||= problems.length > 0;
    console.log(`${basename(file)}: ${prompts} labeled prompts, ${labels} labels, ${problems.length} problems`);
  }
  process.exitCode = failed ? 1 : 0;
};

main();

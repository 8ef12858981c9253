/** The `--help` texts, one per command and one for the whole tool. */
import type { CommandName } from './args.js';

const EXIT_STATUS = `Exit status:
  0  every line of the history applied
  2  some lines were rejected (the full report is still printed)
  1  usage error, unreadable file or unreadable saved state (one line on stderr)`;

const TIME = 'TIME is ISO-8601 (2026-03-02T10:00:00Z; no offset means UTC) or epoch milliseconds.';

const GENERAL = `fact-tracker: replay an orchestrator's dispatch history and see, prompt by prompt, which
session facts would be injected, what they cost in tokens, and why each was chosen.

Usage:
  fact-tracker replay FILE [options]           each prompt's [Session Context] and token cost
  fact-tracker facts FILE [options]            the facts of a history or a saved state
  fact-tracker explain FILE --line N           every fact's score and decision for one prompt
  fact-tracker schema implementer|reviewer     the JSON Schema of a dispatch result

  fact-tracker COMMAND --help                  the options of a command
  fact-tracker --version                       the version

FILE is a dispatch history in JSON Lines, one event per line ("-" reads standard input):
  {"type":"dispatch","role":"implementer","taskId":"3","at":"2026-03-01T10:00:00Z","output":"..."}
  {"type":"dispatch","role":"reviewer","taskId":"3","result":{...}}
  {"type":"prompt","taskId":"4","taskPrompt":"...","tags":["file_change"],"maxFacts":10,"maxTokens":500}
  {"type":"invalidate","subject":"src/config.ts","relation":"modified_by"}
  {"type":"compact","maxFacts":100}
A missing "at" is one second after the previous event (the first event: 0).

Colour is used only when standard output is a terminal and NO_COLOR is not set.

${EXIT_STATUS}
`;

const REPLAY = `Usage: fact-tracker replay FILE [options]

Replays a dispatch history (FILE, or - for standard input) through the fact tracker, as a live
orchestrator would have run it. For each prompt event it prints a header (line, task, number of
facts, context tokens, tokens of the earlier dispatch outputs the section stands in for) and the
[Session Context] section the prompt would get; rejected lines in between; then the facts valid
at the end as a table and a token summary.

Options:
  --json              one JSON document: {"prompts", "errors", "facts", "summary"}
  --max-facts N       facts per prompt, over each prompt's own maxFacts (default 10)
  --max-tokens N      token budget per prompt, over each prompt's own maxTokens (default 500)
  --tokenizer NAME    estimate: ceil(characters / 4) (default); o200k: GPT-4o's BPE tokenizer
  --as-of TIME        stop the replay at the first event after TIME
  --save STATE.json   write the final store as a saved state (read it with: fact-tracker facts)
  -h, --help          this help

${TIME}

${EXIT_STATUS}
`;

const FACTS = `Usage: fact-tracker facts FILE [options]

Prints the facts valid at the end of a history, or held by a saved state (written by
replay --save; the kind of FILE is detected from its content), as a table.

Options:
  --all               closed facts too, with their valid-time interval
  --tag TAG           only facts carrying TAG (repeat for any of several):
                      file_change, convention, decision, error, dependency, test
  --subject TEXT      only facts whose subject contains TEXT (ignoring case)
  --as-of TIME        the facts valid at TIME (a history is replayed up to TIME)
  --json              one JSON document: {"facts", "errors"}
  -h, --help          this help

${TIME}

${EXIT_STATUS}
`;

const EXPLAIN = `Usage: fact-tracker explain FILE --line N [options]

Replays the history up to line N, which must hold a prompt event, and lists every fact with its
relevance score and the decision: included, or the reason it was left out (invalidated, tag,
own_task, no_match, max_facts, budget). Ranked candidates come first, in rank order.

Options:
  --line N            the line of the prompt event (required)
  --max-facts N       facts per prompt, over the prompt's own maxFacts (default 10)
  --max-tokens N      token budget, over the prompt's own maxTokens (default 500)
  --tokenizer NAME    estimate (default) or o200k
  --json              one JSON document: {"line", "taskId", "taskPrompt", "maxFacts", "maxTokens", "decisions", "errors"}
  -h, --help          this help

${EXIT_STATUS}
`;

const SCHEMA = `Usage: fact-tracker schema implementer|reviewer

Prints the JSON Schema (draft 2020-12) of that role's dispatch result, for orchestrators that
give agents a structured-output schema. It is generated from the same schema that validates
results on input, so the two cannot drift apart.

Options:
  -h, --help          this help

Exit status: 0, or 1 for an unknown role.
`;

/** The help text of `topic`, or of the whole tool. */
export const helpText = (topic?: CommandName): string => {
  switch (topic) {
    case 'replay':
      return REPLAY;
    case 'facts':
      return FACTS;
    case 'explain':
      return EXPLAIN;
    case 'schema':
      return SCHEMA;
    case undefined:
      return GENERAL;
  }
};

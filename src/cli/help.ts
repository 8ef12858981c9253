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
  fact-tracker notes replay FILE [options]     a conversation's notable facts, message by message
  fact-tracker context SUBCOMMAND [options]    this repository's shared context across sessions
  fact-tracker mcp [options]                   an MCP server (stdio) over live session logs
  fact-tracker hook [options]                  one Claude Code / Codex hook event on stdin

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

const NOTES = `Usage: fact-tracker notes replay FILE [options]

Replays a recorded conversation (FILE, or - for standard input) through the notable-facts
ledger, using the model answers recorded in it instead of a live model. For each user message
it prints a header (line, user, session, facts, block tokens, the history window kept and the
older history the blocks stand in for) and the blocks the reply would get; for each extraction
the facts added and removed, or why it failed (the list stays as it was); for each end of
stage the merge into the user's profile. Then the profiles and a token summary.

FILE is JSON Lines, one entry per line:
  {"type":"user","user":"maya","session":"s1","at":"2026-02-03T19:00:00Z","text":"..."}
  {"type":"assistant","user":"maya","session":"s1","text":"..."}
  {"type":"extraction","user":"maya","session":"s1","response":"{\\"notableFacts\\":[...]}"}
  {"type":"extraction","user":"maya","session":"s1","error":"timeout"}
  {"type":"endStage","user":"maya","session":"s1"}
An extraction answers the user's latest message in that session, and its facts serve from the
next message on. endStage without a session merges every session with unmerged facts.
A missing "at" is one second after the previous line.

Options:
  --json              one JSON document: {"steps", "errors", "profiles", "summary"}
  --turns N           exchanges of history the main prompt keeps (default 5)
  --tokenizer NAME    estimate: ceil(characters / 4) (default); o200k: GPT-4o's BPE tokenizer
  --save STATE.json   write the ledger as the "notes" section of a saved state
  -h, --help          this help

${EXIT_STATUS}
`;

const CONTEXT = `Usage: fact-tracker context show|bundle|checkpoint|claim|record-failure [options]

Shared planning and implementation context of the git repository in the current directory,
kept in data/context/ (one JSON file per kind, a markdown dashboard next to it, tool sessions
in *.local.json files that stay out of git). It is off unless SHARED_CONTEXT_ENABLED=true or
fact-tracker.config.json at the repository root holds {"sharedContext": {"enabled": true}};
when off, every subcommand does nothing and touches no file.

Subcommands:
  show                 the context, its checkpoint and whether the repository moved past it
  bundle               exactly what a prompt gets: diff-first when the summary is stale
  checkpoint           after a verified run (tests pass, diff applied): record the summary
                       and the repository state it holds for
  claim TEXT           add a claim to the evidence ledger; "done", "implemented" or "fixed"
                       needs --file or --symbol
  record-failure       after a failed run: the step, the error and the next action only;
                       the last good summary stays

Options (all subcommands):
  --kind KIND          planning (default) or implementation
  --workstream ID      the workstream (default: default)
  --json               one JSON document instead of text
  -h, --help           this help

bundle:
  --facts FILE         session facts for the retrieved tier: a history or a saved state
  --query TEXT         what the facts must be relevant to (default: the feature request)
checkpoint:
  --summary TEXT       the new working summary (--summary-file FILE reads it from a file);
                       without it the current summary is re-verified at this state
  --feature TEXT       the feature request
  --pin RULE           pin a rule (repeatable); --unpin RULE removes one
  --decision TEXT      add an open decision (repeatable); --decide ID / --drop ID settle one
  --step TEXT          the next steps, replacing the checklist (repeatable)
claim:
  --file PATH:L10-L40  evidence: a file and a line range (repeatable)
  --symbol NAME        evidence: a symbol (repeatable)
record-failure:
  --failed-step STEP, --error TEXT, --next-action TEXT   (all three required)

Exit status: 0, or 1 with one line on stderr for a usage error, a refused claim, a corrupt or
newer context file (a corrupt one is moved aside to a timestamped backup), or a checkpoint
outside a git repository.
`;

const MCP = `Usage: fact-tracker mcp [options]

An MCP server on standard input and output (add it to an agent; see "Use it from an agent" in
the README). Every session is a log in the dispatch-history format, one JSON event per line,
in .fact-tracker/sessions/{sessionId}.jsonl under the working directory: every call that
changes a session appends to its log and flushes it before answering, several servers and
hooks can share a session, and "fact-tracker replay" reads any session log afterwards.

Tools:
  ingest_result      {sessionId, taskId, role, output, at?}: record a subagent's result
  compile_context    {sessionId, taskId, taskPrompt, tags?, maxTokens?, maxFacts?, at?}:
                     the [Session Context] section for the next dispatch (records the prompt)
  explain_context    {sessionId, taskId, taskPrompt, limit?}: scores and decisions (30)
  list_facts         {sessionId, subject?, tag?, asOf?, includeClosed?, limit?}: facts (50)
  invalidate_fact    {sessionId, subject, relation, at?}: close a (subject, relation) pair
Resources: fact-tracker://schemas/dispatch-result, fact-tracker://sessions/{sessionId}

Options:
  --sessions-dir DIR        where the session logs are (default .fact-tracker/sessions)
  --max-answer-tokens N     the largest answer of any tool, in tokens (default 8000, least 1000)
  --tokenizer NAME          estimate (default) or o200k; replay a log with the same one
  -h, --help                this help

Exit status: 0 when the client closes the connection, 1 for a usage error.
`;

const HOOK = `Usage: fact-tracker hook [options]

One hook event of Claude Code or Codex, read as JSON from standard input:
  PreToolUse (Agent, Task or spawn_agent)  records the subagent's prompt in the session log of
                     session_id (task id: a "Task ID:" line of the prompt, else tool_use_id)
                     and computes its [Session Context] section
  SubagentStart      prints the oldest pending section of the agent's type as
                     {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": ...}}
  SubagentStop       records last_assistant_message when it holds a dispatch result block
                     (role reviewer when the agent type matches --reviewer-pattern, else implementer)
Other events are ignored. The log is .fact-tracker/sessions/{session_id}.jsonl under the
payload's cwd, the same log the MCP server keeps.

Options:
  --sessions-dir DIR        where the session logs are (default .fact-tracker/sessions under cwd)
  --reviewer-pattern RE     agent types that are reviewers (default "review", ignoring case)
  --max-facts N             facts per section (default 10)
  --max-tokens N            token budget per section (default 500)
  --tokenizer NAME          estimate (default) or o200k
  -h, --help                this help

Exit status: always 0, with at most one JSON object on stdout; problems go to stderr, and the
agent carries on.
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
    case 'notes':
      return NOTES;
    case 'context':
      return CONTEXT;
    case 'mcp':
      return MCP;
    case 'hook':
      return HOOK;
    case undefined:
      return GENERAL;
  }
};

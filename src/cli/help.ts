/**
 * The `--help` pages. Each page is prose about its command around the option lines, which are
 * generated from the same tables the parser reads (`COMMAND_OPTIONS`), so no option's name or
 * description is written twice.
 */
import { COMMAND_NAMES, type CommandName } from './command.js';
import { COMMAND_OPTIONS } from './commandOptions.js';
import {
  CONTEXT_COMMON_OPTIONS,
  CONTEXT_OPTIONS,
  CONTEXT_SUBCOMMAND_OPTIONS,
  CONTEXT_SUBCOMMANDS,
  type ContextSubcommand,
} from './contextArgs.js';
import { formatOptions } from './options.js';

const EXIT_STATUS = `Exit status:
  0  every line of the history applied
  2  some lines were rejected (the full report is still printed)
  1  usage error, unreadable file or unreadable saved state (one line on stderr)`;

const TIME = 'TIME is ISO-8601 (2026-03-02T10:00:00Z; no offset means UTC) or epoch milliseconds.';

/** What a page says beyond its options. */
interface Page {
  /** The command line after `fact-tracker`. */
  readonly synopsis: string;
  /** A shorter one for the general help, when the synopsis is long. */
  readonly listed?: string;
  /** One line for the general help. */
  readonly summary: string;
  readonly description: string;
  /** Text after the options. */
  readonly footer: string;
}

/** What each subcommand does, after its name and arguments. */
const CONTEXT_SUBCOMMAND_HELP: Readonly<Record<ContextSubcommand, readonly [usage: string, help: string]>> = {
  show: ['show', 'the context, its checkpoint and whether the repository moved past it'],
  bundle: ['bundle', 'exactly what a prompt gets: diff-first when the summary is stale'],
  checkpoint: [
    'checkpoint',
    'after a verified run (tests pass, diff applied): record the summary\nand the repository state it holds for',
  ],
  claim: [
    'claim TEXT',
    'add a claim to the evidence ledger; "done", "implemented" or "fixed"\nneeds --file or --symbol',
  ],
  'record-failure': [
    'record-failure',
    'after a failed run: the step, the error and the next action only;\nthe last good summary stays',
  ],
  resolve: [
    'resolve',
    'merge both sides of a context file that a git pull or merge left with\nconflict markers (any write does it too; show and bundle report it);\nregenerate a dashboard out of step with the JSON',
  ],
  move: [
    'move --from BRANCH',
    "carry the workstream's context from BRANCH to the current branch\n(after git branch -m); merged with one already there",
  ],
};

const indented = (label: string, text: string, column: number): string => {
  const [first = '', ...rest] = text.split('\n');
  const head = `  ${label}`;
  return [
    `${head}${' '.repeat(Math.max(2, column - head.length))}${first}`,
    ...rest.map((line) => ' '.repeat(column) + line),
  ].join('\n');
};

const PAGES: Readonly<Record<CommandName, Page>> = {
  replay: {
    synopsis: 'replay FILE [options]',
    summary: "each prompt's [Session Context] and token cost",
    description: `Replays a dispatch history (FILE, or - for standard input) through the fact tracker, as a live
orchestrator would have run it. For each prompt event it prints a header (line, task, number of
facts, context tokens, tokens of the earlier dispatch outputs the section stands in for) and the
[Session Context] section the prompt would get; rejected lines in between; then the facts valid
at the end as a table and a token summary. --session ID replays a live session from its store.`,
    footer: `${TIME}\n\n${EXIT_STATUS}`,
  },
  facts: {
    synopsis: 'facts FILE [options]',
    summary: 'the facts of a history or a saved state',
    description: `Prints the facts valid at the end of a history, or held by a saved state (written by
replay --save; the kind of FILE is detected from its content), as a table. --session ID reads a
live session from its store instead of FILE.`,
    footer: `${TIME}\n\n${EXIT_STATUS}`,
  },
  explain: {
    synopsis: 'explain FILE --line N [options]',
    listed: 'explain FILE --line N',
    summary: "every fact's score and decision for one prompt",
    description: `Replays the history up to line N, which must hold a prompt event, and lists every fact with its
relevance score and the decision: included, or the reason it was left out (invalidated, tag,
own_task, no_match, max_facts, budget). Ranked candidates come first, in rank order.
--session ID reads a live session from its store instead of FILE.`,
    footer: EXIT_STATUS,
  },
  schema: {
    synopsis: 'schema implementer|reviewer',
    summary: 'the JSON Schema of a dispatch result',
    description: `Prints the JSON Schema (draft 2020-12) of that role's dispatch result, for orchestrators that
give agents a structured-output schema. It is generated from the same schema that validates
results on input, so the two cannot drift apart.`,
    footer: 'Exit status: 0, or 1 for an unknown role.',
  },
  notes: {
    synopsis: 'notes replay FILE [options]',
    summary: "a conversation's notable facts, message by message",
    description: `Replays a recorded conversation (FILE, or - for standard input) through the notable-facts
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
  {"type":"rewrite","user":"maya","response":"{\\"notableFacts\\":[...]}"}
An extraction line answers the extraction the live tracker would have running: the one started
at the earliest message of that user in that session not yet extracted, with the messages
recorded meanwhile folded into one follow-up that the next extraction line answers. Its facts
serve from the next message on. endStage merges once the extractions of the messages before it
have settled, as live; without a session it merges every session with unmerged facts. A missing
"at" is one second after the previous line. A rewrite line answers the rewrite of a profile an end of
stage asked the model for (by default when a merge leaves two facts that may tell of one thing).`,
    footer: EXIT_STATUS,
  },
  context: {
    synopsis: `context ${CONTEXT_SUBCOMMANDS.join('|')} [options]`,
    listed: 'context SUBCOMMAND [options]',
    summary: "this repository's shared context across sessions",
    description: `Shared planning and implementation context of the git repository in the current directory,
kept in data/context/ (one JSON file per kind, a markdown dashboard next to it, tool sessions
in *.local.json files that stay out of git). It is off unless SHARED_CONTEXT_ENABLED=true or
fact-tracker.config.json at the repository root holds {"sharedContext": {"enabled": true}};
when off, every subcommand does nothing and touches no file.

Subcommands:
${CONTEXT_SUBCOMMANDS.map((name) => indented(...CONTEXT_SUBCOMMAND_HELP[name], 23)).join('\n')}`,
    footer: `Text that looks like a secret (an AWS key, a private key, a GitHub, OpenAI or Anthropic token,
a Bearer token, a JWT) is refused, naming the field: nothing of it is stored.

Exit status: 0, or 1 with one line on stderr for a usage error, a refused claim or secret, a
corrupt, conflicted, newer or too large (over 5 MiB) context file (a write moves a corrupt one
aside to a timestamped backup; show and bundle never move a file), a symbolic link out of the
repository, a bare repository or .git directory, a failing git, or a write outside a git
repository; 2 when bundle --facts read a history with rejected lines (the bundle is printed).
A dashboard or tool-sessions file that cannot be written is a warning on stderr (exit 0): the
JSON, the source of truth, was saved. See docs/context.md for every cap and key rule.`,
  },
  mcp: {
    synopsis: 'mcp [options]',
    summary: 'an MCP server (stdio) over live session logs',
    description: `An MCP server on standard input and output (add it to an agent: see docs/mcp.md). Every
session is a log in the dispatch-history format, one JSON event per line, in
.fact-tracker/sessions/{sessionId}.jsonl under the project (CLAUDE_PROJECT_DIR, else the git
work tree of the working directory, else it): a call that changes a session appends to its log
and flushes it before answering, several servers and hooks can share a session, and
"fact-tracker replay" reads any session log afterwards. With --store postgres://... (or
FACT_TRACKER_STORE) the sessions are in PostgreSQL, shared by servers and hooks on every
machine that reaches it (see docs/team.md); a store that cannot be used is one line on stderr
and exit status 1 before the server starts.

Tools:
  ingest_result      {sessionId, taskId, role, output, at?}: record a subagent's result
  compile_context    {sessionId, taskId, taskPrompt, tags?, maxTokens?, maxFacts?, layout?,
                     at?}: the [Session Context] section for the next dispatch (records the
                     prompt)
  explain_context    {sessionId, taskId, taskPrompt, tags?, maxTokens?, maxFacts?, layout?,
                     limit?}: scores and decisions (30)
  list_facts         {sessionId, subject?, tag?, asOf?, includeClosed?, limit?}: facts (50)
  invalidate_fact    {sessionId, subject, relation, at?}: close a (subject, relation) pair
Resources: fact-tracker://schemas/dispatch-result, fact-tracker://sessions/{sessionId}`,
    footer:
      'Exit status: 0 when the client closes the connection; 1 for a usage error, a store that cannot\nbe used, standard input that is a folder, or a message over 16 MiB (message_too_large).',
  },
  hook: {
    synopsis: 'hook [options]',
    summary: 'one Claude Code / Codex hook event on stdin',
    description: `One hook event of Claude Code or Codex, read as JSON from standard input, kept in the session
log of its session_id (.fact-tracker/sessions/{session_id}.jsonl under the project: Claude Code's
CLAUDE_PROJECT_DIR, else the git work tree of the payload's cwd, else that cwd; the same log the
MCP server keeps), or in the store --store or FACT_TRACKER_STORE names (a PostgreSQL URL: the
hook's own pairing files stay in the folder). Set it up with: fact-tracker init claude (or codex).
  PreToolUse         of Agent, Task or spawn_agent: records the subagent's prompt (task id: a
                     "Task ID:" line of the prompt, else tool_use_id) and computes its
                     [Session Context] section; in Claude Code, prints the prompt with the
                     section in front as hookSpecificOutput.updatedInput (no permission
                     decision: the user is asked what they would be asked without it)
  PostToolUse        of the same call: records the subagent's answer under that call's task
  PostToolUseFailure of the same call: ends it
  SubagentStart      where the prompt could not be rewritten (Codex, or a Claude Code that
                     ignores the rewrite), gives the section as additionalContext
  SubagentStop       records the last message of a subagent whose task is known; a repeated
                     stop is a no-op
Other events are ignored. See docs/hooks.md.`,
    footer: `Exit status: always 0, with at most one JSON object on stdout; a problem is a line on stderr
that starts with a code (input_too_large, invalid_payload, invalid_task_id, prompt_too_large,
output_too_large, io, ...), and also a systemMessage the user sees; the agent carries on.`,
  },
  init: {
    synopsis: 'init claude|codex [options]',
    summary: "write an agent's hook and MCP settings into a project",
    description: `Writes the hook and MCP server settings of an agent into the project, merged into the files
already there (the user's entries stay; earlier fact-tracker entries are replaced; a second run
changes nothing):
  claude             .claude/settings.json (hooks) and .mcp.json (the MCP server)
  codex              .codex/hooks.json (hooks) and .codex/config.toml ([mcp_servers.fact-tracker])
The settings run this installation only, and nothing is ever fetched from a registry: where the
package is installed in the project, the copy in its node_modules (npx --no-install: settings to
commit); elsewhere Node on the absolute path of this entry point (settings of this machine only).
--npx and --node choose. A JSON file that is empty, a file not valid JSON or TOML, or a symbolic
link stops the command with nothing written (an empty config.toml is TOML). --store writes the
store into the settings through the environment variable FACT_TRACKER_STORE, which wins when it
is set; a URL that holds a password is refused (set FACT_TRACKER_STORE in your environment
instead, see docs/team.md), and so is one set by hand in .mcp.json that a run without --store
would drop. Runs on one project take turns under a lock, .fact-tracker-init.lock in the project,
which each removes (see docs/hooks.md).`,
    footer: `Exit status: 0, or 1 with one line on stderr when the settings could not all be written:
nothing was, unless the line names the files that were (a rename failed after another).`,
  },
  sessions: {
    synopsis: 'sessions list|export ID|delete ID [options]',
    listed: 'sessions list|export|delete',
    summary: 'the live sessions of a store',
    description: `The live sessions of a store: --store (a folder, or a postgres:// URL), else FACT_TRACKER_STORE,
else the project's .fact-tracker/sessions (the project: CLAUDE_PROJECT_DIR, else the git work
tree of the working directory, else it).
  list               the ids of the sessions, one a line, sorted
  export ID          the session's log as a dispatch history (JSON Lines), which
                     fact-tracker replay - reads
  delete ID          delete the session: its log, its snapshot and the files beside them`,
    footer: `A failure is one line on stderr, its code first (unknown_session, invalid_session_id, store_url,
store_unreachable, store_auth, store_privilege, store_schema, io); no message shows a password.

Exit status: 0, or 1 with one line on stderr.`,
  },
  db: {
    synopsis: 'db migrate [options]',
    summary: "create or migrate a PostgreSQL store's schema",
    description: `Creates the schema of a PostgreSQL store (fact_tracker), or brings it to the version this
package knows, and says what it did; run it as a role that may create the schema, so the role
the agents use needs only to read and write its tables (see docs/team.md). A store does it on
first use too, when its role may. --print prints the SQL instead, connecting to nothing: it is
safe to run more than once.`,
    footer: `Exit status: 0, or 1 with one line on stderr (store_url, store_unreachable, store_auth,
store_privilege, store_schema: a schema newer than this package).`,
  },
};

const optionsOf = (command: CommandName): string => {
  if (command !== 'context') return `Options:\n${formatOptions(COMMAND_OPTIONS[command])}`;
  const own = CONTEXT_SUBCOMMANDS.filter((name) => CONTEXT_SUBCOMMAND_OPTIONS[name].length > 0).map(
    (name) => `${name}:\n${formatOptions(CONTEXT_OPTIONS, CONTEXT_SUBCOMMAND_OPTIONS[name])}`,
  );
  return [`Options (all subcommands):\n${formatOptions(CONTEXT_OPTIONS, CONTEXT_COMMON_OPTIONS)}`, ...own].join('\n\n');
};

const commandPage = (command: CommandName): string => {
  const page = PAGES[command];
  return `Usage: fact-tracker ${page.synopsis}\n\n${page.description}\n\n${optionsOf(command)}\n\n${page.footer}\n`;
};

const generalPage =
  (): string => `fact-tracker: replay an orchestrator's dispatch history and see, prompt by prompt, which
session facts would be injected, what they cost in tokens, and why each was chosen.

Usage:
${COMMAND_NAMES.map((name) => indented(`fact-tracker ${PAGES[name].listed ?? PAGES[name].synopsis}`, PAGES[name].summary, 47)).join('\n')}

${indented('fact-tracker COMMAND --help', 'the options of a command', 47)}
${indented('fact-tracker --version', 'the version', 47)}

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

/** The help text of `topic`, or of the whole tool. */
export const helpText = (topic?: CommandName): string => (topic === undefined ? generalPage() : commandPage(topic));

/**
 * Every command's options, each declared once with its help text: the parser (`args.ts`) and
 * the help pages (`help.ts`) are both made from this table.
 */
import { FACT_TAGS } from '../core/fact.js';
import { DEFAULT_MAX_FACTS, DEFAULT_MAX_TOKENS } from '../core/retrieve/defaults.js';
import type { CommandName } from './command.js';
import { CONTEXT_OPTIONS } from './contextArgs.js';
import { HELP_OPTION, type OptionTable } from './options.js';

const TOKENIZER_OPTION = {
  tokenizer: {
    type: 'string',
    value: 'NAME',
    help: "estimate: ceil(characters / 4) (default); o200k: GPT-4o's BPE tokenizer",
  },
} as const satisfies OptionTable;

const RETRIEVAL_OPTIONS = {
  'max-facts': {
    type: 'string',
    value: 'N',
    help: `facts per prompt, over the prompt's own maxFacts (default ${DEFAULT_MAX_FACTS})`,
  },
  'max-tokens': {
    type: 'string',
    value: 'N',
    help: `token budget per prompt, over the prompt's own maxTokens (default ${DEFAULT_MAX_TOKENS})`,
  },
  tokenizer: {
    type: 'string',
    value: 'NAME',
    help: "estimate: ceil(characters / 4); o200k: GPT-4o's BPE tokenizer; over\nthe tokenizer each prompt's line names (default: the line's, else\nestimate; the report's token counts are then estimate's)",
  },
  layout: {
    type: 'string',
    value: 'NAME',
    help: "lines: one line per fact; grouped: a task's files on one line; over\nthe prompt's own layout (default: the prompt's, else lines)",
  },
} as const satisfies OptionTable;

/** `--layout` of the live commands, kept in each prompt's line. */
const LIVE_LAYOUT_OPTION = {
  layout: {
    type: 'string',
    value: 'NAME',
    help: "lines: one line per fact (default); grouped: a task's files on one\nline; kept in each prompt's line, so a replay gives the same sections",
  },
} as const satisfies OptionTable;

/** `--store`, the way every command that reaches live sessions names where they are. */
const storeOption = (relative: string): OptionTable => ({
  store: {
    type: 'string',
    value: 'STORE',
    help: `where the sessions are: a folder (${relative}) or a\npostgres:// URL (default: $FACT_TRACKER_STORE, else the project's\n.fact-tracker/sessions)`,
  },
});

/** `--store` of `db`: a database only. */
const DATABASE_OPTION = {
  store: {
    type: 'string',
    value: 'URL',
    help: 'the PostgreSQL database, postgres://USER[:PASSWORD]@HOST[:PORT]/DB\n(default: $FACT_TRACKER_STORE)',
  },
} as const satisfies OptionTable;

/** `--session ID` and `--store`: read a session kept in a store instead of a FILE. */
const SESSION_OPTIONS = {
  session: { type: 'string', value: 'ID', help: 'read the session ID from the store instead of a FILE' },
  ...storeOption('relative to the working directory'),
} as const satisfies OptionTable;

const jsonOption = (shape: string): OptionTable => ({ json: { type: 'boolean', help: `one JSON document: ${shape}` } });

/** Every command's options, each declared once: the parser and the help pages are made from this table. */
export const COMMAND_OPTIONS: Readonly<Record<CommandName, OptionTable>> = {
  replay: {
    ...jsonOption('{"prompts", "errors", "facts", "summary"}'),
    ...RETRIEVAL_OPTIONS,
    'as-of': { type: 'string', value: 'TIME', help: 'stop the replay at the first event after TIME' },
    save: {
      type: 'string',
      value: 'STATE.json',
      help: 'write the final store into a saved state, keeping its notes (read it with: fact-tracker facts)',
    },
    ...SESSION_OPTIONS,
    ...HELP_OPTION,
  },
  facts: {
    all: { type: 'boolean', help: 'closed facts too, with their valid-time interval' },
    tag: {
      type: 'string',
      multiple: true,
      value: 'TAG',
      help: `only facts carrying TAG (repeat for any of several):\n${FACT_TAGS.join(', ')}`,
    },
    subject: { type: 'string', value: 'TEXT', help: 'only facts whose subject contains TEXT (ignoring case)' },
    'as-of': { type: 'string', value: 'TIME', help: 'the facts valid at TIME (a history is replayed up to TIME)' },
    ...jsonOption('{"facts", "errors"}'),
    ...SESSION_OPTIONS,
    ...HELP_OPTION,
  },
  explain: {
    line: { type: 'string', value: 'N', help: 'the line of the prompt event (required)' },
    ...RETRIEVAL_OPTIONS,
    ...jsonOption('{"line", "taskId", "taskPrompt", "maxFacts", "maxTokens",\n"decisions", "errors"}'),
    ...SESSION_OPTIONS,
    ...HELP_OPTION,
  },
  schema: { ...HELP_OPTION },
  notes: {
    ...jsonOption('{"steps", "errors", "profiles", "summary"}'),
    turns: { type: 'string', value: 'N', help: 'exchanges of history the main prompt keeps (default 5)' },
    ...TOKENIZER_OPTION,
    save: {
      type: 'string',
      value: 'STATE.json',
      help: 'write the ledger as the "notes" section of a saved state, keeping its fact store',
    },
    ...HELP_OPTION,
  },
  context: CONTEXT_OPTIONS,
  mcp: {
    'sessions-dir': {
      type: 'string',
      value: 'DIR',
      help: 'where the session logs are, relative to the project (default\n.fact-tracker/sessions)',
    },
    ...storeOption('as --sessions-dir'),
    'max-answer-tokens': {
      type: 'string',
      value: 'N',
      help: 'the largest answer of any tool, in tokens (default 8000, at least 1000)',
    },
    tokenizer: {
      type: 'string',
      value: 'NAME',
      help: "estimate (default) or o200k; o200k is named in each prompt's line,\nso a replay budgets the sections alike",
    },
    ...LIVE_LAYOUT_OPTION,
    ...HELP_OPTION,
  },
  hook: {
    'sessions-dir': {
      type: 'string',
      value: 'DIR',
      help: 'where the session logs are, relative to the project (default\n.fact-tracker/sessions)',
    },
    ...storeOption('as --sessions-dir'),
    'reviewer-pattern': {
      type: 'string',
      value: 'RE',
      help: 'agent types whose results are reviews, ignoring case (default "(?<!p)review":\n"review" but not "preview")',
    },
    'max-facts': { type: 'string', value: 'N', help: `facts per section (default ${DEFAULT_MAX_FACTS})` },
    'max-tokens': { type: 'string', value: 'N', help: `token budget per section (default ${DEFAULT_MAX_TOKENS})` },
    tokenizer: {
      type: 'string',
      value: 'NAME',
      help: "estimate (default) or o200k; o200k is named in each prompt's line,\nso a replay budgets the sections alike",
    },
    ...LIVE_LAYOUT_OPTION,
    ...HELP_OPTION,
  },
  init: {
    project: {
      type: 'string',
      value: 'DIR',
      help: 'the project to set up (default: the git work tree of the working\ndirectory, else the working directory)',
    },
    npx: {
      type: 'boolean',
      help: 'run "npx --no-install fact-tracker" (the copy installed in the\nproject): settings to commit. The default when the package is\ninstalled in the project',
    },
    node: {
      type: 'boolean',
      help: "run Node on this installation's absolute path: settings of this\nmachine only. The default when the package is not installed in\nthe project",
    },
    store: {
      type: 'string',
      value: 'STORE',
      help: 'the store the settings use when FACT_TRACKER_STORE is not set: a\nfolder or a postgres:// URL without a password (keep that in\nPGPASSWORD or ~/.pgpass, or the whole URL in FACT_TRACKER_STORE)',
    },
    layout: {
      type: 'string',
      value: 'NAME',
      help: "the sections' layout: lines, one line per fact (default); grouped, a\ntask's files on one line, given to the hook command and the server",
    },
    ...HELP_OPTION,
  },
  sessions: { ...storeOption('relative to the working directory'), ...HELP_OPTION },
  db: {
    ...DATABASE_OPTION,
    print: { type: 'boolean', help: 'print the SQL instead of running it (connects to nothing)' },
    ...HELP_OPTION,
  },
};

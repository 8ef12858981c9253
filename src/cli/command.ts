/**
 * What a command line asks for: one typed `Command` per command, every value already checked
 * (`args.ts` builds them), so the commands themselves never meet a malformed option.
 */
import type { FactTag, SourceRole } from '../core/fact.js';
import type { SectionLayout } from '../core/retrieve/defaults.js';
import type { ContextCommand } from './contextArgs.js';
import type { InitHost } from './init/hosts.js';
import type { TokenizerName } from '../tokens/names.js';

/** The commands, in the order the help lists them. */
export const COMMAND_NAMES = [
  'replay',
  'facts',
  'explain',
  'schema',
  'notes',
  'context',
  'mcp',
  'hook',
  'init',
  'sessions',
  'db',
] as const;
/** One command name. */
export type CommandName = (typeof COMMAND_NAMES)[number];

/** True for the name of a command. */
export const isCommandName = (value: string | undefined): value is CommandName =>
  value !== undefined && (COMMAND_NAMES as ReadonlyArray<string>).includes(value);

/** Options shared by the commands that retrieve facts for prompts. */
export interface RetrievalOptions {
  readonly maxFacts?: number;
  readonly maxTokens?: number;
  /** `--tokenizer`, when given (default: the estimate; a replay takes each prompt line's own). */
  readonly tokenizer?: TokenizerName;
  readonly layout?: SectionLayout;
}

/** What a reading command reads: a FILE (`-`: standard input), or a session kept in a store. */
export type HistoryInput =
  | { readonly kind: 'file'; readonly file: string }
  | {
      readonly kind: 'session';
      readonly id: string;
      /** The store (a folder or a PostgreSQL URL); default `FACT_TRACKER_STORE`, else the project's folder. */
      readonly store?: string;
    };

/** `fact-tracker replay FILE` (or `--session ID`). */
export interface ReplayCommand extends RetrievalOptions {
  readonly name: 'replay';
  readonly input: HistoryInput;
  readonly json: boolean;
  readonly asOf?: number;
  readonly save?: string;
}

/** `fact-tracker facts FILE` (or `--session ID`). */
export interface FactsCommand {
  readonly name: 'facts';
  readonly input: HistoryInput;
  readonly json: boolean;
  readonly all: boolean;
  readonly tags: ReadonlyArray<FactTag>;
  readonly subject?: string;
  readonly asOf?: number;
}

/** `fact-tracker explain FILE --line N` (or `--session ID`). */
export interface ExplainCommand extends RetrievalOptions {
  readonly name: 'explain';
  readonly input: HistoryInput;
  readonly line: number;
  readonly json: boolean;
}

/** `fact-tracker schema implementer|reviewer`. */
export interface SchemaCommand {
  readonly name: 'schema';
  readonly role: SourceRole;
}

/** `fact-tracker notes replay FILE`: a conversation log through the notable-facts ledger. */
export interface NotesCommand {
  readonly name: 'notes';
  readonly action: 'replay';
  readonly file: string;
  readonly json: boolean;
  readonly tokenizer: TokenizerName;
  /** Exchanges the main prompt keeps. */
  readonly turns?: number;
  readonly save?: string;
}

/** `fact-tracker mcp`: the MCP server over standard input and output. */
export interface McpCommand {
  readonly name: 'mcp';
  /** The sessions folder (default `.fact-tracker/sessions` under the working directory). */
  readonly sessionsDir?: string;
  /** Where the sessions are kept: a folder, or a PostgreSQL URL (default: `FACT_TRACKER_STORE`, else the folder). */
  readonly store?: string;
  readonly maxAnswerTokens?: number;
  readonly tokenizer: TokenizerName;
  /** The layout of the sections of calls that do not name one. */
  readonly layout?: SectionLayout;
}

/** `fact-tracker hook`: one Claude Code or Codex hook event on standard input. */
export interface HookCommand extends RetrievalOptions {
  readonly name: 'hook';
  readonly sessionsDir?: string;
  /** Where the session logs are kept: a folder, or a PostgreSQL URL (default: `FACT_TRACKER_STORE`, else the folder). */
  readonly store?: string;
  /** Agent types matching it (ignoring case) are reviewers; default `review`. */
  readonly reviewerPattern?: RegExp;
}

/** `fact-tracker init claude|codex`: writes an agent's hook and MCP settings into a project. */
export interface InitCommand {
  readonly name: 'init';
  readonly host: InitHost;
  /** The project (default: the git work tree of the working directory, else the working directory). */
  readonly project?: string;
  /**
   * How the settings start this installation: Node on its entry point, or `npx --no-install`;
   * absent, `npx` when the package is installed in the project, else Node.
   */
  readonly via?: 'node' | 'npx';
  /**
   * The store the settings name through `FACT_TRACKER_STORE` (a folder, or a PostgreSQL URL
   * without a password): the value when the environment sets none.
   */
  readonly store?: string;
  /** The sections' layout the hook command and the MCP server are given (absent or `lines`: none, the default). */
  readonly layout?: SectionLayout;
}

/** `fact-tracker sessions list|export|delete`: the sessions of a store. */
export type SessionsCommand =
  | { readonly name: 'sessions'; readonly action: 'list'; readonly store?: string }
  | { readonly name: 'sessions'; readonly action: 'export' | 'delete'; readonly id: string; readonly store?: string };

/** `fact-tracker db migrate`: a PostgreSQL store's schema, made or brought up to date ahead of use, or its SQL printed. */
export interface DbCommand {
  readonly name: 'db';
  readonly action: 'migrate';
  /** The database (default `FACT_TRACKER_STORE`). */
  readonly store?: string;
  /** Print the SQL instead of running it (no connection). */
  readonly print: boolean;
}

/** `--help` (of a command, or of the whole tool) and `--version`. */
export type InfoCommand = { readonly name: 'help'; readonly topic?: CommandName } | { readonly name: 'version' };

/** A parsed command line. */
export type Command =
  | ReplayCommand
  | FactsCommand
  | ExplainCommand
  | SchemaCommand
  | NotesCommand
  | ContextCommand
  | McpCommand
  | HookCommand
  | InitCommand
  | SessionsCommand
  | DbCommand
  | InfoCommand;

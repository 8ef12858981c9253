/**
 * What `fact-tracker init` writes into an agent's settings, as pure functions from the current
 * content of a file to its new content. Each merge keeps everything of the user's, replaces the
 * entries of fact-tracker it finds (from an earlier `init`, or written by hand from an older
 * README), and gives back the same value when there is nothing to change, so running `init`
 * twice leaves the files as the first run left them.
 */
import * as E from 'fp-ts/lib/Either.js';
import { parse as parseToml, stringify as stringifyToml, TomlError } from 'smol-toml';
import { exceedsJsonDepth, parseJson } from '../../base/json.js';
import { isRecord } from '../../base/record.js';
import { describeKind } from '../../base/schema.js';
import { collapseWhitespace } from '../../base/text.js';
import type { SectionLayout } from '../../core/retrieve/defaults.js';
import type { InitHost } from './hosts.js';
import { tableHeaders } from './tomlHeaders.js';
import { STORE_VARIABLE } from '../store.js';

/** The name the MCP server is registered under. */
export const SERVER_NAME = 'fact-tracker';

/** How the agent starts this installation: the hook command line, and the MCP server's command. */
export interface Launcher {
  /** A shell command line (hooks run through `sh -c`). */
  readonly hook: string;
  readonly mcp: { readonly command: string; readonly args: ReadonlyArray<string> };
  /** The store the settings fall back to when `FACT_TRACKER_STORE` is not set (none: the project's folder). */
  readonly store?: string;
}

/** What the MCP servers of Codex (which start with a cleared environment) are given of ours: the store, and a password kept apart from it. */
export const FORWARDED_VARIABLES = [STORE_VARIABLE, 'PGPASSWORD', 'PGPASSFILE'] as const;

/** `${FACT_TRACKER_STORE:-STORE}`: the environment's store when it names one, else `store` (a shell's and Claude Code's syntax alike). */
export const storeReference = (store: string): string => `\${${STORE_VARIABLE}:-${store}}`;

/** The shell words that set the store for the command after them. */
const storeAssignment = (store: string): string => `${STORE_VARIABLE}="${storeReference(store)}"`;

/**
 * True when `text` cannot be shown on a line of the terminal: it holds a line break, a control
 * character (which could drive the terminal) or a format or other invisible character.
 */
export const isUnshowable = (text: string): boolean =>
  /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029]/u.test(text);

/**
 * Why `store` cannot be written into a shell word between double quotes (a `"`, `$`, backquote,
 * backslash, `}`, apostrophe or line break), nor shown on a line of the terminal (`isUnshowable`),
 * or undefined when it can.
 */
export const unsafeStore = (store: string): string | undefined =>
  // An apostrophe too: bash (not in its POSIX mode) reads one inside "${VAR:-...}" as an open quote.
  /["$`\\}'\r\n]/u.test(store)
    ? 'holds a character a shell would read ($, ", `, \\, }, \' or a line break): percent-encode it in a URL, or name another folder'
    : isUnshowable(store)
      ? 'holds a control or invisible character: percent-encode it in a URL, or name another folder'
      : undefined;

/** `text` quoted for a POSIX shell: one argument, whatever it holds. */
export const shellQuote = (text: string): string =>
  /^[\w@%+=:,./-]+$/u.test(text) ? text : `'${text.replace(/'/gu, `'\\''`)}'`;

/** Options the settings already give the hook command and the server, which a run keeps. */
export interface KeptWords {
  readonly hook: ReadonlyArray<string>;
  readonly mcp: ReadonlyArray<string>;
}

/**
 * The commands that run this installation and nothing else: Node on the absolute path of its
 * entry point, or `npx --no-install`, which runs the copy installed in the project and never
 * fetches a package; with `kept`, the options already given to each, after the layout.
 */
export const launcherFor = (
  main: string,
  via: 'node' | 'npx',
  store?: string,
  layout?: SectionLayout,
  kept: KeptWords = { hook: [], mcp: [] },
): Launcher => {
  // The default layout is no option at all: a bare hook keeps its fast start.
  const options = layout === undefined || layout === 'lines' ? [] : ['--layout', layout];
  const hookOptions = [...options, ...kept.hook].map(shellQuote);
  const mcpOptions = [...options, ...kept.mcp];
  const plain: Launcher =
    via === 'npx'
      ? {
          hook: ['npx --no-install fact-tracker hook', ...hookOptions].join(' '),
          mcp: { command: 'npx', args: ['--no-install', 'fact-tracker', 'mcp', ...mcpOptions] },
        }
      : {
          hook: [`node ${shellQuote(main)} hook`, ...hookOptions].join(' '),
          mcp: { command: 'node', args: [main, 'mcp', ...mcpOptions] },
        };
  // The hooks run through a shell, which reads the fallback; a bare `hook` keeps its fast start.
  return store === undefined ? plain : { ...plain, hook: `${storeAssignment(store)} ${plain.hook}`, store };
};

/**
 * Codex's MCP server command for `launcher`: the same command, or with a store, a shell that
 * sets it first (Codex passes a server only the variables `env_vars` names, and expands none).
 */
const codexCommand = (launcher: Launcher): Launcher['mcp'] =>
  launcher.store === undefined
    ? launcher.mcp
    : {
        command: 'sh',
        args: [
          '-c',
          `${storeAssignment(launcher.store)} exec ${[launcher.mcp.command, ...launcher.mcp.args].map(shellQuote).join(' ')}`,
        ],
      };

/**
 * The MCP server's command as the settings of `host` give it, on one line, for `init` to say what
 * it configured: Codex's as its shell runs it (with a store, `sh -c '...'`), Claude Code's with
 * the store its `env` sets (which Claude Code expands itself, no shell).
 */
export const serverCommandLine = (host: InitHost, launcher: Launcher): string => {
  const { command, args } = host === 'codex' ? codexCommand(launcher) : launcher.mcp;
  const line = [command, ...args].map(shellQuote).join(' ');
  return host === 'claude' && launcher.store !== undefined
    ? `${line} (its env sets ${STORE_VARIABLE} to ${storeReference(launcher.store)})`
    : line;
};

/** One hook `init` registers: an event, and the tools it matches when the event has a matcher. */
export interface HookEntry {
  readonly event: string;
  readonly matcher?: string;
}

/**
 * The hooks of each agent. Claude Code pairs a subagent with its call by the call's id, so it
 * needs the tool events; Codex has no tool events for `spawn_agent` in its documented hooks,
 * so it gets them in case a version sends them, and relies on the subagent events.
 */
export const HOOK_ENTRIES: Readonly<Record<InitHost, ReadonlyArray<HookEntry>>> = {
  claude: [
    { event: 'PreToolUse', matcher: 'Agent|Task' },
    { event: 'PostToolUse', matcher: 'Agent|Task|SubagentHandback' },
    { event: 'PostToolUseFailure', matcher: 'Agent|Task' },
    { event: 'SubagentStart' },
    { event: 'SubagentStop' },
  ],
  codex: [
    { event: 'PreToolUse', matcher: 'spawn_agent' },
    { event: 'PostToolUse', matcher: 'spawn_agent' },
    { event: 'SubagentStart' },
    { event: 'SubagentStop' },
  ],
};

/** The events `init` writes hooks for on `host`: a fact-tracker handler under another one is the user's choice, kept as written. */
export const hookEvents = (host: InitHost): ReadonlyArray<string> => HOOK_ENTRIES[host].map(({ event }) => event);

/** Seconds an agent waits for one hook run: far more than it takes, far less than the agents' default of ten minutes. */
export const HOOK_TIMEOUT_SECONDS = 60;

/**
 * How a hook command stands to fact-tracker: `true`, its hook (init replaces it); `'shared'`, its
 * hook among commands of the user's own (init keeps it as written, and writes no second hook
 * under its event); `false`, the user's own.
 */
export type Ownership = boolean | 'shared';

/** A merge that cannot be made safely: why, in one line. */
export type MergeError = string;

/** Our handler of one hook, as `init` writes it, with the keys the user set on the one it replaces (`timeout`, `statusMessage`, ...). */
const ourHandler = (launcher: Launcher, kept: Readonly<Record<string, unknown>> = {}): Record<string, unknown> => ({
  type: 'command',
  command: launcher.hook,
  timeout: HOOK_TIMEOUT_SECONDS,
  ...kept,
});

/**
 * A handler's command line: its `command`, with its `args` when it has them (the exec form,
 * `{"command": "npx", "args": [...]}`), each quoted for a shell; undefined when it has none.
 */
export const handlerCommand = (handler: unknown): string | undefined => {
  if (!isRecord(handler) || typeof handler['command'] !== 'string') return undefined;
  const args = handler['args'];
  if (!Array.isArray(args)) return handler['command'];
  return args.every((arg) => typeof arg === 'string')
    ? [handler['command'], ...(args as string[])].map(shellQuote).join(' ')
    : undefined;
};

/** The keys of a handler init replaces that it keeps: all but those it writes itself. */
const userKeys = (handler: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const { type: _type, command: _command, args: _args, ...kept } = handler;
  return kept;
};

/**
 * The events init writes whose handlers `isOurs` finds to run fact-tracker's hook among commands of
 * the user's own: init leaves each of them as written, and writes no second hook under it.
 */
const sharedEvents = (
  hooks: Readonly<Record<string, unknown>>,
  host: InitHost,
  isOurs: (command: string) => Ownership,
): ReadonlyArray<string> =>
  hookEvents(host).filter((event) => {
    const groups = Object.hasOwn(hooks, event) ? hooks[event] : undefined;
    return (Array.isArray(groups) ? groups : []).some(
      (group) =>
        isRecord(group) &&
        Array.isArray(group['hooks']) &&
        group['hooks'].some((handler) => isOurs(handlerCommand(handler) ?? '') === 'shared'),
    );
  });

/**
 * True when `hooks` already holds each of our hooks once, as `init` writes it, in a group of its
 * event with its matcher, and no other handler `isOurs` recognizes under the events it writes
 * (but those it leaves as written, `shared`): a user may have added handlers of their own to our
 * groups, and a run with nothing to change leaves them as they are.
 */
const holdsExactly = (
  hooks: Readonly<Record<string, unknown>>,
  host: InitHost,
  launcher: Launcher,
  isOurs: (command: string) => Ownership,
  shared: ReadonlyArray<string>,
): boolean => {
  const found: string[] = [];
  const events = hookEvents(host);
  for (const [event, groups] of Object.entries(hooks))
    for (const group of Array.isArray(groups) ? groups : []) {
      if (!isRecord(group) || !Array.isArray(group['hooks'])) return false;
      for (const handler of group['hooks'])
        if (events.includes(event) && isRecord(handler) && isOurs(handlerCommand(handler) ?? '') !== false) {
          // Under an event a shared handler runs the hook in, only the shared ones stay.
          if (shared.includes(event)) {
            if (isOurs(handlerCommand(handler) ?? '') === true) return false;
            continue;
          }
          // Ours as init writes it, with the keys the user added (a longer timeout, a statusMessage).
          if (JSON.stringify(handler) !== JSON.stringify(ourHandler(launcher, userKeys(handler)))) return false;
          found.push(JSON.stringify([event, group['matcher']]));
        }
    }
  const expected = HOOK_ENTRIES[host]
    .filter(({ event }) => !shared.includes(event))
    .map(({ event, matcher }) => JSON.stringify([event, matcher]));
  return found.length === expected.length && expected.every((entry) => found.includes(entry));
};

/**
 * Adds the hooks of `host` to a settings document (`.claude/settings.json`, `.codex/hooks.json`:
 * both use `{"hooks": {"Event": [{"matcher", "hooks": [{"type": "command", ...}]}]}}`). A document
 * that already holds them as written is returned as it is. Otherwise handlers `isOurs` recognizes
 * under the events it writes are removed first, and groups they leave empty with them; every other
 * key, event, group and handler stays as it was, a fact-tracker handler under another event too,
 * and so does a handler that runs fact-tracker's hook among commands of the user's own (`shared`),
 * whose event gets no hook of init's (the handlers wholly ours there are removed all the same).
 */
export const mergeHooks = (
  current: unknown,
  host: InitHost,
  launcher: Launcher,
  isOurs: (command: string) => Ownership,
): E.Either<MergeError, Readonly<Record<string, unknown>>> => {
  const settings = current === undefined ? {} : current;
  if (!isRecord(settings)) return E.left(`it holds ${describeKind(settings)}, not a JSON object`);
  const hooks = settings['hooks'] ?? {};
  if (!isRecord(hooks)) return E.left(`"hooks" is ${describeKind(hooks)}, not an object`);
  const shared = sharedEvents(hooks, host, isOurs);
  if (holdsExactly(hooks, host, launcher, isOurs, shared)) return E.right(settings);
  const events = hookEvents(host);
  // No prototype: an event may be named anything, `__proto__` too, and is written back as it is.
  const merged: Record<string, unknown[]> = Object.create(null) as Record<string, unknown[]>;
  const keptKeys = new Map<string, Record<string, unknown>>();
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) return E.left(`"hooks.${event}" is ${describeKind(groups)}, not an array`);
    const kept: unknown[] = [];
    for (const [index, group] of groups.entries()) {
      if (!isRecord(group) || !Array.isArray(group['hooks']))
        return E.left(`"hooks.${event}[${index}]" is not a group of the form {"matcher", "hooks": [...]}`);
      const handlers = group['hooks'].filter((handler) => {
        const command = handlerCommand(handler);
        // A shared handler stays as written; one wholly ours goes, under a shared handler's event too.
        if (command === undefined || !events.includes(event) || isOurs(command) !== true) return true;
        keptKeys.set(event, { ...keptKeys.get(event), ...userKeys(handler as Record<string, unknown>) });
        return false;
      });
      if (handlers.length === group['hooks'].length) kept.push(group);
      else if (handlers.length > 0) kept.push({ ...group, hooks: handlers });
    }
    merged[event] = kept;
  }
  for (const { event, matcher } of HOOK_ENTRIES[host]) {
    if (shared.includes(event)) continue;
    const group = {
      ...(matcher === undefined ? {} : { matcher }),
      hooks: [ourHandler(launcher, keptKeys.get(event))],
    };
    merged[event] = [...(merged[event] ?? []), group];
  }
  for (const [event, groups] of Object.entries(merged))
    if (groups.length === 0 && (hooks[event] as unknown[]).length > 0) delete merged[event];
  return E.right({ ...settings, hooks: merged });
};

/**
 * Why the server's entry `current` cannot take the store `launcher` writes: a key the store is
 * written into (`env`, Codex's `env_vars`) holding a value of another shape, which the entry
 * written would replace, the user's value lost unsaid; undefined when it can. `path` names the
 * entry as messages do.
 */
const storeKeysProblem = (
  current: unknown,
  launcher: Launcher,
  path: string,
  shapes: Readonly<Record<string, 'an object' | 'a table' | 'an array'>>,
): MergeError | undefined => {
  if (launcher.store === undefined || !isRecord(current)) return undefined;
  for (const [key, shape] of Object.entries(shapes)) {
    const value = current[key];
    // Nothing set (null too, which holds nothing to lose), or the shape the store is written into.
    if (value === undefined || value === null || (shape === 'an array' ? Array.isArray(value) : isRecord(value)))
      continue;
    return `"${path}.${key}" is ${describeKind(value)}, not ${shape}`;
  }
  return undefined;
};

/** The server's entry in `.mcp.json`: its command, keeping whatever else the user set on it; a store by Claude Code's `${VAR:-default}` in its `env`. */
const claudeServerEntry = (current: unknown, launcher: Launcher): Record<string, unknown> => {
  const kept = isRecord(current) ? current : {};
  const env = isRecord(kept['env']) ? kept['env'] : {};
  return {
    ...kept,
    type: 'stdio',
    command: launcher.mcp.command,
    args: [...launcher.mcp.args],
    ...(launcher.store === undefined ? {} : { env: { ...env, [STORE_VARIABLE]: storeReference(launcher.store) } }),
  };
};

/** The server's table in Codex's `config.toml`: its command, keeping the user's other keys; with a store, the variables it needs forwarded. */
const codexServerEntry = (current: unknown, launcher: Launcher): Record<string, unknown> => {
  const kept = isRecord(current) ? current : {};
  const { command, args } = codexCommand(launcher);
  const forwarded = Array.isArray(kept['env_vars']) ? (kept['env_vars'] as unknown[]) : [];
  if (launcher.store === undefined) return { ...kept, command, args: [...args] };
  // A store the table's env sets would win over the one init writes: the server and the hooks would part.
  const { [STORE_VARIABLE]: _replaced, ...env } = isRecord(kept['env']) ? kept['env'] : {};
  const { env: _env, ...others } = kept;
  return {
    ...others,
    command,
    args: [...args],
    ...(Object.keys(env).length === 0 ? {} : { env }),
    env_vars: [...forwarded, ...FORWARDED_VARIABLES.filter((name) => !forwarded.includes(name))],
  };
};

/** Registers the MCP server in a `.mcp.json` document (`{"mcpServers": {...}}`). */
export const mergeMcpJson = (
  current: unknown,
  launcher: Launcher,
): E.Either<MergeError, Readonly<Record<string, unknown>>> => {
  const document = current === undefined ? {} : current;
  if (!isRecord(document)) return E.left(`it holds ${describeKind(document)}, not a JSON object`);
  const servers = document['mcpServers'] ?? {};
  if (!isRecord(servers)) return E.left(`"mcpServers" is ${describeKind(servers)}, not an object`);
  // An entry of our name that is no server at all is the user's to fix: replaced, it would be lost unsaid.
  const existing = servers[SERVER_NAME];
  if (existing !== undefined && existing !== null && !isRecord(existing))
    return E.left(`"mcpServers.${SERVER_NAME}" is ${describeKind(existing)}, not an object`);
  const storeKeys = storeKeysProblem(existing, launcher, `mcpServers.${SERVER_NAME}`, { env: 'an object' });
  if (storeKeys !== undefined) return E.left(storeKeys);
  return E.right({
    ...document,
    mcpServers: { ...servers, [SERVER_NAME]: claudeServerEntry(servers[SERVER_NAME], launcher) },
  });
};

/**
 * The indentation of one level of a JSON settings file, `current`: that of its first indented
 * line (four spaces, a tab), so that a rewrite changes only the lines init adds, not every one;
 * two spaces for a new file or one written on a line.
 */
const indentOf = (current: string | undefined): string => /\n([ \t]+)\S/u.exec(current ?? '')?.[1] ?? '  ';

/** The text of a JSON settings file as `init` writes it, indented as the file it replaces (`current`) was. */
export const formatJson = (value: unknown, current?: string): string =>
  `${JSON.stringify(value, null, indentOf(current))}\n`;

/**
 * How deep a JSON settings file may nest arrays and objects: the agents' own nest a few levels,
 * and the merge compares and writes a document by recursion (`JSON.stringify`), which a file
 * nested some thousands deep (valid JSON all the same) would take past the stack.
 */
const MAX_SETTINGS_DEPTH = 1000;

/**
 * A JSON settings file's text, read; Left says why it is not a JSON document. An empty file is
 * not one either: the agent would not read it, and it may be a file another tool truncated,
 * which `init` must not take as "no settings" and overwrite.
 */
export const parseJsonSettings = (text: string): E.Either<MergeError, unknown> => {
  if (text.replace(/^\uFEFF/u, '').trim() === '')
    return E.left('it is empty, which is not a JSON document: write {} into it (or delete it) and run init again');
  if (exceedsJsonDepth(text, MAX_SETTINGS_DEPTH))
    return E.left(`it nests arrays and objects more than ${MAX_SETTINGS_DEPTH} deep, which init does not merge into`);
  return E.mapLeft((reason: string) => `it is not valid JSON (${collapseWhitespace(reason)})`)(
    parseJson(text.replace(/^\uFEFF/u, '')),
  );
};

/** True when a table header line names the server's table or one below it. */
const isServerTable = (name: string): boolean => {
  // Each run of spaces matched once, then dropped beside a dot: `\s*\.\s*` went over a run again
  // from each of its places, seconds for a header of many spaces (a quoted key), as valid as any.
  const dotted = name.replace(/\s+/gu, (run: string, at: number) =>
    name[at - 1] === '.' || name[at + run.length] === '.' ? '' : run,
  );
  const unquoted = dotted.replace(/"([^"]*)"|'([^']*)'/gu, (_, a, b) => String(a ?? b));
  return unquoted === `mcp_servers.${SERVER_NAME}` || unquoted.startsWith(`mcp_servers.${SERVER_NAME}.`);
};

/**
 * True when a TOML text (its `lines`, and the table `headers` of each) gives `mcp_servers` a value
 * before its first table, `mcp_servers = { ... }`: an inline table, closed, which takes no table
 * added below it.
 */
const writesServersInline = (lines: ReadonlyArray<string>, headers: ReadonlyArray<string | undefined>): boolean => {
  const first = headers.findIndex((header) => header !== undefined);
  return lines
    .slice(0, first === -1 ? lines.length : first)
    .some((line) => /^\s*(?:mcp_servers|"mcp_servers"|'mcp_servers')\s*=/u.test(line));
};

/**
 * How `config.toml` is read: every integer as a BigInt, so that one a double cannot hold exactly
 * (up to 2^63 - 1 is valid TOML) is edited rather than refused as invalid, and so that an integer
 * stays apart from a float of the same value (`60` and `60.0`, two types to TOML and its readers).
 */
const TOML_OPTIONS = { integersAsBigInt: true } as const;

/** How the server's table is written: every number a float, since every integer read is a BigInt (`TOML_OPTIONS`), written as one. */
const TOML_WRITING = { numbersAsFloat: true } as const;

/**
 * Where the TOML parser refused a text, and no more: its message quotes the lines around the
 * place, and a value written unquoted there may be a token (`GITHUB_TOKEN = ghp_...`).
 */
const tomlProblem = (error: TomlError): string => `line ${error.line}, column ${error.column}`;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The first integer of `value` TOML does not allow (64 bits, signed), which the parser reads all the same. */
const outsideInt64 = (value: unknown): bigint | undefined => {
  if (typeof value === 'bigint') return value < INT64_MIN || value > INT64_MAX ? value : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const item of Object.values(value)) {
    const found = outsideInt64(item);
    if (found !== undefined) return found;
  }
  return undefined;
};

/** A TOML value as text to compare two of: BigInts and floats JSON cannot write (inf, nan) kept apart. */
const tomlText = (value: unknown): string =>
  JSON.stringify(value, (_, item: unknown) => {
    if (typeof item === 'bigint' || (typeof item === 'number' && !Number.isFinite(item))) return { toml: String(item) };
    // A table's key order is its writer's (the TOML writer puts sub-tables last), not what it holds.
    return isRecord(item) && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item;
  });

/**
 * Registers the MCP server in Codex's `config.toml`, editing the text so the user's comments
 * and layout stay: the server's own table is replaced (its other keys kept) or appended. The
 * result is parsed back and must hold exactly what was meant; a file whose server entry is
 * written some other way (an inline table, dotted keys) is left for the user to edit. The text
 * is read with LF line endings and no byte-order mark: `init` gives the file its own back
 * (`keepingLineEndings`), as it does for every file it merges into.
 */
export const mergeCodexToml = (current: string | undefined, launcher: Launcher): E.Either<MergeError, string> => {
  const text = current ?? '';
  let parsed: Record<string, unknown>;
  try {
    parsed = parseToml(text, TOML_OPTIONS) as Record<string, unknown>;
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    return E.left(`it is not valid TOML (at ${tomlProblem(error)})`);
  }
  const wide = outsideInt64(parsed);
  if (wide !== undefined) return E.left(`it is not valid TOML (the integer ${wide} is outside 64 bits)`);
  const servers = parsed['mcp_servers'];
  if (servers !== undefined && !isRecord(servers))
    return E.left(`"mcp_servers" is ${describeKind(servers)}, not a table`);
  const existing = isRecord(servers) ? servers[SERVER_NAME] : undefined;
  // An array of tables (`[[mcp_servers.fact-tracker]]`) is no server: replaced, its tables would be lost unsaid.
  if (existing !== undefined && !isRecord(existing))
    return E.left(`"mcp_servers.${SERVER_NAME}" is ${describeKind(existing)}, not a table`);
  const storeKeys = storeKeysProblem(existing, launcher, `mcp_servers.${SERVER_NAME}`, {
    env: 'a table',
    env_vars: 'an array',
  });
  if (storeKeys !== undefined) return E.left(storeKeys);
  const wanted = codexServerEntry(existing, launcher);
  if (isRecord(existing) && tomlText(existing) === tomlText(wanted)) return E.right(text);
  const lines = text.split('\n');
  // Headers are found outside multi-line strings, whose lines are text; a document without the
  // server holds no header of its table, wherever text looks like one.
  const headers = tableHeaders(lines);
  const isServerHeader = (index: number): boolean => {
    const header = headers[index];
    return header !== undefined && isServerTable(header);
  };
  const start = existing === undefined ? -1 : headers.findIndex((_, index) => isServerHeader(index));
  const table = stringifyToml({ mcp_servers: { [SERVER_NAME]: wanted } }, TOML_WRITING).trimEnd();
  let edited: string;
  if (start === -1) {
    if (existing !== undefined)
      return E.left(
        `it defines mcp_servers.${SERVER_NAME} without a [mcp_servers.${SERVER_NAME}] table; edit it by hand`,
      );
    // Not `replace(/\s*$/u)`, which goes over a run of blank space again from each of its places.
    const body = text.trimEnd();
    edited = `${body === '' ? '' : `${body}\n\n`}${table}\n`;
  } else {
    let end = start + 1;
    while (end < lines.length && (headers[end] === undefined || isServerHeader(end))) end += 1;
    // Comments and blank lines at the table's end introduce what follows (the next table): they stay.
    while (end > start + 1 && /^\s*(?:#[^\n]*)?$/u.test(lines[end - 1]!)) end -= 1;
    edited = [...lines.slice(0, start), table, ...lines.slice(end)].join('\n');
  }
  try {
    const check = parseToml(edited, TOML_OPTIONS) as Record<string, unknown>;
    const { mcp_servers: checkServers, ...rest } = check;
    const { mcp_servers: _servers, ...restBefore } = parsed;
    const others = (value: unknown): unknown =>
      isRecord(value) ? Object.fromEntries(Object.entries(value).filter(([name]) => name !== SERVER_NAME)) : {};
    if (
      isRecord(checkServers) &&
      tomlText(checkServers[SERVER_NAME]) === tomlText(wanted) &&
      tomlText(others(checkServers)) === tomlText(others(servers)) &&
      tomlText(rest) === tomlText(restBefore)
    )
      return E.right(edited);
  } catch (error) {
    // An edit that does not parse back falls through to the refusal below.
    if (!(error instanceof TomlError)) throw error;
  }
  return E.left(
    start === -1 && writesServersInline(lines, headers)
      ? `it writes mcp_servers as an inline table (mcp_servers = { ... }), which no [mcp_servers.${SERVER_NAME}] table can be added to; write its servers as [mcp_servers.NAME] tables, or add ours by hand`
      : `its [mcp_servers.${SERVER_NAME}] table could not be updated in place; edit it by hand`,
  );
};

/**
 * The shared-context feature flag, off by default. An explicit option wins, then the
 * `SHARED_CONTEXT_ENABLED` environment variable, then the config file. Resolution is a pure
 * function of those three values; the shell reads them.
 */
import * as E from 'fp-ts/lib/Either.js';
import { kindOf } from '../base/describe.js';
import type { ContextError } from './model.js';

const configError = (message: string): ContextError => ({ code: 'config', message });

/** The environment variable that turns shared context on or off. */
export const SHARED_CONTEXT_ENV = 'SHARED_CONTEXT_ENABLED';

/** The config file, at the repository root: `{ "sharedContext": { "enabled": true } }`. */
export const CONTEXT_CONFIG_FILE = 'fact-tracker.config.json';

/** Whether shared context is on, and what decided it. */
export interface SharedContextFlag {
  readonly enabled: boolean;
  readonly source: 'option' | 'env' | 'config' | 'default';
}

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off'];

/** Reads `SHARED_CONTEXT_ENABLED`: undefined when unset or empty, else true/1/yes/on or false/0/no/off. */
export const parseFlagValue = (value: string | undefined): E.Either<ContextError, boolean | undefined> => {
  // Unset (undefined, or null from a JavaScript caller) is no value; any other non-text is refused below, quoted.
  const word =
    typeof value === 'string' ? value.trim().toLowerCase() : value === undefined || value === null ? '' : undefined;
  if (word === '') return E.right(undefined);
  if (word !== undefined && TRUE.includes(word)) return E.right(true);
  if (word !== undefined && FALSE.includes(word)) return E.right(false);
  return E.left(
    configError(`${SHARED_CONTEXT_ENV} must be true or false (or 1/0, yes/no, on/off), not ${JSON.stringify(value)}`),
  );
};

/** The `sharedContext.enabled` of a parsed config file, or why it is not a boolean. */
export const configFlag = (config: unknown): E.Either<ContextError, boolean | undefined> => {
  if (config === undefined) return E.right(undefined);
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    return E.left(configError(`${CONTEXT_CONFIG_FILE} is not a JSON object`));
  const section = (config as Record<string, unknown>)['sharedContext'];
  if (section === undefined) return E.right(undefined);
  const enabled =
    typeof section === 'object' && section !== null ? (section as Record<string, unknown>)['enabled'] : section;
  if (enabled === undefined || typeof enabled === 'boolean') return E.right(enabled);
  return E.left(configError(`${CONTEXT_CONFIG_FILE}: sharedContext.enabled must be true or false`));
};

/**
 * Resolves the flag from an explicit option, the environment variable's value and the config
 * file's value, in that order; off when none of them says.
 */
export const resolveSharedContextFlag = (
  option: boolean | undefined,
  envValue: string | undefined,
  configValue: boolean | undefined,
): E.Either<ContextError, SharedContextFlag> => {
  if (typeof option === 'boolean') return E.right({ enabled: option, source: 'option' });
  // An option given of another kind ('false' from a config read as text) must not let the
  // environment decide instead: it is refused, as a config file's "enabled": "yes" is.
  if (option !== undefined && option !== null)
    return E.left({ code: 'invalid', message: `enabled is ${kindOf(option)}, not true or false` });
  const env = parseFlagValue(envValue);
  if (E.isLeft(env)) return env;
  if (env.right !== undefined) return E.right({ enabled: env.right, source: 'env' });
  if (typeof configValue === 'boolean') return E.right({ enabled: configValue, source: 'config' });
  return E.right({ enabled: false, source: 'default' });
};

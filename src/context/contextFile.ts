/**
 * A context file as a collection: the context stored under a key, and the file with one context
 * put in or taken out, in key order. The very same file comes back when nothing changed.
 */
import * as O from 'fp-ts/lib/Option.js';
import { checkedContext, checkedContextFile, checkedKey } from './arguments.js';
import { compareContextKeys, isSameContextKey } from './key.js';
import type { ContextFile, ContextKey, QuarantinedContext, SharedContext } from './model.js';

/** The context stored under `key` (compared as a tuple), if any. */
export const selectContext = (file: ContextFile, key: ContextKey): O.Option<SharedContext> => {
  checkedKey(key);
  return O.fromNullable(checkedContextFile(file).contexts.find((context) => isSameContextKey(context.key, key)));
};

/** `file` with `context` stored under its key, replacing the one there; the very same file when nothing changed. */
export const upsertContext = (file: ContextFile, context: SharedContext): ContextFile => {
  checkedContext(context);
  const at = checkedContextFile(file).contexts.findIndex((stored) => isSameContextKey(stored.key, context.key));
  if (at !== -1 && file.contexts[at] === context) return file;
  const contexts =
    at === -1 ? [...file.contexts, context] : file.contexts.map((stored, i) => (i === at ? context : stored));
  return { ...file, contexts: contexts.sort((a, b) => compareContextKeys(a.key, b.key)) };
};

/**
 * The context kept apart under `key` (it breaks a cap or its schema, or shares its key), if one
 * is: a write to that key would shadow it, so the shell refuses one until it is fixed by hand.
 */
export const selectQuarantined = (file: ContextFile, key: ContextKey): QuarantinedContext | undefined =>
  file.quarantined?.find((entry) => entry.key !== undefined && isSameContextKey(entry.key, key));

/** `file` without the context stored under `key`; the very same file when there is none. */
export const removeContext = (file: ContextFile, key: ContextKey): ContextFile => {
  checkedKey(key);
  return checkedContextFile(file).contexts.some((stored) => isSameContextKey(stored.key, key))
    ? { ...file, contexts: file.contexts.filter((stored) => !isSameContextKey(stored.key, key)) }
    : file;
};

/**
 * The checks of the context's public functions on their arguments. An argument that is not of
 * its kind (null from an unset variable, a number, a `ContextFile` where a `SharedContext`
 * belongs) is a programmer's mistake: it is refused with a TypeError that names it and says
 * what it is, never read as a key of undefined parts (which equals any other such key) or
 * failed on deep inside ("Cannot read properties of null"). Parsers and decoders answer a
 * `Left` for what they parse instead; these are for the rest.
 */
import { refuseArgument } from '../base/describe.js';
import { isRecord } from '../base/record.js';
import { CONTEXT_KINDS, type ContextFile, type ContextKey, type ContextKind, type SharedContext } from './model.js';

/** True for a value of a context key's shape: three strings. */
export const isContextKey = (value: unknown): value is ContextKey =>
  isRecord(value) &&
  typeof value['repo'] === 'string' &&
  typeof value['branch'] === 'string' &&
  typeof value['workstreamId'] === 'string';

/** `key`, refused with a TypeError naming it (`name`) when it is not a context key. */
export const checkedKey = (key: ContextKey, name = 'the key'): ContextKey =>
  isContextKey(key) ? key : refuseArgument(name, key, 'a context key ({ repo, branch, workstreamId } of strings)');

/** `context`, refused with a TypeError naming it (`name`) when it is not a shared context. */
export const checkedContext = (context: SharedContext, name = 'the context'): SharedContext =>
  isRecord(context) && isContextKey(context['key']) && isRecord(context['workingSummary'])
    ? context
    : refuseArgument(name, context, 'a shared context (emptySharedContext makes one)');

/** `file`, refused with a TypeError naming it (`name`) when it is not a context file. */
export const checkedContextFile = (file: ContextFile, name = 'the file'): ContextFile =>
  isRecord(file) && Array.isArray(file['contexts'])
    ? file
    : refuseArgument(name, file, 'a context file ({ kind, contexts })');

/** `kind`, refused with a TypeError when it is not one of `CONTEXT_KINDS`. */
export const checkedKind = (kind: ContextKind): ContextKind =>
  (CONTEXT_KINDS as ReadonlyArray<unknown>).includes(kind)
    ? kind
    : refuseArgument('the kind', kind, `a context kind (${CONTEXT_KINDS.join(' or ')})`);

/** `text`, refused with a TypeError naming it (`name`) when it is no string. */
export const checkedText = (text: string, name = 'the text'): string =>
  typeof text === 'string' ? text : refuseArgument(name, text, 'a string');

/** `list`, refused with a TypeError naming it (`name`) when it is no array (`of`: what it holds). */
export const checkedList = <T>(list: ReadonlyArray<T>, name: string, of: string): ReadonlyArray<T> =>
  Array.isArray(list) ? list : refuseArgument(name, list, `an array of ${of}`);

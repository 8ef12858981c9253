/**
 * What PostgreSQL's `text` and `JSONB` cannot keep: U+0000, and an unpaired surrogate (UTF-8
 * has no form for it). A store refuses such an id or value as bad input (`invalid_input`) before
 * it reaches the server, which would refuse it on every try (or, for an id, keep it as U+FFFD,
 * the same as another id).
 */
import { wellFormed } from '../base/text.js';

/** What of `text` PostgreSQL cannot keep, or undefined. */
const unkept = (text: string): 'U+0000' | 'an unpaired surrogate' | undefined =>
  text.includes('\u0000') ? 'U+0000' : wellFormed(text) !== text ? 'an unpaired surrogate' : undefined;

/**
 * Why `text` cannot be a key of the notes tables, or undefined: PostgreSQL text holds no NUL
 * character, and a lone surrogate would reach the server as U+FFFD, the same as another id.
 */
export const unstorableId = (text: string): string | undefined => {
  const problem = unkept(text);
  if (problem === undefined) return undefined;
  return problem === 'U+0000'
    ? 'holds a NUL character, which PostgreSQL text cannot keep'
    : 'holds a lone surrogate, which PostgreSQL would keep as U+FFFD';
};

/** `path` (as `facts[0].fact`) and a key or an index under it. */
const under = (path: string, step: string | number): string =>
  typeof step === 'number' ? `${path}[${step}]` : path === '' ? step : `${path}.${step}`;

/**
 * Where a JSON value holds text JSONB cannot keep, as `facts[0].fact holds U+0000`, or
 * undefined. Its strings and keys are looked at in document order, without recursion (a value
 * nested deeper than the stack goes is looked at all the same).
 */
export const unstorableText = (value: unknown): string | undefined => {
  const pending: Array<readonly [unknown, string]> = [[value, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, path] = next;
    if (typeof node === 'string') {
      const problem = unkept(node);
      if (problem !== undefined) return `${path === '' ? 'the value' : path} holds ${problem}`;
    } else if (Array.isArray(node)) {
      for (let index = node.length - 1; index >= 0; index -= 1) pending.push([node[index], under(path, index)]);
    } else if (typeof node === 'object' && node !== null) {
      const keys = Object.keys(node);
      const keyProblem = keys.map(unkept).find((problem) => problem !== undefined);
      if (keyProblem !== undefined) return `${path === '' ? 'a key' : `a key of ${path}`} holds ${keyProblem}`;
      for (let index = keys.length - 1; index >= 0; index -= 1)
        pending.push([(node as Record<string, unknown>)[keys[index]!], under(path, keys[index]!)]);
    }
  }
  return undefined;
};

/**
 * A subagent's raw answer as it is kept (a session log's `output`, the hooks' report): its
 * secrets redacted (`base/secrets.ts`). A JSON escape can hide a secret from a scan of the text
 * as written: a letter written `\u0067`, a key block's line breaks written `\n`, a tab after
 * `Bearer` written `\t`, a URL's slashes written `\/`. So a result block whose parsed value
 * holds a secret, or whose text hides one its value does not (a key given twice), is written
 * again from its redacted value (what is kept reads back as the same result), and any other text whose escapes hide one is kept with its escapes read and the
 * secret redacted. Any other text is kept as it came.
 */
import * as E from 'fp-ts/lib/Either.js';
import { findSecret, redactSecrets, withoutSecrets } from '../../base/secrets.js';
import { lastBlockRange, stripFence } from './parse.js';

/** The JSON of a block body (a Markdown fence around it dropped, as parsing drops it), or undefined when it is none. */
const blockValue = (body: string): unknown =>
  E.getOrElseW(() => undefined)(
    E.tryCatch(() => JSON.parse(stripFence(body.split(/\r\n|\r|\n/u))) as unknown, E.toError),
  );

const JSON_ESCAPE = /\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))/gu;

const ESCAPED: Readonly<Record<string, string>> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** `text` with its JSON escapes read, as a JSON string holding it would give it. */
const readEscapes = (text: string): string =>
  text.replace(JSON_ESCAPE, (_escape, code: string | undefined, char: string | undefined) =>
    code !== undefined ? String.fromCharCode(Number.parseInt(code, 16)) : (ESCAPED[char!] ?? char!),
  );

/**
 * `text` (outside a result block that parses) redacted as written, unless its escapes hide a
 * secret that this leaves: then read with its escapes and redacted. Both are judged from the
 * escapes read before any redaction, which could take away a secret's anchor (a key block's
 * header) and leave its body.
 */
const keptText = (text: string): string => {
  const written = redactSecrets(text);
  if (!text.includes('\\')) return written;
  const read = readEscapes(text);
  if (findSecret(read) === undefined) return written;
  const redacted = redactSecrets(read);
  return readEscapes(written) === redacted ? written : redacted;
};

/**
 * A result block's body, redacted: as written when that gives its parsed `value` redacted and
 * its escapes hide no secret, else written again from the redacted value. The text can hold
 * what the value does not: a key given twice, whose earlier value parsing drops, may hide a
 * secret behind its escapes.
 */
const keptBlock = (body: string, value: unknown): string => {
  const clean = withoutSecrets(value);
  const written = redactSecrets(body);
  const hides = findSecret(readEscapes(written)) !== undefined;
  if (clean === value && !hides) return written;
  const json = JSON.stringify(clean);
  return !hides && JSON.stringify(blockValue(written)) === json ? written : `${json}\n`;
};

/** `raw` with its secrets redacted, those its JSON escapes hide included. */
export const redactedOutput = (raw: string): string => {
  // Only an escape can hide a secret from the text's own scan.
  if (!raw.includes('\\')) return redactSecrets(raw);
  const range = lastBlockRange(raw);
  const value = range === undefined ? undefined : blockValue(raw.slice(range.from, range.to));
  if (range === undefined || value === undefined) return keptText(raw);
  return `${keptText(raw.slice(0, range.from))}${keptBlock(raw.slice(range.from, range.to), value)}${keptText(raw.slice(range.to))}`;
};

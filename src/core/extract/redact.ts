/**
 * A subagent's raw answer as it is kept (a session log's `output`, the hooks' report): its
 * secrets redacted (`base/secrets.ts`). A secret written with JSON escapes inside the result
 * block (`\u0067hp_...`) shows only once the block is parsed: such a block is written again
 * from its redacted value, so that what is kept holds no secret and reads back as the same
 * result. Any other text is kept as it came.
 */
import * as E from 'fp-ts/lib/Either.js';
import { redactSecrets, withoutSecrets } from '../../base/secrets.js';
import { BEGIN_MARKER, END_MARKER } from './parse.js';

/** The character range of the body of the last complete result block of `raw` (see parse.ts), if any. */
const lastBlockRange = (raw: string): { readonly from: number; readonly to: number } | undefined => {
  let range: { from: number; to: number } | undefined;
  let open: number | undefined;
  const breaks = /\r\n|\r|\n/gu;
  let start = 0;
  for (;;) {
    const found = breaks.exec(raw);
    const end = found === null ? raw.length : found.index;
    const marker = raw.slice(start, end).trim();
    const next = found === null ? raw.length : found.index + found[0].length;
    if (marker === BEGIN_MARKER) open = next;
    else if (marker === END_MARKER && open !== undefined) {
      range = { from: open, to: start };
      open = undefined;
    }
    if (found === null) return range;
    start = next;
  }
};

/** The JSON of a block body (a Markdown fence around it dropped), or undefined when it is none. */
const blockValue = (body: string): unknown => {
  let text = body.trim();
  if (text.startsWith('```')) text = text.slice(text.indexOf('\n') + 1 || text.length);
  if (text.endsWith('```')) text = text.slice(0, -3);
  return E.getOrElseW(() => undefined)(E.tryCatch(() => JSON.parse(text) as unknown, E.toError));
};

/** `raw` with its secrets redacted, those escaped inside its result block included. */
export const redactedOutput = (raw: string): string => {
  const redacted = redactSecrets(raw);
  // Only an escape can hide a secret from the text's own scan.
  if (!redacted.includes('\\u')) return redacted;
  const range = lastBlockRange(redacted);
  if (range === undefined) return redacted;
  const value = blockValue(redacted.slice(range.from, range.to));
  if (value === undefined) return redacted;
  const clean = withoutSecrets(value);
  return clean === value
    ? redacted
    : `${redacted.slice(0, range.from)}${JSON.stringify(clean)}\n${redacted.slice(range.to)}`;
};

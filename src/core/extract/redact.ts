/**
 * A subagent's raw answer as it is kept (a session log's `output`, the hooks' report): its
 * secrets redacted (`base/secrets.ts`). A secret written with JSON escapes inside the result
 * block (`\u0067hp_...`) shows only once the block is parsed: such a block is written again
 * from its redacted value, so that what is kept holds no secret and reads back as the same
 * result. Any other text is kept as it came.
 */
import * as E from 'fp-ts/lib/Either.js';
import { redactSecrets, withoutSecrets } from '../../base/secrets.js';
import { lastBlockRange, stripFence } from './parse.js';

/** The JSON of a block body (a Markdown fence around it dropped, as parsing drops it), or undefined when it is none. */
const blockValue = (body: string): unknown =>
  E.getOrElseW(() => undefined)(
    E.tryCatch(() => JSON.parse(stripFence(body.split(/\r\n|\r|\n/u))) as unknown, E.toError),
  );

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

/**
 * The text of a file read as bytes: UTF-8, or UTF-16 when it starts with a UTF-16 byte-order
 * mark. Windows PowerShell's `>` and `Out-File` write UTF-16 with its mark; read as UTF-8, every
 * line of such a history would be rejected as invalid JSON. A UTF-8 mark is kept in the text,
 * for the line splitter to drop (as it drops one from text it is given).
 */

/** The encoding the first bytes of a file name: `utf-16le` or `utf-16be` after their mark, else `utf-8`. */
export const encodingOf = (start: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' =>
  start[0] === 0xff && start[1] === 0xfe ? 'utf-16le' : start[0] === 0xfe && start[1] === 0xff ? 'utf-16be' : 'utf-8';

/** A decoder for text in `encoding`: invalid sequences read as U+FFFD; a UTF-16 mark is dropped, a UTF-8 one kept. */
const decoderFor = (encoding: ReturnType<typeof encodingOf>): InstanceType<typeof TextDecoder> =>
  new TextDecoder(encoding, { ignoreBOM: encoding === 'utf-8' });

/** The text of a whole file's bytes, in the encoding its first bytes name. */
export const decodeBytes = (bytes: Uint8Array): string => decoderFor(encodingOf(bytes)).decode(bytes);

/**
 * The chunks of a file as text, in the encoding its first bytes name (text chunks are passed on
 * as they are). A first chunk of one byte is held until the next one says which encoding it is.
 */
export async function* decodedChunks(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  let decoder: InstanceType<typeof TextDecoder> | undefined;
  let held: Uint8Array | undefined;
  for await (const chunk of chunks) {
    if (typeof chunk === 'string') {
      yield chunk;
      continue;
    }
    let bytes = chunk;
    if (decoder === undefined) {
      if (held !== undefined) {
        bytes = new Uint8Array(held.length + chunk.length);
        bytes.set(held);
        bytes.set(chunk, held.length);
        held = undefined;
      }
      if (bytes.length < 2) {
        held = bytes;
        continue;
      }
      decoder = decoderFor(encodingOf(bytes));
    }
    const text = decoder.decode(bytes, { stream: true });
    if (text !== '') yield text;
  }
  const last = decoder === undefined ? (held === undefined ? '' : decodeBytes(held)) : decoder.decode();
  if (last !== '') yield last;
}

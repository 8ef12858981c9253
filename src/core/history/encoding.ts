/**
 * The text of a file read as bytes: UTF-8, or UTF-16 when it starts with a UTF-16 byte-order
 * mark or with two characters in UTF-16 without one. Windows PowerShell's `>` and `Out-File`
 * write UTF-16 with its mark, `iconv -t utf-16le` and .NET's `Encoding.Unicode.GetBytes` without
 * it; read as UTF-8, every line of such a history would be rejected as invalid JSON. A UTF-8 mark
 * is kept in the text, for the line splitter to drop (as it drops one from text it is given).
 */

/** How many bytes `encodingOf` needs to see to tell a file's encoding (fewer: the whole file). */
const ENCODING_BYTES = 4;

/**
 * The encoding the first bytes of a file name: `utf-16le` or `utf-16be` after their mark, else
 * `utf-8`, unless its first four bytes are two UTF-16 characters below U+0100 (`x 0 y 0` or
 * `0 x 0 y`, neither `x` nor `y` zero). That is how RFC 4627 tells UTF-16 JSON from UTF-8: a JSON
 * text, and so a history's line or a saved state, starts with ASCII, and UTF-8 text holding
 * zero bytes there is no JSON (its first line is rejected whatever it holds).
 */
export const encodingOf = (start: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' => {
  const [a, b, c, d] = start;
  if (a === 0xff && b === 0xfe) return 'utf-16le';
  if (a === 0xfe && b === 0xff) return 'utf-16be';
  if (start.length < ENCODING_BYTES) return 'utf-8';
  if (a !== 0 && b === 0 && c !== 0 && d === 0) return 'utf-16le';
  return a === 0 && b !== 0 && c === 0 && d !== 0 ? 'utf-16be' : 'utf-8';
};

/** A decoder for text in `encoding`: invalid sequences read as U+FFFD; a UTF-16 mark is dropped, a UTF-8 one kept. */
const decoderFor = (encoding: ReturnType<typeof encodingOf>): InstanceType<typeof TextDecoder> =>
  new TextDecoder(encoding, { ignoreBOM: encoding === 'utf-8' });

/** The text of a whole file's bytes, in the encoding its first bytes name. */
export const decodeBytes = (bytes: Uint8Array): string => decoderFor(encodingOf(bytes)).decode(bytes);

/**
 * The chunks of a file as text, in the encoding its first bytes name (text chunks are passed on
 * as they are). First chunks shorter than `ENCODING_BYTES` are held until those that follow say
 * which encoding it is, so a stream reads as the whole file does, however it is cut.
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
      if (bytes.length < ENCODING_BYTES) {
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

import { sha256 } from '@noble/hashes/sha2.js';

const encoder = new TextEncoder();
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
/** Reused for short inputs: encoding into it avoids an allocation per hash (ids are hashed often). */
let scratch = new Uint8Array(1024);

/** The first `bytes` bytes of the SHA-256 of the UTF-8 bytes of `text`, as lowercase hex, in portable JavaScript. */
export const portableSha256HexPrefix = (text: string, bytes: number): string => {
  if (text.length * 3 > scratch.length) scratch = new Uint8Array(text.length * 3);
  const { written } = encoder.encodeInto(text, scratch);
  const digest = sha256(scratch.subarray(0, written));
  let hex = '';
  for (let i = 0; i < bytes; i += 1) hex += HEX[digest[i]!]!;
  return hex;
};

interface NodeCrypto {
  /** One-shot digest (Node 20.12 and later): no hash object per call. */
  readonly hash?: (algorithm: string, data: string, outputEncoding: 'hex') => string;
  readonly createHash?: (algorithm: string) => {
    update(text: string, encoding: 'utf8'): { digest(encoding: 'hex'): string };
  };
}

/**
 * The platform's native SHA-256 where the runtime offers one synchronously (Node's crypto,
 * found by feature detection, never imported, so the core still runs in a browser). Hashing
 * is most of the cost of extraction, and the native digest is several times faster (the
 * one-shot `hash` about three times faster again than a hash object); all give the same
 * bytes (a test checks it).
 */
const nativeSha256Hex = ((): ((text: string) => string) | undefined => {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const crypto = runtime?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;
  const { hash, createHash } = crypto ?? {};
  if (typeof hash === 'function') return (text) => hash('sha256', text, 'hex');
  if (typeof createHash === 'function') return (text) => createHash('sha256').update(text, 'utf8').digest('hex');
  return undefined;
})();

/**
 * The first `length` characters of `hex` as a string of their own. `slice` would keep the whole
 * digest alive behind a view of it (engines slice long strings by reference), and fact ids
 * are stored for as long as their facts: a copy is a third of the memory.
 */
const ownPrefix = (hex: string, length: number): string => {
  if (length !== 16) return String.fromCharCode(...Array.from({ length }, (_, i) => hex.charCodeAt(i)));
  const at = (i: number): number => hex.charCodeAt(i);
  return String.fromCharCode(
    at(0),
    at(1),
    at(2),
    at(3),
    at(4),
    at(5),
    at(6),
    at(7),
    at(8),
    at(9),
    at(10),
    at(11),
    at(12),
    at(13),
    at(14),
    at(15),
  );
};

/** The first `bytes` bytes of the SHA-256 of the UTF-8 bytes of `text`, as lowercase hex. */
export const sha256HexPrefix = (text: string, bytes: number): string =>
  nativeSha256Hex === undefined
    ? portableSha256HexPrefix(text, bytes)
    : ownPrefix(nativeSha256Hex(text), Math.min(64, bytes * 2));

/** FNV-1a 32-bit hash: a cheap, stable spread for placing keys in a trie. */
export const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
};

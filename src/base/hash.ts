import { sha256 } from '@noble/hashes/sha2.js';

const encoder = new TextEncoder();
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** A SHA-256 of a text's UTF-8 bytes, its first `bytes` bytes as lowercase hex (a string of its own). */
export interface Sha256Hasher {
  readonly hexPrefix: (text: string, bytes: number) => string;
}

/**
 * SHA-256 in portable JavaScript. It encodes into a buffer of its own, grown for long texts:
 * ids are hashed often, and an array made per hash costs more than the hash of a short text.
 */
export const createPortableSha256 = (): Sha256Hasher => {
  let buffer = new Uint8Array(1024);
  return {
    hexPrefix: (text, bytes) => {
      if (text.length * 3 > buffer.length) buffer = new Uint8Array(text.length * 3);
      const { written } = encoder.encodeInto(text, buffer);
      const digest = sha256(buffer.subarray(0, written));
      let hex = '';
      for (let i = 0; i < bytes; i += 1) hex += HEX[digest[i]!]!;
      return hex;
    },
  };
};

/** The portable hasher the default one falls back to where the runtime has no native digest. */
export const portableSha256: Sha256Hasher = createPortableSha256();

/** The first `bytes` bytes of the SHA-256 of the UTF-8 bytes of `text`, as lowercase hex, in portable JavaScript. */
export const portableSha256HexPrefix = (text: string, bytes: number): string => portableSha256.hexPrefix(text, bytes);

interface NodeCrypto {
  /** One-shot digest (Node 20.12 and later): no hash object per call. */
  readonly hash?: (algorithm: string, data: string, outputEncoding: 'hex') => string;
  readonly createHash?: (algorithm: string) => {
    update(text: string, encoding: 'utf8'): { digest(encoding: 'hex'): string };
  };
}

/**
 * The first `length` characters of `hex` as a string of their own. `slice` would keep the whole
 * digest alive behind a view of it (engines slice long strings by reference), and fact ids
 * are stored for as long as their facts: a copy holds its own characters alone.
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

/**
 * The platform's native SHA-256, when the runtime offers one synchronously (Node's crypto,
 * found by feature detection when this is called, never imported, so the core still runs in a
 * browser); undefined elsewhere. Hashing is most of the cost of extraction, and the native
 * digest is faster, the one-shot `hash` faster again than a hash object (see docs/performance.md);
 * all give the same bytes (a test checks it).
 */
export const nativeSha256HexPrefix = (): ((text: string, bytes: number) => string) | undefined => {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const crypto = runtime?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;
  const { hash, createHash } = crypto ?? {};
  if (typeof hash === 'function')
    return (text, bytes) => ownPrefix(hash('sha256', text, 'hex'), Math.min(64, bytes * 2));
  if (typeof createHash === 'function')
    return (text, bytes) => ownPrefix(createHash('sha256').update(text, 'utf8').digest('hex'), Math.min(64, bytes * 2));
  return undefined;
};

/**
 * The hasher `sha256HexPrefix` uses unless given one: the native digest where there is one,
 * else the portable one. Which is found on the first hash, not when the module loads (reading
 * the runtime is nothing a module of the core does by being imported), and kept.
 */
export const defaultSha256: Sha256Hasher = (() => {
  const hasher = {
    hexPrefix: (text: string, bytes: number): string => {
      hasher.hexPrefix = nativeSha256HexPrefix() ?? portableSha256.hexPrefix;
      return hasher.hexPrefix(text, bytes);
    },
  };
  return hasher;
})();

/** The first `bytes` bytes of the SHA-256 of the UTF-8 bytes of `text`, as lowercase hex. */
export const sha256HexPrefix = (text: string, bytes: number, hasher: Sha256Hasher = defaultSha256): string =>
  hasher.hexPrefix(text, bytes);

/** FNV-1a 32-bit hash: a cheap, stable spread for placing keys in a trie. */
export const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
};

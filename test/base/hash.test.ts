/**
 * Hashing reads the runtime only when it first hashes, never when the module loads, and a
 * caller may bring its own hasher.
 */
import { describe, expect, it, vi } from 'vitest';

describe('sha256HexPrefix', () => {
  it('looks for the native digest on the first hash, not at load, and once', async () => {
    const runtime = globalThis.process as NodeJS.Process & { getBuiltinModule: (id: string) => unknown };
    const lookup = vi.spyOn(runtime, 'getBuiltinModule');
    try {
      vi.resetModules();
      const { sha256HexPrefix } = await import('../../src/base/hash.js');
      expect(lookup).not.toHaveBeenCalled();
      const first = sha256HexPrefix('a', 8);
      expect(sha256HexPrefix('b', 8)).toHaveLength(16);
      expect(lookup.mock.calls.map(([id]) => id)).toEqual(['node:crypto']);
      expect(first).toBe('ca978112ca1bbdca');
    } finally {
      lookup.mockRestore();
    }
  });

  it('hashes with the hasher it is given', async () => {
    const { createPortableSha256, sha256HexPrefix } = await import('../../src/base/hash.js');
    const calls: string[] = [];
    const portable = createPortableSha256();
    const counting = {
      hexPrefix: (text: string, bytes: number) => (calls.push(text), portable.hexPrefix(text, bytes)),
    };
    expect(sha256HexPrefix('a', 8, counting)).toBe(sha256HexPrefix('a', 8));
    expect(calls).toEqual(['a']);
  });
});

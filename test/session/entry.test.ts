/**
 * The session shell is Node only and has its own entry point: the browser-safe package root
 * must never reach it, nor any `node:` module, through its imports.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'/gmu;

/** Every module the file at `entry` reaches through static imports, and every bare specifier met. */
const reach = (entry: string): { readonly files: ReadonlySet<string>; readonly specifiers: ReadonlySet<string> } => {
  const files = new Set<string>();
  const specifiers = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2]!;
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier).replace(/\.js$/u, '.ts'));
      else specifiers.add(specifier);
    }
  };
  visit(join(SRC, entry));
  return { files, specifiers };
};

describe('entry points', () => {
  it('keeps the session shell, the MCP server, the hook and node: modules out of the package root', () => {
    const { files, specifiers } = reach('index.ts');
    const shells = [...files]
      .map((file) => relative(SRC, file))
      .filter((file) => /^(session|mcp|hook|cli)\//u.test(file));
    expect(shells).toEqual([]);
    expect([...specifiers].filter((specifier) => specifier.startsWith('node:'))).toEqual([]);
  });

  it('exports the session shell as session-fact-tracker/session', () => {
    const manifest = JSON.parse(readFileSync(join(SRC, '..', 'package.json'), 'utf8')) as {
      exports: Record<string, { default: string }>;
    };
    expect(manifest.exports['./session']?.default).toBe('./dist/session/index.js');
    expect(reach('session/index.ts').specifiers).toContain('node:fs');
  });
});

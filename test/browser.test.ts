/**
 * The browser-safe entry points run in a browser, not only import no Node module (which
 * `architecture.test.ts` reads from the sources): each is bundled as a page would load it
 * (esbuild for the browser platform, which refuses a Node built-in) and run in a fresh V8
 * context that holds only what a page has (no `process`, `Buffer`, `require` or `global`), where
 * it answers as it does in Node: its hashes come from the portable SHA-256 there.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createContext, runInContext } from 'node:vm';
import { webcrypto } from 'node:crypto';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { createFactTracker, replayHistory } from '../src/index.js';
import { buildContextBundle, emptySharedContext, hashSummary } from '../src/context/index.js';
import { parseNotableFactsResponse } from '../src/notes/index.js';
import { countO200kTokens } from '../src/tokens/o200k.js';

const ROOT = resolve(import.meta.dirname, '..');

/** `entry` bundled for a page, as one script that leaves its exports in `globalThis.entry`. */
const bundled = async (entry: string): Promise<string> => {
  const result = await build({
    entryPoints: [join(ROOT, 'src', entry)],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'entry',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
};

/** A context with what a page offers its scripts beside the language's own objects, and no more. */
const pageContext = () =>
  createContext({
    console,
    crypto: webcrypto,
    TextEncoder,
    TextDecoder,
    URL,
    structuredClone,
    queueMicrotask,
    setTimeout,
    clearTimeout,
  });

/** Runs `script` (the bundle), then `call`, an expression over `entry` and `input`; its JSON answer, parsed. */
const runInPage = (script: string, call: string, input: unknown): unknown => {
  const page = pageContext();
  runInContext(script, page);
  page['input'] = input;
  const nodeOnly = runInContext(
    "['process', 'Buffer', 'require', 'global', 'module', 'setImmediate'].filter((name) => typeof globalThis[name] !== 'undefined')",
    page,
  ) as string[];
  expect(Array.from(nodeOnly)).toEqual([]);
  return JSON.parse(runInContext(`JSON.stringify(${call})`, page) as string) as unknown;
};

const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

describe('the browser-safe entry points in a page', () => {
  it('session-fact-tracker replays a history, and a tracker compiles a section, as in Node', async () => {
    const script = await bundled('index.ts');
    const history = readFileSync(join(ROOT, 'eval', 'histories', 'web-api.jsonl'), 'utf8');
    expect(runInPage(script, 'entry.replayHistory(input)', history)).toEqual(json(replayHistory(history)));
    const calls = (tracker: ReturnType<typeof createFactTracker>) => [
      tracker.ingestOutput({
        role: 'implementer',
        taskId: '1',
        output: { task_id: '1', status: 'completed', files_changed: ['src/app.ts', 'src/db.ts'] },
      }),
      tracker.compilePrompt({ taskId: '2', taskPrompt: 'fix the query in src/db.ts' }),
    ];
    expect(runInPage(script, `(${calls.toString()})(entry.createFactTracker({ clock: () => 0 }))`, undefined)).toEqual(
      json(calls(createFactTracker({ clock: () => 0 }))),
    );
  });

  it('session-fact-tracker/notes parses a model answer as in Node', async () => {
    const answer =
      '```json\n[{"category":"preferences","fact":"prefers tabs"},{"category":"projects","fact":"works on the billing API"}]\n```';
    expect(runInPage(await bundled('notes/index.ts'), 'entry.parseNotableFactsResponse(input)', answer)).toEqual(
      json(parseNotableFactsResponse(answer)),
    );
  });

  it('session-fact-tracker/context hashes a summary and builds a bundle as in Node', async () => {
    const key = { repo: 'github.com/acme/app', branch: 'main', workstreamId: 'default' };
    expect(
      runInPage(
        await bundled('context/index.ts'),
        '[entry.hashSummary("the summary"), entry.buildContextBundle(entry.emptySharedContext(input), { kind: "planning" })]',
        key,
      ),
    ).toEqual(json([hashSummary('the summary'), buildContextBundle(emptySharedContext(key), { kind: 'planning' })]));
  });

  it('session-fact-tracker/o200k counts tokens as in Node', async () => {
    const text = 'Fix the race in src/live/session/files.ts: a writer killed mid-line leaves 日本語 and 🎉 behind.';
    expect(runInPage(await bundled('tokens/o200k.ts'), 'entry.countO200kTokens(input)', text)).toBe(
      countO200kTokens(text),
    );
  });
});

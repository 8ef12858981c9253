/**
 * The cross-process lock of every writer (node/lock.ts) when its holder's event loop stands
 * still: a busy stretch on a loaded machine keeps the lock, a takeover loses it. Real lock
 * folders and a real second process; the holder stands still with `Atomics.wait`, so nothing
 * here depends on how fast the machine is.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { afterEach, describe, expect, it } from 'vitest';
import { lockPathOf, withFileLock } from '../../src/node/lock.js';

const SLOW = { timeout: 60_000 } as const;
const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const tempFile = (): string => {
  const folder = mkdtempSync(join(tmpdir(), 'fact-tracker-lock-'));
  folders.push(folder);
  const file = join(folder, 'log');
  writeFileSync(file, '');
  return file;
};

/** Blocks this thread (its event loop included) for `ms`, without spinning. */
const standStill = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/** Blocks this thread until `file` exists (or `limitMs` passed); true when it does. */
const standStillUntil = (file: string, limitMs: number): boolean => {
  const until = Date.now() + limitMs;
  while (!existsSync(file) && Date.now() < until) standStill(20);
  return existsSync(file);
};

/**
 * A second writer: tries for the lock of FILE every 50 ms (proper-lockfile, as every writer
 * does), which it gets only once the lock is stale; then writes MARKER and holds the lock until
 * it is killed.
 */
const TAKER = `
const lockfile = require(process.argv[1]);
const [file, marker, stale] = process.argv.slice(2);
const fs = require('node:fs');
const attempt = () => {
  try {
    lockfile.lockSync(file, { realpath: false, stale: Number(stale) });
    // Written whole before it is there to see: the holder reads it once it exists.
    fs.writeFileSync(marker + '.tmp', 'taken');
    fs.renameSync(marker + '.tmp', marker);
    setInterval(() => {}, 1000);
  } catch {
    setTimeout(attempt, 50);
  }
};
attempt();
`;

describe('the lock after its holder stood still', () => {
  it('a holder busy past half the stale time, its lock taken by nobody, still holds it', SLOW, async () => {
    const file = tempFile();
    const staleMs = 4_000;
    const result = await withFileLock(file, { staleMs, waitMs: 1_000 }, async (stillLocked) => {
      // Longer than the stale time's half (the lock was refreshed at most then), shorter than the stale time.
      standStill(1_800);
      return stillLocked();
    });
    expect(result).toEqual(E.right(true));
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('a holder held up past the stale time while another writer took its lock over writes nothing', SLOW, async () => {
    const file = tempFile();
    const marker = `${file}.taken`;
    const staleMs = 2_000;
    const lockfilePath = createRequire(import.meta.url).resolve('proper-lockfile');
    const taker = spawn(process.execPath, ['-e', TAKER, lockfilePath, file, marker, String(staleMs)], {
      stdio: 'ignore',
    });
    try {
      const result = await withFileLock(file, { staleMs, waitMs: 1_000 }, async (stillLocked) => {
        // Stands still until the other writer has taken the lock over (it can once it is stale).
        const taken = standStillUntil(marker, 30_000);
        return E.right({ taken, still: stillLocked() });
      });
      expect(E.isRight(result)).toBe(true);
      const { taken, still } = (result as E.Right<{ taken: boolean; still: E.Either<{ message: string }, true> }>)
        .right;
      expect(taken).toBe(true);
      expect(readFileSync(marker, 'utf8')).toBe('taken');
      expect(E.isLeft(still)).toBe(true);
      expect((still as E.Left<{ message: string }>).left.message).toMatch(
        /^lost the lock of .*nothing more was written$/u,
      );
      // The lock folder is the other writer's now (it still holds it): the holder's release leaves
      // it there, or a third writer would take the lock while the other still writes.
      expect(existsSync(`${file}.lock`)).toBe(true);
    } finally {
      taker.kill('SIGKILL');
    }
  });

  it('a holder held up past the stale time counts its lock as lost even when nobody took it yet', SLOW, async () => {
    const file = tempFile();
    const result = await withFileLock(file, { staleMs: 2_000, waitMs: 1_000 }, async (stillLocked) => {
      // Stale now, as other writers see it (a lock's first time is up to a second ahead): another
      // writer may be taking it over this very moment.
      standStill(3_300);
      return stillLocked();
    });
    expect(E.isLeft(result)).toBe(true);
    expect((result as E.Left<{ message: string }>).left.message).toMatch(
      /^lost the lock of .*nothing more was written$/u,
    );
  });
});

describe('the lock folder replaced by a link while it is held', () => {
  it(
    'refreshing the lock never changes the times of what a link put in its place points to, and the holder counts its lock as lost',
    SLOW,
    async () => {
      const file = tempFile();
      const victim = join(dirname(file), 'victim');
      mkdirSync(victim);
      let dated = 0;
      const result = await withFileLock(file, { staleMs: 2_000, waitMs: 1_000 }, async (stillLocked) => {
        // Dated exactly as the lock is, so a refresh that follows the link takes it for the lock.
        const { atime, mtime } = lstatSync(lockPathOf(file));
        utimesSync(victim, atime, mtime);
        dated = mtime.getTime();
        rmdirSync(lockPathOf(file));
        symlinkSync(victim, lockPathOf(file));
        // The holder refreshes its lock every half of the stale time, and learns at a refresh
        // that its lock is gone; a refresh that follows the link finds it held, for good.
        const until = Date.now() + 15_000;
        let held = stillLocked();
        while (E.isRight(held) && Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          held = stillLocked();
        }
        return held;
      });
      expect(lstatSync(victim).mtime.getTime()).toBe(dated);
      expect(E.isLeft(result)).toBe(true);
      expect((result as E.Left<{ message: string }>).left.message).toMatch(/^lost the lock of /u);
      // The link is no holder's lock: it is left where it was, and the folder it points to too.
      expect(lstatSync(lockPathOf(file)).isSymbolicLink()).toBe(true);
      expect(lstatSync(victim).isDirectory()).toBe(true);
    },
  );
});

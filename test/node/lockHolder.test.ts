/**
 * A lock whose holder is gone (node/lock.ts, node/lockHolder.ts): a real process takes the lock
 * and is killed with SIGKILL, which leaves its lock folder behind. No test here reads the clock:
 * each writer is given no time to wait (`waitMs: 0`) and a stale time far off, so only a takeover
 * at its first look can let it write.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { lockPathOf, withFileLock } from '../../src/node/lock.js';
import { holderRecordName, parseHolderRecord, thisHolder } from '../../src/node/lockHolder.js';

const SLOW = { timeout: 60_000 } as const;
const LOCK_TS = new URL('../../src/node/lock.ts', import.meta.url).pathname;
const PROPER_LOCKFILE = createRequire(import.meta.url).resolve('proper-lockfile');
/** No waiting at all, and a lock that goes stale only after a minute: a writer takes the lock at its first look or not at all. */
const NO_WAIT = { staleMs: 60_000, waitMs: 0 } as const;

const folders: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const tempFile = (): string => {
  const folder = mkdtempSync(join(tmpdir(), 'fact-tracker-holder-'));
  folders.push(folder);
  return join(folder, 'k.json');
};

/** A writer of this version in another process: takes the lock of FILE, says so by making MARKER, and holds the lock until it is killed. */
const HOLDER = `
import { writeFileSync } from 'node:fs';
const { withFileLock } = await import(process.argv[1]);
const [file, marker] = process.argv.slice(2);
await withFileLock(file, { staleMs: 60_000, waitMs: 10_000 }, async () => {
  writeFileSync(marker, 'held');
  setInterval(() => {}, 1000);
  return new Promise(() => {});
});
`;

/** A writer of an earlier version, as far as the lock goes: proper-lockfile alone, no record. */
const EARLIER_HOLDER = `
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const lockfile = createRequire(import.meta.url)(process.argv[1]);
const [file, marker] = process.argv.slice(2);
lockfile.lockSync(file, { realpath: false, stale: 60_000 });
writeFileSync(marker, 'held');
setInterval(() => {}, 1000);
`;

/** Starts `script` on `file` in another process and resolves once it holds the lock. */
const startHolder = async (file: string, script = HOLDER, module = LOCK_TS): Promise<ChildProcess> => {
  const marker = `${file}.held`;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script, module, file, marker],
    {
      stdio: 'ignore',
    },
  );
  children.push(child);
  for (let waited = 0; !existsSync(marker); waited += 1) {
    if (child.exitCode !== null || waited > 600) throw new Error('the holder did not take the lock');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return child;
};

/** Kills `child` with SIGKILL and resolves once it is gone (and collected: no zombie left). */
const killed = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

/** The holders' records beside the lock folder of `file`. */
const recordsOf = (file: string): string[] =>
  readdirSync(dirname(file)).filter((name) =>
    name.startsWith(`${lockPathOf(file).slice(dirname(file).length + 1)}.holder-`),
  );

/** The name this process's record beside the lock folder of `file` has while it holds it. */
const ownRecord = (file: string): string => {
  const { ino, birthtimeNs } = statSync(lockPathOf(file), { bigint: true });
  return holderRecordName('k.json.lock', { holder: thisHolder(), folder: `${ino}.${birthtimeNs}` });
};

/** Writes `text` into `file` under its lock, as a save does; the outcome says whether it got the lock. */
const save = (file: string, text: string) =>
  withFileLock(file, NO_WAIT, async () => {
    writeFileSync(file, text);
    return E.right(text);
  });

describe('a lock whose holder is gone', () => {
  it(
    'a lock left by a process killed with SIGKILL is taken over at the first look, long before it goes stale',
    SLOW,
    async () => {
      const file = tempFile();
      await killed(await startHolder(file));
      // Left behind: proper-lockfile's exit handler never ran.
      expect(existsSync(lockPathOf(file))).toBe(true);
      expect(recordsOf(file)).toHaveLength(1);
      expect(await save(file, 'saved')).toEqual(E.right('saved'));
      // Released whole, record and all.
      expect(existsSync(lockPathOf(file))).toBe(false);
      expect(recordsOf(file)).toEqual([]);
    },
  );

  it('a lock whose holder runs is not taken over', SLOW, async () => {
    const file = tempFile();
    const child = await startHolder(file);
    const refused = await save(file, 'saved');
    expect(E.isLeft(refused) && refused.left.message).toMatch(/another writer held it for the whole wait/u);
    expect(recordsOf(file)).toHaveLength(1);
    await killed(child);
    expect(await save(file, 'saved')).toEqual(E.right('saved'));
  });

  it('a lock with no record, as an earlier version makes it, is waited out until it is stale', SLOW, async () => {
    const file = tempFile();
    await killed(await startHolder(file, EARLIER_HOLDER, PROPER_LOCKFILE));
    const refused = await save(file, 'saved');
    expect(E.isLeft(refused) && refused.left.message).toMatch(/another writer held it for the whole wait/u);
    // Stale: not refreshed for two minutes.
    const past = new Date(Date.now() - 120_000);
    utimesSync(lockPathOf(file), past, past);
    expect(await save(file, 'saved')).toEqual(E.right('saved'));
  });

  it('a lock held by another machine is waited out until it is stale, then taken over, its record removed', async () => {
    const file = tempFile();
    mkdirSync(lockPathOf(file));
    const { ino, birthtimeNs } = statSync(lockPathOf(file), { bigint: true });
    const record = holderRecordName('k.json.lock', {
      holder: { pid: 1, machine: 'another machine' },
      folder: `${ino}.${birthtimeNs}`,
    });
    mkdirSync(join(dirname(file), record));
    const refused = await save(file, 'saved');
    expect(E.isLeft(refused) && refused.left.message).toMatch(/another writer held it for the whole wait/u);
    expect(recordsOf(file)).toEqual([record]);
    const past = new Date(Date.now() - 120_000);
    utimesSync(lockPathOf(file), past, past);
    expect(await save(file, 'saved')).toEqual(E.right('saved'));
    expect(recordsOf(file)).toEqual([]);
  });

  it(
    'a record of a gone process that names another lock folder is not taken for the holder, and is removed',
    SLOW,
    async () => {
      const file = tempFile();
      const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
      await new Promise((resolve) => gone.once('exit', resolve));
      mkdirSync(lockPathOf(file));
      // The lock folder's inode, with another birth time: a folder once made in the same place.
      const { ino } = statSync(lockPathOf(file), { bigint: true });
      const stray = holderRecordName('k.json.lock', {
        holder: { ...thisHolder(), pid: gone.pid! },
        folder: `${ino}.1`,
      });
      mkdirSync(join(dirname(file), stray));
      const refused = await save(file, 'saved');
      expect(E.isLeft(refused) && refused.left.message).toMatch(/another writer held it for the whole wait/u);
      expect(existsSync(lockPathOf(file))).toBe(true);
      expect(recordsOf(file)).toEqual([]);
    },
  );

  it(
    'the writer that took a lock over holds it alone: only its record is left, its lock folder is empty, and the next writer waits',
    SLOW,
    async () => {
      const file = tempFile();
      await killed(await startHolder(file));
      let second: E.Either<unknown, string> | undefined;
      const first = await withFileLock(file, NO_WAIT, async () => {
        // The gone holder's record was claimed and removed; the folder is as an earlier version makes it.
        expect(recordsOf(file)).toEqual([ownRecord(file)]);
        expect(readdirSync(lockPathOf(file))).toEqual([]);
        second = await save(file, 'second');
        return E.right('first');
      });
      expect(first).toEqual(E.right('first'));
      expect(second !== undefined && E.isLeft(second)).toBe(true);
      expect(recordsOf(file)).toEqual([]);
    },
  );

  it(
    'a holder of this version keeps its lock folder empty, so an earlier version takes it for a live lock',
    SLOW,
    async () => {
      const file = tempFile();
      await startHolder(file);
      // What an earlier version looks at before it sets a lock folder aside as committed by mistake.
      expect(readdirSync(lockPathOf(file))).toEqual([]);
      expect(recordsOf(file)).toHaveLength(1);
    },
  );
});

describe('the name of a holder record', () => {
  it('a record name read back gives the record it was made from, and is never read as another lock folder’s', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4_194_304 }),
        fc.string({ minLength: 1, unit: 'grapheme' }),
        fc.bigInt({ min: 0n, max: 2n ** 64n }),
        fc.bigInt({ min: 1n, max: 2n ** 63n }),
        (pid, machine, ino, born) => {
          const record = { holder: { pid, machine }, folder: `${ino}.${born}` };
          const name = holderRecordName('k.json.lock', record);
          expect(parseHolderRecord('k.json.lock', name)).toEqual(record);
          expect(parseHolderRecord('k.json', name)).toBeUndefined();
          expect(parseHolderRecord('j.json.lock', name)).toBeUndefined();
        },
      ),
    );
  });
});

/**
 * Who holds a lock folder (`node/lock.ts`). Right after taking the lock, its holder makes an
 * empty folder beside it, `FILE.lock.holder-PID@MACHINE-FOLDER`, named after its process, its
 * machine and the very lock folder it made (FOLDER: its inode and birth time, since a folder made
 * anew where one was removed often gets the same inode again), so a waiter on the same machine
 * can tell at once a lock whose holder is gone (killed with SIGKILL mid-write) from a live one,
 * instead of waiting for the lock to go stale. A holder on another machine cannot be asked: its
 * lock is waited out as before.
 *
 * Beside the lock folder, not in it: the lock folder stays empty, as proper-lockfile and earlier
 * versions make it, so an earlier version's writer still takes it for a live lock (it sets aside a
 * lock folder with entries in it as committed by mistake) and proper-lockfile's exit handler
 * still removes it. A folder, not a file, so git, which sees no empty folder, sees none of it in
 * a working tree. The record is a name, not contents, so renaming it is how a waiter claims a
 * lock it takes over: of two waiters that found the same holder gone, only one rename finds it.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { fileErrorCode } from './fileFailure.js';

/** A lock's holder: its process id, and the machine (and process id namespace) that id belongs to. */
export interface LockHolder {
  readonly pid: number;
  readonly machine: string;
}

/** A holder's record: who, and which lock folder (its identity, `${inode}.${birth time in ns}`). */
export interface HolderRecord {
  readonly holder: LockHolder;
  readonly folder: string;
}

/**
 * This machine as its process ids go: the host name, and on Linux the process id namespace, since
 * containers that share a host name (`--network host`) and a volume each count process ids anew.
 */
const thisMachine = (): string => {
  let namespace = '';
  try {
    namespace = readlinkSync('/proc/self/ns/pid');
  } catch {
    // No /proc (macOS, Windows): the host name alone.
  }
  return namespace === '' ? hostname() : `${hostname()} ${namespace}`;
};

/** This process as the holder of a lock. */
export const thisHolder = (): LockHolder => ({ pid: process.pid, machine: thisMachine() });

/** What the records beside the lock folder named `lockName` start with. */
const prefixOf = (lockName: string): string => `${lockName}.holder-`;

/** The name of `record` beside the lock folder named `lockName` (`FILE.lock`). */
export const holderRecordName = (lockName: string, record: HolderRecord): string =>
  `${prefixOf(lockName)}${record.holder.pid}@${encodeURIComponent(record.holder.machine)}-${record.folder}`;

/** The record an entry beside the lock folder named `lockName` is, or undefined when it is none. */
export const parseHolderRecord = (lockName: string, name: string): HolderRecord | undefined => {
  if (!name.startsWith(prefixOf(lockName))) return undefined;
  // The machine is encoded (no `@` in it), and the folder has no dash: the last dash ends the machine.
  const parts = /^([1-9][0-9]{0,9})@([^@]+)-([0-9]+\.[0-9]+)$/u.exec(name.slice(prefixOf(lockName).length));
  if (parts === null) return undefined;
  try {
    return { holder: { pid: Number(parts[1]), machine: decodeURIComponent(parts[2]!) }, folder: parts[3]! };
  } catch {
    // Not as `holderRecordName` writes it: some other folder.
    return undefined;
  }
};

/**
 * True when process `pid` has ended and waits only for its parent to collect its exit status (a
 * zombie, state `Z` in `/proc/PID/stat`): a parent that never does (a container's first process
 * that is no init) keeps it answering signals for good. False where there is no `/proc`.
 */
const isZombie = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name, which is in parentheses and may hold any character.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
};

/**
 * True when `holder` is known to be gone: a process of this machine (`self`'s) that no longer
 * runs. Another machine's, or one that runs (a process id used again counts as running, which
 * only means its lock is waited out), is not.
 */
export const isHolderGone = (holder: LockHolder, self: LockHolder): boolean => {
  if (holder.machine !== self.machine || holder.pid === self.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return isZombie(holder.pid);
  } catch (error) {
    // EPERM: it runs, as another user.
    return fileErrorCode(error) === 'ESRCH';
  }
};

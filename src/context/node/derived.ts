/**
 * The files a write leaves beside the JSON, and what git does with them: the dashboard and the
 * `.gitignore` (each a warning when it cannot be written), a context folder git ignores (said
 * on every write, with the fix: such a context never reaches a teammate), and the tool
 * sessions, which are written only where git ignores them: the `.gitignore` of the context
 * folder gets its `*.local.json` rule when a team's own file lacks it.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { appendWhole, writeFileAtomic, writeFileIfMissing } from '../../node/atomicWrite.js';
import { ioFailure } from '../../node/fileFailure.js';
import type { StillLocked } from '../../node/lock.js';
import { renderContextDashboard } from '../dashboard.js';
import { CONTEXT_DIRECTORY, CONTEXT_GITIGNORE, contextFileNames } from '../layout.js';
import type { ContextError, ContextFile } from '../model.js';
import { ignoredBy } from './git.js';
import { dashboardOutOfStep } from './read.js';
import type { Scope } from './scope.js';

/** The rule that keeps the tool sessions out of git. */
const SESSIONS_RULE = '*.local.json';

/** What writing the derived files did: a warning for each not written, and whether the dashboard was. */
export interface DerivedWritten {
  readonly warnings: ReadonlyArray<string>;
  readonly dashboardWritten: boolean;
}

/** The derived files of a written context file: the `.gitignore` and the dashboard. Each failure is a warning. */
export const writeDerived = (scope: Scope, file: ContextFile, stillLocked: StillLocked): DerivedWritten => {
  const warnings: string[] = [];
  const ignore = writeFileIfMissing(scope.paths.gitignore, CONTEXT_GITIGNORE);
  if (E.isLeft(ignore)) warnings.push(`${scope.display(scope.paths.gitignore)} not written: ${ignore.left.message}`);
  const dashboard = writeFileAtomic(
    scope.paths.dashboard,
    renderContextDashboard(file, contextFileNames(scope.kind).json),
    { stillSafe: stillLocked },
  );
  if (E.isLeft(dashboard))
    warnings.push(
      `the dashboard ${scope.display(scope.paths.dashboard)} was not updated (${dashboard.left.message}); the context itself was saved`,
    );
  return { warnings, dashboardWritten: E.isRight(dashboard) };
};

/**
 * Rewrites the dashboard when it is out of step with the JSON it is made from: true when it did.
 * `refusal` says why nothing may be written (the JSON holds a secret, which a regenerated
 * dashboard would copy into a file teams commit): it is the answer when a rewrite is due.
 */
export const regenerateDashboard = async (
  scope: Scope,
  file: ContextFile,
  stillLocked: StillLocked,
  refusal: ContextError | undefined,
): Promise<E.Either<ContextError, boolean>> => {
  if (!(await dashboardOutOfStep(scope, file, true))) return E.right(false);
  if (refusal !== undefined) return E.left(refusal);
  const written = writeFileAtomic(
    scope.paths.dashboard,
    renderContextDashboard(file, contextFileNames(scope.kind).json),
    { stillSafe: stillLocked },
  );
  return E.isLeft(written)
    ? E.left({
        code: 'io',
        message: `the dashboard ${scope.display(scope.paths.dashboard)} is out of step with the JSON and could not be rewritten (${written.left.message})`,
      })
    : E.right(true);
};

/**
 * How to let git see the context folder past the rule `rule` (`.gitignore:2: data/`): a rule
 * that ignores a parent folder cannot be undone by a negation below it (git never looks inside
 * an ignored folder), so it must ignore the folder's entries instead.
 */
const unignoreHint = (rule: string): string => {
  const pattern = rule.slice(rule.indexOf(': ') + 2);
  const folder = pattern.replace(/^\//u, '').replace(/\/$/u, '');
  const parents = CONTEXT_DIRECTORY.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
  return parents.slice(0, -1).includes(folder)
    ? `change that line to ${pattern.replace(/\/?$/u, '/*')} and add !${CONTEXT_DIRECTORY}/ below it (git never looks inside an ignored folder, so a negation alone cannot bring it back)`
    : `add !${CONTEXT_DIRECTORY}/ and !${CONTEXT_DIRECTORY}/* below that line`;
};

/** The warning of a context file git ignores: it is written, and never reaches a teammate. */
const ignoredContextWarning = (scope: Scope, rule: string): string =>
  `${scope.display(scope.paths.json)} is ignored by git (${rule}), so it is never committed and never reaches a teammate: ${unignoreHint(rule)}`;

/** A file of the context directory as git names it (git refuses a path beyond a link: `data/context` may be one). */
export const gitPathOf = (scope: Scope, file: string): string => `${scope.trackedDirectory}/${path.basename(file)}`;

/** What git does with the files of one write: the rule that ignores the JSON, and the one that ignores the tool sessions. */
export interface GitVisibility {
  readonly warnings: ReadonlyArray<string>;
  readonly notes: ReadonlyArray<string>;
  /** The rule that keeps the tool sessions out of git; undefined when git would commit them. */
  readonly sessionsIgnoredBy?: string;
  /** Why git would commit the tool sessions, when it is not that a rule undoes `*.local.json`. */
  readonly sessionsExposedBy?: string;
}

/**
 * Appends the sessions rule to the context folder's `.gitignore` (a team's own file that lacks
 * it). Only to a regular file in the folder: a link is not followed (git does not read a linked
 * `.gitignore`, and a hostile repository could point it at any file), a hard link is not written,
 * nor is a FIFO waited on.
 */
const addSessionsRule = (scope: Scope): E.Either<ContextError, void> => {
  const what = `cannot add ${SESSIONS_RULE} to ${scope.display(scope.paths.gitignore)}`;
  let fd: number | undefined;
  try {
    fd = openSync(
      scope.paths.gitignore,
      constants.O_RDWR | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0),
    );
    const stat = fstatSync(fd);
    if (!stat.isFile()) return E.left(ioFailure(what, { code: 'ENOTREG' }));
    // A file with another name (a hard link) may be any file outside the folder.
    if (stat.nlink > 1) return E.left(ioFailure(what, { code: 'EHARDLINK' }));
    const present = readFileSync(fd, 'utf8');
    // Whole or not at all: a write a full disk cuts short would leave the team's file torn.
    appendWhole(
      fd,
      Buffer.from(
        `${present === '' || present.endsWith('\n') ? '' : '\n'}# Tool session ids are local to one machine: never commit them (added by session-fact-tracker).\n${SESSIONS_RULE}\n`,
        'utf8',
      ),
    );
    return E.right(undefined);
  } catch (error) {
    return E.left(ioFailure(what, error));
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
};

/**
 * Asks git, after the JSON is written (`wroteJson`) and before tool sessions are (`sessions`),
 * whether it ignores them: an ignored JSON is a warning on every write; tool sessions that git
 * would commit get the `*.local.json` rule added to the folder's `.gitignore`, and when even
 * that does not keep them out (a rule elsewhere undoes it), `sessionsIgnoredBy` is left unset
 * and they must not be written; `sessionsExposedBy` says why when it is something else (the rule
 * could not be added, git could not answer).
 */
export const checkGitVisibility = async (
  scope: Scope,
  wroteJson: boolean,
  sessions: boolean,
): Promise<GitVisibility> => {
  const json = gitPathOf(scope, scope.paths.json);
  const local = gitPathOf(scope, scope.paths.sessions);
  const paths = wroteJson ? [json, local] : sessions ? [local] : [];
  if (paths.length === 0) return { warnings: [], notes: [] };
  const first = await ignoredBy(scope.gitAnswers, scope.paths.root, paths);
  if (E.isLeft(first))
    return {
      warnings: [`cannot tell whether git ignores ${paths.join(' and ')}: ${first.left.message}`],
      notes: [],
      sessionsExposedBy: 'git could not tell whether it ignores them',
    };
  const jsonRule = wroteJson ? first.right.get(json) : undefined;
  const warnings = jsonRule === undefined ? [] : [ignoredContextWarning(scope, jsonRule)];
  const found = first.right.get(local);
  if (!sessions || found !== undefined)
    return { warnings, notes: [], ...(found === undefined ? {} : { sessionsIgnoredBy: found }) };
  const added = addSessionsRule(scope);
  if (E.isLeft(added))
    return {
      warnings: [...warnings, added.left.message],
      notes: [],
      sessionsExposedBy: `${SESSIONS_RULE} could not be added to ${scope.display(scope.paths.gitignore)}`,
    };
  const again = await ignoredBy(scope.gitAnswers, scope.paths.root, [local]);
  const rule = E.isRight(again) ? again.right.get(local) : undefined;
  return {
    warnings,
    notes: [
      `added ${SESSIONS_RULE} to ${scope.display(scope.paths.gitignore)}, so git never commits the tool session ids in ${scope.display(scope.paths.sessions)}`,
    ],
    ...(rule === undefined ? {} : { sessionsIgnoredBy: rule }),
  };
};

/** The rule that keeps the tool sessions of `scope` out of git, for a read; undefined when git would commit them. */
export const sessionsIgnoredBy = async (scope: Scope): Promise<string | undefined> => {
  const local = gitPathOf(scope, scope.paths.sessions);
  const found = await ignoredBy(scope.gitAnswers, scope.paths.root, [local]);
  return E.isRight(found) ? found.right.get(local) : undefined;
};

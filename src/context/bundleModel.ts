/**
 * What a context bundle is built from and what it is: the input (a context and its verified
 * status), the session facts for the retrieved tier, the options, and the built bundle with
 * the characters each section spent.
 */
import type { SessionFact } from '../core/fact.js';
import type { FactStore } from '../core/store/state.js';
import type { BundleBudget, BundleSection } from './budget.js';
import type { ContextStatus } from './checkpoint.js';
import type { CliSessions, ContextKey, ContextKind, SharedContext } from './model.js';

/** What a bundle is built from: a context and its verified status (what `loadContext` returns has both). */
export interface BundleInput {
  readonly context: SharedContext;
  readonly status: ContextStatus;
  /**
   * Other keys of the context file that hold this workstream (`loadContext` lists them): when
   * nothing is stored here, the bundle says where it is (a renamed branch) instead of letting
   * the session start from scratch.
   */
  readonly elsewhere?: ReadonlyArray<ContextKey>;
  /**
   * The branches the repository still has, among those of `elsewhere` (`loadContext` asks git
   * when nothing is stored here): a branch still there was most likely this one's origin, a
   * branch gone was this one before a rename. Unset: unknown.
   */
  readonly branchesPresent?: ReadonlyArray<string>;
  /**
   * The names this branch had before `git branch -m` renamed it, the latest first
   * (`loadContext` reads them from git's reflog with `branchesPresent`): the one of them that
   * holds the workstream is where its context is, though another branch holding it still exists.
   */
  readonly renamedFrom?: ReadonlyArray<string>;
  /**
   * The workstream's contexts on other branches of this repository (a branch merged, squashed
   * or cherry-picked here brings its context along): the bundle says what they hold and how
   * to carry it here.
   */
  readonly related?: ReadonlyArray<SharedContext>;
  /** Tool sessions of this machine (`loadContext` reads them from the `*.local.json` file): best-effort acceleration. */
  readonly sessions?: CliSessions;
}

/** Session facts for the retrieved tier. */
export interface BundleFacts {
  readonly store: FactStore;
  /** What the facts must be relevant to; the feature request by default. */
  readonly query?: string;
  /** The least relevance a fact needs (default `DEFAULT_RELEVANCE_THRESHOLD`). */
  readonly threshold?: number;
  /** The most facts to consider (default 3). */
  readonly maxFacts?: number;
}

/** How to build a bundle. */
export interface BundleOptions {
  readonly kind: ContextKind;
  /** The budget: the spec's for the kind by default; a number caps the total within the kind's range. */
  readonly budget?: BundleBudget | number;
  readonly facts?: BundleFacts;
  /** How many decisions a planning bundle keeps (default 5) and how many failures any bundle keeps (default 2). */
  readonly lastDecisions?: number;
  readonly lastErrors?: number;
}

/** One rendered section and its range. */
export interface BundleSectionReport {
  readonly name: BundleSection;
  readonly chars: number;
  readonly min: number;
  readonly max: number;
}

/** A built bundle: the exact text a prompt gets, and how it was spent. */
export interface ContextBundle {
  readonly kind: ContextKind;
  readonly text: string;
  readonly chars: number;
  readonly stale: boolean;
  readonly sections: ReadonlyArray<BundleSectionReport>;
  /** The session facts that passed the relevance threshold (those that fit are in the text). */
  readonly retrieved: ReadonlyArray<SessionFact>;
}

/**
 * The kinds of facts ranking weighs with a prior (see `RankingPriors`): which apply to a fact
 * is a property of the fact alone, so the index keeps them with every posting as bit flags.
 */
import type { SessionFact } from '../fact.js';

/** The prior classes, in the order their flags and names are given. `issue` covers `duplicate` too. */
export const PRIOR_CLASSES = [
  'status',
  'test',
  'testFile',
  'manifest',
  'convention',
  'summary',
  'issue',
  'docs',
  'generated',
] as const;
/** One prior class. */
export type PriorClass = (typeof PRIOR_CLASSES)[number];

const STATUS_RELATIONS: ReadonlySet<string> = new Set(['completed_with', 'reviewed_as']);
const TEST_RELATIONS: ReadonlySet<string> = new Set(['tested_by', 'test_failure']);
const TEST_FILE =
  /(^|[/\\])(tests?|__tests__|spec|specs|e2e|testdata)[/\\]|[._-](test|spec)\.[\w]+$|_test\.go$|(^|[/\\])test_[^/\\]+\.py$/iu;
const MANIFEST_FILE =
  /(^|[/\\])(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb|package\.json|cargo\.lock|cargo\.toml|go\.sum|go\.mod|poetry\.lock|pyproject\.toml|uv\.lock|pipfile(\.lock)?|requirements[\w.-]*\.txt|gemfile(\.lock)?|composer\.(json|lock)|[\w.-]+\.lock)$/iu;

/** Documentation: a docs folder, Markdown, reStructuredText, AsciiDoc or plain text, a README or changelog. */
const DOCS_FILE =
  /(^|[/\\])(docs?|documentation)[/\\]|\.(md|mdx|rst|adoc|txt)$|(^|[/\\])(readme|changelog|changes|history|news)([._-][^/\\]*)?$/iu;
/**
 * Files a tool writes rather than a person: snapshots, generated sources and bindings, minified
 * bundles, build output and vendored code (recognized by where they live and how they are named).
 */
const GENERATED_FILE =
  /(^|[/\\])(__snapshots__|snapshots|generated|gen|vendor|dist|build)[/\\]|\.(snap|min\.js|min\.css|map)$|[._-]generated\.[\w]+$|\.pb\.go$|_pb2(_grpc)?\.py$|\.g\.dart$/iu;

/** The flag of a prior class. */
export const priorFlag = (name: PriorClass): number => 1 << PRIOR_CLASSES.indexOf(name);

/** True when a fact is of the class. */
const isOfClass: Record<PriorClass, (fact: SessionFact) => boolean> = {
  status: (fact) => STATUS_RELATIONS.has(fact.relation),
  test: (fact) => TEST_RELATIONS.has(fact.relation),
  testFile: (fact) => TEST_FILE.test(fact.subject),
  manifest: (fact) => MANIFEST_FILE.test(fact.subject),
  convention: (fact) => fact.tags.includes('convention'),
  summary: (fact) => fact.relation === 'summary',
  issue: (fact) => fact.relation === 'issue',
  docs: (fact) => fact.tags.includes('file_change') && DOCS_FILE.test(fact.subject),
  generated: (fact) => fact.tags.includes('file_change') && GENERATED_FILE.test(fact.subject),
};

/** The prior classes of a fact, as flags (computed each time: see `rememberedPriorFlags`). */
export const priorFlags = (fact: SessionFact): number =>
  PRIOR_CLASSES.reduce((sum, name, bit) => (isOfClass[name](fact) ? sum | (1 << bit) : sum), 0);

/**
 * Prior flags by fact, for whoever asks for the same facts' flags again and again (a query's
 * scratch keeps one): facts are immutable values, so a flag once computed holds for good.
 */
export type PriorFlagsMemo = WeakMap<SessionFact, number>;

/** The prior flags of a fact, remembered in `memo`. */
export const rememberedPriorFlags = (fact: SessionFact, memo: PriorFlagsMemo): number => {
  let flags = memo.get(fact);
  if (flags === undefined) {
    flags = priorFlags(fact);
    memo.set(fact, flags);
  }
  return flags;
};

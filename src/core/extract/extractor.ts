/**
 * The extraction pipeline: run every rule in isolation, normalize what it proposes, stamp it
 * with the dispatch's time and source, and keep only well-formed facts, so extraction never
 * throws and never produces a fact the store would reject.
 */
import * as E from 'fp-ts/lib/Either.js';
import { kindOf } from '../../base/describe.js';
import {
  FACT_LIMITS,
  makeFact,
  type SessionFact,
  shareTags,
  type SourceRole,
  spelledTaskId,
  tagsProblem,
  taskIdSecretProblem,
  textFieldProblem,
} from '../fact.js';
import { collapseWhitespace, quoteText, wellFormed } from '../../base/text.js';
import { isWithinYears, plainTime } from '../../base/time.js';
import { isRecord, readOnce, refuseUnlessDenseArray } from '../../base/record.js';
import { clipEndRedacted, clipStartRedacted, redactSecrets, withoutSecrets } from '../../base/secrets.js';
import type { DispatchResult, ImplementerResult, ReviewerResult } from './contract.js';
import { readString } from './fields.js';
import type { ExtractionRule, FactDraft, RuleContext } from './rule.js';
import { implementerRules as defaultImplementerRules, reviewerRules as defaultReviewerRules } from './rules.js';

/** The facts of one dispatch result, and what went wrong on the way (never an exception). */
export interface Extraction {
  readonly facts: ReadonlyArray<SessionFact>;
  readonly warnings: ReadonlyArray<string>;
}

/**
 * Facts one dispatch result may add (default of `maxFactsPerResult`): far more than a task
 * produces (a few to a few dozen), far fewer than a runaway result can propose. Past it, facts
 * are dropped in rule order and one warning says how many.
 */
export const MAX_FACTS_PER_RESULT = 1000;

/** Extraction functions over a given set of rules. */
export interface Extractor {
  readonly extractFromImplementer: (result: ImplementerResult, taskId: string, at: number) => Extraction;
  readonly extractFromReviewer: (result: ReviewerResult, taskId: string, at: number) => Extraction;
}

/**
 * A task id as facts carry it: whitespace-collapsed, 1 to 50 characters, holding no secret.
 * Every front door (the tracker, `replay`, a live session, the hook, the MCP server) takes its
 * ids through here, so they all refuse the same ones.
 */
export const normalizeTaskId = (taskId: unknown): E.Either<string, string> => {
  if (typeof taskId !== 'string' && typeof taskId !== 'number') return E.left('task id must be a string');
  // A number is taken as its decimal digits only when it is a whole number they say exactly.
  if (typeof taskId === 'number' && !Number.isSafeInteger(taskId))
    return E.left(`task id ${String(taskId)} is no whole number within 2^53 - 1: give it as a string`);
  const normalized = spelledTaskId(String(taskId));
  if (normalized === '') return E.left('task id is empty');
  const secret = taskIdSecretProblem('task id', normalized);
  if (secret !== undefined) return E.left(secret);
  if (normalized.length > FACT_LIMITS.sourceTaskId)
    return E.left(`task id is longer than ${FACT_LIMITS.sourceTaskId} characters`);
  return E.right(normalized);
};

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Untrusted text quoted for a warning (`quoteText`), with a secret its clip to 40 characters
 * makes redacted (`ghp_` and 300 letters kept as `ghp_` and 36). Only warnings quote.
 */
const quoted = (text: string): string => redactSecrets(quoteText(text));

const textOf = (value: unknown): string => (typeof value === 'string' ? wellFormed(collapseWhitespace(value)) : '');

/** The fields of a fact a draft proposes, normalized and clipped, before its time and source. */
type DraftFields = Pick<SessionFact, 'subject' | 'relation' | 'object' | 'tags'>;

/**
 * The fields a draft proposes, or why they make no fact. Each field is normalized, then checked
 * once by the fact's own rules (`textFieldProblem`, `tagsProblem`: the checks `parseNewFact`
 * makes).
 */
const draftFields = (draft: FactDraft): E.Either<string, DraftFields> => {
  if (typeof draft !== 'object' || draft === null) return E.left('a draft is not an object');
  // Clipped past a secret the cut would make (the result was redacted whole, before its texts were cut).
  const subject = clipStartRedacted(textOf(draft.subject), FACT_LIMITS.subject);
  const relation = clipEndRedacted(textOf(draft.relation), FACT_LIMITS.relation);
  const object = clipEndRedacted(textOf(draft.object), FACT_LIMITS.object);
  const { tags } = draft;
  // The fact's own rules (`parseNewFact`'s), on the fields as normalized and clipped.
  const problem =
    textFieldProblem('subject', subject, FACT_LIMITS.subject) ??
    textFieldProblem('relation', relation, FACT_LIMITS.relation) ??
    textFieldProblem('object', object, FACT_LIMITS.object) ??
    tagsProblem(tags);
  return problem === undefined ? E.right({ subject, relation, object, tags }) : E.left(problem);
};

/**
 * The fact of well-formed fields, stamped with the dispatch's time and source (its id hashed
 * once). Field by field: a spread of `fields` here cost a replay of the bench's history 7%.
 */
const toFact = (fields: DraftFields, taskId: string, role: SourceRole, at: number): SessionFact =>
  makeFact({
    subject: fields.subject,
    relation: fields.relation,
    object: fields.object,
    tags: shareTags(fields.tags),
    validFrom: plainTime(at),
    sourceTaskId: taskId,
    sourceRole: role,
    confidence: 1,
  });

/**
 * An extraction with the (subject, relation) pairs of the well-formed facts a review proposed
 * past the cap: dropped, yet proposed, so the review still repeats the open items among them
 * (see `settleReview`). Not part of an extractor's answer.
 */
export interface CappedExtraction extends Extraction {
  readonly pastCap: ReadonlyArray<Pick<SessionFact, 'subject' | 'relation'>>;
}

/** The registered rules, which build their drafts as plain data: reading them once again would double a large result's cost. */
const REGISTERED_RULES: ReadonlySet<unknown> = new Set([...defaultImplementerRules, ...defaultReviewerRules]);

const isRegisteredRule = (rule: unknown): boolean => REGISTERED_RULES.has(rule);

const runRules = <Result>(
  rules: ReadonlyArray<ExtractionRule<Result>>,
  maxFacts: number,
  role: SourceRole,
  raw: Result,
  rawTaskId: string,
  at: number,
): CappedExtraction => {
  const none = (warning: string): CappedExtraction => ({ facts: [], warnings: [warning], pastCap: [] });
  const taskId = normalizeTaskId(rawTaskId);
  if (E.isLeft(taskId)) return none(`no facts extracted: ${taskId.left}`);
  if (typeof at !== 'number' || !isWithinYears(at))
    return none('no facts extracted: the time is not epoch milliseconds within the years 0000 to 9999');
  // Said, not silently empty: every rule would read nothing of it.
  if (!isRecord(raw)) return none('no facts extracted: the result is not an object');
  // A token a model copied into its result never becomes a fact, a warning or a section line.
  let result: Result;
  try {
    // Read once into plain data (`readOnce`): a list with a hole would have the rules walk the
    // billions of elements its length may claim; here it is a result that cannot be read.
    result = withoutSecrets(readOnce(raw) as Result);
  } catch (error) {
    return none(`no facts extracted: the result could not be read (${describe(error)})`);
  }
  const warnings: string[] = [];
  const resultTaskId = readString(result, 'task_id');
  if (resultTaskId !== undefined && collapseWhitespace(resultTaskId) !== taskId.right)
    warnings.push(
      // Quoted: the model's text cannot close the quote and go on as words of the notice, or as another notice.
      `result task_id ${quoted(collapseWhitespace(resultTaskId))} differs from the dispatch task ${quoted(taskId.right)}; facts are bound to the dispatch task`,
    );
  const context: RuleContext = { taskId: taskId.right, taskSubject: `task:${taskId.right}` };
  const facts = new Map<string, SessionFact>();
  const pastCap: Array<Pick<SessionFact, 'subject' | 'relation'>> = [];
  let overCap = 0;
  for (const rule of rules) {
    let drafts: ReadonlyArray<FactDraft>;
    try {
      const proposed = rule.extract(result, context);
      if (!Array.isArray(proposed)) throw new Error('the rule did not return an array');
      // A rule of the caller's is read once into plain data (`readOnce`), inside its isolation: a
      // draft whose getter or Proxy trap throws, or a list with a hole however long, is the rule's
      // failure, and a field that would answer differently twice is kept as it was checked.
      drafts = isRegisteredRule(rule) ? proposed : (readOnce(proposed) as ReadonlyArray<FactDraft>);
    } catch (error) {
      warnings.push(`rule ${String(rule?.name)} failed: ${describe(error)}`);
      continue;
    }
    for (const draft of drafts) {
      // Past the cap, drafts are counted, not built (a fact costs a hash); a review's are still
      // read for their pairs, the items it repeats.
      if (facts.size >= maxFacts) {
        overCap += 1;
        const fields = role === 'reviewer' ? draftFields(draft) : undefined;
        if (fields !== undefined && E.isRight(fields))
          pastCap.push({ subject: fields.right.subject, relation: fields.right.relation });
        continue;
      }
      const fields = draftFields(draft);
      if (E.isLeft(fields)) warnings.push(`rule ${rule.name} proposed a malformed fact: ${fields.left}`);
      else {
        const fact = toFact(fields.right, taskId.right, role, at);
        if (!facts.has(fact.id)) facts.set(fact.id, fact);
      }
    }
  }
  if (overCap > 0)
    warnings.push(
      `the result proposed ${overCap} more ${overCap === 1 ? 'fact' : 'facts'} past the cap of ${maxFacts} per result; they were dropped`,
    );
  return { facts: [...facts.values()], warnings, pastCap };
};

/**
 * Refuses, with a TypeError naming its position (`implementerRules[1]`), an entry of `rules`
 * that is no rule (null from a list built with a condition, a rule without its `extract`):
 * a programmer's mistake, said once here rather than as a warning of every extraction.
 */
const checkRules = (rules: ReadonlyArray<unknown>, name: string): void =>
  rules.forEach((rule, i) => {
    if (!isRecord(rule) || typeof rule['extract'] !== 'function')
      throw new TypeError(
        `${name}[${i}] is ${isRecord(rule) ? 'an object without an extract function' : kindOf(rule)}, not a rule`,
      );
  });

/** A whole number of facts, 0 or more; anything else gives the default cap. */
const normalizeMaxFacts = (value: unknown): number =>
  typeof value === 'number' && value >= 0 && !Number.isNaN(value) ? Math.floor(value) : MAX_FACTS_PER_RESULT;

/**
 * Builds an extractor over the given rules (pass the registered ones plus your own), keeping at
 * most `maxFactsPerResult` facts of a result (default `MAX_FACTS_PER_RESULT`).
 */
export const createExtractor = (rules: {
  readonly implementerRules: ReadonlyArray<ExtractionRule<ImplementerResult>>;
  readonly reviewerRules: ReadonlyArray<ExtractionRule<ReviewerResult>>;
  readonly maxFactsPerResult?: number;
}): Extractor => {
  // Rules that are no object, or lists that are no arrays, are a programmer's mistake: said
  // plainly here, not as a failure deep inside the first extraction. Each field read once.
  if (!isRecord(rules))
    throw new TypeError(`the rules are ${kindOf(rules)}, not an object (implementerRules and reviewerRules)`);
  const { implementerRules, reviewerRules, maxFactsPerResult } = rules as typeof rules;
  refuseUnlessDenseArray('implementerRules', implementerRules, 'an array of rules');
  refuseUnlessDenseArray('reviewerRules', reviewerRules, 'an array of rules');
  checkRules(implementerRules, 'implementerRules');
  checkRules(reviewerRules, 'reviewerRules');
  const maxFacts = normalizeMaxFacts(maxFactsPerResult);
  const answer = ({ facts, warnings }: CappedExtraction): Extraction => ({ facts, warnings });
  return {
    extractFromImplementer: (result, taskId, at) =>
      answer(runRules(implementerRules, maxFacts, 'implementer', result, taskId, at)),
    extractFromReviewer: (result, taskId, at) =>
      answer(runRules(reviewerRules, maxFacts, 'reviewer', result, taskId, at)),
  };
};

/**
 * The extraction of a dispatch result by the registered rules, keeping at most
 * `maxFactsPerResult` facts, with the pairs a review proposed past that cap: the tracker's.
 */
export const extractDispatchResult = (
  role: SourceRole,
  result: DispatchResult,
  taskId: string,
  at: number,
  maxFactsPerResult: number,
): CappedExtraction => {
  const maxFacts = normalizeMaxFacts(maxFactsPerResult);
  return role === 'implementer'
    ? runRules(defaultImplementerRules, maxFacts, role, result as ImplementerResult, taskId, at)
    : runRules(defaultReviewerRules, maxFacts, role, result as ReviewerResult, taskId, at);
};

const defaultExtractor = createExtractor({
  implementerRules: defaultImplementerRules,
  reviewerRules: defaultReviewerRules,
});

/** Facts of an implementer result, all stamped `validFrom = at`, bound to `taskId`. */
export const extractFromImplementer = defaultExtractor.extractFromImplementer;

/** Facts of a reviewer result, all stamped `validFrom = at`, bound to `taskId`. */
export const extractFromReviewer = defaultExtractor.extractFromReviewer;

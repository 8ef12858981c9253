/**
 * The retrieved tier of a bundle: session facts from the fact store, through `retrieveFacts`,
 * and only those whose own relevance to the query reaches a threshold.
 */
import type { SessionFact } from '../core/fact.js';
import { formatFactLine } from '../core/prompt/format.js';
import { retrieveFacts } from '../core/prompt/retrieve.js';
import { kindOf } from '../base/describe.js';
import { checkedText } from './arguments.js';
import type { SectionDraft } from './budget.js';
import { text } from './bundleLines.js';
import type { BundleFacts } from './bundleModel.js';
import { findSecret, redactSecrets } from './secrets.js';

/**
 * The least relevance a session fact needs to enter a bundle: its own BM25 match against the
 * query, times its priors, plus the exact-file boost (`scoreFact` without the producing task's
 * context). A query word in the fact's subject, or two in its object, reach it; a fact that
 * shares one word of its object with the query (about 1.2) stays out.
 */
export const DEFAULT_RELEVANCE_THRESHOLD = 2;

const DEFAULT_MAX_FACTS = 3;

/**
 * `fact` with every secret in its text redacted: a dispatch result may quote a token (a command
 * line, a log), and the bundle goes into prompts, which never carry one.
 */
const withoutSecrets = (fact: SessionFact): SessionFact =>
  [fact.subject, fact.object, fact.sourceTaskId].some((part) => findSecret(part) !== undefined)
    ? {
        ...fact,
        subject: redactSecrets(fact.subject),
        object: redactSecrets(fact.object),
        sourceTaskId: redactSecrets(fact.sourceTaskId),
      }
    : fact;

/**
 * The retrieved tier: session facts whose own relevance reaches the threshold, secrets redacted,
 * as `[Session Context]` lines.
 */
export const selectRelevantFacts = (facts: BundleFacts, fallbackQuery: string): ReadonlyArray<SessionFact> => {
  if (typeof facts !== 'object' || facts === null)
    throw new TypeError(`the facts are ${kindOf(facts)}, not bundle facts ({ store, query, threshold, maxFacts })`);
  checkedText(fallbackQuery, 'the fallback query');
  const query = text(facts.query ?? fallbackQuery);
  if (query === '') return [];
  const maxFacts = facts.maxFacts ?? DEFAULT_MAX_FACTS;
  // Own relevance only: neither the words of the task that produced a fact, nor the words of the
  // best matches, nor how recent its task is, nor being a convention makes it relevant here.
  return retrieveFacts(facts.store, {
    taskDescription: query,
    taskId: '',
    maxFacts,
    maxTokens: Number.MAX_SAFE_INTEGER,
    ranking: {
      contextWeight: 0,
      feedback: { weight: 0 },
      recency: { weight: 0, shared: 0 },
      coChange: { weight: 0 },
      conventionBase: 0,
    },
    minScore: facts.threshold ?? DEFAULT_RELEVANCE_THRESHOLD,
  }).map(withoutSecrets);
};

/**
 * The retrieved tier as a section draft: optional, so it is the first to give way to the budget.
 * A fact is shown whole or counted, never clipped to a stub that reads as a fact of its own;
 * `bundle --json` lists every fact retrieved, those cut too.
 */
export const retrievedDraft = (facts: ReadonlyArray<SessionFact>, threshold: number): SectionDraft => ({
  name: 'retrieved',
  header: `## Retrieved session facts (relevance >= ${threshold})`,
  lines: facts.map((fact) => ({
    prefix: '- ',
    body: formatFactLine(fact).slice(2),
    clip: 'whole',
    tally: 'retrieved fact',
  })),
  guidance: [],
  optional: true,
  listedBy: 'fact-tracker context bundle --json lists them under retrieved',
});

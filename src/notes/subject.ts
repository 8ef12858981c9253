/**
 * Whether two facts of a user tell of the same thing, so that the newer one replaces the older
 * (a correction: "works three nights a week", then "works four nights a week"). A fact's subject
 * is its stemmed words without stopwords and without numbers (the value a correction changes).
 * Two facts of one category are about the same thing when they share at least two subject words
 * and at least 70% of all they hold between them (Jaccard); they may be when they share a word
 * and 30%, which only a model can decide.
 *
 * The thresholds come from 60 hand-labelled pairs (`test/notes/fixtures/supersede-pairs.json`):
 * at 0.7 the rule replaced 14 of the 26 corrections and none of the 34 pairs that both hold
 * (precision 1.00, recall 0.54); at 0.5 it caught 24 but replaced 4 facts that still held
 * (precision 0.86). Every correction it missed shares words with what it corrects, so a merge
 * that leaves such a pair asks the model to rewrite the profile (docs/notes.md).
 */
import { textTerms } from '../core/search/terms.js';
import type { CategorizedFact } from './model.js';

/** The share of subject words two facts must have in common to be about the same thing. */
export const SAME_SUBJECT = 0.7;

/** The share above which two facts may be about the same thing, for a model to decide. */
export const MAYBE_SAME_SUBJECT = 0.3;

const NUMBER_WORDS =
  'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen ' +
  'seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million ' +
  'first second third fourth fifth sixth seventh eighth ninth tenth once twice half dozen';

/** The stems of the number words, as `textTerms` gives them. */
const NUMBER_TERMS: ReadonlySet<string> = new Set(textTerms(NUMBER_WORDS));

const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/** True for a term that is a value, not a subject: a number in words or in digits (an ASCII digit checked first: it is most of them). */
const isValue = (term: string): boolean => {
  const first = term.charCodeAt(0);
  if (first >= DIGIT_0 && first <= DIGIT_9) return true;
  return NUMBER_TERMS.has(term) || (first > 0x7f && /^\p{N}/u.test(term));
};

/** The subject words of a fact: its stemmed terms, stopwords and values left out. */
export const subjectTerms = (fact: Pick<CategorizedFact, 'fact'>): ReadonlySet<string> =>
  new Set(textTerms(fact.fact).filter((term) => !isValue(term)));

/** How two facts relate: about the same thing, maybe (for a model to decide), or about other things. */
export type SubjectRelation = 'same' | 'maybe' | 'other';

/** True when the term at `index` of `terms` is a subject term not seen before it (terms repeat). */
const isNewSubject = (terms: ReadonlyArray<string>, index: number): boolean => {
  const term = terms[index]!;
  return !isValue(term) && terms.indexOf(term) === index;
};

/**
 * How the facts `a` and `b` relate; facts of two categories never do (a ledger spells each
 * category as configured). Counted over the terms `textTerms` keeps for each text, without
 * building sets: a rendering compares profile facts with the session's facts on every turn.
 */
export const relateSubjects = (a: CategorizedFact, b: CategorizedFact): SubjectRelation => {
  if (a.category !== b.category) return 'other';
  const aTerms = textTerms(a.fact);
  const bTerms = textTerms(b.fact);
  let aSize = 0;
  let shared = 0;
  for (let i = 0; i < aTerms.length; i += 1) {
    if (!isNewSubject(aTerms, i)) continue;
    aSize += 1;
    if (bTerms.includes(aTerms[i]!)) shared += 1;
  }
  if (shared === 0) return 'other';
  let bSize = 0;
  for (let i = 0; i < bTerms.length; i += 1) if (isNewSubject(bTerms, i)) bSize += 1;
  const share = shared / (aSize + bSize - shared);
  if (shared >= 2 && share >= SAME_SUBJECT) return 'same';
  return share >= MAYBE_SAME_SUBJECT ? 'maybe' : 'other';
};

/**
 * The paths of a saved state read in their one spelling. A state an earlier version saved
 * before extraction read a path so (`pathText`) names a file as each agent wrote it:
 * `./src/a.ts`, `src\a.ts`, `` `src/a.ts:12` ``. Resumed as it is, a later task's change of
 * `src/a.ts` would not supersede the earlier one, and a section would list the file twice. So
 * the subjects extraction makes of a path are read as it makes them now, each fact's id that of
 * its respelled triple, and pairs whose names then meet are one pair (`mergedPairs`). Only those:
 * a task's subject (`task:12`), or a fact no path rule makes (one added by hand), stays as
 * written. A state this version saved of extracted facts holds none to respell, and reads as it is
 * (a fact handed to `addFacts` by hand in a path rule's shape may hold one: it is respelled too).
 */
import { isBlank } from '../base/text.js';
import { type FactTag, pathText, type SessionFact, type SourceRole } from '../core/fact.js';
import type { PairLog } from '../core/store/state.js';
import { mergedPairs, renamedFact } from './mergedPairs.js';

/** The rules that make a subject of a path (`rules.ts`), by the relation they give it: their one tag and their role. */
const PATH_RULES: ReadonlyMap<string, { readonly tag: FactTag; readonly role: SourceRole }> = new Map([
  ['modified_by', { tag: 'file_change', role: 'implementer' }],
  ['issue', { tag: 'error', role: 'reviewer' }],
  ['convention', { tag: 'convention', role: 'reviewer' }],
]);

/** What a reviewer's issue about no file is about: its task (`task:12`), no path. */
const TASK_SUBJECT = 'task:';

/**
 * The subject of `relation` extraction makes now of the path `subject` (`pathText`), or
 * `subject` itself when no path rule gives `relation`, for a task's subject, and when the new
 * spelling would be blank (no fact's subject is). For the names a tombstone or a file record
 * holds, which keep no facts to tell more.
 */
export const respelledSubject = (subject: string, relation: string): string => {
  if (!PATH_RULES.has(relation) || subject.startsWith(TASK_SUBJECT)) return subject;
  const spelled = pathText(subject);
  return isBlank(spelled) ? subject : spelled;
};

/** True for an assertion the path rule of its relation makes: that rule's one tag and role. */
const isOfPathRule = (fact: SessionFact): boolean => {
  const rule = PATH_RULES.get(fact.relation);
  return rule !== undefined && fact.sourceRole === rule.role && fact.tags.length === 1 && fact.tags[0] === rule.tag;
};

/** The subject a pair is read with: respelled when every assertion of it is a path rule's. */
const pairSubject = (pair: PairLog): string =>
  pair.assertions.every(isOfPathRule) ? respelledSubject(pair.subject, pair.relation) : pair.subject;

const needsRespelling = (pair: PairLog): boolean => pairSubject(pair) !== pair.subject;

/** A pair log with its subject (see `pairSubject`) and its assertions respelled, each id of its triple. */
const respelledPair = (pair: PairLog): PairLog => {
  const subject = pairSubject(pair);
  if (subject === pair.subject) return pair;
  const assertions = pair.assertions.map((fact) => renamedFact(fact, subject, fact.relation, fact.object));
  return { ...pair, subject, assertions };
};

/** The pair logs of a saved state, their paths respelled (see above), in the order they came. */
export const respelledPairs = (pairs: ReadonlyArray<PairLog>): ReadonlyArray<PairLog> =>
  pairs.some(needsRespelling) ? mergedPairs(pairs, respelledPair) : pairs;

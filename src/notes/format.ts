/**
 * The blocks the main model reads: the profile first, then the session's facts, each grouped
 * by category in the ledger's order. Fact text is untrusted: every fact is normalized again
 * here and rendered after `- `, so it can neither start a line nor pose as a header or a
 * `[Category]` line; an empty list renders nothing at all, never a bare header.
 */
import type { GlobalFacts } from './global.js';
import { checkedLedger, type NotesLedger, selectGlobalFacts, selectSessionNotes } from './ledger.js';
import {
  type CategorizedFact,
  categoryNames,
  DEFAULT_CATEGORIES,
  factKey,
  normalizeCategoryName,
  normalizeFactText,
  type ProfileFact,
  type SessionNotes,
  toldTimeOf,
} from './model.js';
import { relateSubjects } from './subject.js';

/** The header of the session block. */
export const NOTED_FACTS_HEADER = 'NOTED FACTS FROM THIS SESSION:';
/** The header of the profile block, which goes first. */
export const GLOBAL_FACTS_HEADER = 'ABOUT THIS USER (from previous sessions):';

/** A user's rendered blocks for one session. */
export interface NotesBlocks {
  /** `formatGlobalFacts` of the profile, or `''`. */
  readonly profile: string;
  /** `formatNotableFacts` of the session's facts, or `''`. */
  readonly session: string;
  /** The non-empty blocks, profile first, separated by a blank line; `''` when both are empty. */
  readonly text: string;
}

const DEFAULT_NAMES = categoryNames(DEFAULT_CATEGORIES);

/**
 * `header`, then per category (configured ones in order, any other after them in order of
 * appearance) a `[Category]` line and its facts; `''` when no fact survives normalization.
 */
const renderBlock = (
  header: string,
  facts: ReadonlyArray<CategorizedFact>,
  categories: ReadonlyArray<string>,
): string => {
  const groups = new Map<string, { readonly title: string; readonly texts: string[] }>();
  const groupOf = (title: string): { readonly texts: string[] } => {
    const key = title.toLowerCase();
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = { title, texts: [] }));
    return group;
  };
  for (const title of categories.map(normalizeCategoryName)) if (title !== '') groupOf(title);
  for (const entry of Array.isArray(facts) ? facts : []) {
    if (typeof entry?.fact !== 'string' || typeof entry.category !== 'string') continue;
    const text = normalizeFactText(entry.fact);
    const title = normalizeCategoryName(entry.category);
    if (text !== '' && title !== '') groupOf(title).texts.push(text);
  }
  const lines = [...groups.values()].flatMap(({ title, texts }) =>
    texts.length === 0 ? [] : [`[${title}]`, ...texts.map((text) => `- ${text}`)],
  );
  return lines.length === 0 ? '' : [header, ...lines].join('\n');
};

const isFactList = (value: unknown): value is ReadonlyArray<CategorizedFact> => Array.isArray(value);

const namesOr = (categories: ReadonlyArray<string> | undefined): ReadonlyArray<string> =>
  Array.isArray(categories) ? categories.filter((name): name is string => typeof name === 'string') : DEFAULT_NAMES;

/** The session block: `NOTED FACTS FROM THIS SESSION:` and the facts by category; `''` for none. */
export const formatNotableFacts = (facts: ReadonlyArray<CategorizedFact>, categories?: ReadonlyArray<string>): string =>
  renderBlock(NOTED_FACTS_HEADER, facts, namesOr(categories));

/** The profile block: `ABOUT THIS USER (from previous sessions):` and the facts by category; `''` for none. */
export const formatGlobalFacts = (
  global: GlobalFacts | ReadonlyArray<CategorizedFact> | undefined,
  categories?: ReadonlyArray<string>,
): string => renderBlock(GLOBAL_FACTS_HEADER, isFactList(global) ? global : (global?.facts ?? []), namesOr(categories));

/** `facts` grouped by category (a ledger spells each category as configured), the list's order kept. */
const byCategory = <F extends CategorizedFact>(facts: ReadonlyArray<F>): ReadonlyMap<string, ReadonlyArray<F>> => {
  const groups = new Map<string, F[]>();
  for (const fact of facts) {
    const group = groups.get(fact.category);
    if (group === undefined) groups.set(fact.category, [fact]);
    else group.push(fact);
  }
  return groups;
};

/**
 * The facts of the session's list that a profile fact of another session corrects: one telling
 * of the same thing in other words, told after the session first told its own. The session's
 * list carries a fact over as it stands (`NotedFact.at`), so that fact is not what the user says
 * now: the correction, told since in another session, is, as the merge decides (newer wins).
 */
const correctedFacts = (notes: SessionNotes, others: ReadonlyArray<ProfileFact>): ReadonlySet<CategorizedFact> => {
  const corrected = new Set<CategorizedFact>();
  const groups = byCategory(notes.facts);
  for (const fact of others) {
    const told = fact.at ?? Number.NEGATIVE_INFINITY;
    for (const own of groups.get(fact.category) ?? [])
      if (toldTimeOf(notes, own) < told && factKey(own) !== factKey(fact) && relateSubjects(own, fact) === 'same')
        corrected.add(own);
  }
  return corrected;
};

/** What a session's blocks show: the profile facts from previous sessions, and the session's own list. */
interface ShownFacts {
  readonly previous: ReadonlyArray<ProfileFact>;
  readonly current: ReadonlyArray<CategorizedFact>;
}

/**
 * The facts each block of `session` shows. Under "from previous sessions", not the profile facts
 * this session merged, not those its block says again, and not those a fact of its block tells of
 * anew; in its block, not the facts a profile fact told since corrects (`correctedFacts`). A fact
 * said again is one of the same `factKey` whatever its category, as the merge takes it
 * (`consolidateGlobalFacts`): a model may file one sentence under another category from one
 * session to the next.
 */
const shownFacts = (
  profile: ReadonlyArray<ProfileFact>,
  session: string,
  notes: SessionNotes | undefined,
): ShownFacts => {
  const others = profile.filter((fact) => fact.session !== session);
  if (notes === undefined || notes.facts.length === 0 || others.length === 0)
    return { previous: others, current: notes?.facts ?? [] };
  const corrected = correctedFacts(notes, others);
  const current = corrected.size === 0 ? notes.facts : notes.facts.filter((fact) => !corrected.has(fact));
  const told = new Set(current.map(factKey));
  // Only facts of one category can tell of the same thing: most pairs are never compared.
  const groups = byCategory(current);
  const previous = others.filter((fact) => {
    if (told.has(factKey(fact))) return false;
    const rivals = groups.get(fact.category);
    return rivals === undefined || !rivals.some((rival) => relateSubjects(rival, fact) === 'same');
  });
  return { previous, current };
};

/**
 * The blocks `user` gets in `session`: their own profile and facts only, never another user's,
 * and never one thing twice: the profile block leaves out what the session block says or
 * corrects, and what this session itself merged; the session block leaves out a fact it first
 * told before another session's correction in the profile.
 */
export const formatNotesBlocks = (ledger: NotesLedger, user: string, session: string): NotesBlocks => {
  checkedLedger(ledger);
  const shown = shownFacts(
    selectGlobalFacts(ledger, user)?.facts ?? [],
    session,
    selectSessionNotes(ledger, user, session),
  );
  const profile = formatGlobalFacts(shown.previous, ledger.categories);
  const current = formatNotableFacts(shown.current, ledger.categories);
  return { profile, session: current, text: [profile, current].filter((block) => block !== '').join('\n\n') };
};

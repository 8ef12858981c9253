/**
 * The blocks the main model reads: the profile first, then the session's facts, each grouped
 * by category in the ledger's order. Fact text is untrusted: every fact is normalized again
 * here and rendered after `- `, so it can neither start a line nor pose as a header or a
 * `[Category]` line; an empty list renders nothing at all, never a bare header.
 */
import type { GlobalFacts } from './global.js';
import { checkedLedger, type NotesLedger, selectGlobalFacts, selectSessionFacts } from './ledger.js';
import {
  type CategorizedFact,
  categoryNames,
  DEFAULT_CATEGORIES,
  factKey,
  normalizeCategoryName,
  normalizeFactText,
  type ProfileFact,
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

/**
 * The profile facts that belong under "from previous sessions" in `session`: not those this
 * session merged, not those its block says again, and not those a fact of its block tells of
 * anew (the session's list is what the user says now). A fact said again is one of the same
 * `factKey` whatever its category, as the merge takes it (`consolidateGlobalFacts`): a model
 * may file one sentence under another category from one session to the next.
 */
const previousFacts = (
  profile: ReadonlyArray<ProfileFact>,
  session: string,
  current: ReadonlyArray<CategorizedFact>,
): ReadonlyArray<ProfileFact> => {
  const others = profile.filter((fact) => fact.session !== session);
  if (current.length === 0 || others.length === 0) return others;
  const told = new Set(current.map(factKey));
  // Only facts of one category can tell of the same thing (a ledger spells each as configured): most pairs are never compared.
  const byCategory = new Map<string, CategorizedFact[]>();
  for (const fact of current) {
    const group = byCategory.get(fact.category);
    if (group === undefined) byCategory.set(fact.category, [fact]);
    else group.push(fact);
  }
  return others.filter((fact) => {
    if (told.has(factKey(fact))) return false;
    const rivals = byCategory.get(fact.category);
    return rivals === undefined || !rivals.some((rival) => relateSubjects(rival, fact) === 'same');
  });
};

/**
 * The blocks `user` gets in `session`: their own profile and facts only, never another user's,
 * and never one thing twice (the profile block leaves out what the session block says or
 * corrects, and what this session itself merged).
 */
export const formatNotesBlocks = (ledger: NotesLedger, user: string, session: string): NotesBlocks => {
  checkedLedger(ledger);
  const facts = selectSessionFacts(ledger, user, session);
  const previous = previousFacts(selectGlobalFacts(ledger, user)?.facts ?? [], session, facts);
  const profile = formatGlobalFacts(previous, ledger.categories);
  const current = formatNotableFacts(facts, ledger.categories);
  return { profile, session: current, text: [profile, current].filter((block) => block !== '').join('\n\n') };
};

/**
 * The blocks the main model reads: the profile first, then the session's facts, each grouped
 * by category in the ledger's order. Fact text is untrusted: every fact is normalized again
 * here and rendered after `- `, so it can neither start a line nor pose as a header or a
 * `[Category]` line; an empty list renders nothing at all, never a bare header.
 */
import type { GlobalFacts } from './global.js';
import { type NotesLedger, selectGlobalFacts, selectSessionFacts } from './ledger.js';
import {
  type CategorizedFact,
  categoryNames,
  DEFAULT_CATEGORIES,
  normalizeCategoryName,
  normalizeFactText,
} from './model.js';

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

/** The blocks `user` gets in `session`: their own profile and facts only, never another user's. */
export const formatNotesBlocks = (ledger: NotesLedger, user: string, session: string): NotesBlocks => {
  const profile = formatGlobalFacts(selectGlobalFacts(ledger, user), ledger.categories);
  const current = formatNotableFacts(selectSessionFacts(ledger, user, session), ledger.categories);
  return { profile, session: current, text: [profile, current].filter((block) => block !== '').join('\n\n') };
};

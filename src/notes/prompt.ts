/**
 * The prompts of the small model that keeps the ledger. Both ask for the complete list back
 * (full-list output: a model that only reports changes drifts), in the JSON shape
 * `parseNotableFactsResponse` reads. Conversation text is untrusted: every message is
 * collapsed onto its own line and clipped, and facts are shown as JSON, so nothing a user
 * writes can pose as an instruction line of the prompt.
 */
import { refuseArgument } from '../base/describe.js';
import { clipEnd, collapseWhitespace } from '../base/text.js';
import { type ConversationMessage, selectRecentTurns, turnCount } from './conversation.js';
import { wellFormed } from '../base/text.js';
import { type CategorizedFact, DEFAULT_CATEGORIES, NOTES_LIMITS, type NoteCategory } from './model.js';

/** Exchanges of earlier conversation the extraction prompt shows by default. */
export const DEFAULT_PROMPT_TURNS = 3;

/** The longest earlier message shown in full; the latest message gets four times as much. */
const MESSAGE_LENGTH = 1_000;

/** The longest latest message an extraction prompt shows: what a lease queue keeps of a message. */
export const LATEST_MESSAGE_LENGTH = 4 * MESSAGE_LENGTH;

/** The most exchanges an extraction prompt shows, however many messages a follow-up covers. */
export const MAX_PROMPT_TURNS = 10;

/** The exchanges an extraction covering `coalesced` more messages than its own shows. */
export const promptTurns = (coalesced: number): number => Math.min(DEFAULT_PROMPT_TURNS + coalesced, MAX_PROMPT_TURNS);

/** Input of `buildNotableFactsPrompt`. */
export interface NotableFactsPromptInput {
  /** The user's latest message. */
  readonly message: string;
  /** The conversation before it, oldest first; the prompt shows its last `turns` exchanges. */
  readonly history?: ReadonlyArray<ConversationMessage>;
  /** The user's current facts in this session (the list the model updates). */
  readonly facts?: ReadonlyArray<CategorizedFact>;
  /** The categories, in order (default: the five defaults). */
  readonly categories?: ReadonlyArray<NoteCategory>;
  /** The number of facts to stay within (default 18, at most the hard cap of 25). */
  readonly softLimit?: number;
  /** Exchanges of `history` to show (default 3; 0: none). */
  readonly turns?: number;
}

/**
 * The extraction prompt of a conversation's messages: the user message at `latest` (none when
 * below 0) with the messages before it as history, the session's `facts`, the ledger's
 * `categories` and `softLimit`, and the exchanges of an extraction folding in `coalesced` more
 * messages than its own. The one place a transition builds it, with or without a lease.
 */
export const conversationPrompt = (
  messages: ReadonlyArray<ConversationMessage>,
  latest: number,
  facts: ReadonlyArray<CategorizedFact>,
  settings: { readonly categories: ReadonlyArray<NoteCategory>; readonly softLimit: number },
  coalesced: number,
): string =>
  buildNotableFactsPrompt({
    message: messages[latest]?.content ?? '',
    history: messages.slice(0, Math.max(0, latest)),
    facts,
    categories: settings.categories,
    softLimit: settings.softLimit,
    turns: promptTurns(coalesced),
  });

/** Input of `buildProfileConsolidationPrompt`. */
export interface ProfileConsolidationPromptInput {
  /** The merged profile, least recent first. */
  readonly facts: ReadonlyArray<CategorizedFact>;
  readonly categories?: ReadonlyArray<NoteCategory>;
  /** The most facts the rewritten profile may hold (default and at most the profile's cap, 50). */
  readonly maxFacts?: number;
}

/** Text on one line, well-formed (no lone surrogate reaches the API), clipped to `max`. */
const oneLine = (text: string, max: number): string => clipEnd(collapseWhitespace(wellFormed(text)), max);

const speaker = (message: ConversationMessage): string => (message.role === 'assistant' ? 'Assistant' : 'User');

/**
 * The number of facts a prompt asks for: `value` floored when it is a number of at least 1,
 * else `fallback`, and never past `cap`, the most the parser or the merge then keeps: a model
 * asked for more would have the rest dropped without being told.
 */
const factLimit = (value: unknown, fallback: number, cap: number): number =>
  typeof value === 'number' && value >= 1 ? Math.min(Math.floor(value), cap) : fallback;

/** A category's name as a prompt shows it, on one line: the reply is asked to spell it so. */
const shownName = (name: string): string => oneLine(name, NOTES_LIMITS.categoryLength);

const categoryLines = (categories: ReadonlyArray<NoteCategory>): string[] =>
  categories.map(
    ({ name, description }) =>
      `- ${shownName(name)}${typeof description === 'string' ? `: ${oneLine(description, 200)}` : ''}`,
  );

/**
 * What `JSON.stringify` leaves as it is and a reader of lines may break a line at: the line and
 * paragraph separators, and the C1 controls (U+0085 is a line break).
 */
const LINE_SEPARATORS = /[\u007f-\u009f\u2028\u2029]/gu;

/** `value` as JSON on one line: no text in it starts another line, or closes its quote. */
const jsonLine = (value: unknown): string =>
  JSON.stringify(value).replace(
    LINE_SEPARATORS,
    (separator) => `\\u${separator.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** One fact per line, as JSON (`jsonLine`). */
const factList = (facts: ReadonlyArray<CategorizedFact>): string =>
  facts.length === 0
    ? '(none yet)'
    : facts
        .map((fact, index) => {
          if (typeof fact !== 'object' || fact === null)
            refuseArgument(`fact ${index + 1}`, fact, 'a fact ({ category, fact })');
          return jsonLine({ category: fact.category, fact: fact.fact });
        })
        .join('\n');

/** The JSON to reply with, its example category the first one, named as the prompt shows it. */
const responseShape = (categories: ReadonlyArray<NoteCategory>): string =>
  `Reply with only JSON of this shape, nothing before or after it:\n{"notableFacts": [{"category": ${jsonLine(shownName(categories[0]?.name ?? 'People'))}, "fact": "..."}]}`;

/** The categories given, each checked (a hole or a null is the caller's mistake, named), or the default ones. */
const usable = (categories: ReadonlyArray<NoteCategory> | undefined): ReadonlyArray<NoteCategory> => {
  if (!Array.isArray(categories) || categories.length === 0) return DEFAULT_CATEGORIES;
  for (let index = 0; index < categories.length; index += 1) {
    const category: unknown = categories[index];
    if (typeof (category as NoteCategory | undefined)?.name !== 'string')
      refuseArgument(`category ${index + 1}`, category, 'a category ({ name: text, description? })');
  }
  return categories;
};

/**
 * The extraction prompt for one user message: the fact kinds and exclusions, the soft limit,
 * the current list, the last exchanges and the latest message, and the exact JSON to return.
 */
export const buildNotableFactsPrompt = (input: NotableFactsPromptInput): string => {
  if (typeof input !== 'object' || input === null)
    refuseArgument('the input', input, "an object (a prompt's fields: message, history, facts, ...)");
  const categories = usable(input.categories);
  const softLimit = factLimit(input.softLimit, NOTES_LIMITS.softLimit, NOTES_LIMITS.hardCap);
  const history = selectRecentTurns(
    Array.isArray(input.history) ? input.history : [],
    turnCount(input.turns, DEFAULT_PROMPT_TURNS),
  );
  const message = typeof input.message === 'string' ? input.message : '';
  return [
    "You keep a short list of notable facts about one user of a conversation with an assistant. The assistant reads this list instead of the older messages, so it must hold what matters about the user's situation.",
    '',
    'Record facts of these kinds:',
    ...categoryLines(categories),
    '',
    'Do not record:',
    '- meta-commentary about the session or the process',
    '- questions the user asks the assistant',
    '- preferences about the style of the session or of the replies',
    '',
    'Rules:',
    '- Return the complete updated list, not only what changed: a fact you leave out is deleted.',
    `- Each fact is one sentence of at most ${NOTES_LIMITS.factLength} characters.`,
    '- When the latest message contradicts a fact, keep the newer information.',
    `- Keep at most ${softLimit} facts. When the list would grow past that, merge similar facts into one.`,
    '- Use only the categories above, spelled as shown.',
    '',
    'Current facts:',
    factList(Array.isArray(input.facts) ? input.facts : []),
    '',
    'Recent conversation (oldest first):',
    ...(history.length === 0
      ? ['(none)']
      : history.map((turn) => {
          if (typeof turn?.content !== 'string')
            refuseArgument('a message of the history', turn, 'a message ({ role, content: text })');
          return `${speaker(turn)}: ${oneLine(turn.content, MESSAGE_LENGTH)}`;
        })),
    '',
    'Latest user message:',
    `User: ${oneLine(message, LATEST_MESSAGE_LENGTH)}`,
    '',
    responseShape(categories),
  ].join('\n');
};

/**
 * The prompt of the optional model-backed profile consolidation: the deterministic merge,
 * least recent first, to be rewritten with similar facts merged and conflicts resolved in
 * favour of the newer fact.
 */
export const buildProfileConsolidationPrompt = (input: ProfileConsolidationPromptInput): string => {
  if (typeof input !== 'object' || input === null)
    refuseArgument('the input', input, "an object (a prompt's fields: facts, categories, maxFacts)");
  const categories = usable(input.categories);
  const maxFacts = factLimit(input.maxFacts, NOTES_LIMITS.globalCap, NOTES_LIMITS.globalCap);
  return [
    'You maintain the profile of one user of a conversation with an assistant: notable facts gathered over several sessions. Later facts in the list are newer.',
    '',
    'Rewrite the profile:',
    '- Merge facts that say the same thing into one sentence.',
    '- When two facts contradict each other, keep the newer one.',
    `- Keep at most ${maxFacts} facts; drop the least important first.`,
    `- Each fact is one sentence of at most ${NOTES_LIMITS.factLength} characters.`,
    `- Use only these categories, spelled as shown: ${categories.map((category) => shownName(category.name)).join(', ')}.`,
    '- Return the complete rewritten list.',
    '',
    'Profile (least recent first):',
    factList(Array.isArray(input.facts) ? input.facts : []),
    '',
    responseShape(categories),
  ].join('\n');
};

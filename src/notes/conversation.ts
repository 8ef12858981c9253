/**
 * The history window: with the notable facts in the prompt, the main model needs only the
 * last few exchanges of the conversation instead of all of it.
 */
import { refuseArgument } from '../base/describe.js';

/** One message of a conversation between a user and the assistant. */
export interface ConversationMessage {
  readonly role: 'user' | 'assistant';
  readonly content: string;
}

/** The default history window of the main prompt: 5 exchanges, 10 messages. */
export const DEFAULT_HISTORY_TURNS = 5;

/** The history window split into what the main prompt keeps and what the notes stand in for. */
export interface RecentTurns {
  readonly recent: ReadonlyArray<ConversationMessage>;
  readonly trimmed: ReadonlyArray<ConversationMessage>;
}

/** A number of exchanges as every option of one reads it: a number of 0 or more (0: none), else `fallback`. */
export const turnCount = (turns: unknown, fallback: number = DEFAULT_HISTORY_TURNS): number =>
  typeof turns === 'number' && turns >= 0 ? Math.floor(turns) : fallback;

/**
 * Splits `messages` before the last `turns` exchanges. An exchange starts at a user message
 * and holds the replies after it, so the window never opens on a reply whose question was cut;
 * a conversation of `turns` exchanges or fewer is kept whole.
 */
export const splitRecentTurns = (
  messages: ReadonlyArray<ConversationMessage>,
  turns: number = DEFAULT_HISTORY_TURNS,
): RecentTurns => {
  const list = Array.isArray(messages) ? messages : [];
  let wanted = turnCount(turns);
  // Fewer exchanges than the window holds: everything stays, an opening greeting included.
  let start = wanted === 0 ? list.length : 0;
  for (let i = list.length - 1; i >= 0 && wanted > 0; i -= 1) {
    if (list[i]?.role !== 'user') continue;
    wanted -= 1;
    if (wanted === 0) start = i;
  }
  return { recent: list.slice(start), trimmed: list.slice(0, start) };
};

/** The last `turns` exchanges of `messages` (default 5 turns, 10 messages), for the main prompt. */
export const selectRecentTurns = (
  messages: ReadonlyArray<ConversationMessage>,
  turns: number = DEFAULT_HISTORY_TURNS,
): ReadonlyArray<ConversationMessage> => splitRecentTurns(messages, turns).recent;

/** The most replies an exchange keeps: an assistant that records thousands of messages in a row must not grow the window. */
export const MAX_REPLIES_PER_TURN = 8;

/**
 * `messages` with `message` appended, keeping the last `turns` exchanges, and of the replies
 * in a row at the end at most `MAX_REPLIES_PER_TURN` (the oldest go first): what a window of
 * `turns` exchanges can still show, at a size that does not grow with the conversation.
 */
export const appendMessage = (
  messages: ReadonlyArray<ConversationMessage>,
  message: ConversationMessage,
  turns: number,
): ReadonlyArray<ConversationMessage> => {
  // Messages that are no list, or a message that is no object, are a programmer's mistake.
  if (!Array.isArray(messages)) refuseArgument('messages', messages, 'an array of messages');
  if (typeof message !== 'object' || message === null)
    refuseArgument('the message', message, 'a message ({ role, content })');
  let replies = 0;
  while (replies < messages.length && messages[messages.length - 1 - replies]?.role !== 'user') replies += 1;
  const cut = message.role === 'user' || replies < MAX_REPLIES_PER_TURN ? messages.length : messages.length - replies;
  const kept = [...messages.slice(0, cut), ...messages.slice(cut + 1), message];
  return splitRecentTurns(kept, turns).recent;
};

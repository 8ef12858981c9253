/**
 * The model port over Anthropic's Messages API. The client is described by the little of its
 * shape this adapter uses, so the library never imports `@anthropic-ai/sdk` (an optional peer
 * dependency): pass `new Anthropic()` from the SDK, or anything with the same `messages.create`.
 */
import { kindOf, refuseArgument } from '../base/describe.js';
import { isBlank } from '../base/text.js';
import type { CompleteFn } from './port.js';

/** The request body this adapter sends to `POST /v1/messages` (mutable arrays, as the SDK declares its parameters). */
export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: Array<{ role: 'user'; content: string }>;
  system?: string;
}

/** The part of a Messages API response this adapter reads. */
export interface MessagesResponse {
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>;
  readonly stop_reason?: string | null;
}

/** The shape of an Anthropic SDK client that `anthropicComplete` needs. */
export interface MessagesClient {
  readonly messages: {
    create(body: MessagesRequest, options?: { signal?: AbortSignal }): PromiseLike<MessagesResponse>;
  };
}

/** Options of `anthropicComplete`. */
export interface AnthropicCompleteOptions {
  /** The model id, such as a small Haiku model. */
  readonly model: string;
  /**
   * The most tokens of the answer (default 4,096: the longest answer the limits allow, about 1,400
   * tokens, three times over); a value that is no number of tokens, such as NaN, asks for the default.
   */
  readonly maxTokens?: number;
  /** An optional system prompt. */
  readonly system?: string;
}

/**
 * The default answer budget, sized from the limits: the longest answer they allow (25 facts of
 * 200 characters, pretty-printed JSON in a code fence after a line of prose) is 1,396 tokens
 * by the o200k tokenizer; 4,096 leaves room for a tokenizer that counts a third more and for
 * prose around the list. A budget only caps the answer: a shorter one costs no more.
 */
export const DEFAULT_MAX_TOKENS = 4096;

/** The error `anthropicComplete` rejects with when the answer stopped at its token limit: the shell records `truncated`. */
export interface TruncatedAnswer extends Error {
  readonly code: 'truncated';
}

/**
 * The budget asked for: whole tokens, at least one; anything else (NaN, Infinity, 0, a negative)
 * is the default, which the API accepts.
 */
const answerBudget = (maxTokens: unknown): number =>
  typeof maxTokens === 'number' && Number.isFinite(maxTokens) && maxTokens >= 1
    ? Math.floor(maxTokens)
    : DEFAULT_MAX_TOKENS;

const truncated = (maxTokens: number): TruncatedAnswer =>
  Object.assign(new Error(`the answer stopped at the limit of ${maxTokens} tokens before it was complete`), {
    code: 'truncated' as const,
  });

/**
 * A `complete` function over the Messages API: one user turn holding the prompt, the text
 * blocks of the answer joined. The shell's signal aborts the HTTP request; API errors and an
 * answer without text reject, and the shell records them as failed extractions. An answer that
 * stopped at `max_tokens` is cut JSON: it rejects with code `truncated` instead of being read.
 */
export const anthropicComplete = (client: MessagesClient, options: AnthropicCompleteOptions): CompleteFn => {
  // A client or options that are none (null from an unset variable) are a programmer's mistake:
  // said here, not as a failed extraction at the first message.
  if (typeof client !== 'object' || client === null || typeof client.messages?.create !== 'function')
    refuseArgument('the client', client, 'a Messages client (an object with messages.create)');
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`the options are ${kindOf(options)}, not an object ({ model, maxTokens, system })`);
  if (typeof options.model !== 'string') refuseArgument('the model', options.model, 'a string (a model id)');
  return async (prompt, { signal }) => {
    const maxTokens = answerBudget(options.maxTokens);
    const message = await client.messages.create(
      {
        model: options.model,
        max_tokens: maxTokens,
        messages: [{ role: 'user', content: prompt }],
        ...(options.system === undefined ? {} : { system: options.system }),
      },
      { signal },
    );
    if (message.stop_reason === 'max_tokens') throw truncated(maxTokens);
    const text = message.content
      .filter((block) => block.type === 'text' && typeof block.text === 'string')
      .map((block) => block.text)
      .join('');
    if (isBlank(text))
      throw new Error(`the model answered without text (stop_reason: ${message.stop_reason ?? 'unknown'})`);
    return text;
  };
};

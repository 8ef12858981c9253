/**
 * One call of the model port with a timeout, for the notes shell. A model that rejects, throws,
 * answers something that is not text or never answers is an expected failure with its own code
 * (`model_error`, `timeout`, `truncated`), never an exception for the shell to catch.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describeError } from '../base/describe.js';
import { failure } from '../base/failure.js';
import type { CompleteFn, ModelOutcome } from './port.js';

const timeout = (timeoutMs: number): ModelOutcome => E.left(failure('timeout', `no answer within ${timeoutMs} ms`));

/** A rejection: `truncated` when the call says its answer was cut at the token limit, else `model_error`. */
const modelError = (error: unknown): ModelOutcome =>
  E.left(
    failure(
      error instanceof Error && (error as { code?: unknown }).code === 'truncated' ? 'truncated' : 'model_error',
      describeError(error),
    ),
  );

/**
 * Calls the model with a timeout. The clock starts when `complete` is called, a microtask
 * after the message was recorded (neither a slow nor a throwing `complete` runs inside the
 * caller's call), so time the host spends on other work first is not the model's. When the
 * time is up the event loop gets one more turn: an answer that arrived while the host was busy
 * is delivered before a timer that fell due at the same moment. The answer races the timer, so
 * a call that never settles (and ignores its signal) still ends. Never rejects.
 */
export const callModel = (complete: CompleteFn, prompt: string, timeoutMs: number): Promise<ModelOutcome> =>
  new Promise((resolve) => {
    let done = false;
    const finish = (outcome: ModelOutcome): void => {
      if (done) return;
      done = true;
      resolve(outcome);
    };
    const call = (): void => {
      const controller = new AbortController();
      const timer = setTimeout(
        () =>
          setTimeout(() => {
            if (done) return;
            finish(timeout(timeoutMs));
            controller.abort(new Error(`timed out after ${timeoutMs} ms`));
          }, 0),
        timeoutMs,
      );
      const answered = (outcome: ModelOutcome): void => {
        clearTimeout(timer);
        finish(outcome);
      };
      Promise.resolve()
        .then(() => complete(prompt, { signal: controller.signal }))
        .then(
          (text: unknown): ModelOutcome =>
            typeof text === 'string'
              ? E.right(text)
              : E.left(
                  failure('model_error', `complete resolved to ${text === null ? 'null' : typeof text}, not text`),
                ),
          modelError,
        )
        .then(answered, (error: unknown) => answered(modelError(error)));
    };
    void Promise.resolve().then(call);
  });

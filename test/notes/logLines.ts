/** Builders of conversation log lines for the tests of the log reader and the replay. */

/** The entries as JSON Lines. */
export const lines = (...entries: unknown[]): string => entries.map((entry) => JSON.stringify(entry)).join('\n');

/** A user line of `who` in session `s1` (or the session `extra` names). */
export const user = (who: string, text: string, extra: Record<string, unknown> = {}) => ({
  type: 'user',
  user: who,
  session: 's1',
  text,
  ...extra,
});

/** An extraction line of `who` in session `s1` whose recorded answer is `facts`. */
export const extraction = (who: string, facts: Array<[string, string]>, extra: Record<string, unknown> = {}) => ({
  type: 'extraction',
  user: who,
  session: 's1',
  response: JSON.stringify({ notableFacts: facts.map(([category, fact]) => ({ category, fact })) }),
  ...extra,
});

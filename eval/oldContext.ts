/**
 * The share of its context an old task lends (`contextOld`), chosen on the long sessions: the
 * histories the ranking is fitted on hold no task old enough (OLD_TASK_AFTER tasks back), so the
 * long sessions choose it, each held out in turn with the share the other sessions score best
 * with (leave-one-session-out), as the fit chooses the weights leave-one-history-out.
 */
import { layoutOf, windowInSession } from './compare.js';
import { type History, libraryRetriever, rates, score, type Setting, type Tally } from './lib.js';

/** The shares tried, the shipped one among them; 1 is no change. */
export const OLD_SHARES: ReadonlyArray<number> = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1];

/** A session's recall and its window's in-session recall at one share. */
interface AtShare {
  readonly tally: Tally;
  /** The window's ratio to its fresh-store recall, when the session has a window. */
  readonly window: number | undefined;
}

export interface OldContextChoice {
  /** Per share (OLD_SHARES' order), per session (the sessions' order). */
  readonly byShare: ReadonlyArray<ReadonlyArray<AtShare>>;
  /** Per session: the share the other sessions score best with, and what the session scores with it. */
  readonly heldOut: ReadonlyArray<{ readonly share: number; readonly at: AtShare }>;
}

/**
 * Every long session at every share of OLD_SHARES, each with its window (`freshOf`: the
 * window and its fresh-store tally), and each held out with the share the others choose: the
 * most of their labels found together, ties to the share nearer 1.
 */
export const chooseOldContext = (
  sessions: ReadonlyArray<History>,
  setting: Setting,
  freshOf: (session: History) => { window: History; fresh: Tally } | undefined,
): OldContextChoice => {
  const byShare = OLD_SHARES.map((contextOld) => {
    const at: Setting = { ...setting, ranking: { ...setting.ranking, contextOld } };
    return sessions.map((session): AtShare => {
      const w = freshOf(session);
      const inSession = w === undefined ? undefined : windowInSession(w.window, session, at);
      return {
        tally: score(session, libraryRetriever(at), layoutOf(at)),
        window:
          w === undefined || inSession === undefined ? undefined : rates(inSession).recall / rates(w.fresh).recall,
      };
    });
  });
  const heldOut = sessions.map((_, held) => {
    let best = OLD_SHARES.length - 1;
    const othersRecall = (s: number): number => {
      let hits = 0;
      let expected = 0;
      byShare[s]!.forEach(({ tally }, i) => {
        if (i === held) return;
        hits += tally.hits;
        expected += tally.expected;
      });
      return expected === 0 ? 0 : hits / expected;
    };
    for (let s = OLD_SHARES.length - 2; s >= 0; s -= 1) if (othersRecall(s) > othersRecall(best)) best = s;
    return { share: OLD_SHARES[best]!, at: byShare[best]![held]! };
  });
  return { byShare, heldOut };
};

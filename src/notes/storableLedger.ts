/**
 * A ledger a tracker starts from (`initial`), made fit for any store, pure: what no store can
 * keep (U+0000, an unpaired surrogate) never reaches a save, where every save of the user would
 * be refused (`invalid_input`) for good. A ledger read from a file an earlier version wrote, or
 * built by hand, can hold such text (`decodeNotes` reads it, so the file stays readable).
 */
import * as PMap from '../persistent/persistentMap.js';
import { wellFormed } from '../base/text.js';
import type { GlobalFacts } from './global.js';
import { checkedLedger, type NotesLedger, type UserNotes } from './ledger.js';
import { type CategorizedFact, isStorableNotesId, type ProfileFact, type SessionNotes } from './model.js';

/** True when every store can keep `text`: no U+0000, no unpaired surrogate. */
const isStorableText = (text: string): boolean => !text.includes('\u0000') && wellFormed(text) === text;

/** `text` as a store can keep it: U+0000 and each unpaired surrogate become U+FFFD (as `wellFormed` does). */
const storableText = (text: string): string => wellFormed(text).replaceAll('\u0000', '\uFFFD');

/** A ledger made storable, and one line per thing left out or repaired. */
export interface StorableLedger {
  readonly ledger: NotesLedger;
  readonly problems: ReadonlyArray<string>;
}

/** The fact with its category and text repaired where a store could not keep them (the same object when it could). */
const storableFact = <F extends CategorizedFact>(fact: F): F =>
  isStorableText(fact.fact) && isStorableText(fact.category)
    ? fact
    : { ...fact, category: storableText(fact.category), fact: storableText(fact.fact) };

/**
 * `ledger` without what no store can keep, losing no fact a store can keep: a user or a session
 * whose id no store can keep is left out (no record could ever be saved under it); a profile
 * fact's origin naming such a session loses the origin, the fact stays; text of a fact or a
 * category holding U+0000 or an unpaired surrogate has it replaced by U+FFFD. Returns the same
 * ledger when nothing needed it.
 */
export const storableLedger = (ledger: NotesLedger): StorableLedger => {
  checkedLedger(ledger);
  const problems: string[] = [];
  let changed = false;
  let users = ledger.users;
  PMap.forEach(ledger.users, (notes, user) => {
    if (!isStorableNotesId(user)) {
      problems.push(
        `the initial notes of the user ${JSON.stringify(user)} were left out: no store can keep that id (U+0000 or an unpaired surrogate)`,
      );
      users = PMap.remove(users, user);
      changed = true;
      return;
    }
    const next = storableUser(user, notes, problems);
    if (next !== notes) {
      users = PMap.set(users, user, next);
      changed = true;
    }
  });
  return { ledger: changed ? { categories: ledger.categories, users } : ledger, problems };
};

/** One user's notes made storable (the same object when nothing needed it), each change said in `problems`. */
const storableUser = (user: string, notes: UserNotes, problems: string[]): UserNotes => {
  let sessions = notes.sessions;
  PMap.forEach(notes.sessions, (session, id) => {
    if (!isStorableNotesId(id)) {
      problems.push(
        `the initial notes of ${JSON.stringify(user)} in the session ${JSON.stringify(id)} were left out: no store can keep that id (U+0000 or an unpaired surrogate)`,
      );
      sessions = PMap.remove(sessions, id);
      return;
    }
    const facts = session.facts.map(storableFact);
    if (facts.some((fact, index) => fact !== session.facts[index])) {
      problems.push(
        `facts of ${JSON.stringify(user)} in ${JSON.stringify(id)} held U+0000 or an unpaired surrogate, which no store can keep: replaced by U+FFFD`,
      );
      sessions = PMap.set(sessions, id, { ...session, facts } satisfies SessionNotes);
    }
  });
  const profile = notes.profile === undefined ? undefined : storableProfile(user, notes.profile, problems);
  if (sessions === notes.sessions && profile === notes.profile) return notes;
  return { sessions, ...(profile === undefined ? {} : { profile }) };
};

/** A profile made storable: its facts' text repaired, an origin no store can keep left out. */
const storableProfile = (user: string, profile: GlobalFacts, problems: string[]): GlobalFacts => {
  let origins = 0;
  let texts = 0;
  const facts = profile.facts.map((fact): ProfileFact => {
    const repaired = storableFact(fact);
    if (repaired !== fact) texts += 1;
    if (repaired.session === undefined || isStorableNotesId(repaired.session)) return repaired;
    origins += 1;
    const { session: _unstorable, ...rest } = repaired;
    return rest;
  });
  if (origins > 0)
    problems.push(
      `${origins} fact${origins === 1 ? '' : 's'} of the initial profile of ${JSON.stringify(user)} named a session no store can keep (U+0000 or an unpaired surrogate): kept without it`,
    );
  if (texts > 0)
    problems.push(
      `${texts} fact${texts === 1 ? '' : 's'} of the initial profile of ${JSON.stringify(user)} held U+0000 or an unpaired surrogate, which no store can keep: replaced by U+FFFD`,
    );
  return origins === 0 && texts === 0 ? profile : { ...profile, facts };
};

/**
 * One section of a saved state written into the document that holds it: `replay --save` writes
 * the fact store, `notes replay --save` the notes ledger, and each keeps what the other wrote
 * there. A document that is not a saved state is refused rather than replaced: the save would
 * lose it.
 */
import * as E from 'fp-ts/lib/Either.js';
import { emptyFactStore, type FactStore } from '../core/store/state.js';
import type { NotesLedger } from '../notes/ledger.js';
import { decodeSavedState, encodeState, type SavedState, type SavedStateFailure } from './savedState.js';

/** The section a save writes: the fact store, or the notes ledger. */
export type SavedSection =
  { readonly kind: 'facts'; readonly store: FactStore } | { readonly kind: 'notes'; readonly ledger: NotesLedger };

/**
 * A saved state holding `section` and whatever other section `current` holds (a parsed
 * document; undefined for a file that does not exist yet), or why `current` is not a saved state.
 */
export const withSavedSection = (current: unknown, section: SavedSection): E.Either<SavedStateFailure, SavedState> => {
  const kept = current === undefined ? E.right(undefined) : decodeSavedState(current);
  return E.map((decoded: { readonly store: FactStore; readonly notes?: NotesLedger } | undefined) =>
    section.kind === 'facts'
      ? encodeState(section.store, decoded?.notes)
      : encodeState(decoded?.store ?? emptyFactStore(), section.ledger),
  )(kept);
};

/**
 * The one place the store imports immer. A private instance keeps autoFreeze on whatever the
 * host application does with the global one: frozen snapshots are what prove callers cannot
 * mutate state behind the reducers' back.
 */
import { Immer, freeze } from 'immer';

const immer = new Immer({ autoFreeze: true });

/** immer's `produce`, from the store's private instance. */
export const produce: Immer['produce'] = immer.produce.bind(immer);

/** Deeply freezes a plain value built outside a producer. */
export const deepFreeze = <T>(value: T): T => freeze(value, true);

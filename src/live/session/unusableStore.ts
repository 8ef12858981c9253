/**
 * A session store that cannot be used, and says why on every call: what a shell gets for a
 * store it was told to use but cannot (an address that is not one, a driver that cannot be
 * loaded), so the failure is met where a session is opened, as any other store's would be.
 */
import * as E from 'fp-ts/lib/Either.js';
import type { SessionStore, SessionStoreError } from './store.js';

/** A store whose every call fails with `error`; `location` names it in messages. */
export const unusableSessionStore = (error: SessionStoreError, location: string): SessionStore => {
  const fail = async () => E.left(error);
  return {
    location,
    list: fail,
    read: fail,
    delete: fail,
    append: fail,
    repair: fail,
    readSnapshot: fail,
    writeSnapshot: fail,
    backlog: async () => undefined,
    close: async () => undefined,
  };
};

/**
 * Whether a file may be written over, as the shells that replace a user's file ask it
 * (`replay --save`, `init`): `access` lets root write anything, so a file whose permission bits
 * let nobody write it is read-only for root too.
 */
import { accessSync, constants } from 'node:fs';
import { fileErrorCode } from './fileFailure.js';

/**
 * True when this process may not write the file at `path`, whose permission bits are `mode`:
 * no write bit at all, or none for the running user. Any other failure of the check is thrown.
 */
export const isReadOnly = (path: string, mode: number): boolean => {
  if ((mode & 0o222) === 0) return true;
  try {
    accessSync(path, constants.W_OK);
    return false;
  } catch (error) {
    const code = fileErrorCode(error);
    if (code === 'EACCES' || code === 'EPERM') return true;
    throw error;
  }
};

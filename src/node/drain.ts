/**
 * Backpressure for the streams a process writes. Node queues whatever a stream cannot take at
 * once (a pipe read slowly, a socket), in the process's memory, with no bound: a writer that
 * keeps writing makes its memory depend on where its output goes (`replay --json | jq` once held
 * gigabytes). A writer that waits for `drained` between its batches holds at most one batch
 * beyond the stream's own high-water mark.
 */
import type { Writable } from 'node:stream';

/**
 * Resolves once `stream` has room again: at once when it holds no more than its high-water
 * mark, else on its `drain`, or when it closes or fails (the write's own error is reported
 * where it is listened to; waiting on it would never end).
 */
export const drained = (stream: Writable): Promise<void> => {
  if (!stream.writableNeedDrain || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      stream.off('error', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
    stream.on('error', done);
  });
};

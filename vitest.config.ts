import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * The files whose tests start processes (the built binary, git, a child holding a lock) or wait
 * on them. Their time is the children's, and a loaded machine stretches it most: they get a
 * timeout of their own (`vitest --project unit` runs the rest alone, in seconds).
 */
const PROCESS_TESTS = [
  'test/cli/{backpressure,bundle,commands,init,initKept,largeHistories,notes,replay,saveSection}.test.ts',
  'test/context/{cli,conflictStages,gitflows,guards,hostile,processes,store}.test.ts',
  'test/eval/cli.test.ts',
  'test/live/**/*.test.ts',
  'test/notes/{close,tracker}.test.ts',
  'test/postgres/{connectFailures,notesProcesses,wiring}.test.ts',
];

export default defineConfig({
  test: {
    // Test files share one module graph per worker: importing the library once instead of once
    // per file takes about two thirds off the suite's time. No test relies on fresh modules.
    isolate: false,
    // One worker more than there are cores (the default leaves one core to the main process): the
    // process tests spend much of their time waiting on children, locks and git, and a third
    // worker on two cores ran the suite in 144 s against 150 s for two (both orders alike).
    maxWorkers: availableParallelism() + 1,
    setupFiles: ['test/setup.ts'],
    globalSetup: ['test/globalSetup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'processes',
          include: PROCESS_TESTS,
          // A bound for a test that hangs, not a speed check: on a busy machine a child's start
          // alone can take seconds.
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: PROCESS_TESTS,
          // The largest property tests take seconds alone; the bound only ends a test that hangs.
          testTimeout: 60_000,
        },
      },
    ],
  },
});

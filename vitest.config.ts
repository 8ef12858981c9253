import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Test files share one module graph per worker: importing the library once instead of once
    // per file takes about two thirds off the suite's time. No test relies on fresh modules.
    isolate: false,
    // One worker more than there are cores (the default leaves one core to the main process): the
    // tests that start processes spend much of their time waiting on children, locks and git, and
    // a third worker on two cores ran the suite in 144 s against 150 s for two (both orders alike).
    maxWorkers: availableParallelism() + 1,
    setupFiles: ['test/setup.ts'],
    globalSetup: ['test/globalSetup.ts'],
    include: ['test/**/*.test.ts'],
    // A bound for a test that hangs, not a speed check: on a busy machine a child's start alone
    // can take seconds, and the largest property tests take seconds alone. One project, not one
    // per bound: each project transforms and imports the sources again.
    testTimeout: 120_000,
  },
});

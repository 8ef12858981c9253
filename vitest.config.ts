import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // Test files share one module graph per worker: importing the library once instead of once
    // per file takes about two thirds off the suite's time. No test relies on fresh modules.
    isolate: false,
    // At least two workers even on two cores (the default leaves one core to the main process):
    // the process tests spend much of their time waiting on children, locks and git.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    setupFiles: ['test/setup.ts'],
  },
});

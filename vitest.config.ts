import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // Test files share one module graph per worker: importing the library once instead of once
    // per file takes about two thirds off the suite's time. No test relies on fresh modules.
    isolate: false,
    setupFiles: ['test/setup.ts'],
  },
});

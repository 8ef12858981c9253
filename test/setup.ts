import { afterAll } from 'vitest';
import { removeTempDirs } from './tempDirs.js';

// Test files share modules (isolate: false), so per-file clean-up is registered here, once per file.
afterAll(removeTempDirs);

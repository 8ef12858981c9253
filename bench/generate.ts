/**
 * Deterministic synthetic sessions for the benchmark: dispatch results with realistic paths,
 * summaries, follow-ups, tests and review issues drawn from a fixed vocabulary by a seeded
 * generator, so every run measures the same data.
 */
import type { ImplementerResult, ReviewerResult } from '../src/index.js';

/** A small, fast, seeded PRNG (mulberry32). */
export const seeded = (seed: number) => {
  let state = seed >>> 0;
  return (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/**
 * The vocabulary of a large product: 2,000 identifiers drawn with a Zipf distribution (a few
 * words everywhere, most rare), as the words of real code and prose are.
 */
const SYLLABLES = [
  'ac',
  'bar',
  'cal',
  'dex',
  'el',
  'fin',
  'gro',
  'hub',
  'in',
  'jet',
  'kin',
  'lo',
  'mar',
  'nex',
  'or',
  'pay',
  'quo',
  'ret',
  'sta',
  'tor',
  'um',
  'val',
  'wex',
  'yar',
  'zen',
];
const WORDS = Array.from({ length: 2_000 }, (_, i) => {
  const a = SYLLABLES[i % SYLLABLES.length]!;
  const b = SYLLABLES[Math.floor(i / SYLLABLES.length) % SYLLABLES.length]!;
  const c = i >= SYLLABLES.length ** 2 ? SYLLABLES[Math.floor(i / SYLLABLES.length ** 2) % SYLLABLES.length]! : '';
  return `${a}${b}${c}`;
});
const AREAS = WORDS.slice(0, 60);
const LAYERS = [
  'routes',
  'services',
  'repositories',
  'models',
  'schemas',
  'middleware',
  'jobs',
  'handlers',
  'validators',
  'clients',
  'views',
  'workers',
  'policies',
  'mappers',
  'events',
];
const VERBS = [
  'add',
  'fix',
  'refactor',
  'validate',
  'paginate',
  'cache',
  'sign',
  'retry',
  'log',
  'index',
  'rename',
  'split',
  'merge',
  'document',
  'test',
  'harden',
];
const STYLE = [
  'naming convention: handlers are verbNoun',
  'use the repository pattern, no SQL in routes',
  'error responses follow the problem+json style',
  'money is integer cents by convention',
];

/** Cumulative Zipf weights (s = 1) over the word list. */
const ZIPF = (() => {
  const weights = WORDS.map((_, rank) => 1 / (rank + 1));
  const total = weights.reduce((sum, w) => sum + w, 0);
  let running = 0;
  return weights.map((w) => (running += w / total));
})();

const word = (random: () => number): string => {
  const target = random();
  let low = 0;
  let high = ZIPF.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (ZIPF[mid]! < target) low = mid + 1;
    else high = mid;
  }
  return WORDS[low]!;
};

const pick = <T>(random: () => number, items: ReadonlyArray<T>): T => items[Math.floor(random() * items.length)]!;

const camel = (a: string, b: string): string => a + b.charAt(0).toUpperCase() + b.slice(1);

/** A path in a tree of 60 areas x 15 layers x millions of file names. */
export const randomPath = (random: () => number): string =>
  `src/${pick(random, AREAS)}/${pick(random, LAYERS)}/${camel(word(random), word(random))}.ts`;

const phrase = (random: () => number, length: number): string => Array.from({ length }, () => word(random)).join(' ');

/** A task prompt in the generated vocabulary. */
export const randomPrompt = (random: () => number): string =>
  `${pick(random, VERBS)} the ${phrase(random, 2)} handling in ${pick(random, AREAS)}: update ${randomPath(random)} so ${phrase(random, 3)} ${pick(random, VERBS)}s on ${phrase(random, 2)}`;

/** An implementer result for `taskId`. */
export const randomImplementerResult = (random: () => number, taskId: string): ImplementerResult => ({
  task_id: taskId,
  status: random() < 0.9 ? 'completed' : 'blocked',
  summary: `${pick(random, VERBS)} ${phrase(random, 2)} in ${pick(random, AREAS)} with ${phrase(random, 2)} checks`,
  files_changed: Array.from({ length: 3 + Math.floor(random() * 4) }, () => randomPath(random)),
  tests: [{ command: `npm test -- test/${pick(random, AREAS)}`, passed: random() < 0.85 }],
  follow_up_actions: random() < 0.5 ? [`${pick(random, VERBS)} ${phrase(random, 3)} next`] : ['none'],
});

/** A reviewer result for `taskId`. */
export const randomReviewerResult = (random: () => number, taskId: string): ReviewerResult => ({
  task_id: taskId,
  assessment: random() < 0.6 ? 'approved' : 'needs_changes',
  strengths: ['clear tests'],
  issues: Array.from({ length: Math.floor(random() * 3) }, () => ({
    severity: pick(random, ['critical', 'important', 'minor'] as const),
    file: randomPath(random),
    message:
      random() < 0.3
        ? pick(random, STYLE)
        : `${phrase(random, 2)} is not ${pick(random, VERBS)}ed when ${phrase(random, 2)} fails`,
    fix: `${pick(random, VERBS)} the ${word(random)}`,
  })),
  required_fixes: random() < 0.4 ? [`${pick(random, VERBS)} ${phrase(random, 2)} before merge`] : [],
});

/** An implementer's raw answer: a few sentences of prose, then the result block, fenced and pretty-printed, as agents write it. */
const rawImplementerOutput = (random: () => number, result: ImplementerResult): string =>
  [
    `I ${pick(random, VERBS)}ed the ${phrase(random, 2)} handling in ${result.files_changed?.[0] ?? 'the service'}.`,
    `The ${phrase(random, 3)} path now ${pick(random, VERBS)}s before ${phrase(random, 2)}, and ${phrase(random, 2)} is covered by a test.`,
    `I ran ${result.tests?.[0]?.command ?? 'the tests'} after ${pick(random, VERBS)}ing ${phrase(random, 3)}; ${phrase(random, 4)} ${pick(random, VERBS)}s as before.`,
    random() < 0.5 ? `Note: ${phrase(random, 6)} still ${pick(random, VERBS)}s on ${phrase(random, 2)}.` : '',
    '',
    'BEGIN_DISPATCH_RESULT',
    '```json',
    JSON.stringify(result, null, 2),
    '```',
    'END_DISPATCH_RESULT',
    '',
  ].join('\n');

/**
 * The lines of a long, realistic dispatch history, endlessly: per task a prompt, an implementer
 * answer as raw text, a review as a result object (a third of them asking for changes, which a
 * second round settles), now and then an invalidation; times a minute apart. About 600 bytes
 * an event, as the histories of real sessions run.
 */
export function* historyLines(seed: number): Generator<string> {
  const random = seeded(seed);
  let at = Date.UTC(2026, 2, 1);
  const next = (): string => new Date((at += 60_000)).toISOString();
  for (let task = 1; ; task += 1) {
    const taskId = String(task);
    yield JSON.stringify({ type: 'prompt', taskId, at: next(), taskPrompt: randomPrompt(random) });
    const result = randomImplementerResult(random, taskId);
    yield JSON.stringify({
      type: 'dispatch',
      role: 'implementer',
      taskId,
      at: next(),
      output: rawImplementerOutput(random, result),
    });
    const review = randomReviewerResult(random, taskId);
    yield JSON.stringify({ type: 'dispatch', role: 'reviewer', taskId, at: next(), result: review });
    if (review.assessment === 'needs_changes')
      yield JSON.stringify({
        type: 'dispatch',
        role: 'reviewer',
        taskId,
        at: next(),
        result: { ...randomReviewerResult(random, taskId), assessment: 'approved', issues: [] },
      });
    if (random() < 0.05)
      yield JSON.stringify({
        type: 'invalidate',
        subject: result.files_changed?.[0] ?? `task:${taskId}`,
        relation: 'modified_by',
        at: next(),
      });
  }
}

/** The lines of `historyLines(seed)` up to its `dispatches`-th dispatch: a session of that length. */
export const historyOfDispatches = (seed: number, dispatches: number): string[] => {
  const lines: string[] = [];
  let count = 0;
  for (const line of historyLines(seed)) {
    if (count >= dispatches) break;
    lines.push(line);
    if ((JSON.parse(line) as { type: string }).type === 'dispatch') count += 1;
  }
  return lines;
};

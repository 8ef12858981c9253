/**
 * The shell against inputs of any size and shape (issue 14, items 1 and 4): one runaway result
 * is capped and ingested in linear time, and a hostile input object (throwing getters,
 * Proxies) is read once, inside the guard, so no call throws.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import {
  addFacts,
  createExtractor,
  createFactTracker,
  implementerRules,
  MAX_FACTS_PER_RESULT,
  reviewerRules,
  selectValidCount,
  selectValidFacts,
} from '../../../src/index.js';
import { summarize } from '../../../src/core/store/compact.js';
import { makeFact } from '../../../src/core/fact.js';
import { implementer } from '../../fixtures/results.js';

const paths = (count: number): string[] => Array.from({ length: count }, (_, i) => `src/dir${i % 100}/file${i}.ts`);

describe('one large result (issue 14, item 1)', () => {
  // Before: the index copied a task's facts on every added fact and compaction picked the oldest
  // of 100,000 by insertion; this call ran out of heap after minutes. It now takes about a second.
  it('ingests a result with 100,000 files_changed, keeping the first 1,000 facts and one warning for the rest', () => {
    const tracker = createFactTracker({ clock: () => 1_000 });
    const ingested = tracker.ingestOutput({
      role: 'implementer',
      taskId: '1',
      output: implementer('1', paths(100_000)),
    });
    if (E.isLeft(ingested)) throw new Error(ingested.left.message);
    expect(ingested.right.facts).toHaveLength(MAX_FACTS_PER_RESULT);
    // Rule order: the status and the summary, then the files in their order.
    expect(ingested.right.facts.slice(0, 3).map((fact) => fact.relation)).toEqual([
      'completed_with',
      'summary',
      'modified_by',
    ]);
    expect(ingested.right.facts.at(-1)?.subject).toBe('src/dir97/file997.ts');
    expect(ingested.right.warnings).toEqual([
      'the result proposed 99002 more facts past the cap of 1000 per result; they were dropped',
    ]);
    expect(selectValidCount(tracker.getSnapshot())).toBe(1_000); // under the bound of DEFAULT_MAX_VALID_FACTS
  });

  it('takes the cap from maxFactsPerResult, and warns only when it drops something', () => {
    const small = createFactTracker({ clock: () => 1_000, maxFactsPerResult: 3 });
    const capped = small.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', paths(5)) });
    expect(E.isRight(capped) && capped.right.facts.map((fact) => fact.subject)).toEqual([
      'task:1',
      'task:1',
      'src/dir0/file0.ts',
    ]);
    expect(E.isRight(capped) && capped.right.warnings).toEqual([
      'the result proposed 4 more facts past the cap of 3 per result; they were dropped',
    ]);
    const exact = createExtractor({ implementerRules, reviewerRules, maxFactsPerResult: 7 });
    expect(exact.extractFromImplementer(implementer('1', paths(5)) as never, '1', 0).warnings).toEqual([]);
    // Anything but a number 0 or more gives the default cap.
    const odd = createExtractor({ implementerRules, reviewerRules, maxFactsPerResult: Number.NaN });
    expect(odd.extractFromImplementer(implementer('1', paths(1_200)) as never, '1', 0).facts).toHaveLength(1_000);
  });

  // Before: Math.min(...confidences) took one argument per merged fact and overflowed the stack.
  it('summarizes 200,000 facts of one subject without overflowing the stack', () => {
    const older = Array.from({ length: 200_000 }, (_, i) =>
      makeFact({
        subject: 'task:1',
        relation: 'requires',
        object: `step ${i}`,
        tags: ['dependency'],
        validFrom: i,
        sourceTaskId: '1',
        sourceRole: 'implementer',
        confidence: i === 7 ? 0.5 : 1,
      }),
    );
    const summary = summarize('task:1', older);
    expect(summary.confidence).toBe(0.5);
    expect(summary.object.startsWith('requires step 0; requires step 1;')).toBe(true);
    expect(summary.object).toHaveLength(200);
  });
});

describe('hostile input objects (issue 14, item 4)', () => {
  const seeded = () => {
    const tracker = createFactTracker({ clock: () => 1_000 });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
    return tracker;
  };

  /** An object whose fields count their reads and throw from the second one on. */
  const readOnce = (fields: Record<string, unknown>, throwing: ReadonlyArray<string> = []) => {
    const reads: Record<string, number> = {};
    const target = {};
    for (const [key, value] of Object.entries(fields))
      Object.defineProperty(target, key, {
        enumerable: true,
        get: () => {
          reads[key] = (reads[key] ?? 0) + 1;
          if (throwing.includes(key) || reads[key]! > 1) throw new Error(`${key} read again`);
          return value;
        },
      });
    return { input: target, reads };
  };

  // Before: when a field threw, the fallback read taskId and taskPrompt again, and threw itself.
  it('compilePrompt reads each field once, and a throwing field still gives a prompt', () => {
    const tracker = seeded();
    const { input, reads } = readOnce({ taskId: '2', taskPrompt: 'Change src/a.ts', tags: ['file_change'] }, ['tags']);
    const compiled = tracker.compilePrompt(input as never);
    expect(compiled.prompt).toContain('Change src/a.ts');
    // The throwing field reads as not given: no tag filter.
    expect(compiled.facts.map((fact) => fact.subject)).toContain('src/a.ts');
    expect(Object.values(reads).every((count) => count === 1)).toBe(true);

    const whole = readOnce({ taskId: '2', taskPrompt: 'Change src/a.ts', tags: ['file_change'], maxFacts: 3 });
    expect(tracker.compilePrompt(whole.input as never).facts.map((fact) => fact.subject)).toEqual(['src/a.ts']);
    expect(Object.values(whole.reads).every((count) => count === 1)).toBe(true);
  });

  it('compilePrompt and ingestOutput give values for Proxies that throw on every trap, revoked Proxies and odd primitives', () => {
    const tracker = seeded();
    const trap = () => {
      throw new Error('trap');
    };
    const hostile = new Proxy({}, { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });
    const revocable = Proxy.revocable({}, {});
    revocable.revoke();
    for (const input of [hostile, revocable.proxy, Symbol('x'), 10n, Object.create(null)]) {
      expect(() => tracker.compilePrompt(input as never)).not.toThrow();
      const ingested = tracker.ingestOutput(input as never);
      expect(E.isLeft(ingested) && ingested.left.code).toBe('invalid_input');
    }
    const unprintable = { role: { toString: trap }, taskId: '1', output: '' };
    expect(E.isLeft(tracker.ingestOutput(unprintable as never))).toBe(true);
    expect(selectValidFacts(tracker.getSnapshot()).map((fact) => fact.subject)).toContain('src/a.ts');
  });

  it('a result object with an own __proto__ field is read as its JSON text is: the field lends the result nothing', () => {
    const json =
      '{"task_id":"2","summary":"done","__proto__":{"status":"completed","files_changed":["src/secret.ts"]}}';
    const tracker = seeded();
    const asText = tracker.ingestOutput({
      role: 'implementer',
      taskId: '2',
      output: `BEGIN_DISPATCH_RESULT\n${json}\nEND_DISPATCH_RESULT`,
    });
    const asObject = tracker.ingestOutput({ role: 'implementer', taskId: '2', output: JSON.parse(json) as unknown });
    expect(E.isLeft(asText) && asText.left.code).toBe('schema_invalid');
    expect(E.isLeft(asObject) && asObject.left.code).toBe('schema_invalid');
    expect(selectValidFacts(tracker.getSnapshot()).some((fact) => fact.subject === 'src/secret.ts')).toBe(false);
  });

  it('a task id holding a lone surrogate leaves its own facts out of its section, as any other id does', () => {
    const tracker = seeded();
    const own = 'T\uD800';
    tracker.ingestOutput({ role: 'implementer', taskId: own, output: implementer(own, ['src/login.ts']) });
    const preview = tracker.previewPrompt({ taskId: own, taskPrompt: 'change src/login.ts' });
    expect(preview.facts.length).toBeGreaterThan(0);
    expect(preview.facts.filter((fact) => fact.sourceTaskId === 'T\uFFFD')).toEqual([]);
  });

  it('createFactTracker reads an option it cannot read (a throwing getter, a cyclic or throwing ranking) as not given', () => {
    const cyclic: Record<string, unknown> = { floor: 0.05 };
    cyclic['self'] = cyclic;
    const throwing = Object.defineProperty({}, 'floor', {
      enumerable: true,
      get: () => {
        throw new Error('a getter');
      },
    });
    const clockGetter = Object.defineProperty({}, 'clock', {
      get: () => {
        throw new Error('a getter');
      },
    });
    for (const options of [{ ranking: cyclic }, { ranking: throwing }, clockGetter]) {
      let tracker: ReturnType<typeof createFactTracker> | undefined;
      expect(() => (tracker = createFactTracker(options as never))).not.toThrow();
      expect(
        E.isRight(tracker!.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) })),
      ).toBe(true);
      expect(JSON.parse(JSON.stringify(tracker!.getState()))).toEqual(tracker!.getState());
    }
    expect(createFactTracker({ ranking: cyclic as never }).getState().settings.ranking).toEqual({ floor: 0.05 });
  });

  it('a -0 in a fact or in the settings is 0, so a state deep-equals its JSON copy', () => {
    const tracker = createFactTracker({ clock: () => 1_000, maxTokens: -0, ranking: { floor: -0 } });
    const fact = makeFact({
      subject: 'src/a.ts',
      relation: 'modified_by',
      object: 'task:1',
      tags: ['file_change'],
      validFrom: -0,
      sourceTaskId: '1',
      sourceRole: 'implementer',
      confidence: -0,
    });
    const store = addFacts(tracker.getSnapshot(), [fact]);
    expect(JSON.parse(JSON.stringify(store))).toStrictEqual(store);
    expect(JSON.parse(JSON.stringify(tracker.getState()))).toStrictEqual(tracker.getState());
  });

  it('ingestOutput reads each field of the input and of the result once, and rejects a result whose field throws', () => {
    const tracker = seeded();
    const result = readOnce(implementer('2', ['src/b.ts']));
    const input = readOnce({ role: 'implementer', taskId: '2', output: result.input });
    expect(E.isRight(tracker.ingestOutput(input.input as never))).toBe(true);
    expect(Object.values(input.reads).every((count) => count === 1)).toBe(true);
    expect(Object.values(result.reads).every((count) => count <= 1)).toBe(true);

    const throwing = readOnce(implementer('3', ['src/c.ts']), ['files_changed']);
    const rejected = tracker.ingestOutput({ role: 'implementer', taskId: '3', output: throwing.input });
    expect(E.isLeft(rejected)).toBe(true);
    expect(selectValidFacts(tracker.getSnapshot()).some((fact) => fact.subject === 'src/c.ts')).toBe(false);
  });

  it('a time or a clock outside the years 0000 to 9999 is invalid_input, as a history and a session refuse it, and nothing is recorded', () => {
    const heard: unknown[] = [];
    for (const time of [1e21, -1e300, 253_402_300_800_000, -62_167_219_200_001]) {
      const byAt = createFactTracker({ clock: () => 5, onError: (failure) => heard.push(failure) });
      expect(byAt.recordPrompt('1', 'Add a route', time)).toEqual(
        E.left({ code: 'invalid_input', message: `the time: ${time} milliseconds is outside the years 0000 to 9999` }),
      );
      const byClock = createFactTracker({ clock: () => time, onError: (failure) => heard.push(failure) });
      const answer = byClock.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
      expect(E.isLeft(answer) && answer.left.code).toBe('invalid_input');
      expect([byAt.events(), byClock.events(), selectValidCount(byClock.getSnapshot())]).toEqual([[], [], 0]);
    }
    expect(heard).toEqual([]);
    // The first and the last millisecond of those years are times like any other.
    const edges = createFactTracker({ clock: () => 253_402_300_799_999 });
    expect(
      E.isRight(edges.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) })),
    ).toBe(true);
    expect(E.isRight(edges.recordPrompt('2', 'Add a route', -62_167_219_200_000))).toBe(true);
  });

  it('a result whose getter or Proxy trap throws anywhere in it is invalid_input naming why, as a session answers it, never internal', () => {
    const heard: unknown[] = [];
    const tracker = createFactTracker({ clock: () => 5, onError: (failure) => heard.push(failure) });
    const trap = () => {
      throw new Error("the caller's getter");
    };
    const getterAt = { ...implementer('3', ['src/c.ts']) };
    Object.defineProperty(getterAt, 'summary', { enumerable: true, get: trap });
    const elementProxy = new Proxy(['src/c.ts'], {
      get: (target, key, receiver) => (key === '0' ? trap() : Reflect.get(target, key, receiver)),
    });
    const nestedProxy = { ...implementer('3', []), files_changed: elementProxy };
    const wholeProxy = new Proxy({}, { ownKeys: trap, get: trap, getPrototypeOf: trap });
    for (const output of [getterAt, nestedProxy, wholeProxy]) {
      const answer = tracker.ingestOutput({ role: 'implementer', taskId: '3', output });
      expect(answer).toEqual(
        E.left({ code: 'invalid_input', message: "the output cannot be read: the caller's getter" }),
      );
    }
    expect(heard).toEqual([]);
    expect(selectValidCount(tracker.getSnapshot())).toBe(0);
    // What reads without throwing is taken as before: a result that refers to itself among them.
    const circular: Record<string, unknown> = { ...implementer('4', ['src/d.ts']) };
    circular['self'] = circular;
    expect(E.isRight(tracker.ingestOutput({ role: 'implementer', taskId: '4', output: circular }))).toBe(true);
    expect(selectValidFacts(tracker.getSnapshot()).map((fact) => fact.subject)).toContain('src/d.ts');
  });

  it('an array with a hole, however long (an element set past 4 billion empty ones), is invalid_input at its first hole, and nothing is recorded', () => {
    const tracker = createFactTracker({ clock: () => 1_000 });
    for (const length of [2, 2 ** 32 - 1]) {
      // An element set far past the others, as `files[id] = path` with a large id would.
      const files: string[] = [];
      files[length - 1] = 'src/late.ts';
      const ingested = tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', files) });
      expect(ingested).toEqual(
        E.left({
          code: 'invalid_input',
          message: `the output cannot be read: an array of ${length} elements has a hole at [0], an element never set`,
        }),
      );
      const tags: string[] = [];
      tags[length - 1] = 'file_change';
      expect(tracker.compilePrompt({ taskId: '2', taskPrompt: 'x', tags: tags as never }).error).toEqual(
        expect.objectContaining({ code: 'invalid_input' }),
      );
    }
    expect(tracker.events()).toEqual([]);
  });

  it('compilePrompt reads its tags once: a list whose element throws is invalid_input, one whose elements change filters by what was checked', () => {
    const heard: unknown[] = [];
    const tracker = createFactTracker({ clock: () => 5, onError: (failure) => heard.push(failure) });
    tracker.ingestOutput({ role: 'implementer', taskId: '1', output: implementer('1', ['src/a.ts']) });
    const throwing = new Proxy(['file_change'], {
      get: (target, key, receiver) => {
        if (key === '0') throw new Error("the caller's trap");
        return Reflect.get(target, key, receiver);
      },
    });
    const refused = tracker.compilePrompt({ taskId: '2', taskPrompt: 'Change src/a.ts', tags: throwing as never });
    expect(refused.error).toEqual({ code: 'invalid_input', message: "the tags cannot be read: the caller's trap" });
    expect(heard).toEqual([]);
    let reads = 0;
    const shifting = new Proxy(['file_change'], {
      get: (target, key, receiver) => (key === '0' && reads++ > 0 ? 'no_such_tag' : Reflect.get(target, key, receiver)),
    });
    const plain = tracker.previewPrompt({ taskId: '2', taskPrompt: 'Change src/a.ts', tags: ['file_change'] });
    const compiled = tracker.compilePrompt({ taskId: '2', taskPrompt: 'Change src/a.ts', tags: shifting as never });
    expect(plain.facts.map((fact) => fact.subject)).toEqual(['src/a.ts']);
    expect(compiled.facts).toEqual(plain.facts);
  });
});

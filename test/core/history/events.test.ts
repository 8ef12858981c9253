import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { FACT_TAGS, parseEventTime, parseHistory } from '../../../src/index.js';
import { decodeEvent, plainEvent } from '../../../src/core/history/events.js';
import { findSecret } from '../../../src/base/secrets.js';
import { SECRETS, secretPart } from '../../fixtures/secrets.js';

const history = (...lines: ReadonlyArray<unknown>): string =>
  lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n');

const implementerResult = {
  task_id: '1',
  status: 'completed',
  summary: 'Added src/a.ts',
  files_changed: ['src/a.ts'],
  tests: [],
  follow_up_actions: [],
};

/** Lines rejected with a message that quotes `value`: as a type, a role, a count and a time. */
const linesQuoting = (value: string): ReadonlyArray<unknown> => [
  { type: value },
  { type: 'dispatch', role: value, taskId: '1', output: 'x' },
  { type: 'prompt', taskId: '1', taskPrompt: 'x', maxFacts: value },
  { type: 'compact', maxFacts: 1, at: value },
];

describe('parseHistory', () => {
  it('reads every event type with its line number, skipping blank lines', () => {
    const parsed = parseHistory(
      history(
        { type: 'prompt', taskId: '1', taskPrompt: 'Add a', at: 5000 },
        '',
        '   ',
        { type: 'dispatch', role: 'implementer', taskId: '1', result: implementerResult },
        { type: 'dispatch', role: 'reviewer', taskId: '1', output: 'text' },
        { type: 'invalidate', subject: 'src/a.ts', relation: 'modified_by' },
        { type: 'compact', maxFacts: 100 },
      ),
    );
    expect(parsed.errors).toEqual([]);
    expect(parsed.events.map((event) => [event.line, event.type])).toEqual([
      [1, 'prompt'],
      [4, 'dispatch'],
      [5, 'dispatch'],
      [6, 'invalidate'],
      [7, 'compact'],
    ]);
    expect(parsed.events[1]).toEqual({
      type: 'dispatch',
      line: 4,
      at: 6000,
      role: 'implementer',
      taskId: '1',
      output: implementerResult,
    });
  });

  it('gives a missing at the previous event time plus one second, and the first event 0', () => {
    const parsed = parseHistory(
      history(
        { type: 'compact', maxFacts: 1 },
        { type: 'compact', maxFacts: 1 },
        { type: 'compact', maxFacts: 1, at: '2026-03-01T10:00:00Z' },
        { type: 'compact', maxFacts: 1 },
        { type: 'compact', maxFacts: 1, at: 1000 },
      ),
    );
    const tenOClock = Date.parse('2026-03-01T10:00:00Z');
    expect(parsed.events.map((event) => event.at)).toEqual([0, 1000, tenOClock, tenOClock + 1000, 1000]);
  });

  it('every time a history gives its events, a missing at included, is one parseEventTime takes back as epoch milliseconds', () => {
    const latest = Date.parse('9999-12-31T23:59:59.999Z');
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.integer({ min: latest - 5_000, max: latest }), { nil: undefined }), { maxLength: 8 }),
        (times) => {
          const parsed = parseHistory(
            history(
              ...times.map((at) =>
                at === undefined ? { type: 'compact', maxFacts: 1 } : { type: 'compact', maxFacts: 1, at },
              ),
            ),
          );
          expect(parsed.events).toHaveLength(times.length);
          for (const event of parsed.events) expect(parseEventTime(event.at)).toEqual(E.right(event.at));
        },
      ),
    );
  });

  it('times a line without at from the last good event, skipping rejected lines', () => {
    const parsed = parseHistory(
      history({ type: 'compact', maxFacts: 1, at: 10_000 }, 'oops', { type: 'compact', maxFacts: 1 }),
    );
    expect(parsed.events.map((event) => event.at)).toEqual([10_000, 11_000]);
  });

  it('ignores unknown fields and keeps the optional prompt fields', () => {
    const parsed = parseHistory(
      history({
        type: 'prompt',
        taskId: '4',
        taskPrompt: 'x',
        tags: ['file_change'],
        maxFacts: 3,
        maxTokens: 90,
        layout: 'grouped',
        note: 'hi',
        expect: [],
      }),
    );
    expect(parsed.events).toEqual([
      {
        type: 'prompt',
        line: 1,
        at: 0,
        taskId: '4',
        taskPrompt: 'x',
        tags: ['file_change'],
        maxFacts: 3,
        maxTokens: 90,
        layout: 'grouped',
      },
    ]);
  });

  it("keeps a prompt's tokenizer, and rejects a line naming one that is not a tokenizer", () => {
    const parsed = parseHistory(
      history(
        { type: 'prompt', taskId: '1', taskPrompt: 'x', tokenizer: 'o200k' },
        { type: 'prompt', taskId: '2', taskPrompt: 'x', tokenizer: 'cl100k' },
        { type: 'prompt', taskId: '3', taskPrompt: 'x', tokenizer: 7 },
        { type: 'prompt', taskId: '4', taskPrompt: 'x', tokenizer: 'estimate', at: 5 },
      ),
    );
    expect(parsed.events.map((event) => [event.line, event.type === 'prompt' ? event.tokenizer : undefined])).toEqual([
      [1, 'o200k'],
      [4, 'estimate'],
    ]);
    expect(parsed.errors).toEqual([
      { line: 2, code: 'invalid_field', message: 'tokenizer is not one of estimate, o200k' },
      { line: 3, code: 'invalid_field', message: 'tokenizer is not one of estimate, o200k' },
    ]);
  });

  it('reports each kind of bad line with its number and goes on', () => {
    const parsed = parseHistory(
      history(
        '{not json',
        '[1, 2]',
        { taskId: '1' },
        { type: 'deploy' },
        { type: 'dispatch', taskId: '1', output: 'x' },
        { type: 'dispatch', role: 'tester', taskId: '1', output: 'x' },
        { type: 'dispatch', role: 'implementer', taskId: 3, output: 'x' },
        { type: 'dispatch', role: 'implementer', taskId: '1' },
        { type: 'dispatch', role: 'implementer', taskId: '1', output: 'x', result: {} },
        { type: 'dispatch', role: 'implementer', taskId: '1', result: 'x' },
        { type: 'prompt', taskId: '1' },
        { type: 'prompt', taskId: '1', taskPrompt: 'x', tags: ['urgent'] },
        { type: 'prompt', taskId: '1', taskPrompt: 'x', maxTokens: -1 },
        { type: 'prompt', taskId: '1', taskPrompt: 'x', layout: 'wide' },
        { type: 'invalidate', subject: 'a' },
        { type: 'compact' },
        { type: 'compact', maxFacts: 1, at: 'soon' },
        { type: 'compact', maxFacts: 1 },
      ),
    );
    expect(parsed.errors.map((error) => [error.line, error.code])).toEqual([
      [1, 'invalid_json'],
      [2, 'invalid_json'],
      [3, 'missing_field'],
      [4, 'unknown_type'],
      [5, 'missing_field'],
      [6, 'invalid_field'],
      [7, 'invalid_field'],
      [8, 'missing_field'],
      [9, 'invalid_field'],
      [10, 'invalid_field'],
      [11, 'missing_field'],
      [12, 'invalid_field'],
      [13, 'invalid_field'],
      [14, 'invalid_field'],
      [15, 'missing_field'],
      [16, 'missing_field'],
      [17, 'invalid_field'],
    ]);
    expect(parsed.errors[11]?.message).toContain('tags[0]');
    expect(parsed.errors[13]?.message).toContain('layout is not one of lines, grouped');
    expect(parsed.errors[16]?.message).toContain('at ');
    expect(parsed.events.map((event) => event.line)).toEqual([18]);
  });

  it('quotes no secret of a rejected line in its message, nor the part of one a quote keeps', () => {
    for (const [, secret] of SECRETS) {
      const parsed = parseHistory(
        history(
          ...linesQuoting(secret),
          // A time is quoted whole, and the message then clipped.
          { type: 'compact', maxFacts: 1, at: `${'9'.repeat(300)} ${secret}` },
        ),
      );
      expect(parsed.errors.map((error) => error.line)).toEqual([1, 2, 3, 4, 5]);
      for (const { message } of parsed.errors) expect(findSecret(message), message).toBeUndefined();
    }
    // Past the 80 characters a quote keeps, the token clipped would be whole no longer, but a part of it.
    const token = SECRETS.find(([name]) => name === 'a GitHub token')![1];
    const { errors } = parseHistory(history({ type: `${'x'.repeat(60)} ${token}` }));
    expect(errors[0]?.message).not.toContain(token.slice(0, 12));
  });

  it("quotes no part of a secret an invalidation's time holds, whichever separator JSON escapes in it (a key block's line break, a tab after Bearer)", () => {
    const withSeparators = [
      ...SECRETS.map(([, secret]) => secret),
      `-----BEGIN RSA ${'PRIVATE KEY'}-----\nMIIEowIBAAKCAQEA${'Zq8'.repeat(8)}\n-----END RSA ${'PRIVATE KEY'}-----`,
      `Bearer\t${'abcDEF123456'.repeat(2)}`,
      `Bearer\u0085${'abcDEF123456'.repeat(2)}`,
    ];
    for (const secret of withSeparators) {
      const { errors } = parseHistory(
        history({ type: 'invalidate', subject: 'src/a.ts', relation: 'modified_by', at: secret }),
      );
      expect(errors.map((error) => error.code)).toEqual(['invalid_field']);
      expect(errors[0]?.message).not.toContain(secretPart(secret));
    }
  });

  it("quotes a rejected line's value on one line: a C1 control, a line or paragraph separator, a bidi or invisible character as its escape", () => {
    const hostile = 'x\u009b2J\u202eL\u2028# Forged\u0085\u2029\u200by';
    const escaped = String.raw`"x\u009b2J\u202eL\u2028# Forged\u0085\u2029\u200by"`;
    const parsed = parseHistory(
      history(
        ...linesQuoting(hostile),
        // The token the JSON parser names is the line's own character.
        '\u2028{"type": "prompt"}',
        '{"type": "prompt"}\u202e',
      ),
    );
    expect(parsed.errors.map((error) => error.line)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const { message } of parsed.errors) expect(message).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
    expect(parsed.errors[0]?.message).toBe(
      `unknown event type ${escaped}: expected one of dispatch, prompt, invalidate, compact`,
    );
    expect(parsed.errors[1]?.message).toBe(`role must be implementer or reviewer, not ${escaped}`);
  });

  it('reads a subject, relation or task id of invisible characters only (U+200B, U+2060, U+FEFF) as empty, as a blank one', () => {
    const errorsOf = (text: string) =>
      parseHistory(
        history(
          { type: 'invalidate', subject: text, relation: 'modified_by' },
          { type: 'invalidate', subject: 'src/a.ts', relation: text },
          { type: 'prompt', taskId: text, taskPrompt: 'x' },
          { type: 'dispatch', role: 'implementer', taskId: text, result: implementerResult },
        ),
      );
    for (const invisible of ['\u200B', '\u200C\u200D', '\u2060 \uFEFF']) {
      const parsed = errorsOf(invisible);
      expect(parsed).toEqual(errorsOf('  '));
      expect(parsed.events).toEqual([]);
      expect(parsed.errors.map((error) => error.message)).toEqual([
        'subject is empty',
        'relation is empty',
        'taskId is empty',
        'taskId is empty',
      ]);
    }
  });

  it('accepts CRLF line ends and a byte-order mark', () => {
    const parsed = parseHistory(
      `\uFEFF${history({ type: 'compact', maxFacts: 1 })}\r\n${history({ type: 'compact', maxFacts: 2 })}\r\n`,
    );
    expect(parsed.errors).toEqual([]);
    expect(parsed.events.map((event) => event.line)).toEqual([1, 2]);
  });
});

describe('the plain reading of a line', () => {
  /** Right values, wrong ones and absent ones for every field a dispatch or a prompt reads. */
  const valueArb = fc.oneof(
    fc.constant(undefined),
    fc.constantFrom('dispatch', 'prompt', 'compact', 'implementer', 'reviewer', '', ' ', '7', 'task-1', ...FACT_TAGS),
    fc.constantFrom('2026-03-02T10:00:00Z', '2026-13-45', 'yesterday', '1700000000000'),
    fc.integer({ min: -3, max: 2 ** 42 }),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.constantFrom(...FACT_TAGS, 'nonsense', 3), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('status', 'summary'), fc.string(), { maxKeys: 2 }),
    fc.string({ maxLength: 12 }),
  );
  /** Mostly a right value, sometimes anything at all. */
  const mostly = <T>(right: fc.Arbitrary<T>) =>
    fc.oneof({ arbitrary: right, weight: 4 }, { arbitrary: valueArb, weight: 1 });
  const fieldsArb = fc
    .record({
      type: mostly(fc.constantFrom('dispatch', 'prompt')),
      at: mostly(fc.constantFrom(undefined, '2026-03-02T10:00:00Z', 1_700_000_000_000)),
      role: mostly(fc.constantFrom('implementer', 'reviewer')),
      taskId: mostly(fc.constantFrom('1', 'task-2', ' 3 ', '\u200B', '\u2060\uFEFF')),
      output: mostly(fc.oneof(fc.string({ maxLength: 12 }), fc.constant(undefined))),
      result: mostly(fc.oneof(fc.constant(undefined), fc.constant({ status: 'completed' }))),
      taskPrompt: mostly(fc.string({ maxLength: 12 })),
      tags: mostly(fc.oneof(fc.constant(undefined), fc.array(fc.constantFrom(...FACT_TAGS), { maxLength: 2 }))),
      maxFacts: mostly(fc.oneof(fc.constant(undefined), fc.nat(100))),
      maxTokens: mostly(fc.oneof(fc.constant(undefined), fc.nat(1_000))),
      layout: mostly(fc.constantFrom(undefined, 'lines', 'grouped')),
      tokenizer: mostly(fc.constantFrom(undefined, 'estimate', 'o200k')),
      extra: valueArb,
    })
    // As JSON gives them: a field is absent rather than undefined.
    .map((fields) => JSON.parse(JSON.stringify(fields)) as Record<string, unknown>);

  it('gives exactly the event the schemas give, whenever it gives one', () => {
    let read = 0;
    fc.assert(
      fc.property(fieldsArb, fc.option(fc.integer({ min: 0, max: 2 ** 42 }), { nil: undefined }), (fields, before) => {
        const plain = plainEvent(fields, 3, before);
        if (plain === undefined) return;
        read += 1;
        expect(decodeEvent(fields, 3, before)).toEqual(E.right(plain));
      }),
      { numRuns: 2_000 },
    );
    // Not vacuous: a good share of the drawn lines are plain.
    expect(read).toBeGreaterThan(50);
  });

  it('reads the well-formed dispatch and prompt lines (the schemas are left for the others)', () => {
    expect(
      plainEvent({ type: 'dispatch', role: 'reviewer', taskId: '2', result: { status: 'approved' } }, 1, 5_000),
    ).toEqual({ type: 'dispatch', line: 1, at: 6_000, role: 'reviewer', taskId: '2', output: { status: 'approved' } });
    expect(
      plainEvent({ type: 'prompt', taskId: '2', taskPrompt: 'Add a route', tags: ['convention'] }, 2, undefined),
    ).toEqual({
      type: 'prompt',
      line: 2,
      at: 0,
      taskId: '2',
      taskPrompt: 'Add a route',
      tags: ['convention'],
    });
    expect(
      plainEvent({ type: 'dispatch', role: 'reviewer', taskId: '2', output: 'x', result: {} }, 1, 0),
    ).toBeUndefined();
    expect(plainEvent({ type: 'prompt', taskId: ' ', taskPrompt: 'x' }, 1, 0)).toBeUndefined();
    expect(plainEvent({ type: 'compact', maxFacts: 3 }, 1, 0)).toBeUndefined();
  });
});

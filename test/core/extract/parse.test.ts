import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ContractError,
  dispatchResultJsonSchema,
  type ImplementerResult,
  ImplementerResultSchema,
  parseDispatchOutput,
  parseDispatchResult,
  type ReviewerResult,
  ReviewerResultSchema,
  type SourceRole,
} from '../../../src/index.js';

const implementer: ImplementerResult = {
  task_id: '3',
  status: 'completed',
  summary: 'Added FooService',
  files_changed: ['src/services/FooService.ts'],
  tests: [{ command: 'npm test', passed: true }],
  follow_up_actions: ['Wire it into the CLI'],
};

const reviewer: ReviewerResult = {
  task_id: '3',
  assessment: 'needs_changes',
  strengths: ['Small diff'],
  issues: [{ severity: 'important', file: 'src/a.ts', message: 'Cache never evicts', fix: 'Evict on write' }],
  required_fixes: ['Evict stale entries'],
};

const block = (body: string, eol = '\n'): string => ['BEGIN_DISPATCH_RESULT', body, 'END_DISPATCH_RESULT'].join(eol);

const json = (value: unknown): string => JSON.stringify(value, null, 2);

const expectRight = (raw: string, role: SourceRole): ImplementerResult | ReviewerResult => {
  const result = parseDispatchOutput(raw, role);
  if (E.isLeft(result)) throw new Error(`expected Right, got ${result.left.code}: ${result.left.message}`);
  return result.right;
};

const expectLeft = (raw: string, role: SourceRole): ContractError => {
  const result = parseDispatchOutput(raw, role);
  if (E.isRight(result)) throw new Error(`expected Left, got Right ${JSON.stringify(result.right)}`);
  expect(typeof result.left.message).toBe('string');
  expect(result.left.message).not.toBe('');
  return result.left;
};

describe('parseDispatchOutput: finding the block', () => {
  it('parses an implementer result between the markers', () => {
    expect(expectRight(block(json(implementer)), 'implementer')).toEqual(implementer);
  });

  it('parses a reviewer result between the markers', () => {
    expect(expectRight(block(json(reviewer)), 'reviewer')).toEqual(reviewer);
  });

  it('returns an fp-ts Either', () => {
    const result = parseDispatchOutput(block(json(implementer)), 'implementer');

    expect(result).toEqual(E.right(implementer));
  });

  it('ignores prose before and after the block', () => {
    const raw = [
      'I implemented the service and ran the tests.',
      'Here is my result:',
      '',
      block(json(implementer)),
      '',
      'Let me know if anything else is needed. {"task_id": "not this"}',
    ].join('\n');

    expect(expectRight(raw, 'implementer')).toEqual(implementer);
  });

  it('does not let a marker named inside a sentence break parsing', () => {
    const raw = [
      'I will print BEGIN_DISPATCH_RESULT, then the JSON, then END_DISPATCH_RESULT as asked.',
      'The line `END_DISPATCH_RESULT` closes the block.',
      block(json(implementer)),
      'Done: everything between BEGIN_DISPATCH_RESULT and END_DISPATCH_RESULT above is the result.',
    ].join('\n');

    expect(expectRight(raw, 'implementer')).toEqual(implementer);
  });

  it('does not count a marker that shares its line with other text', () => {
    const raw = ['Result: BEGIN_DISPATCH_RESULT', json(implementer), 'END_DISPATCH_RESULT (done)'].join('\n');

    expect(expectLeft(raw, 'implementer').code).toBe('marker_missing');
  });

  it('does not count markers and JSON written on one line', () => {
    const raw = `BEGIN_DISPATCH_RESULT ${JSON.stringify(implementer)} END_DISPATCH_RESULT`;

    expect(expectLeft(raw, 'implementer').code).toBe('marker_missing');
  });

  it('takes the last of several complete blocks', () => {
    const first = { ...implementer, summary: 'first attempt' };
    const second = { ...implementer, summary: 'second attempt' };
    const last = { ...implementer, summary: 'final answer' };
    const raw = [block(json(first)), 'Oops, corrected:', block(json(second)), 'Final:', block(json(last)), 'bye'].join(
      '\n',
    );

    expect(expectRight(raw, 'implementer')).toEqual(last);
  });

  it('takes the last complete block even when an earlier one is invalid', () => {
    const raw = [block('{ not json'), block(json(implementer))].join('\n');

    expect(expectRight(raw, 'implementer')).toEqual(implementer);
  });

  it('reports the last complete block when it is the invalid one', () => {
    const raw = [block(json(implementer)), block('{ not json')].join('\n');

    expect(expectLeft(raw, 'implementer').code).toBe('json_parse_failed');
  });

  it('ignores a trailing BEGIN without an END after a complete block', () => {
    const raw = [block(json(implementer)), 'BEGIN_DISPATCH_RESULT', '{"partial": '].join('\n');

    expect(expectRight(raw, 'implementer')).toEqual(implementer);
  });

  it('tolerates a ```json fence inside the block', () => {
    const raw = block(['```json', json(implementer), '```'].join('\n'));

    expect(expectRight(raw, 'implementer')).toEqual(implementer);
  });

  it('tolerates a bare ``` fence inside the block', () => {
    const raw = block(['```', json(reviewer), '```'].join('\n'));

    expect(expectRight(raw, 'reviewer')).toEqual(reviewer);
  });

  it('tolerates a fence surrounded by blank lines inside the block', () => {
    const raw = block(['', '```json', json(implementer), '```', '  '].join('\n'));

    expect(expectRight(raw, 'implementer')).toEqual(implementer);
  });

  it('reads a fence line of millions of characters as no fence, past where a pattern overflowed the regexp stack', () => {
    // An output of a history line may hold 16 Mi characters; one outside Latin-1 makes the text two-byte.
    const raw = block([`\`\`\`${'a'.repeat(9_000_000)}設`, json(implementer), '```'].join('\n'));
    expect(expectLeft(raw, 'implementer').code).toBe('json_parse_failed');
    const fenced = block([`\`\`\`json-${'a'.repeat(20)}`, json(implementer), '```'].join('\n'));
    expect(expectRight(fenced, 'implementer')).toEqual(implementer);
  });

  it('tolerates CRLF line ends', () => {
    const raw = ['Prose first.', block(json(implementer).replace(/\n/gu, '\r\n'), '\r\n'), 'Prose after.'].join('\r\n');

    expect(expectRight(raw, 'implementer')).toEqual(implementer);
  });

  it('tolerates CRLF line ends around a ```json fence', () => {
    const raw = block(['```json', json(implementer), '```'].join('\r\n'), '\r\n');

    expect(expectRight(raw, 'implementer')).toEqual(implementer);
  });

  it('tolerates whitespace around a marker', () => {
    const raw = ['   BEGIN_DISPATCH_RESULT\t ', json(implementer), '\t END_DISPATCH_RESULT   '].join('\n');

    expect(expectRight(raw, 'implementer')).toEqual(implementer);
  });

  it('tolerates whitespace around markers with CRLF line ends', () => {
    const raw = ['  BEGIN_DISPATCH_RESULT  ', json(implementer), '  END_DISPATCH_RESULT  ', ''].join('\r\n');

    expect(expectRight(raw, 'implementer')).toEqual(implementer);
  });

  it('ignores extra keys in the result and nested objects', () => {
    const raw = block(
      JSON.stringify({
        ...implementer,
        confidence_note: 'high',
        tests: [{ command: 'npm test', passed: true, duration_ms: 1200 }],
      }),
    );

    const result = expectRight(raw, 'implementer') as ImplementerResult;
    expect(result.task_id).toBe('3');
    expect(result.status).toBe('completed');
    expect(result.tests?.[0]?.command).toBe('npm test');
    expect(result.tests?.[0]?.passed).toBe(true);
  });

  it('ignores extra keys in a reviewer result', () => {
    const raw = block(
      JSON.stringify({ ...reviewer, reviewer_model: 'x', issues: [{ ...reviewer.issues![0], line: 12 }] }),
    );

    const result = expectRight(raw, 'reviewer') as ReviewerResult;
    expect(result.assessment).toBe('needs_changes');
    expect(result.issues?.[0]?.message).toBe('Cache never evicts');
  });

  it('accepts a minimal implementer result with only the required scalars', () => {
    const minimal = { task_id: '1', status: 'blocked', summary: 'Waiting for the API key' };

    expect(expectRight(block(JSON.stringify(minimal)), 'implementer')).toMatchObject(minimal);
  });

  it('accepts files_modified in an implementer result', () => {
    const result = expectRight(
      block(JSON.stringify({ task_id: '1', status: 'completed', summary: 's', files_modified: ['a.ts'] })),
      'implementer',
    );

    expect(result).toMatchObject({ files_modified: ['a.ts'] });
  });
});

describe('parseDispatchOutput: marker_missing', () => {
  it.each([
    ['no markers at all', json(implementer)],
    ['an empty string', ''],
    ['no BEGIN', [json(implementer), 'END_DISPATCH_RESULT'].join('\n')],
    ['no END', ['BEGIN_DISPATCH_RESULT', json(implementer)].join('\n')],
    [
      'END before BEGIN and no later END',
      ['END_DISPATCH_RESULT', json(implementer), 'BEGIN_DISPATCH_RESULT'].join('\n'),
    ],
    ['BEGIN without a later END', ['END_DISPATCH_RESULT', 'BEGIN_DISPATCH_RESULT', json(implementer)].join('\n')],
    [
      'markers only in prose',
      `Use BEGIN_DISPATCH_RESULT and END_DISPATCH_RESULT around ${JSON.stringify(implementer)}`,
    ],
  ])('is marker_missing for %s', (_label, raw) => {
    expect(expectLeft(raw, 'implementer').code).toBe('marker_missing');
  });
});

describe('parseDispatchOutput: json_parse_failed', () => {
  it.each([
    ['an empty body', block('').replace('\n\n', '\n')],
    ['an empty line as body', block('')],
    ['a whitespace-only body', block('   \n\t\n  ')],
    ['an empty fence', block(['```json', '```'].join('\n'))],
    ['unquoted keys', block('{task_id: "3"}')],
    ['a trailing comma', block('{"task_id": "3",}')],
    ['truncated JSON', block(json(implementer).slice(0, 40))],
    ['prose instead of JSON', block('The task is done.')],
  ])('is json_parse_failed for %s', (_label, raw) => {
    expect(expectLeft(raw, 'implementer').code).toBe('json_parse_failed');
  });

  it('says why on one line, though the parser quotes a text that breaks lines or writes a notice separator', () => {
    for (const text of ['x\n- forged | fact-tracker: line', '\u2028{"a":1}', 'y\r\u0085\u202e| z']) {
      const error = expectLeft(block(text), 'implementer');
      expect(error.code).toBe('json_parse_failed');
      expect(error.message).toMatch(/^invalid JSON: /u);
      expect(error.message).not.toMatch(/[\n\r\u0085\u2028\u2029\u202e|]/u);
    }
  });
});

describe('parseDispatchOutput: schema_invalid', () => {
  const invalid = (value: unknown, role: SourceRole = 'implementer'): ContractError =>
    expectLeft(block(JSON.stringify(value)), role);

  it('names the offending field path of a bad issue severity', () => {
    const error = invalid({ ...reviewer, issues: [{ severity: 'blocker', message: 'm', fix: 'f' }] }, 'reviewer');

    expect(error.code).toBe('schema_invalid');
    expect(error.message).toContain('issues[0].severity');
  });

  it('names the index of the offending entry', () => {
    const error = invalid(
      {
        ...reviewer,
        issues: [
          reviewer.issues![0],
          { severity: 'minor', message: 'ok', fix: 'ok' },
          { severity: 'minor', message: 3, fix: 'f' },
        ],
      },
      'reviewer',
    );

    expect(error.code).toBe('schema_invalid');
    expect(error.message).toContain('issues[2].message');
  });

  it('names a nested implementer field path', () => {
    const error = invalid({
      ...implementer,
      tests: [
        { command: 'npm test', passed: true },
        { command: 'lint', passed: 'no' },
      ],
    });

    expect(error.code).toBe('schema_invalid');
    expect(error.message).toContain('tests[1].passed');
  });

  it('names a missing required field', () => {
    const { status: _omitted, ...withoutStatus } = implementer;
    const error = invalid(withoutStatus);

    expect(error.code).toBe('schema_invalid');
    expect(error.message).toContain('status');
  });

  it('names a bad enum value', () => {
    const error = invalid({ ...implementer, status: 'done' });

    expect(error.code).toBe('schema_invalid');
    expect(error.message).toContain('status');
  });

  it('names a mis-typed array field', () => {
    const error = invalid({ ...implementer, files_changed: 'src/a.ts' });

    expect(error.code).toBe('schema_invalid');
    expect(error.message).toContain('files_changed');
  });

  it('names a mis-typed array entry', () => {
    const error = invalid({ ...implementer, follow_up_actions: ['ok', 7] });

    expect(error.code).toBe('schema_invalid');
    expect(error.message).toContain('follow_up_actions[1]');
  });

  it('names a missing reviewer assessment', () => {
    const { assessment: _omitted, ...withoutAssessment } = reviewer;
    const error = invalid(withoutAssessment, 'reviewer');

    expect(error.code).toBe('schema_invalid');
    expect(error.message).toContain('assessment');
  });

  it('rejects an implementer result parsed as a reviewer result', () => {
    const error = invalid(implementer, 'reviewer');

    expect(error.code).toBe('schema_invalid');
    expect(error.message).toContain('assessment');
  });

  it('rejects a reviewer result parsed as an implementer result', () => {
    const error = invalid(reviewer, 'implementer');

    expect(error.code).toBe('schema_invalid');
    expect(error.message).toContain('status');
  });

  it.each([
    ['null', null],
    ['an array', [implementer]],
    ['a string', 'completed'],
    ['a number', 42],
  ])('rejects valid JSON that is %s', (_label, value) => {
    expect(invalid(value).code).toBe('schema_invalid');
  });
});

describe('parseDispatchOutput: invalid_input', () => {
  it.each(['planner', '', 'Implementer', 'REVIEWER'])('is invalid_input for the role %j', (role) => {
    expect(expectLeft(block(json(implementer)), role as SourceRole).code).toBe('invalid_input');
  });

  it('is invalid_input for a non-string role', () => {
    expect(expectLeft(block(json(implementer)), undefined as unknown as SourceRole).code).toBe('invalid_input');
    expect(expectLeft(block(json(implementer)), 7 as unknown as SourceRole).code).toBe('invalid_input');
  });

  it('never throws for raw output that is not a string', () => {
    for (const raw of [undefined, null, 42, {}, ['BEGIN_DISPATCH_RESULT']]) {
      const result = parseDispatchOutput(raw as unknown as string, 'implementer');
      expect(E.isLeft(result)).toBe(true);
    }
  });
});

describe('parseDispatchOutput: block pairing', () => {
  it('pairs a BEGIN with the first END after it, so a stray END later is prose', () => {
    const raw = `${block(json(implementer))}\nEND_DISPATCH_RESULT\nThat was the result.`;
    expect(expectRight(raw, 'implementer')).toEqual(implementer);
  });

  it('lets a second BEGIN before any END restart the block', () => {
    const raw = ['BEGIN_DISPATCH_RESULT', 'draft, abandoned', block(json(implementer))].join('\n');
    expect(expectRight(raw, 'implementer')).toEqual(implementer);
  });

  it('tolerates a fence that is opened but never closed', () => {
    expect(expectRight(block(['```json', json(implementer)].join('\n')), 'implementer')).toEqual(implementer);
  });
});

describe('the exported contract schemas', () => {
  it('are the callers’ to change: a change to one reaches no later validation or JSON Schema of the library', () => {
    const schemas = {
      implementer: dispatchResultJsonSchema('implementer'),
      reviewer: dispatchResultJsonSchema('reviewer'),
    };
    const implementerShape = ImplementerResultSchema.shape as Record<string, unknown>;
    const reviewerShape = ReviewerResultSchema.shape as Record<string, unknown>;
    const [summary, assessment] = [implementerShape['summary'], reviewerShape['assessment']];
    try {
      implementerShape['summary'] = z.number();
      reviewerShape['assessment'] = z.literal('rubber-stamped');
      expect(parseDispatchResult(implementer, 'implementer')).toEqual(E.right(implementer));
      expect(parseDispatchResult(reviewer, 'reviewer')).toEqual(E.right(reviewer));
      expect(expectRight(block(json(implementer)), 'implementer')).toEqual(implementer);
      expect(dispatchResultJsonSchema('implementer')).toEqual(schemas.implementer);
      expect(dispatchResultJsonSchema('reviewer')).toEqual(schemas.reviewer);
      // The caller's copy does take the change.
      expect(ImplementerResultSchema.safeParse(implementer).success).toBe(false);
    } finally {
      implementerShape['summary'] = summary;
      reviewerShape['assessment'] = assessment;
    }
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildDispatchDynamicTail, type DispatchTailInput, formatSessionFacts, makeFact } from '../../../src/index.js';

const base: DispatchTailInput = {
  taskId: '5',
  maxOutputTokens: 1200,
  deltaPacket: { changed: ['src/a.ts'], round: 2 },
  taskPrompt: 'Implement the retry policy in src/http/client.ts',
};

const sessionContext = formatSessionFacts([
  makeFact({
    subject: 'src/http/client.ts',
    relation: 'modified_by',
    object: 'task:2',
    tags: ['file_change'],
    validFrom: 1,
    sourceTaskId: '2',
    sourceRole: 'implementer',
    confidence: 1,
  }),
]);

describe('buildDispatchDynamicTail', () => {
  it('renders every line in order when everything is given', () => {
    const tail = buildDispatchDynamicTail({
      ...base,
      guideCacheKey: 'guide-v3',
      guideInstruction: 'Follow the implementer guide.',
      sessionContext,
    });

    expect(tail).toBe(
      [
        'Task ID: 5',
        'Max output tokens: 1200',
        'Delta context: {"changed":["src/a.ts"],"round":2}',
        'Guide cache key: guide-v3',
        'Follow the implementer guide.',
        '[Session Context]',
        '- src/http/client.ts modified_by task:2 [task:2]',
        'Task prompt:',
        'Implement the retry policy in src/http/client.ts',
      ].join('\n'),
    );
  });

  it('renders only the required lines when nothing optional is given', () => {
    expect(buildDispatchDynamicTail(base)).toBe(
      [
        'Task ID: 5',
        'Max output tokens: 1200',
        'Delta context: {"changed":["src/a.ts"],"round":2}',
        'Task prompt:',
        'Implement the retry policy in src/http/client.ts',
      ].join('\n'),
    );
  });

  it('renders the delta packet as its JSON', () => {
    const deltaPacket = { nested: { list: [1, 'two', null, true] }, text: 'quote " and \\ backslash', empty: {} };
    const tail = buildDispatchDynamicTail({ ...base, deltaPacket });

    expect(tail.split('\n')[2]).toBe(`Delta context: ${JSON.stringify(deltaPacket)}`);
  });

  it('renders an empty delta packet as {}', () => {
    expect(buildDispatchDynamicTail({ ...base, deltaPacket: {} }).split('\n')[2]).toBe('Delta context: {}');
  });

  it('renders the output budget as given', () => {
    expect(buildDispatchDynamicTail({ ...base, maxOutputTokens: 4096 }).split('\n')[1]).toBe('Max output tokens: 4096');
  });

  it('adds the guide cache key line only when a key is given', () => {
    const withKey = buildDispatchDynamicTail({ ...base, guideCacheKey: 'abc123' }).split('\n');
    const withoutKey = buildDispatchDynamicTail(base).split('\n');

    expect(withKey[3]).toBe('Guide cache key: abc123');
    expect(withKey).toHaveLength(6);
    expect(withoutKey.some((line) => line.startsWith('Guide cache key:'))).toBe(false);
  });

  it('adds the guide instruction only when given, after the cache key', () => {
    const withInstruction = buildDispatchDynamicTail({ ...base, guideInstruction: 'Read the guide first.' }).split(
      '\n',
    );
    const withBoth = buildDispatchDynamicTail({
      ...base,
      guideCacheKey: 'k',
      guideInstruction: 'Read the guide first.',
    }).split('\n');

    expect(withInstruction.slice(3)).toEqual(['Read the guide first.', 'Task prompt:', base.taskPrompt]);
    expect(withBoth.slice(3)).toEqual(['Guide cache key: k', 'Read the guide first.', 'Task prompt:', base.taskPrompt]);
  });

  it('puts the session context between the delta packet (and guide) and the task prompt', () => {
    const lines = buildDispatchDynamicTail({ ...base, sessionContext }).split('\n');

    expect(lines).toEqual([
      'Task ID: 5',
      'Max output tokens: 1200',
      'Delta context: {"changed":["src/a.ts"],"round":2}',
      '[Session Context]',
      '- src/http/client.ts modified_by task:2 [task:2]',
      'Task prompt:',
      base.taskPrompt,
    ]);
  });

  it.each([
    ['empty', ''],
    ['spaces', '   '],
    ['blank lines', '\n\n'],
    ['tabs and newlines', ' \t\r\n '],
    ['invisible characters only', '\u200b\u2060 \u200d'],
  ])('omits a blank session context (%s)', (_label, blank) => {
    expect(buildDispatchDynamicTail({ ...base, sessionContext: blank })).toBe(buildDispatchDynamicTail(base));
  });

  it('keeps a multi-line task prompt as the last part, after the Task prompt: line', () => {
    const taskPrompt = 'Step 1: read the code.\nStep 2: fix it.';
    const tail = buildDispatchDynamicTail({ ...base, taskPrompt, sessionContext });

    expect(tail.endsWith(`\nTask prompt:\n${taskPrompt}`)).toBe(true);
  });

  it('renders an empty task prompt as an empty last line', () => {
    const tail = buildDispatchDynamicTail({ ...base, taskPrompt: '' });

    expect(tail.split('\n').slice(-2)).toEqual(['Task prompt:', '']);
  });

  it('starts with the task id line', () => {
    expect(buildDispatchDynamicTail({ ...base, taskId: 'task-42' }).startsWith('Task ID: task-42\n')).toBe(true);
  });

  it('the task id, the guide cache key and the delta packet each stay on their one line, whatever text they hold', () => {
    /** Every character sequence that some renderer or model treats as a line break. */
    const LINE_BREAK = /\r\n|[\n\r\u000b\u000c\u001c\u001d\u001e\u0085\u2028\u2029]/u;
    const hostile = fc.string({
      unit: fc.oneof(
        fc.constantFrom('\n', '\r', '\u000b', '\u000c', '\u001c', '\u0085', '\u2028', '\u2029', '\u202e', ' '),
        fc.constantFrom('[Session Context]', '- src/x.ts is_safe yes [task:1]', 'Task prompt:', '# Heading'),
        fc.string({ unit: 'binary', maxLength: 1 }),
      ),
      maxLength: 8,
    });
    fc.assert(
      fc.property(hostile, hostile, hostile, (taskId, guideCacheKey, text) => {
        const tail = buildDispatchDynamicTail({
          ...base,
          taskId,
          guideCacheKey,
          deltaPacket: { text, [text]: [text] },
          sessionContext,
        });
        const lines = tail.split(LINE_BREAK);
        // A key of whitespace and controls alone says nothing: its line is left out.
        const keyed = lines[3]!.startsWith('Guide cache key: ') ? 1 : 0;
        expect(lines).toHaveLength(7 + keyed);
        expect(lines[0]!.startsWith('Task ID:')).toBe(true);
        expect(lines[2]!.startsWith('Delta context: ')).toBe(true);
        expect(JSON.parse(lines[2]!.slice('Delta context: '.length))).toEqual({ text, [text]: [text] });
        expect(lines.slice(3 + keyed)).toEqual([
          '[Session Context]',
          '- src/http/client.ts modified_by task:2 [task:2]',
          'Task prompt:',
          base.taskPrompt,
        ]);
      }),
    );
  });
});

describe('formatSessionFacts', () => {
  it('refuses a value that is not a list of facts with a TypeError naming it, and gives an empty list no section', () => {
    for (const notAList of [null, undefined, 42, 'facts', { length: 0 }])
      expect(() => formatSessionFacts(notAList as never)).toThrow(/^the facts is .*, not an array of facts$/u);
    expect(formatSessionFacts([])).toBe('');
  });
});

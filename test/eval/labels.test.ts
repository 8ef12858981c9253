/**
 * How `npm run eval` classes a labeled prompt's labels: by the size of the task a label points to
 * and by how many tasks before the prompt that task was prompted.
 */
import { describe, expect, it } from 'vitest';
import { ageOfLabel, kindOfLabel, labelAge, replayLabeled } from '../../eval/lib.js';

const line = (value: unknown): string => JSON.stringify(value);
/** A task: its prompt (with labels, when given), then an implementer result changing `files`. */
const task = (id: number, files: ReadonlyArray<string>, expect?: ReadonlyArray<[string, number]>): string[] => [
  line({
    type: 'prompt',
    taskId: String(id),
    at: 1000 * id,
    taskPrompt: `task ${id} changes ${files.join(' ')}`,
    ...(expect === undefined
      ? {}
      : { expect: expect.map(([subject, from]) => ({ subject, relation: 'modified_by', object: `task:${from}` })) }),
  }),
  line({
    type: 'dispatch',
    role: 'implementer',
    taskId: String(id),
    at: 1000 * id + 1,
    result: {
      task_id: String(id),
      status: 'completed',
      summary: `task ${id}`,
      files_changed: files,
      tests: [],
      follow_up_actions: [],
    },
  }),
];

describe('the classes of a label', () => {
  const history = replayLabeled(
    'ages',
    'real',
    [
      ...task(1, ['src/a.ts', 'src/b.ts']),
      ...task(2, ['src/c.ts']),
      ...task(3, ['src/d.ts']),
      ...task(
        4,
        ['src/a.ts', 'src/c.ts'],
        [
          ['src/a.ts', 1],
          ['src/c.ts', 2],
          ['src/zzz.ts', 9],
        ],
      ),
    ].join('\n'),
  );

  it('counts a label age in tasks prompted between the change and the prompt, -1 for a task never prompted', () => {
    const [prompt] = history.prompts;
    expect(prompt!.labelAges).toEqual([3, 2, -1]);
    expect([0, 1, 2].map((l) => ageOfLabel(prompt!, l))).toEqual(['1-10 tasks', '1-10 tasks', undefined]);
    expect([0, 1].map((l) => kindOfLabel(prompt!, l))).toEqual(['2-10 files', '1 file']);
  });

  it('puts each age in its class, the bounds included', () => {
    expect([1, 10, 11, 50, 51, 150, 151, 500, 501, 0, -1].map(labelAge)).toEqual([
      '1-10 tasks',
      '1-10 tasks',
      '11-50',
      '11-50',
      '51-150',
      '51-150',
      '151-500',
      '151-500',
      '>500',
      undefined,
      undefined,
    ]);
  });
});

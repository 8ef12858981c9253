/**
 * A task prompt that carries a `[Session Context]` section from an earlier prompt (an
 * orchestrator that puts the section the MCP server compiled in front of its subagent's prompt,
 * or dispatches again the prompt a task was given): the section's lines are other tasks' facts,
 * so they take no part in the query, nor in the task's recorded prompt, whose context would
 * otherwise be lent to every file they name.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  initialTrackerState,
  parseHistory,
  type PromptInput,
  replayHistory,
  trackerTransition,
  type TrackerState,
} from '../../../src/index.js';

const example = readFileSync(new URL('../../../examples/web-api-session.jsonl', import.meta.url), 'utf8');

/** The state after every event of the example, and its last prompt's section. */
const afterExample = (): { state: TrackerState; lastSection: string } => {
  let state = initialTrackerState();
  let lastSection = '';
  for (const event of parseHistory(example).events) {
    const [next, , output] = trackerTransition(state, event);
    if (output.type === 'prompt' && output.sessionContext !== '') lastSection = output.sessionContext;
    state = next;
  }
  return { state, lastSection };
};

const prompt = (taskPrompt: string): PromptInput => ({
  type: 'prompt',
  taskId: '99',
  taskPrompt,
  at: 9_000_000_000_000,
});

describe('a task prompt carrying an earlier section', () => {
  it('gets the section, and leaves the state, that the prompt without it does', () => {
    const { state, lastSection } = afterExample();
    expect(lastSection).toContain('[Session Context]\n- ');
    const own = 'Add rate limiting to the login route';
    const [plainState, , plainOutput] = trackerTransition(state, prompt(own));
    const [carriedState, , carriedOutput] = trackerTransition(state, prompt(`${lastSection}\n\n${own}`));

    expect(carriedOutput).toEqual(plainOutput);
    expect(carriedState.store).toEqual(plainState.store);
  });

  it('records nothing for a prompt that is a section alone, as for a blank one', () => {
    const { state, lastSection } = afterExample();
    const [next] = trackerTransition(state, prompt(lastSection));
    expect(next.store).toEqual(state.store);
  });

  it('reads the same in a replay of a history as in the transition', () => {
    const { lastSection } = afterExample();
    const line = JSON.stringify({ type: 'prompt', taskId: '99', taskPrompt: `${lastSection}\n\nAdd rate limiting` });
    const plain = JSON.stringify({ type: 'prompt', taskId: '99', taskPrompt: 'Add rate limiting' });
    const carried = replayHistory(`${example.trimEnd()}\n${line}\n`).report.prompts.at(-1)!;
    const own = replayHistory(`${example.trimEnd()}\n${plain}\n`).report.prompts.at(-1)!;
    expect(carried.sessionContext).toBe(own.sessionContext);
    expect(carried.sessionContext).not.toBe('');
  });
});

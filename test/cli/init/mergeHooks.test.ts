/** `mergeHooks`: our hooks in an agent's settings, written once, the user's handlers left where they are. */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { handlerCommand, type Launcher, mergeHooks, type Ownership } from '../../../src/cli/init/settings.js';

const LAUNCHER: Launcher = { hook: 'node main.js hook', mcp: { command: 'node', args: ['main.js', 'mcp'] } };
const isOurs = (command: string): boolean => command.startsWith('node main.js hook');
const merged = (settings: unknown): Record<string, unknown> => {
  const result = mergeHooks(settings, 'claude', LAUNCHER, isOurs);
  if (E.isLeft(result)) throw new Error(result.left);
  return result.right as Record<string, unknown>;
};

describe('mergeHooks', () => {
  it('leaves settings unchanged when a user added a handler of their own to one of our groups', () => {
    const written = merged({});
    const hooks = written['hooks'] as Record<string, Array<{ hooks: unknown[] }>>;
    hooks['PreToolUse']![0]!.hooks.push({ type: 'command', command: 'echo mine' });
    const again = merged(JSON.parse(JSON.stringify(written)));
    expect(again).toEqual(written);
    expect((again['hooks'] as Record<string, unknown[]>)['PreToolUse']).toHaveLength(1);
  });

  it('rewrites a handler of ours that is not as written, keeping the user’s handler in its group', () => {
    const written = merged({});
    const hooks = written['hooks'] as Record<string, Array<{ hooks: Array<Record<string, unknown>> }>>;
    hooks['PreToolUse']![0]!.hooks.push({ type: 'command', command: 'echo mine' });
    hooks['PreToolUse']![0]!.hooks[0]!['command'] = 'node main.js hook --max-facts 3';
    const again = merged(JSON.parse(JSON.stringify(written)));
    expect((again['hooks'] as Record<string, unknown>)['PreToolUse']).toEqual([
      { matcher: 'Agent|Task', hooks: [{ type: 'command', command: 'echo mine' }] },
      { matcher: 'Agent|Task', hooks: [{ type: 'command', command: 'node main.js hook', timeout: 60 }] },
    ]);
  });

  it('adds a hook of ours that is missing, and removes one registered twice', () => {
    const written = merged({});
    const hooks = written['hooks'] as Record<string, unknown[]>;
    delete hooks['SubagentStop'];
    hooks['SubagentStart'] = [...hooks['SubagentStart']!, ...hooks['SubagentStart']!];
    expect(merged(JSON.parse(JSON.stringify(written)))).toEqual(merged({}));
  });

  it('keeps the keys a user set on a handler of ours it replaces (timeout, statusMessage), and leaves one already as written', () => {
    const user = {
      type: 'command',
      command: 'node main.js hook --max-facts 3',
      timeout: 120,
      statusMessage: 'tracking',
    };
    const again = merged({ hooks: { SubagentStart: [{ hooks: [user] }] } });
    const hooks = again['hooks'] as Record<string, Array<{ hooks: unknown[] }>>;
    expect(hooks['SubagentStart']).toEqual([
      { hooks: [{ type: 'command', command: 'node main.js hook', timeout: 120, statusMessage: 'tracking' }] },
    ]);
    expect(hooks['SubagentStop']).toEqual([
      { hooks: [{ type: 'command', command: 'node main.js hook', timeout: 60 }] },
    ]);
    expect(merged(again)).toBe(again);
  });

  it('recognises a handler of ours in the exec form (command and args), replacing it rather than adding a second', () => {
    const exec = { type: 'command', command: 'node', args: ['main.js', 'hook', '--store', '/srv/t x'] };
    expect(handlerCommand(exec)).toBe("node main.js hook --store '/srv/t x'");
    const again = merged({ hooks: { SubagentStop: [{ hooks: [exec, { type: 'command', command: 'echo mine' }] }] } });
    expect((again['hooks'] as Record<string, unknown>)['SubagentStop']).toEqual([
      { hooks: [{ type: 'command', command: 'echo mine' }] },
      { hooks: [{ type: 'command', command: 'node main.js hook', timeout: 60 }] },
    ]);
  });

  it('keeps a handler of ours under an event it writes no hook for as written, and leaves settings already merged the same', () => {
    const notification = [{ hooks: [{ type: 'command', command: 'node main.js hook --max-facts 2', timeout: 5 }] }];
    const written = merged({ hooks: { Notification: notification } });
    expect((written['hooks'] as Record<string, unknown>)['Notification']).toEqual(notification);
    expect(merged(written)).toBe(written);
  });

  it("keeps a handler running our hook among the user's commands as written, removes ours beside it, and adds no second hook there", () => {
    const ownership = (command: string): Ownership =>
      !command.startsWith('node main.js hook') ? false : command.includes(';') ? 'shared' : true;
    const mine = {
      matcher: 'Agent|Task',
      hooks: [
        { type: 'command', command: 'node main.js hook; ./notify.sh' },
        { type: 'command', command: 'node main.js hook --max-facts 3' },
      ],
    };
    const result = mergeHooks({ hooks: { PreToolUse: [mine] } }, 'claude', LAUNCHER, ownership);
    if (E.isLeft(result)) throw new Error(result.left);
    const hooks = result.right['hooks'] as Record<string, unknown>;
    // The handler wholly ours (`npx fact-tracker hook`, which would fetch the package) goes: fact-tracker runs once.
    expect(hooks['PreToolUse']).toEqual([{ ...mine, hooks: [mine.hooks[0]] }]);
    expect(Object.keys(hooks).sort()).toEqual([
      'PostToolUse',
      'PostToolUseFailure',
      'PreToolUse',
      'SubagentStart',
      'SubagentStop',
    ]);
    const again = mergeHooks(result.right, 'claude', LAUNCHER, ownership);
    expect(E.isRight(again) && again.right).toBe(result.right);
  });

  it('writes back an event named __proto__ as an event, not as the prototype of the hooks', () => {
    const settings = JSON.parse(
      '{"hooks":{"__proto__":[{"hooks":[{"type":"command","command":"node main.js hook"}]}]}}',
    ) as unknown;
    const written = JSON.parse(JSON.stringify(merged(settings))) as { hooks: Record<string, unknown> };
    expect(Object.hasOwn(written.hooks, '__proto__')).toBe(true);
    expect(written.hooks['__proto__']).toEqual([{ hooks: [{ type: 'command', command: 'node main.js hook' }] }]);
  });
});

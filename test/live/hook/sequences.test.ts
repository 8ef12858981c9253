/**
 * Recorded event sequences of Claude Code and Codex, replayed through `fact-tracker hook`: each
 * must give every subagent exactly the section of its own prompt (once, by one channel) and
 * record every result under its own task. The prompts are checked against the session log as
 * `fact-tracker replay` reads it: the section the replay computes for a prompt is the one its
 * subagent must have got. Hook processes running at once run the built binary, a process per
 * event, as the agents run it; the other sequences run the built command or the hook itself in
 * this process (a process costs up to a second on a loaded machine).
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, linkSync, mkdirSync, readFileSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { replayHistory, selectValidFacts } from '../../../src/index.js';
import { memorySessionStore } from '../../../src/live/session/memoryStore.js';
import type { SessionStore } from '../../../src/live/session/store.js';
import { runHook } from '../../../src/live/hook/hook.js';
import { digestOf } from '../../../src/live/hook/turn.js';
import { openSession } from '../../../src/live/session/session.js';
import { copyTree } from '../../fixtures/tree.js';
import { tempDir } from '../../tempDirs.js';
import {
  binary,
  type Call,
  claudeCode,
  codex,
  type Given,
  implementerAnswer,
  inProcess,
  type Notices,
  routed,
  type Send,
} from './host.js';
import { expectHandedAsReplayed, type Handed, handing, replayReportOf } from './handed.js';

const SESSION = '3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f';

const logOf = (project: string): string => join(project, '.fact-tracker', 'sessions', `${SESSION}.jsonl`);

/** Files with no word in common, so each prompt's section holds the facts of its own file only. */
const FILES = ['alpha/one.py', 'bravo/two.rb', 'charlie/three.go', 'delta/four.rs', 'echo/five.kt', 'foxtrot/six.cs'];

/** A seed call: its result makes a fact about `FILES[i]` that later prompts can be given. */
const seedCall = (i: number, agentType = 'implementer'): Call => ({
  toolUseId: `toolu_seed${i}`,
  agentId: `aseed${i}`,
  agentType,
  prompt: `Task ID: s${i}\nCreate ${FILES[i]}.\nEnd with your result between BEGIN_DISPATCH_RESULT and END_DISPATCH_RESULT.`,
  answer: implementerAnswer(`s${i}`, FILES[i]!),
});

/** A call that works on `FILES[about]` again and changes `file` (its own result's fact). */
const workCall = (n: number, about: number, file: string, agentType = 'implementer'): Call => ({
  toolUseId: `toolu_0${n}WorkCall${n}`,
  agentId: `awork${n}`,
  agentType,
  prompt: `Task ID: ${n}\nExtend ${FILES[about]} and add ${file}.\nEnd with your result between BEGIN_DISPATCH_RESULT and END_DISPATCH_RESULT.`,
  answer: implementerAnswer(String(n), file),
});

const taskOf = (call: Call): string => /Task ID: (\S+)/u.exec(call.prompt)![1]!;

interface Replayed {
  readonly prompts: ReadonlyArray<{ readonly taskId: string; readonly sessionContext: string }>;
  readonly facts: ReadonlyArray<{ readonly subject: string; readonly sourceTaskId: string }>;
  readonly errors: ReadonlyArray<unknown>;
}

/** The log last read, and its report as JSON gives it: a sequence's checks read the same log several times. */
let lastReplayed: { readonly log: string; readonly report: Replayed } | undefined;

/** The replay of `project`'s log, the one `expectHandedAsReplayed` checks against too. */
const replayOf = (project: string): Replayed => {
  const log = readFileSync(logOf(project), 'utf8');
  if (lastReplayed?.log !== log)
    lastReplayed = { log, report: JSON.parse(JSON.stringify(replayReportOf(log))) as Replayed };
  return lastReplayed.report;
};

/** Every given subagent got exactly the section `replay` computes for its own prompt, once (none when it is empty). */
const expectOwnSections = (project: string, given: ReadonlyMap<string, Given>, calls: ReadonlyArray<Call>): void => {
  const { prompts, errors } = replayOf(project);
  expect(errors).toEqual([]);
  for (const call of calls) {
    const own = prompts.filter((prompt) => prompt.taskId === taskOf(call));
    expect(own, `one prompt event for task ${taskOf(call)}`).toHaveLength(1);
    const expected = own[0]!.sessionContext;
    expect(given.get(call.toolUseId)?.sections, `the sections given to ${call.agentId}`).toEqual(
      expected === '' ? [] : [expected],
    );
  }
};

/** Each result's fact sits under its own task, once; the calls that gave no result left no fact. */
const expectOwnResults = (project: string, answered: ReadonlyArray<Call>, silent: ReadonlyArray<Call> = []): void => {
  const { facts } = replayOf(project);
  for (const call of answered) {
    const file = /"files_changed": \[\s*"([^"]+)"/u.exec(call.answer)![1]!;
    expect(
      facts.filter((fact) => fact.subject === file).map((fact) => fact.sourceTaskId),
      `the facts of ${file}`,
    ).toEqual([taskOf(call)]);
  }
  for (const call of silent) expect(facts.filter((fact) => fact.sourceTaskId === taskOf(call))).toEqual([]);
};

/** Dispatches whose results are the facts later prompts need. */
const seed = async (host: ReturnType<typeof claudeCode>, count: number): Promise<Call[]> => {
  const seeds = Array.from({ length: count }, (_, i) => seedCall(i));
  for (const call of seeds) await host.foreground(call);
  return seeds;
};

const shuffled = <T>(items: ReadonlyArray<T>, order: ReadonlyArray<number>): T[] => order.map((i) => items[i]!);

/** What a host model keeps of the events it sent: each call's sections, and what the user was told. */
interface Model {
  readonly given: Map<string, Given>;
  readonly notices: Notices;
}

/** A project after its first calls, and the state of the host that made them. */
interface SeededProject {
  readonly dir: string;
  /** The hooks' clock after them. */
  readonly now: number;
  readonly given: ReadonlyMap<string, Given>;
  readonly handed: ReadonlyArray<Handed>;
  readonly notices: Notices;
}

const seededProjects = new Map<string, Promise<SeededProject>>();

/**
 * A host made by `make` in `dir` and sending through `send` (its sections kept in `handed`), as it
 * is after `seed`, and the hooks' clock then. `seed` runs once per `key` (the hook in this process,
 * its clock a second an event from 10:00) in a project kept as a template: `dir` is a copy of it,
 * and the host, `handed` and the clock start where its host's ended, as if this test had sent them.
 */
const afterSeeds = async <H extends { readonly host: Model }>(
  key: string,
  make: (send: Send, dir: string) => H,
  seed: (made: H) => Promise<void>,
  place: { readonly dir: string; readonly send: Send; readonly handed: Handed[] },
): Promise<H & { readonly now: number }> => {
  const made =
    seededProjects.get(key) ??
    (async (): Promise<SeededProject> => {
      const dir = tempDir('sequence-');
      let now = Date.parse('2026-03-02T10:00:00Z');
      const { send, handed } = handing(inProcess({ cwd: dir, projectDir: dir, clock: () => (now += 1000) }));
      const seeded = make(send, dir);
      await seed(seeded);
      return { dir, now, given: seeded.host.given, handed, notices: seeded.host.notices };
    })();
  seededProjects.set(key, made);
  const seeded = await made;
  copyTree(seeded.dir, place.dir);
  const fresh = make(place.send, place.dir);
  for (const [call, given] of seeded.given) fresh.host.given.set(call, { ...given, sections: [...given.sections] });
  fresh.host.notices.push(...seeded.notices);
  place.handed.push(...seeded.handed);
  return { ...fresh, now: seeded.now };
};

// Concurrent: each test drives its own project, and waits mostly on its hook processes.
describe.concurrent('Claude Code sequences through the built hook', { timeout: 600_000 }, () => {
  /** A new project, and the built hook run in it through the router in this process (or as `via` runs it). */
  const project = (via: typeof routed = routed): { dir: string; send: Send } => {
    const dir = tempDir('sequence-');
    return { dir, send: via({ CLAUDE_PROJECT_DIR: dir }, dir) };
  };

  /**
   * The seeds of `dir` through the hook in this process (same files, same code; the binary's
   * first events in a new project are hook.test.ts'), each checked to have got its own section:
   * only what follows them needs processes.
   */
  const seeded = async (dir: string, count: number): Promise<Call[]> => {
    const seeding = claudeCode({ send: inProcess({ cwd: dir, projectDir: dir }), sessionId: SESSION, cwd: dir });
    const seeds = await seed(seeding, count);
    expectOwnSections(dir, seeding.given, seeds);
    return seeds;
  };

  it('normal: each subagent gets its own section in its prompt, and each result lands on its task', async () => {
    const { dir, send } = project();
    const host = claudeCode({ send, sessionId: SESSION, cwd: dir });
    const seeds = await seeded(dir, 1);
    const foreground = workCall(2, 0, 'golf/seven.swift');
    await host.foreground(foreground);
    // A subagent sent to the background: its result arrives with its stop, after the call ended.
    const background = workCall(3, 0, 'hotel/eight.php');
    await host.pre(background);
    await host.start(background);
    await host.launched(background);
    await host.stop(background);
    const calls = [...seeds, foreground, background];
    expectOwnSections(dir, host.given, [foreground, background]);
    // In Claude Code the section reaches the subagent in its prompt: the tool ran with the rewritten input.
    for (const call of [foreground, background]) {
      const { input, sections } = host.given.get(call.toolUseId)!;
      expect(input['prompt']).toBe(`${sections[0]!}\n\n${call.prompt}`);
    }
    expect(host.given.get(foreground.toolUseId)!.sections[0]).toContain('alpha/one.py');
    expectOwnResults(dir, calls);
    expect(host.notices).toEqual([]);
  });

  it('denied: a call that never starts takes nothing from the next one of its type', async () => {
    const { dir, send } = project();
    const host = claudeCode({ send, sessionId: SESSION, cwd: dir });
    const seeds = await seeded(dir, 2);
    const denied = workCall(2, 0, 'golf/seven.swift');
    await host.pre(denied); // the user said no: nothing else comes for this call
    const next = workCall(3, 1, 'hotel/eight.php');
    await host.foreground(next);
    expectOwnSections(dir, host.given, [denied, next]);
    expect(host.given.get(next.toolUseId)!.sections[0]).toContain('bravo/two.rb');
    expectOwnResults(dir, [...seeds, next], [denied]);
  });

  it('three parallel subagents of one type, in hook processes running at once, each get their own section and result', async () => {
    const { dir, send } = project(binary);
    // Three: at each step every process races two others for the session's lock, in another order
    // than their calls'; a process per event (0.2 s of CPU each) is most of what this file costs.
    const seeds = await seeded(dir, 3);
    const host = claudeCode({ send, sessionId: SESSION, cwd: dir });
    const calls = [0, 1, 2].map((i) => workCall(10 + i, i, `parallel/file${i}.txt`));
    await Promise.all(calls.map((call) => host.pre(call)));
    await Promise.all(shuffled(calls, [2, 0, 1]).map((call) => host.start(call)));
    await Promise.all(
      shuffled(calls, [1, 2, 0]).map(async (call) => {
        await host.stop(call);
        await host.finished(call);
      }),
    );
    const sections = calls.map((call) => host.given.get(call.toolUseId)!.sections[0]);
    expect(new Set(sections).size).toBe(3);
    calls.forEach((call, i) => expect(sections[i]).toContain(FILES[i]));
    expectOwnSections(dir, host.given, calls);
    expectOwnResults(dir, [...seeds, ...calls]);
  });

  it('a cd between dispatches: the same session, in the one log of the project', async () => {
    const { dir, send } = project();
    const host = claudeCode({ send, sessionId: SESSION, cwd: dir });
    const seeds = await seeded(dir, 1);
    const nested = join(dir, 'packages', 'api');
    mkdirSync(nested, { recursive: true });
    const moved = { ...workCall(2, 0, 'golf/seven.swift'), cwd: nested };
    await host.foreground(moved);
    expectOwnSections(dir, host.given, [moved]);
    expect(host.given.get(moved.toolUseId)!.sections[0]).toContain('alpha/one.py');
    expectOwnResults(dir, [...seeds, moved]);
    expect(readdirSync(nested)).toEqual([]);
  });
});

describe('Claude Code sequences', { timeout: 120_000 }, () => {
  const setUp = (options: { honoursRewrite?: boolean } = {}) => {
    const dir = tempDir('sequence-');
    let now = Date.parse('2026-03-02T10:00:00Z');
    const host = claudeCode({
      send: inProcess({ cwd: dir, projectDir: dir, clock: () => (now += 1000) }),
      sessionId: SESSION,
      cwd: dir,
      ...options,
    });
    return { dir, host, advance: (ms: number) => (now += ms) };
  };

  it('interrupted: a subagent stopped without a result leaves nothing pending', async () => {
    const { dir, host } = setUp();
    const seeds = await seed(host, 2);
    const interrupted = workCall(2, 0, 'golf/seven.swift');
    await host.pre(interrupted);
    await host.start(interrupted);
    await host.stop(interrupted, 'Interrupted by the user.');
    const next = workCall(3, 1, 'hotel/eight.php');
    await host.foreground(next);
    expectOwnSections(dir, host.given, [...seeds, interrupted, next]);
    expectOwnResults(dir, [...seeds, next], [interrupted]);
  });

  it('a failed tool call ends its dispatch', async () => {
    const { dir, host } = setUp();
    const seeds = await seed(host, 2);
    const failing = workCall(2, 0, 'golf/seven.swift');
    await host.pre(failing);
    await host.start(failing);
    await host.failed(failing);
    const next = workCall(3, 1, 'hotel/eight.php');
    await host.foreground(next);
    expectOwnSections(dir, host.given, [...seeds, failing, next]);
    expectOwnResults(dir, [...seeds, next], [failing]);
  });

  it('a repeated SubagentStop records nothing more, and takes nothing from the next task', async () => {
    const { dir, host } = setUp();
    const seeds = await seed(host, 2);
    const twice = workCall(2, 0, 'golf/seven.swift');
    await host.pre(twice);
    await host.start(twice);
    await host.stop(twice);
    // A blocking Stop hook sent it back to work: it stops again, with another answer.
    await host.stop(twice, implementerAnswer('2', 'india/nine.ex'));
    await host.finished(twice);
    await host.stop(twice, implementerAnswer('2', 'juliet/ten.ml'));
    const background = workCall(3, 1, 'hotel/eight.php');
    await host.pre(background);
    await host.start(background);
    await host.launched(background);
    await host.stop(background);
    await host.stop(background, implementerAnswer('3', 'kilo/eleven.hs'));
    const next = workCall(4, 1, 'lima/twelve.jl');
    await host.foreground(next);
    expectOwnSections(dir, host.given, [...seeds, twice, background, next]);
    expectOwnResults(dir, [...seeds, twice, background, next]);
    const { facts } = replayOf(dir);
    for (const file of ['india/nine.ex', 'juliet/ten.ml', 'kilo/eleven.hs'])
      expect(facts.filter((fact) => fact.subject === file)).toEqual([]);
    const dispatches = readFileSync(logOf(dir), 'utf8')
      .split('\n')
      .filter((line) => line.includes('"type":"dispatch"'));
    expect(dispatches).toHaveLength(seeds.length + 3);
  });

  it('tells the user, and names both tasks, when a result carries another task_id', async () => {
    const { dir, host } = setUp();
    await seed(host, 1);
    const call = { ...workCall(2, 0, 'golf/seven.swift'), answer: implementerAnswer('7', 'golf/seven.swift') };
    await host.foreground(call);
    expect(host.notices).toEqual([expect.stringMatching(/result task_id "7" differs from the dispatch task "2"/u)]);
    expectOwnResults(dir, [{ ...call, prompt: 'Task ID: 2' }]);
  });

  it('an answer without a result block is told to the user as marker_missing, once per call, and records nothing', async () => {
    const { dir, host } = setUp();
    const seeds = await seed(host, 1);
    const plain = { ...workCall(2, 0, 'golf/seven.swift'), answer: 'I added golf/seven.swift; all tests pass.' };
    await host.foreground(plain);
    expect(host.notices).toEqual([
      expect.stringMatching(
        /^fact-tracker: marker_missing: the answer of implementer \(awork2\) for task 2 has no result between a line BEGIN_DISPATCH_RESULT and a line END_DISPATCH_RESULT/u,
      ),
    ]);
    // In the background: the answer is its stop, told once however often it stops.
    const background = { ...workCall(3, 0, 'hotel/eight.php'), answer: 'Done, see the diff.' };
    await host.pre(background);
    await host.start(background);
    await host.launched(background);
    await host.stop(background);
    await host.stop(background);
    expect(host.notices).toHaveLength(2);
    expect(host.notices[1]).toMatch(/marker_missing: the answer of implementer \(awork3\) for task 3 /u);
    expectOwnResults(dir, seeds, [plain, background]);
  });

  it('on a host that ignores the rewritten prompt: the first section is reported lost, later ones reach their subagent at SubagentStart', async () => {
    const { dir, host } = setUp({ honoursRewrite: false });
    const seeds = await seed(host, 1);
    const first = workCall(2, 0, 'golf/seven.swift');
    await host.foreground(first);
    expect(host.given.get(first.toolUseId)!.sections).toEqual([]);
    expect(host.notices).toEqual([
      expect.stringMatching(/rewrite_ignored: .* task 2 started without its \[Session Context\]/u),
    ]);
    const later = [workCall(3, 0, 'hotel/eight.php'), workCall(4, 0, 'india/nine.ex')];
    for (const call of later) await host.foreground(call);
    expectOwnSections(dir, host.given, [...seeds, ...later]);
    for (const call of later) expect(host.given.get(call.toolUseId)!.sections[0]).toContain('alpha/one.py');
    expect(host.notices).toHaveLength(1);
    expectOwnResults(dir, [...seeds, first, ...later]);
  });

  it('a subagent that hands its report back: the report is its result, once', async () => {
    const dir = tempDir('sequence-');
    const send = inProcess({ cwd: dir, projectDir: dir });
    const host = claudeCode({ send, sessionId: SESSION, cwd: dir });
    const seeds = await seed(host, 1);
    const call = workCall(2, 0, 'golf/seven.swift');
    await host.pre(call);
    await host.start(call);
    await send({
      session_id: SESSION,
      cwd: dir,
      hook_event_name: 'PostToolUse',
      agent_id: call.agentId,
      agent_type: call.agentType,
      tool_name: 'SubagentHandback',
      tool_input: { message: call.answer },
      tool_use_id: 'toolu_handback',
      tool_response: 'Report delivered.',
    });
    await host.stop(call, 'Handed back.');
    await host.finished({ ...call, answer: 'Report handed back to the parent.' });
    expectOwnSections(dir, host.given, [...seeds, call]);
    expectOwnResults(dir, [...seeds, call]);
  });

  it('finds the project by its git work tree when the agent names none', async () => {
    const dir = tempDir('sequence-');
    execFileSync('git', ['init', '-q', dir]);
    const nested = join(dir, 'packages', 'api');
    mkdirSync(nested, { recursive: true });
    const host = claudeCode({ send: inProcess({ cwd: '/' }), sessionId: SESSION, cwd: nested });
    const seeds = await seed(host, 1);
    const moved = { ...workCall(2, 0, 'golf/seven.swift'), cwd: dir };
    await host.foreground(moved);
    expectOwnSections(dir, host.given, [...seeds, moved]);
    expectOwnResults(dir, [...seeds, moved]);
    expect(readdirSync(nested)).toEqual([]);
  });
});

describe('Claude Code orderings (the hooks file knows the calls)', { timeout: 120_000 }, () => {
  /**
   * The events of calls 1, 2 and 3, made in parallel, and of call 4, which resumes the subagent
   * of call 1 later (a call of its own, with its own task and answer, naming the same agent):
   * `pre` the call's PreToolUse, `start` its SubagentStart, `none` a SubagentStop without a result
   * block, `good` one with the answer, `end` the PostToolUse of a foreground call (its answer in
   * `content`, naming its agent), `bare` the same from the older `Task` tool (naming none),
   * `launched` the PostToolUse of a call sent to the background (naming its agent, returned at
   * once, its subagent's stops after it), `failed` its PostToolUseFailure, `late` 11 minutes
   * passing (a subagent working past the wait, a permission prompt answered late, or a pause
   * between calls). A call whose subagent never starts was denied by the user. A start or a stop
   * after its call's end without a call of its own is the subagent resumed (its answer recorded
   * already); an event written twice is delivered twice. On a host that `ignores` the rewritten
   * prompt, the sections go by SubagentStart (docs/hooks.md), once a first call showed it.
   */
  type Step = `${'pre' | 'start' | 'none' | 'good' | 'end' | 'bare' | 'launched' | 'failed'}${1 | 2 | 3 | 4}` | 'late';
  type Types = 'one' | 'distinct' | 'same';
  type Host = 'honours' | 'ignores';
  const orderings: ReadonlyArray<readonly [string, Types, Host]> = [
    ['pre1 start1 good1 end1', 'one', 'honours'],
    ['pre1 start1 good1 end1', 'one', 'ignores'],
    ['pre1 start1 none1 good1 end1', 'one', 'honours'],
    ['pre1 pre1 start1 start1 good1 good1 end1 end1', 'one', 'honours'],
    ['pre1 pre1 start1 start1 good1 good1 end1 end1', 'one', 'ignores'],
    ['pre1 start1 late none1 good1 end1', 'one', 'ignores'],
    ['pre1 start1 good1 bare1', 'one', 'honours'],
    ['pre1 start1 late good1 bare1 bare1', 'one', 'ignores'],
    ['pre1 launched1 start1 none1 good1 good1', 'one', 'ignores'],
    ['pre1 start1 launched1 launched1 late none1 late good1', 'one', 'honours'],
    ['pre1 start1 good1 end1 late start1 good1', 'one', 'honours'],
    ['pre1 start1 launched1 good1 late start1 good1 none1', 'one', 'ignores'],
    ['pre1 start1 good1 end1 pre4 start4 good4 end4', 'one', 'honours'],
    ['pre1 start1 good1 end1 late pre4 start4 late good4 end4', 'one', 'ignores'],
    ['pre1 start1 good1 end1 pre4 late start4 good4 end4', 'one', 'ignores'],
    ['pre1 late start1 good1 end1', 'one', 'honours'],
    ['pre1 late start1 good1 bare1', 'one', 'honours'],
    ['pre1 start1 launched1 good1 late pre4 launched4 start4 good4', 'one', 'honours'],
    ['pre1 start1 launched1 good1 pre4 start4 launched4 none4 good4', 'one', 'ignores'],
    ['pre1 pre2 start1 start2 good2 end2 good1 end1', 'same', 'ignores'],
    ['pre1 pre2 start2 start1 good1 end1 good2 end2', 'same', 'honours'],
    ['pre1 pre2 start2 start1 good1 good2 end2 end1', 'distinct', 'ignores'],
    ['pre2 pre1 start1 start2 none1 late good2 good1 end1 end2', 'distinct', 'honours'],
    ['pre1 pre2 launched2 launched1 start2 start1 good1 good2', 'same', 'ignores'],
    ['pre1 pre2 start1 launched1 start2 launched2 good2 good1 good1', 'same', 'ignores'],
    ['pre1 pre2 start2 start1 good1 good2 end1 end2', 'same', 'ignores'],
    ['pre1 start1 pre2 start2 late good2 good1 end1 end2', 'same', 'ignores'],
    ['pre1 pre2 start1 start2 good1 good2 bare2 bare1', 'same', 'honours'],
    ['pre1 pre2 start2 start1 good2 good1 bare1 bare2', 'distinct', 'ignores'],
    ['pre1 start1 launched1 pre2 start2 good2 end2 late good1', 'same', 'ignores'],
    ['pre1 start1 good1 end1 pre2 pre4 start2 start4 good4 good2 end4 end2', 'same', 'honours'],
    ['pre1 start1 good1 end1 pre4 pre2 start4 start2 good2 good4 end2 end4', 'same', 'ignores'],
    ['pre1 start1 launched1 good1 pre2 pre4 launched4 launched2 start2 start4 good4 good2', 'same', 'ignores'],
    ['pre1 pre2 pre3 start3 start1 start2 good2 end2 good3 good1 end1 end3', 'distinct', 'honours'],
    ['pre1 pre2 pre3 start3 start1 start2 good2 end2 good3 good1 end1 end3', 'distinct', 'ignores'],
    ['pre1 pre2 pre3 start1 start2 start3 launched1 launched2 launched3 good3 good1 good2', 'same', 'honours'],
    ['pre1 pre2 pre3 start1 start2 start3 none3 good3 good1 good2 end3 end1 end2', 'same', 'ignores'],
    ['pre1 pre2 pre3 launched1 start1 launched2 start2 launched3 start3 late good2 good3 good1', 'same', 'ignores'],
    ['pre3 pre1 pre2 start2 launched2 start3 start1 good1 end1 good3 end3 good2', 'same', 'honours'],
    // Both allowed past the wait: where the later call's subagent starts first, each takes its own;
    // in the order of the calls, each takes the other's.
    ['pre1 pre2 late start2 start1 good1 end1 good2 end2', 'same', 'honours'],
    ['pre1 pre2 late start2 start1 good1 end1 good2 end2', 'same', 'ignores'],
    ['pre1 pre2 late start1 start2 good2 end2 good1 end1', 'same', 'honours'],
    ['pre1 pre2 late start1 start2 good2 end2 good1 end1', 'same', 'ignores'],
    // Call 2 denied, the subagent of call 1 resumed without a call of its own: it takes no section
    // of a call made before its own call returned, and may take one of a call made since.
    ['pre1 pre2 start1 good1 end1 start1 good1', 'same', 'honours'],
    ['pre1 pre2 start1 good1 end1 start1 good1', 'same', 'ignores'],
    ['pre1 pre2 start1 good1 end1 late start1 good1', 'same', 'ignores'],
    ['pre2 pre1 launched1 start1 good1 start1 good1', 'same', 'honours'],
    ['pre2 pre1 launched1 start1 good1 start1 good1', 'same', 'ignores'],
    ['pre1 start1 launched1 pre2 good1 start1 good1', 'same', 'ignores'],
    ['pre1 pre2 start1 good1 end1 failed2 start1 good1', 'same', 'ignores'],
    ['pre1 start1 good1 end1 pre2 start1 good1', 'same', 'honours'],
    ['pre1 start1 good1 end1 pre2 start1 good1', 'same', 'ignores'],
  ];

  const seeds = [0, 1, 2].map((i) => seedCall(i));
  // On a host that ignores the rewrite, a first call shows it: its section is lost, and told.
  const shownOf = (rewrite: Host): Call[] =>
    rewrite === 'ignores' ? [workCall(5, 0, 'mike/shown.txt', 'worker')] : [];
  /** A project holding the seeds' results (and the call that showed the rewrite ignored), made once per host. */
  interface Template {
    readonly dir: string;
    readonly given: ReadonlyMap<string, Given>;
    readonly handed: ReadonlyArray<Handed>;
    /** The task whose section the host was seen to ignore: lost, and told. */
    readonly lost: ReadonlyArray<string>;
  }
  const templates = new Map<Host, Promise<Template>>();
  const template = (rewrite: Host): Promise<Template> => {
    const made =
      templates.get(rewrite) ??
      (async () => {
        const dir = tempDir('sequence-');
        let now = Date.parse('2026-03-02T10:00:00Z');
        const { send, handed } = handing(inProcess({ cwd: dir, projectDir: dir, clock: () => (now += 1000) }));
        const host = claudeCode({ send, sessionId: SESSION, cwd: dir, honoursRewrite: rewrite === 'honours' });
        for (const call of [...seeds, ...shownOf(rewrite)]) await host.foreground(call);
        expect(host.notices).toHaveLength(shownOf(rewrite).length);
        const lost = host.notices.map((notice) => /rewrite_ignored: .* task (\S+) started without/u.exec(notice)?.[1]);
        return { dir, given: host.given, handed, lost: lost.filter((task) => task !== undefined) };
      })();
    templates.set(rewrite, made);
    return made;
  };

  it.each(orderings)(
    'orderings: %s (%s types, a host that %s the rewrite): each answer recorded once under its task, each section its own',
    async (ordering, types, rewrite) => {
      const dir = tempDir('sequence-');
      const templated = await template(rewrite);
      copyTree(templated.dir, dir);
      let now = Date.parse('2026-03-02T10:30:00Z');
      const { send, handed } = handing(inProcess({ cwd: dir, projectDir: dir, clock: () => (now += 1000) }));
      const steps = ordering.split(' ') as ReadonlyArray<Step>;
      const host = claudeCode({
        send,
        sessionId: SESSION,
        cwd: dir,
        honoursRewrite: rewrite === 'honours',
        tool: steps.some((step) => step.startsWith('bare')) ? 'Task' : 'Agent',
      });
      const shown = shownOf(rewrite);
      const typeOf = (n: number) => (types !== 'distinct' || n === 1 ? 'worker' : n === 2 ? 'explorer' : 'tester');
      const first = workCall(2, 0, 'golf/seven.swift', typeOf(1));
      const parallel = [
        first,
        workCall(3, 1, 'hotel/eight.php', typeOf(2)),
        workCall(4, 2, 'india/nine.ex', typeOf(3)),
      ];
      const resumed = { ...workCall(6, 0, 'juliet/ten.ml', first.agentType), agentId: first.agentId };
      const calls = [...parallel, resumed];
      const callOf = (step: Step): Call => calls[Number(step.slice(-1)) - 1]!;
      for (const step of steps) {
        if (step === 'late') {
          now += 11 * 60_000;
          continue;
        }
        const call = callOf(step);
        const event = step.slice(0, -1) as 'pre' | 'start' | 'none' | 'good' | 'end' | 'bare' | 'launched' | 'failed';
        if (event === 'pre' || event === 'start' || event === 'launched' || event === 'failed') await host[event](call);
        else if (event === 'none') await host.stop(call, 'Looking at the code first.');
        else if (event === 'good') await host.stop(call);
        else await host.finished(call, event === 'end');
      }
      const n = (call: Call) => (calls.indexOf(call) + 1) as 1 | 2 | 3 | 4;
      const made = calls.filter((call) => steps.includes(`pre${n(call)}`));
      const answered = made.filter((call) =>
        (['good', 'end', 'bare'] as const).some((event) => steps.includes(`${event}${n(call)}`)),
      );
      // Every answer once, under its own task, none lost, none under another's.
      expectOwnResults(
        dir,
        [...seeds, ...shown, ...answered],
        made.filter((call) => !answered.includes(call)),
      );
      const results = readFileSync(logOf(dir), 'utf8')
        .split('\n')
        .filter((line) => line.includes('"type":"dispatch"'));
      expect(results).toHaveLength(seeds.length + shown.length + answered.length);
      // Its own section, by one channel, where docs/hooks.md promises it: always in the prompt; at
      // SubagentStart, by agent type, oldest first, so for subagents of one type only where each
      // started after its call named it, or in the order of their calls; where the older call waited
      // past the wait when the first of the two started, the newest section goes first, so there in
      // the other order. A denied call's subagent never starts: one of its type may take its section.
      const at = (step: Step) => steps.indexOf(step);
      const denied = made.filter((call) => at(`start${n(call)}`) < 0);
      const started = (call: Call) => (denied.includes(call) ? steps.length : at(`start${n(call)}`));
      const lateAt = (call: Call, index: number) => steps.slice(at(`pre${n(call)}`), index).includes('late');
      const unnamed = made.filter(
        (call) => !(at(`launched${n(call)}`) >= 0 && at(`launched${n(call)}`) < at(`start${n(call)}`)),
      );
      const inOrder = (a: Call, b: Call) => started(a) < started(b) !== lateAt(a, Math.min(started(a), started(b)));
      // A subagent resumed without a call of its own (started again once its answer is in) takes a
      // waiting section of its type made since its call returned, as a call resuming it would be.
      const returned = (call: Call) =>
        Math.min(
          ...(['end', 'bare', 'launched'] as const).map((event) => at(`${event}${n(call)}`)).filter((i) => i >= 0),
        );
      const resumedAt = (call: Call) =>
        steps.flatMap((step, i) =>
          step === `start${n(call)}` && i > returned(call) && i > at(`good${n(call)}`) && at(`good${n(call)}`) >= 0
            ? [i]
            : [],
        );
      const ordered =
        unnamed.every((a) =>
          unnamed.every(
            (b) =>
              a === b ||
              a.agentType !== b.agentType ||
              (denied.includes(a) && denied.includes(b)) ||
              (at(`pre${n(a)}`) < at(`pre${n(b)}`) ? inOrder(a, b) : inOrder(b, a)),
          ),
        ) &&
        made.every((a) =>
          made.every(
            (b) =>
              a === b ||
              a.agentType !== b.agentType ||
              resumedAt(a).every((i) => !(at(`pre${n(b)}`) > returned(a) && at(`pre${n(b)}`) < i && started(b) > i)),
          ),
        );
      const { prompts } = replayOf(dir);
      for (const call of made.filter((call) => !denied.includes(call))) {
        const own = prompts.filter((prompt) => prompt.taskId === taskOf(call)).map((prompt) => prompt.sessionContext);
        expect(own, `the prompt of task ${taskOf(call)}`).toHaveLength(1);
        const sections = host.given.get(call.toolUseId)?.sections ?? [];
        // A start delivered twice is handed its section again, which the subagent already holds.
        const given = rewrite === 'honours' ? sections : [...new Set(sections)];
        if (ordered) expect(given, `the sections given to task ${taskOf(call)}`).toEqual(own[0] === '' ? [] : own);
      }
      // Nothing else told: an answer without a result where it is its call's, a section taken by
      // another subagent of its type where the calls' order did not hold.
      const told = host.notices.filter((notice) => !/marker_missing: |section_mismatch: /u.test(notice));
      expect(told).toEqual([]);
      if (ordered) expect(host.notices.filter((notice) => notice.includes('section_mismatch'))).toEqual([]);
      expect(replayOf(dir).errors).toEqual([]);
      expectHandedAsReplayed({
        log: readFileSync(logOf(dir), 'utf8'),
        given: new Map([...templated.given, ...host.given]),
        handed: [...templated.handed, ...handed],
        own: [
          ...seeds.filter((call) => !templated.lost.includes(taskOf(call))),
          ...(ordered ? made.filter((call) => !denied.includes(call)) : []),
        ],
        unreceived: [...templated.lost, ...denied.map(taskOf)],
      });
    },
  );
});

/**
 * `store`, whose first append of a result fails with io: its line reaches the log all the same
 * when `lands` (a connection lost before the answer).
 */
const failingFirstResult = (store: SessionStore, lands: boolean): SessionStore => {
  let failures = 1;
  return {
    ...store,
    append: async (id, expected, texts) => {
      if (failures === 0 || !texts.some((text) => text.includes('"dispatch"')))
        return store.append(id, expected, texts);
      failures -= 1;
      if (lands) await store.append(id, expected, texts);
      return E.left({ code: 'io', message: 'the connection was lost' });
    },
  };
};

describe('Codex sequences (subagent events only)', { timeout: 120_000 }, () => {
  const setUp = () => {
    const dir = tempDir('sequence-');
    let now = Date.parse('2026-03-02T10:00:00Z');
    const advance = (ms: number) => (now += ms);
    const { send, handed } = handing(inProcess({ cwd: dir, projectDir: dir, clock: () => (now += 1000) }));
    const host = codex({ send, sessionId: SESSION, cwd: dir });
    return { dir, host, advance, send, handed };
  };

  const run = async (host: ReturnType<typeof codex>, call: Call) => {
    await host.pre(call);
    await host.start(call);
    await host.stop(call);
  };

  it('hands each section out at SubagentStart, and a stop after every turn records the result once', async () => {
    const { dir, host } = setUp();
    const seeds = [seedCall(0, 'worker'), seedCall(1, 'worker')];
    for (const call of seeds) await run(host, call);
    const call = workCall(2, 0, 'golf/seven.swift', 'worker');
    await run(host, call);
    await host.stop(call, implementerAnswer('2', 'india/nine.ex'));
    await host.stop(call, 'Anything else?');
    const next = workCall(3, 1, 'hotel/eight.php', 'worker');
    await run(host, next);
    expectOwnSections(dir, host.given, [...seeds, call, next]);
    expectOwnResults(dir, [...seeds, call, next]);
    expect(replayOf(dir).facts.filter((fact) => fact.subject === 'india/nine.ex')).toEqual([]);
  });

  it('a turn without a result block is told as marker_missing once; a later turn with one is still recorded', async () => {
    const { dir, host } = setUp();
    const call = workCall(2, 0, 'golf/seven.swift', 'worker');
    await host.pre(call);
    await host.start(call);
    await host.stop(call, 'Looking at the code first.');
    await host.stop(call, 'Still looking.');
    expect(host.notices).toEqual([
      expect.stringMatching(/^fact-tracker: marker_missing: the answer of worker \(awork2\) for task 2 /u),
    ]);
    await host.stop(call);
    expectOwnResults(dir, [call]);
    expect(host.notices).toHaveLength(1);
  });

  it('a turn whose result the session refuses is told once; the corrected result of a later turn is recorded, once', async () => {
    const { dir, host } = setUp();
    const call = workCall(2, 0, 'golf/seven.swift', 'worker');
    await host.pre(call);
    await host.start(call);
    const broken = call.answer.replace('"status": "completed",', '"status": "completed"');
    await host.stop(call, broken);
    await host.stop(call, broken);
    expect(host.notices).toEqual([
      expect.stringMatching(
        /^fact-tracker: json_parse_failed: the result of worker \(awork2\) for task 2 was not recorded/u,
      ),
    ]);
    await host.stop(call);
    await host.stop(call);
    expectOwnResults(dir, [call]);
    expect(host.notices).toHaveLength(1);
    const events = readFileSync(logOf(dir), 'utf8').trim().split('\n');
    expect(events.map((line) => (JSON.parse(line) as { type: string }).type)).toEqual(['prompt', 'dispatch']);
  });

  it("a result the session failed to record in passing is sent again at the agent's next stop, and recorded once, its line stamped after a later event or not", async () => {
    // The first append of a result fails with io: `lands` says whether its line reached the log
    // all the same (a connection lost before the answer). `ahead` is the time of an event another
    // writer recorded meanwhile, an hour past this hook's clock (another machine's hook, a clock
    // stepped back): the result's line is stamped after it, not at the time the hook noted.
    const later = Date.parse('2026-03-02T11:00:00Z');
    const cases = [{ lands: false }, { lands: true }, { lands: true, ahead: later }];
    for (const { lands, ahead } of cases as ReadonlyArray<{ lands: boolean; ahead?: number }>) {
      const dir = tempDir('sequence-');
      const store = memorySessionStore();
      const flaky = failingFirstResult(store, lands);
      let now = Date.parse('2026-03-02T10:00:00Z');
      const send = inProcess({ cwd: dir, projectDir: dir, store: flaky, clock: () => (now += 1000) });
      const host = codex({ send, sessionId: SESSION, cwd: dir });
      const call = workCall(2, 0, 'golf/seven.swift', 'worker');
      await host.pre(call);
      await host.start(call);
      const compact = { type: 'compact', maxFacts: 100, at: ahead };
      if (ahead !== undefined) expect(E.isRight(await store.append(SESSION, 1, [JSON.stringify(compact)]))).toBe(true);
      await host.stop(call);
      expect(host.notices).toEqual([
        expect.stringMatching(/^fact-tracker: io: the result of worker \(awork2\) for task 2 was not recorded/u),
      ]);
      await host.stop(call);
      await host.stop(call);
      expect(host.notices).toHaveLength(1);
      const read = await store.read(SESSION, 0);
      const events = E.isRight(read) ? read.right.lines.map(({ text }) => JSON.parse(text) as { type: string }) : [];
      if (ahead === undefined) expect(events.map((event) => event.type)).toEqual(['prompt', 'dispatch']);
      else
        expect(events).toEqual([
          expect.objectContaining({ type: 'prompt' }),
          compact,
          expect.objectContaining({ type: 'dispatch', at: ahead + 1 }),
        ]);
    }
  });

  it('a result resent after its line landed, stamped later, with another result of its task in between, is recorded once; the same text from another dispatch is recorded', async () => {
    // The first append of a1's result lands but answers io, its line stamped after an event an
    // hour ahead; a2's result of the same task lands before a1's next stop sends a1's again.
    const dir = tempDir('sequence-');
    const store = memorySessionStore();
    const flaky = failingFirstResult(store, true);
    let now = Date.parse('2026-03-02T10:00:00Z');
    const send = inProcess({ cwd: dir, projectDir: dir, store: flaky, clock: () => (now += 1000) });
    const host = codex({ send, sessionId: SESSION, cwd: dir });
    const ofTask2 = (n: number, answer: string): Call => ({
      ...workCall(2, 0, 'golf/seven.swift', 'worker'),
      toolUseId: `toolu_${n}`,
      agentId: `a${n}`,
      answer,
    });
    const [first, between, again] = [
      ofTask2(1, implementerAnswer('2', 'golf/seven.swift')),
      ofTask2(2, implementerAnswer('2', 'hotel/eight.php')),
      ofTask2(3, implementerAnswer('2', 'golf/seven.swift')),
    ];
    await host.pre(first);
    await host.start(first);
    const ahead = { type: 'compact', maxFacts: 100, at: Date.parse('2026-03-02T11:00:00Z') };
    expect(E.isRight(await store.append(SESSION, 1, [JSON.stringify(ahead)]))).toBe(true);
    await host.stop(first);
    await run(host, between);
    await host.stop(first);
    await host.stop(first);
    await run(host, again);
    const read = await store.read(SESSION, 0);
    // Each line as its kind, and a result as the file it changed: a1's once, then a2's, then a3's.
    const events = E.isRight(read)
      ? read.right.lines.map(({ text }) => {
          const event = JSON.parse(text) as { type: string; output?: string };
          return event.output === undefined ? event.type : /"files_changed": \[\s*"([^"]+)"/u.exec(event.output)![1];
        })
      : [];
    expect(events).toEqual([
      'prompt',
      'compact',
      'golf/seven.swift',
      'prompt',
      'hotel/eight.php',
      'prompt',
      'golf/seven.swift',
    ]);
  });

  it('a result an older release noted as sent, with its own time, and whose line landed stamped later, is recorded once when sent again', async () => {
    // An older release noted a result as sent with the hook's time, not its line's; the session
    // stamped the line after an event an hour ahead, and the hook was killed before it marked the
    // result recorded. The agent's next stop, in this release, sends it again with that time.
    const dir = tempDir('sequence-');
    const store = memorySessionStore();
    let now = Date.parse('2026-03-02T10:00:00Z');
    const send = inProcess({ cwd: dir, projectDir: dir, store, clock: () => (now += 1000) });
    const host = codex({ send, sessionId: SESSION, cwd: dir });
    const call = workCall(2, 0, 'golf/seven.swift', 'worker');
    await host.pre(call);
    await host.start(call);
    const ahead = Date.parse('2026-03-02T11:00:00Z');
    expect(
      E.isRight(await store.append(SESSION, 1, [JSON.stringify({ type: 'compact', maxFacts: 100, at: ahead })])),
    ).toBe(true);
    const sentAt = (now += 1000);
    const hooks = join(dir, '.fact-tracker', 'sessions', `${SESSION}.jsonl.hooks`);
    const missed = { type: 'missed', key: call.toolUseId, agentId: call.agentId, digest: digestOf(call.answer) };
    appendFileSync(hooks, `${JSON.stringify({ ...missed, retry: true, sentAt, at: sentAt })}\n`);
    const older = await openSession(SESSION, { store, clock: () => sentAt });
    if (E.isLeft(older)) throw new Error(older.left.message);
    const landed = await older.right.ingestResult({ role: 'implementer', taskId: '2', output: call.answer });
    expect(E.isRight(landed) && landed.right.line).toBe(3);
    await host.stop(call);
    await host.stop(call);
    const read = await store.read(SESSION, 0);
    const events = E.isRight(read)
      ? read.right.lines.map(({ text }) => (JSON.parse(text) as { type: string }).type)
      : [];
    expect(events).toEqual(['prompt', 'compact', 'dispatch']);
    expect(host.notices).toEqual([]);
  });

  it("a call's end that fails to record in passing a result its host did not name the agent of leaves no report to be recorded later under the agent's task", async () => {
    const dir = tempDir('sequence-');
    const store = memorySessionStore();
    let failing = false;
    const flaky: SessionStore = {
      ...store,
      append: async (id, expected, texts) =>
        failing ? E.left({ code: 'io', message: 'the connection was lost' }) : store.append(id, expected, texts),
    };
    let now = Date.parse('2026-03-02T10:00:00Z');
    const send = (payload: Record<string, unknown>) =>
      runHook(JSON.stringify({ session_id: SESSION, cwd: dir, permission_mode: 'default', ...payload }), {
        cwd: dir,
        projectDir: dir,
        store: flaky,
        clock: () => now,
      });
    const answer = `Done.\n\nBEGIN_DISPATCH_RESULT\n${JSON.stringify({ task_id: '7', status: 'completed', summary: 'Changed src/x.ts', files_changed: ['src/x.ts'] })}\nEND_DISPATCH_RESULT`;
    const input = { description: 'Task 7', prompt: 'Task ID: 7\nChange src/x.ts', subagent_type: 'worker' };
    await send({ hook_event_name: 'PreToolUse', tool_name: 'Task', tool_input: input, tool_use_id: 'toolu_1' });
    now += 1000;
    // The stop is kept as a report: the call's end, which names no agent, records it.
    await send({
      hook_event_name: 'SubagentStop',
      stop_hook_active: false,
      agent_id: 'a9',
      agent_type: 'worker',
      last_assistant_message: answer,
    });
    now += 1000;
    failing = true;
    const ended = await send({
      hook_event_name: 'PostToolUse',
      tool_name: 'Task',
      tool_input: input,
      tool_use_id: 'toolu_1',
      tool_response: { status: 'completed', content: [{ type: 'text', text: answer }] },
    });
    expect(ended.notices).toEqual([expect.stringMatching(/^io: the result of worker for task 7 was not recorded/u)]);
    failing = false;
    // Any later event, past the time a kept report waits for its call.
    now += 11 * 60_000;
    await send({
      hook_event_name: 'PreToolUse',
      tool_name: 'Task',
      tool_input: { description: 'other', prompt: 'Task ID: 8\nsomething else', subagent_type: 'worker' },
      tool_use_id: 'toolu_2',
    });
    const read = await store.read(SESSION, 0);
    const events = E.isRight(read) ? read.right.lines.map(({ text }) => JSON.parse(text) as { type: string }) : [];
    expect(events.filter((event) => event.type === 'dispatch')).toEqual([]);
  });

  it('a spawn whose call returns before its subagent starts, naming it: the subagent still gets its own section', async () => {
    const { dir, host, send } = setUp();
    const seeds = [seedCall(0, 'worker'), seedCall(1, 'worker')];
    for (const call of seeds) await run(host, call);
    const [first, second] = [workCall(2, 0, 'golf/seven.swift', 'worker'), workCall(3, 1, 'hotel/eight.php', 'worker')];
    await host.pre(first);
    await host.pre(second);
    // The spawns return at once with the new agents' ids (if the host sends PostToolUse for spawn_agent).
    for (const call of [second, first])
      await send({
        session_id: SESSION,
        cwd: dir,
        hook_event_name: 'PostToolUse',
        tool_name: 'spawn_agent',
        tool_input: { agent_type: call.agentType, message: call.prompt },
        tool_use_id: call.toolUseId,
        tool_response: { agent_id: call.agentId, status: 'running' },
      });
    // They start in the other order than their spawns: each still gets its own section.
    await host.start(second);
    await host.start(first);
    await host.stop(first);
    await host.stop(second);
    expectOwnSections(dir, host.given, [...seeds, first, second]);
    expectOwnResults(dir, [...seeds, first, second]);
  });

  it('a spawn that never starts stops being handed out after the timeout', async () => {
    const { dir, host, advance } = setUp();
    const seeds = [seedCall(0, 'worker'), seedCall(1, 'worker')];
    for (const call of seeds) await run(host, call);
    const denied = workCall(2, 0, 'golf/seven.swift', 'worker');
    await host.pre(denied);
    advance(11 * 60_000);
    const next = workCall(3, 1, 'hotel/eight.php', 'worker');
    await run(host, next);
    // The denied spawn's section went to no one; the next subagent of its type got its own.
    expectOwnSections(dir, host.given, [...seeds, next]);
    expect(host.given.get(next.toolUseId)!.sections[0]).toContain('bravo/two.rb');
    expectOwnResults(dir, [...seeds, next], [denied]);
  });

  /**
   * The events of subagent 1 and 2 (`first`, `second`): `pre` its spawn's PreToolUse, `spawned`
   * the spawn's PostToolUse (`async_launched`, naming the agent), `start`, and its stops after a
   * turn: `none` without a result block, `bad` with a result the session refuses, `good` with its
   * result. `late` is 11 minutes passing, past the timeout (only once every dispatched subagent
   * has started: a spawned subagent starts at once). An event written twice is delivered twice.
   * A spawn's PostToolUse, where the host sends one, returns at once, before its agent's first turn
   * ends; its hook process may still take the lock after that turn's stop's.
   */
  type Step = `${'pre' | 'spawned' | 'start' | 'none' | 'bad' | 'good'}${1 | 2}` | 'late';
  type Types = 'one' | 'distinct' | 'same';
  const orderings: ReadonlyArray<readonly [string, Types]> = [
    ['pre1 start1 good1', 'one'],
    ['pre1 spawned1 start1 good1', 'one'],
    ['pre1 start1 spawned1 good1', 'one'],
    ['pre1 start1 none1 none1 good1', 'one'],
    ['pre1 start1 bad1 bad1 good1 good1', 'one'],
    ['pre1 spawned1 start1 none1 late bad1 late good1', 'one'],
    ['pre1 pre1 spawned1 spawned1 start1 start1 good1 good1 none1', 'one'],
    ['pre1 pre2 start1 start2 good2 good1', 'distinct'],
    ['pre1 pre2 start2 start1 none1 good2 late good1', 'distinct'],
    ['pre1 start1 pre2 start2 bad1 good2 good1', 'distinct'],
    ['pre1 spawned1 pre2 spawned2 start2 start1 good1 good2', 'distinct'],
    ['pre2 pre1 start1 start2 spawned2 spawned1 none2 late good1 good2 good1', 'distinct'],
    ['pre1 pre2 start1 start2 good1 good1 good2 good2', 'distinct'],
    ['pre1 pre2 start1 start2 good1 good2', 'same'],
    ['pre1 pre2 spawned1 spawned2 start2 start1 good2 good1', 'same'],
    ['pre1 pre2 spawned2 start2 start1 spawned1 good1 good2', 'same'],
    ['pre1 pre2 start2 start1 spawned1 spawned2 none1 good2 good1', 'same'],
    // A subagent starting before its spawn returned, while the other's spawn had named its agent.
    ['pre1 pre2 spawned1 start2 spawned2 start1 good2 good1', 'same'],
    ['pre1 pre2 spawned1 start2 start1 spawned2 good1 good2', 'same'],
    ['pre2 spawned2 pre1 start1 spawned1 start2 none2 bad1 late good2 good1', 'same'],
    ['pre1 pre2 spawned1 spawned1 start2 start2 spawned2 start1 good2 good2 good1', 'same'],
    // A stop with its result before its own spawn's PostToolUse (its hook process took the lock
    // first), both subagents having started before either spawn named them: in their spawns'
    // order, or the other.
    ['pre1 pre2 start2 start1 good2 spawned1 spawned2 good1', 'same'],
    ['pre1 pre2 start2 start1 good1 spawned1 spawned2 good2', 'same'],
    ['pre1 pre2 start2 start1 spawned1 good2 spawned2 good1', 'same'],
    ['pre1 pre2 start2 start1 spawned2 good1 spawned1 good2', 'same'],
    ['pre1 pre2 start2 start1 good2 good1 spawned2 spawned1', 'same'],
    ['pre1 pre2 start2 start1 good1 spawned2 good2 spawned1', 'same'],
    ['pre1 pre2 start2 start1 none1 good2 none1 spawned2 spawned1 good1', 'same'],
    ['pre1 pre2 start2 start1 bad2 good1 spawned1 good2 late spawned2 good2', 'same'],
    ['pre2 pre1 start1 start2 good1 late spawned2 spawned1 good2 good1', 'same'],
    ['pre1 pre2 start1 start2 good1 spawned2 spawned1 good2', 'same'],
    ['pre1 pre2 start1 start2 good2 good1 spawned2 spawned1', 'same'],
    ['pre1 pre2 start1 start2 none2 good1 spawned1 good2 spawned2', 'same'],
    ['pre1 pre2 start2 start1 bad1 bad2 good2 good1 spawned1 spawned2', 'same'],
    // No spawn's PostToolUse at all (Codex's documented hooks): the results still name their tasks.
    ['pre1 pre2 start2 start1 good2 none1 good1', 'same'],
    // A subagent starting before any spawn named an agent takes the oldest section by its type; that
    // section's spawn then names its own agent, which starts after: that agent takes its own section
    // all the same, and the other subagent's own section reaches no one.
    ['pre1 pre2 start2 spawned1 start1 good2 good1', 'same'],
    ['pre1 pre2 start2 spawned1 start1 good1 good2', 'same'],
    ['pre1 pre2 start2 spawned1 start1 spawned2 good2 good1', 'same'],
    ['pre1 pre2 start2 spawned1 start1 good1 spawned2 good2', 'same'],
    ['pre1 pre2 start2 spawned1 spawned2 start1 good1 good2', 'same'],
    ['pre2 pre1 start1 spawned2 start2 good1 good2', 'same'],
    ['pre2 pre1 start1 spawned2 spawned1 start2 none1 good2 good1', 'same'],
    ['pre1 pre2 start2 spawned1 none2 start1 none1 good2 late good1', 'same'],
    ['pre1 pre2 start2 start2 spawned1 start1 start1 start2 bad1 good1 late none2 good2', 'same'],
  ];

  it.each(orderings)(
    'orderings: %s (%s types): each answer recorded once under its task, each section its own',
    async (ordering, types) => {
      // The seeds are run once, for all orderings (`afterSeeds`).
      const dir = tempDir('sequence-');
      let now = 0;
      const advance = (ms: number) => (now += ms);
      const { send, handed } = handing(inProcess({ cwd: dir, projectDir: dir, clock: () => (now += 1000) }));
      const seeds = [seedCall(0, 'worker'), seedCall(1, 'worker')];
      const seeded = await afterSeeds(
        'codex orderings',
        (to, at) => ({ host: codex({ send: to, sessionId: SESSION, cwd: at }) }),
        async ({ host }) => {
          for (const call of seeds) await run(host, call);
        },
        { dir, send, handed },
      );
      const { host } = seeded;
      now = seeded.now;
      const first = workCall(2, 0, 'golf/seven.swift', 'worker');
      const second = workCall(3, 1, 'hotel/eight.php', types === 'distinct' ? 'explorer' : 'worker');
      const calls = types === 'one' ? [first] : [first, second];
      const steps = ordering.split(' ') as ReadonlyArray<Step>;
      for (const step of steps) {
        if (step === 'late') {
          advance(11 * 60_000);
          continue;
        }
        const call = step.endsWith('1') ? first : second;
        const event = step.slice(0, -1) as 'pre' | 'spawned' | 'start' | 'none' | 'bad' | 'good';
        if (event === 'pre' || event === 'spawned' || event === 'start') await host[event](call);
        else if (event === 'none') await host.stop(call, 'Looking at the code first.');
        else if (event === 'bad')
          await host.stop(call, call.answer.replace('"status": "completed",', '"status": "completed"'));
        else await host.stop(call);
      }
      // Every answer once, under its own task, none lost, none under the other's.
      expectOwnResults(dir, [...seeds, ...calls]);
      const results = readFileSync(logOf(dir), 'utf8')
        .split('\n')
        .filter((line) => line.includes('"type":"dispatch"'));
      expect(results).toHaveLength(seeds.length + calls.length);
      // The section each subagent takes at its first start, as docs/hooks.md says: of distinct types,
      // or where its spawn named it before it started, its own; else the oldest (in the order of the
      // spawns) that no spawn has named an agent for yet and no subagent took. Subagents of one type
      // that start before their spawns named them may so take each other's, and a section taken so
      // that a spawn then names its own agent for is handed out twice: by the guess, and to that agent.
      const at = (step: Step) => steps.indexOf(step);
      const n = (call: Call): 1 | 2 => (call === first ? 1 : 2);
      const before = (step: Step, index: number) => at(step) >= 0 && at(step) < index;
      const spawns = calls.map(n).sort((a, b) => at(`pre${a}`) - at(`pre${b}`));
      const took = (agent: 1 | 2): 1 | 2 | undefined => {
        const started = at(`start${agent}`);
        if (types !== 'same' || before(`spawned${agent}`, started)) return agent;
        const other = agent === 1 ? 2 : 1;
        return spawns.find(
          (d) => !before(`spawned${d}`, started) && !(before(`start${other}`, started) && took(other) === d),
        );
      };
      const own = calls.filter((call) => took(n(call)) === n(call));
      const takers = (call: Call) => calls.filter((agent) => took(n(agent)) === n(call));
      expectHandedAsReplayed({
        log: readFileSync(logOf(dir), 'utf8'),
        given: host.given,
        handed,
        own: [...seeds, ...own],
        unreceived: calls.filter((call) => takers(call).length === 0).map(taskOf),
        twice: calls.filter((call) => takers(call).length === 2).map(taskOf),
      });
      const { prompts } = replayOf(dir);
      for (const call of [...seeds, ...own]) {
        const section = prompts
          .filter((prompt) => prompt.taskId === taskOf(call))
          .map((prompt) => prompt.sessionContext);
        expect(section, `the prompt of task ${taskOf(call)}`).toHaveLength(1);
        expect([...new Set(host.given.get(call.toolUseId)?.sections)], `the sections given to ${call.agentId}`).toEqual(
          section[0] === '' ? [] : section,
        );
      }
      // A subagent that took another's section is told of once, where a spawn shows it: its own, or
      // that of the section it took.
      const mismatched = calls.filter((call) => {
        const section = took(n(call));
        return section !== undefined && section !== n(call) && [n(call), section].some((d) => at(`spawned${d}`) >= 0);
      });
      const told = host.notices.flatMap((notice) => notice.match(/section_mismatch: /gu) ?? []);
      expect(told, host.notices.join('\n')).toHaveLength(mismatched.length);
      expect(replayOf(dir).errors).toEqual([]);
    },
  );
});

describe('a Claude Code call the hooks file knows nothing of (its PreToolUse never seen)', { timeout: 120_000 }, () => {
  /**
   * The events around the call: `stop` its subagent's stop, `end` its `PostToolUse`, `wait` the
   * `PreToolUse` of another call whose subagent is still to start (a stop is then kept for its
   * call to name it), `late` 11 minutes passing (past that wait), `expire` those and another call,
   * `bare` its `PostToolUse` naming no agent (the older `Task` tool).
   */
  type Step = 'stop' | 'end' | 'wait' | 'late' | 'expire' | 'bare';
  // The answer is recorded once: under the call's task where its end names it first, else under
  // the agent id its stop (or the stop's expiry) recorded it under before the end came.
  const orderings: ReadonlyArray<readonly [ReadonlyArray<Step>, string]> = [
    [['stop', 'end'], 'aunseen'],
    [['end', 'stop'], '9'],
    [['wait', 'stop', 'end'], '9'],
    [['wait', 'end', 'stop'], '9'],
    [['wait', 'stop', 'expire', 'end'], 'aunseen'],
    [['wait', 'stop', 'late', 'end'], '9'],
    [['wait', 'stop', 'end', 'expire'], '9'],
    [['end', 'expire', 'stop'], '9'],
    [['stop', 'expire', 'end'], 'aunseen'],
    [['wait', 'stop', 'bare', 'expire'], '9'],
  ];

  it.each(orderings)('%j records its answer once, under task %s', async (steps, taskId) => {
    const dir = tempDir('sequence-');
    let now = Date.parse('2026-03-02T10:00:00Z');
    const hook = inProcess({ cwd: dir, projectDir: dir, clock: () => (now += 1000) });
    const unseen = { ...workCall(9, 0, 'zulu/unseen.txt'), agentId: 'aunseen' };
    // The hooks were added after this call was made: its PreToolUse never reached them.
    const send: Send = (payload) =>
      payload['hook_event_name'] === 'PreToolUse' && payload['tool_use_id'] === unseen.toolUseId
        ? Promise.resolve({ output: undefined, stderr: '' })
        : hook(payload);
    const host = claudeCode({ send, sessionId: SESSION, cwd: dir });
    await seed(host, 1);
    await host.pre(unseen);
    let others = 0;
    const step: Readonly<Record<Step, () => Promise<unknown>>> = {
      stop: () => host.stop(unseen),
      end: () => host.finished(unseen),
      bare: () =>
        send({
          session_id: SESSION,
          cwd: dir,
          hook_event_name: 'PostToolUse',
          tool_name: 'Task',
          tool_input: { description: 'Task 9', prompt: unseen.prompt, subagent_type: unseen.agentType },
          tool_use_id: unseen.toolUseId,
          tool_response: { status: 'completed', content: [{ type: 'text', text: unseen.answer }] },
        }),
      wait: () => host.pre(workCall(20 + (others += 1), 0, 'yankee/other.txt')),
      late: async () => (now += 11 * 60_000),
      expire: async () => {
        now += 11 * 60_000;
        await step.wait();
      },
    };
    for (const name of steps) await step[name]();
    const lines = readFileSync(logOf(dir), 'utf8')
      .split('\n')
      .filter((line) => line.includes('"type":"dispatch"') && line.includes('zulu/unseen.txt'))
      .map((line) => (JSON.parse(line) as { taskId: string }).taskId);
    expect(lines).toEqual([taskId]);
    expect(replayOf(dir).errors).toEqual([]);
  });
});

describe('hook processes whose clocks disagree', { timeout: 120_000 }, () => {
  it("a later result recorded by a hook whose clock is an hour behind supersedes the earlier one's facts", async () => {
    const dir = tempDir('sequence-');
    // One machine's hooks and another's (or one clock stepped back an hour) on one session's log.
    const hostAt = (start: string) => {
      let now = Date.parse(start);
      return claudeCode({
        send: inProcess({ cwd: dir, projectDir: dir, clock: () => (now += 1000) }),
        sessionId: SESSION,
        cwd: dir,
      });
    };
    await hostAt('2026-03-02T10:00:00Z').foreground(workCall(1, 0, 'golf/seven.swift'));
    await hostAt('2026-03-02T09:00:00Z').foreground(workCall(2, 1, 'golf/seven.swift'));
    const { store, report } = replayHistory(readFileSync(logOf(dir), 'utf8'));
    expect(report.errors).toEqual([]);
    const modifiers = selectValidFacts(store)
      .filter(({ subject, relation }) => subject === 'golf/seven.swift' && relation === 'modified_by')
      .map(({ object }) => object);
    expect(modifiers).toEqual(['task:2']);
  });
});

/** A Claude Code host that `honours` or `ignores` the rewritten prompt, or Codex. */
type HostKind = 'honours' | 'ignores' | 'codex';

/**
 * A host of `kind` in `dir`, sending through `send`, after three calls of type `worker` whose
 * results are the facts later sections hold (`afterSeeds`: made once per kind): the host, those
 * calls, the tasks whose section was lost (on a host that ignores the rewrite, the call that shows
 * it loses its own, and is told), and the hooks' clock after them.
 */
const seededWorkers = async (kind: HostKind, place: { dir: string; send: Send; handed: Handed[] }) => {
  const seeds = [seedCall(0, 'worker'), seedCall(1, 'worker'), workCall(5, 0, 'mike/shown.txt', 'worker')];
  const { claude, cx, host, now } = await afterSeeds(
    kind,
    (send, dir) => {
      const claude =
        kind === 'codex'
          ? undefined
          : claudeCode({ send, sessionId: SESSION, cwd: dir, honoursRewrite: kind === 'honours' });
      const cx = kind === 'codex' ? codex({ send, sessionId: SESSION, cwd: dir }) : undefined;
      return { claude, cx, host: (claude ?? cx)! };
    },
    async ({ claude, cx }) => {
      for (const call of seeds)
        if (claude !== undefined) await claude.foreground(call);
        else {
          await cx!.pre(call);
          await cx!.start(call);
          await cx!.stop(call);
        }
    },
    place,
  );
  const lost = host.notices.flatMap((notice) => {
    const task = /rewrite_ignored: .* task (\S+) started without/u.exec(notice)?.[1];
    return task === undefined ? [] : [task];
  });
  return { claude, cx, host, seeds, lost, now };
};

describe.skipIf(process.platform === 'win32')(
  'failure paths: what each subagent received is what replay of the log shows',
  { timeout: 120_000 },
  () => {
    /**
     * The events of calls 1 and 2 (one type, `worker`) on a Claude Code host that `honours` or
     * `ignores` the rewritten prompt, or on `codex`: `pre` the call's PreToolUse, `start` its
     * subagent's SubagentStart, `good` its stop with the answer, `end` the PostToolUse of a
     * foreground call, `launched` that of a call sent to the background, `spawned` Codex's spawn
     * returning with the agent's id. `jam` makes the hooks file one it never writes (a hard link to
     * it, as a full disk would; `free` undoes it), `lock` the session log (`open` undoes it), and
     * `late` is 11 minutes passing: a Claude Code call waits on the user's permission before its
     * subagent starts (a Codex subagent starts at once). The last column lists the tasks whose
     * prompt's section no subagent receives, as docs/hooks.md says: a section a subagent would take
     * by its type at a start the hooks file could not record is not handed out (the next subagent
     * of that type would be handed it again), and on a host that ignores the rewrite the subagent
     * of a call made after one the user denied takes the denied call's (`section_mismatch`).
     */
    type Step =
      | `${'pre' | 'start' | 'good' | 'end' | 'launched' | 'spawned'}${1 | 2}`
      | 'late'
      | 'jam'
      | 'free'
      | 'lock'
      | 'open';
    const cases: ReadonlyArray<readonly [string, HostKind, ReadonlyArray<string>]> = [
      ['jam pre1 free start1 good1 end1', 'honours', []],
      ['jam pre1 free start1 good1 end1', 'ignores', []],
      ['jam pre1 free start1 good1', 'codex', []],
      ['jam pre1 free pre1 start1 good1 end1', 'honours', []],
      ['jam pre1 free pre1 start1 good1 end1', 'ignores', []],
      ['jam pre1 start1 good1 end1 free pre2 start2 good2 end2', 'ignores', []],
      ['pre1 jam start1 free good1 end1', 'ignores', ['2']],
      ['pre1 jam start1 free good1', 'codex', ['2']],
      ['pre1 jam start1 free start1 good1', 'codex', []],
      ['pre1 spawned1 jam start1 free good1', 'codex', []],
      ['pre1 launched1 jam start1 free good1', 'ignores', []],
      ['pre1 start1 jam good1 end1 free', 'ignores', []],
      ['lock pre1 open start1 good1 end1', 'honours', []],
      ['lock pre1 open start1 good1 end1', 'ignores', []],
      ['lock pre1 open start1 good1', 'codex', []],
      ['lock pre1 open pre1 start1 good1 end1', 'honours', []],
      ['lock pre1 open pre1 start1 good1 end1', 'ignores', []],
      ['pre1 lock start1 good1 end1 open', 'ignores', []],
      ['pre1 lock start1 open good1', 'codex', []],
      ['pre1 pre1 start1 start1 good1 end1 end1', 'ignores', []],
      ['pre1 late start1 good1 end1', 'honours', []],
      ['pre1 late start1 good1 end1', 'ignores', []],
      ['pre1 pre1 late start1 start1 good1 end1 end1', 'ignores', []],
      ['pre1 late launched1 start1 good1', 'ignores', []],
      ['pre1 late pre2 start1 start2 good1 end1 good2 end2', 'ignores', []],
      ['pre1 late pre2 start2 good2 end2 start1 good1 end1', 'ignores', []],
      // Call 1 denied: on a host that ignores the rewrite, call 2's subagent takes its section.
      ['pre1 pre2 start2 good2 end2', 'honours', []],
      ['pre1 pre2 start2 good2 end2', 'ignores', ['3']],
      ['pre1 late pre2 start2 good2 end2', 'ignores', ['2']],
    ];

    it.each(cases)('%s (%s)', async (ordering, kind, unreceived) => {
      const dir = tempDir('sequence-');
      let now = 0;
      const { send, handed } = handing(inProcess({ cwd: dir, projectDir: dir, clock: () => (now += 1000) }));
      const { claude, cx, host, seeds, lost, now: seeded } = await seededWorkers(kind, { dir, send, handed });
      now = seeded;
      const calls = [workCall(2, 0, 'golf/seven.swift', 'worker'), workCall(3, 1, 'hotel/eight.php', 'worker')];
      const log = logOf(dir);
      for (const step of ordering.split(' ') as ReadonlyArray<Step>) {
        if (step === 'late') now += 11 * 60_000;
        else if (step === 'jam' || step === 'lock') linkSync(step === 'jam' ? `${log}.hooks` : log, join(dir, step));
        else if (step === 'free' || step === 'open') unlinkSync(join(dir, step === 'free' ? 'jam' : 'lock'));
        else {
          const call = calls[Number(step.slice(-1)) - 1]!;
          const event = step.slice(0, -1) as 'pre' | 'start' | 'good' | 'end' | 'launched' | 'spawned';
          if (event === 'good') await host.stop(call);
          else if (claude !== undefined) {
            if (event === 'end') await claude.finished(call);
            else if (event !== 'spawned') await claude[event](call);
          } else if (event === 'pre' || event === 'start' || event === 'spawned') await cx![event](call);
        }
      }
      expectHandedAsReplayed({
        log: readFileSync(log, 'utf8'),
        given: host.given,
        handed,
        own: seeds.filter((call) => !lost.includes(taskOf(call))),
        unreceived: [...lost, ...unreceived],
      });
    });
  },
);

describe.skipIf(process.platform === 'win32')(
  'a hook process killed between the record of its call and the prompt line',
  { timeout: 120_000 },
  () => {
    /**
     * The events of calls 1 and 2 (one type, `worker`) on a Claude Code host that `honours` or
     * `ignores` the rewritten prompt, or on `codex`, as in the failure paths above. `kill` runs the
     * call's PreToolUse in a process killed (SIGKILL, a host's timeout, power lost) once the hooks
     * file took the record of its call and before the session wrote its prompt's line: the file is
     * left as `compile` leaves it there (the record of the call, nothing after it), the log without
     * the line, and the host gets no answer. `cut` kills it just after the line was written instead
     * (before the records that follow it). `other` is another writer of the session (the MCP
     * server) recording a prompt, which takes the line the killed process had planned.
     */
    type Step = `${'kill' | 'cut' | 'pre' | 'start' | 'good' | 'end' | 'spawned'}${1 | 2}` | 'other';
    // The last column lists the tasks whose prompt's section no subagent receives: a rewrite the
    // process was killed before printing, and the other writer's prompt (its caller takes its section).
    const cases: ReadonlyArray<readonly [string, HostKind, ReadonlyArray<string>]> = [
      ['kill1 start1 good1 end1', 'honours', []],
      ['kill1 start1 good1 end1', 'ignores', []],
      ['kill1 start1 good1', 'codex', []],
      ['kill1 pre1 start1 good1 end1', 'honours', []],
      ['kill1 pre1 start1 good1 end1', 'ignores', []],
      ['kill1 pre2 start1 good1 end1 start2 good2 end2', 'honours', []],
      ['kill1 pre2 start1 good1 end1 start2 good2 end2', 'ignores', []],
      ['kill1 pre2 start1 start2 good1 good2', 'codex', []],
      ['kill1 pre2 start2 start1 good2 good1', 'codex', []],
      ['kill1 pre2 spawned2 start2 start1 good2 good1', 'codex', []],
      ['kill1 other start1 good1 end1', 'ignores', ['9']],
      ['kill1 other start1 good1', 'codex', ['9']],
      ['cut1 start1 good1 end1', 'honours', ['2']],
      ['cut1 start1 good1 end1', 'ignores', []],
      ['cut1 start1 good1', 'codex', []],
      ['cut1 other start1 good1', 'codex', ['9']],
    ];

    it.each(cases)('%s (%s)', async (ordering, kind, unreceived) => {
      const dir = tempDir('sequence-');
      let now = 0;
      const log = logOf(dir);
      const hook = inProcess({ cwd: dir, projectDir: dir, clock: () => (now += 1000) });
      /** Where the next PreToolUse is killed: before its prompt's line (`kill`), after it (`cut`), or not. */
      let killed: 'kill' | 'cut' | undefined;
      const killable: Send = async (payload) => {
        const at = killed;
        killed = undefined;
        if (at === undefined) return hook(payload);
        // The session refuses the line (its log a hard link) once the hooks file took the record of the call.
        if (at === 'kill') linkSync(log, join(dir, 'lock'));
        await hook(payload);
        if (at === 'kill') unlinkSync(join(dir, 'lock'));
        // The process ends there: nothing it would have appended after the record of its call is in the file.
        const lines = readFileSync(`${log}.hooks`, 'utf8').split('\n');
        const own = lines.reduce(
          (last, line, i) =>
            line.includes('"type":"dispatch"') && line.includes(`"key":"${String(payload['tool_use_id'])}"`) ? i : last,
          -1,
        );
        expect(own).toBeGreaterThanOrEqual(0);
        writeFileSync(`${log}.hooks`, `${lines.slice(0, own + 1).join('\n')}\n`);
        return { output: undefined, stderr: '' };
      };
      const { send, handed } = handing(killable);
      const { claude, cx, host, seeds, lost, now: seeded } = await seededWorkers(kind, { dir, send, handed });
      now = seeded;
      const seen = host.notices.length;
      const calls = [workCall(2, 0, 'golf/seven.swift', 'worker'), workCall(3, 1, 'hotel/eight.php', 'worker')];
      for (const step of ordering.split(' ') as ReadonlyArray<Step>) {
        if (step === 'other') {
          const mcp = await openSession(SESSION, { cwd: dir, clock: () => (now += 1000) });
          if (E.isLeft(mcp)) throw new Error(mcp.left.message);
          const other = await mcp.right.compileContext({ taskId: '9', taskPrompt: `Extend ${FILES[1]!}.` });
          expect(E.isRight(other)).toBe(true);
          continue;
        }
        const call = calls[Number(step.slice(-1)) - 1]!;
        const event = step.slice(0, -1) as 'kill' | 'cut' | 'pre' | 'start' | 'good' | 'end' | 'spawned';
        if (event === 'kill' || event === 'cut') killed = event;
        if (event === 'good') await host.stop(call);
        else if (event === 'kill' || event === 'cut' || event === 'pre') await host.pre(call);
        else if (claude !== undefined) {
          if (event === 'end') await claude.finished(call);
          else if (event === 'start') await claude.start(call);
        } else if (event === 'start' || event === 'spawned') await cx![event](call);
      }
      const text = readFileSync(log, 'utf8');
      // The log and what each subagent received agree: no section of a prompt the log does not hold.
      expectHandedAsReplayed({
        log: text,
        given: host.given,
        handed,
        own: seeds.filter((call) => !lost.includes(taskOf(call))),
        unreceived: [...lost, ...unreceived],
      });
      // Each result is recorded once, under its own task.
      const answered = calls.filter((_, i) => ordering.includes(`good${i + 1}`));
      expectOwnResults(dir, [...seeds, ...answered]);
      // The host applied every rewrite it got: nothing says otherwise. (A process killed after the
      // line never printed its rewrite: the call's end finds the prompt ran without it, as on a host
      // that ignores rewrites, and says so.)
      const told = host.notices.slice(seen).filter((notice) => /rewrite_ignored|section_mismatch/u.test(notice));
      expect(told).toHaveLength(ordering.startsWith('cut') && kind === 'honours' ? 1 : 0);
    });
  },
);

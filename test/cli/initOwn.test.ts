/**
 * `fact-tracker init` on real projects whose settings hold hooks of the user's that mention
 * fact-tracker, or run it under events init writes no hook for: which handlers it takes for its
 * own (replaces), and which it leaves as written.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../tempDirs.js';
import { MAIN, runCli, runCliHere } from './runCli.js';

type Json = Record<string, unknown>;

const HOOK = `node ${MAIN} hook`;

/**
 * `fact-tracker init ... --project PROJECT` through the built router in this process: the many
 * cases here run the same compiled code the binary runs, without a process start each. The
 * binary itself runs where the process matters (`initBinary`).
 */
const init = (project: string, ...args: string[]) => runCliHere(['init', ...args, '--project', project]);
/** The same as the built binary, in a process of its own. */
const initBinary = (project: string, ...args: string[]) => runCli(['init', ...args, '--project', project]);

/** A project whose `.claude/settings.json` holds `settings`. */
const projectWith = (settings: Json): string => {
  const project = tempDir('init-own-');
  mkdirSync(join(project, '.claude'));
  writeFileSync(join(project, '.claude', 'settings.json'), JSON.stringify(settings));
  return project;
};

const settingsOf = (project: string): string => readFileSync(join(project, '.claude', 'settings.json'), 'utf8');

/** The commands of each event's handlers, in order. */
const commandsByEvent = (project: string): Record<string, string[]> =>
  Object.fromEntries(
    Object.entries((JSON.parse(settingsOf(project)) as { hooks: Record<string, Json[]> }).hooks).map(
      ([event, groups]) => [
        event,
        groups.flatMap((group) => (group['hooks'] as Json[]).map((handler) => handler['command'] as string)),
      ],
    ),
  );

describe.concurrent('fact-tracker init and the hooks that are not its own', { timeout: 120_000 }, () => {
  it("keeps the user's hooks that only name fact-tracker in their arguments, and writes its own beside them", async () => {
    const mine = ['echo fact-tracker hook ran', 'logger "fact-tracker hook"', 'grep fact-tracker hook.log'];
    const handlers = mine.map((command) => ({ type: 'command', command }));
    const project = projectWith({
      hooks: {
        PreToolUse: [{ matcher: 'Agent|Task', hooks: handlers }],
        SubagentStop: [{ hooks: handlers }],
      },
    });
    const run = await initBinary(project, 'claude');
    expect([run.status, run.stderr]).toEqual([0, '']);
    expect(commandsByEvent(project)).toEqual({
      PreToolUse: [...mine, HOOK],
      SubagentStop: [...mine, HOOK],
      PostToolUse: [HOOK],
      PostToolUseFailure: [HOOK],
      SubagentStart: [HOOK],
    });
    const written = settingsOf(project);
    expect((await init(project, 'claude')).stdout).toMatch(/^unchanged {2}\.claude\/settings\.json\n/u);
    expect(settingsOf(project)).toBe(written);
  });

  it('keeps as written, and names, a fact-tracker hook under an event init writes no hook for', async () => {
    const notification = { hooks: [{ type: 'command', command: 'npx fact-tracker hook', timeout: 5 }] };
    // A store in a form init cannot read stops a run only in a hook init would rewrite.
    const prompt = {
      hooks: [{ type: 'command', command: 'cd "$CLAUDE_PROJECT_DIR" && npx fact-tracker hook --store /srv/t' }],
    };
    const project = projectWith({
      hooks: {
        Notification: [notification],
        UserPromptSubmit: [prompt],
        SubagentStart: [{ hooks: [{ type: 'command', command: 'npx fact-tracker hook' }] }],
      },
    });
    const run = await init(project, 'claude');
    expect([run.status, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toContain(
      '\nKept as written: the fact-tracker hook commands of .claude/settings.json under Notification, UserPromptSubmit, events init writes no hook for.\n',
    );
    const hooks = (JSON.parse(settingsOf(project)) as { hooks: Record<string, unknown> }).hooks;
    expect([hooks['Notification'], hooks['UserPromptSubmit']]).toEqual([[notification], [prompt]]);
    expect(commandsByEvent(project)['SubagentStart']).toEqual([HOOK]);
    const written = settingsOf(project);
    const again = await init(project, 'claude');
    expect(again.stdout).toMatch(/^unchanged {2}\.claude\/settings\.json\n[^]*\nKept as written: /u);
    expect(settingsOf(project)).toBe(written);
  });

  it("keeps a handler running fact-tracker hook among the user's commands as written, adds no second hook under its event, and says so", async () => {
    const shared = ['fact-tracker hook; ./scripts/notify.sh "$?"', 'if ! fact-tracker hook; then ./page.sh; fi'];
    const preToolUse = [{ matcher: 'Agent|Task', hooks: shared.map((command) => ({ type: 'command', command })) }];
    const project = projectWith({
      hooks: {
        PreToolUse: preToolUse,
        SubagentStop: [{ hooks: [{ type: 'command', command: 'notify-send $(date +%T) fact-tracker hook finished' }] }],
        SubagentStart: [
          { hooks: [{ type: 'command', command: "bash -c 'set -e\nnpx --no-install fact-tracker hook'" }] },
        ],
      },
    });
    const run = await init(project, 'claude');
    expect([run.status, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toContain(
      '\nKept as written: the hook commands of .claude/settings.json under PreToolUse, an event where they run fact-tracker hook among commands of your own; init writes no second hook there (edit them to change its store or options).\n',
    );
    expect(run.stdout).toContain(
      '\nLeft as your own: the hook commands of .claude/settings.json under SubagentStop, an event where they name fact-tracker hook without running it as the hook; init writes its own beside them.\n',
    );
    expect((JSON.parse(settingsOf(project)) as { hooks: Record<string, unknown> }).hooks['PreToolUse']).toEqual(
      preToolUse,
    );
    expect(commandsByEvent(project)).toEqual({
      PreToolUse: shared,
      SubagentStop: ['notify-send $(date +%T) fact-tracker hook finished', HOOK],
      SubagentStart: [HOOK],
      PostToolUse: [HOOK],
      PostToolUseFailure: [HOOK],
    });
    const written = settingsOf(project);
    expect((await init(project, 'claude')).stdout).toMatch(/^unchanged {2}\.claude\/settings\.json\n/u);
    expect(settingsOf(project)).toBe(written);
  });

  it('refuses, writing nothing, a kept line whose hook takes its store from a command before it, and writes with --store', async () => {
    const lines = [
      '[ -f .env ] && . ./.env; fact-tracker hook; ./notify.sh',
      'set -a; bash -c \'eval "$(cat .env)"; fact-tracker hook && ./notify.sh\'',
      // Run through a program that loads variables for it (a `.env`, a secrets manager), first or after another wrapper.
      'dotenv -- fact-tracker hook; ./notify.sh',
      'op run --env-file=.env -- fact-tracker hook && ./notify.sh',
      './notify.sh; bash -c \'doppler run --command "fact-tracker hook"\'',
      'timeout 30 dotenv -- fact-tracker hook; ./notify.sh',
      'node --env-file=.env node_modules/session-fact-tracker/dist/cli/main.js hook; ./notify.sh',
      "NODE_OPTIONS='-r dotenv/config' fact-tracker hook; ./notify.sh",
      // `--store` that is not the hook's.
      'NOTE="see --store docs" dotenv -- fact-tracker hook; ./notify.sh',
    ];
    for (const command of lines) {
      const settings = { hooks: { SubagentStart: [{ hooks: [{ type: 'command', command }] }] } };
      const project = projectWith(settings);
      const run = await init(project, 'claude');
      expect([run.status, run.stdout, run.stderr.split('\n').length]).toEqual([1, '', 2]);
      expect(run.stderr).toMatch(/may set its store .*nothing was written\. Run init again with --store/u);
      expect(JSON.parse(settingsOf(project))).toEqual(settings);
      const given = await init(project, 'claude', '--store', './facts');
      expect([given.status, commandsByEvent(project)['SubagentStart']]).toEqual([0, [command]]);
    }
    // A line wholly ours but for setting up the shell (node on PATH through nvm or volta) is
    // replaced by init's own hook, as any line wholly ours is, naming what it drops.
    for (const command of [
      'source ~/.nvm/nvm.sh && npx --no-install fact-tracker hook',
      'export PATH="$HOME/.volta/bin:$PATH" && fact-tracker hook',
      '. "$HOME/.nvm/nvm.sh"; npx --no-install fact-tracker hook',
      'source .env && npx --no-install fact-tracker hook',
    ]) {
      const project = projectWith({ hooks: { SubagentStart: [{ hooks: [{ type: 'command', command }] }] } });
      const run = await init(project, 'claude');
      expect(run.status).toBe(0);
      expect(run.stderr).toMatch(/which init does not keep: a command init cannot read/u);
      const written = commandsByEvent(project)['SubagentStart'];
      expect(written).toHaveLength(1);
      expect(written).not.toEqual([command]);
    }
    // A line whose hook runs before the command, or beside one that cannot set its store, is kept without asking.
    for (const command of [
      './backup.sh; fact-tracker hook',
      'fact-tracker hook && ./notify.sh; source .env',
      // Wrappers and runners that load no variables, and a store given as an option, which wins over any.
      'timeout 30 fact-tracker hook; ./notify.sh',
      'flock /tmp/ft.lock nice -n 5 fact-tracker hook; ./notify.sh',
      'npm exec fact-tracker hook; ./notify.sh',
      "npx -c 'fact-tracker hook'; ./notify.sh",
      'dotenv -- fact-tracker hook --store .fact-tracker/sessions; ./notify.sh',
      // Words that only look like a loader's: a value of an option, a file, a variable's value.
      'flock /tmp/dotenv.lock fact-tracker hook; ./notify.sh',
      'sudo -u op fact-tracker hook; ./notify.sh',
      'npx --prefix /home/u/src/dotenv fact-tracker hook; ./notify.sh',
      'LABEL=dotenv-free fact-tracker hook; ./notify.sh',
    ]) {
      const run = await init(
        projectWith({ hooks: { SubagentStart: [{ hooks: [{ type: 'command', command }] }] } }),
        'claude',
      );
      expect([run.status, run.stderr]).toEqual([0, '']);
    }
    // A hook given a folder after a sourced file, or after a command of the user's: the folder is its
    // store whatever comes before, so init writes it for the other hooks, and --store another is refused.
    for (const kept of [
      'source .env; fact-tracker hook --store ./s; ./notify.sh',
      './scripts/backup.sh; fact-tracker hook --store ./s',
    ]) {
      const project = projectWith({ hooks: { SubagentStart: [{ hooks: [{ type: 'command', command: kept }] }] } });
      expect((await init(project, 'claude', '--store', './other')).status).toBe(1);
      const run = await init(project, 'claude');
      const written = commandsByEvent(project);
      expect([run.status, run.stderr, written['SubagentStart']]).toEqual([0, '', [kept]]);
      expect(written['PostToolUse']?.[0]).toContain('./s');
    }
    // A store init can compare is compared, whatever comes before the hook: a URL a loader may complete,
    // a relative folder after a cd (the hook reads it from the project); hooks given two stores never pass.
    for (const [kept, same] of [
      [
        'dotenv -- fact-tracker hook --store postgres://agent@db.internal/memory; ./notify.sh',
        'postgres://agent@db.internal/memory',
      ],
      ['cd sub && fact-tracker hook --store ./s; ./notify.sh', './s'],
      ['./x.sh && fact-tracker hook --store ./a || fact-tracker hook --store ./b', undefined],
    ] as const) {
      const project = projectWith({ hooks: { SubagentStart: [{ hooks: [{ type: 'command', command: kept }] }] } });
      expect((await init(project, 'claude', '--store', './other')).status).toBe(1);
      if (same === undefined) expect((await init(project, 'claude', '--store', './a')).status).toBe(1);
      else expect((await init(project, 'claude', '--store', same)).status).toBe(0);
    }
    // A store written with a variable cannot be compared with any: such a line never passes (edit it).
    const variable = 'source .env && fact-tracker hook --store "$FT_STORE"; ./notify.sh';
    const project = projectWith({ hooks: { SubagentStart: [{ hooks: [{ type: 'command', command: variable }] }] } });
    expect((await init(project, 'claude')).status).toBe(1);
    expect((await init(project, 'claude', '--store', './s')).status).toBe(1);
    // One folder written two ways: the hooks of one line agree.
    const twice = 'fact-tracker hook --store ./s; ./notify.sh; fact-tracker hook --store s';
    const run = await init(
      projectWith({ hooks: { SubagentStart: [{ hooks: [{ type: 'command', command: twice }] }] } }),
      'claude',
      '--store',
      './s',
    );
    expect(run.status).toBe(0);
    // A file named like a loader is no loader.
    const locked = await init(
      projectWith({
        hooks: {
          SubagentStart: [{ hooks: [{ type: 'command', command: 'flock /tmp/op fact-tracker hook; ./n.sh' }] }],
        },
      }),
      'claude',
    );
    expect([locked.status, locked.stderr]).toEqual([0, '']);
  });

  it('refuses, writing nothing, to write another store than the one a line it keeps as written uses', async () => {
    const shared = 'fact-tracker hook; ./notify.sh';
    const cases: ReadonlyArray<[Record<string, unknown>, ReadonlyArray<string>]> = [
      // The kept line uses the default store, another hook names one.
      [
        {
          PreToolUse: [{ hooks: [{ type: 'command', command: shared }] }],
          PostToolUse: [{ hooks: [{ type: 'command', command: 'fact-tracker hook --store .other' }] }],
        },
        [],
      ],
      // The kept line uses the default store, --store names another.
      [{ PreToolUse: [{ hooks: [{ type: 'command', command: shared }] }] }, ['--store', './third']],
      // The kept line names a store, --store another.
      [
        { PreToolUse: [{ hooks: [{ type: 'command', command: 'fact-tracker hook --store ./a; ./notify.sh' }] }] },
        ['--store', './b'],
      ],
    ];
    for (const [hooks, args] of cases) {
      const project = projectWith({ hooks });
      const run = await init(project, 'claude', ...args);
      expect([run.status, run.stdout, run.stderr.split('\n').length]).toEqual([1, '', 2]);
      expect(run.stderr).toMatch(/keeps as written uses another store .*nothing was written/u);
      expect(JSON.parse(settingsOf(project))).toEqual({ hooks });
    }
    // The same store as the kept line's: written.
    const same = projectWith({
      hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'fact-tracker hook --store ./a; ./notify.sh' }] }] },
    });
    expect((await init(same, 'claude', '--store', './a')).status).toBe(0);
  });

  it('warns, never printing the value, that a line it keeps as written sets a password', async () => {
    const command = 'PGPASSWORD=s3cretpw npx --no-install fact-tracker hook --store postgres://u@db/x; ./notify.sh';
    const project = projectWith({ hooks: { SubagentStart: [{ hooks: [{ type: 'command', command }] }] } });
    const run = await init(project, 'claude');
    expect([run.status, run.stderr]).toEqual([
      0,
      'fact-tracker init: warning: a hook command of .claude/settings.json that init keeps as written sets PGPASSWORD= to a secret written in the line, which a settings file meant to be committed must not hold: set it in your environment instead (for PostgreSQL, PGPASSWORD, PGPASSFILE or ~/.pgpass; see docs/team.md)\n',
    ]);
    expect(run.stdout).not.toContain('s3cretpw');
    expect(commandsByEvent(project)['SubagentStart']).toEqual([command]);
    const referenced = 'PGPASSWORD="$PW" fact-tracker hook; ./notify.sh';
    const quiet = await init(
      projectWith({ hooks: { SubagentStart: [{ hooks: [{ type: 'command', command: referenced }] }] } }),
      'claude',
    );
    expect([quiet.status, quiet.stderr]).toEqual([0, '']);
  });

  it('writes back the hooks under an event named __proto__ it says it kept', async () => {
    const project = tempDir('init-own-');
    mkdirSync(join(project, '.claude'));
    writeFileSync(
      join(project, '.claude', 'settings.json'),
      '{"hooks":{"__proto__":[{"hooks":[{"type":"command","command":"fact-tracker hook"}]}]}}',
    );
    const run = await init(project, 'claude');
    expect([run.status, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toContain(
      'Kept as written: the fact-tracker hook commands of .claude/settings.json under __proto__',
    );
    expect(commandsByEvent(project)['__proto__']).toEqual(['fact-tracker hook']);
  });
});

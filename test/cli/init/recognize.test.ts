/** `runsFactTracker`: a hook command is fact-tracker's by the program it runs, never by words in another program's arguments. */
import { describe, expect, it } from 'vitest';
import { isFactTrackerHook, runsFactTracker } from '../../../src/cli/init/recognize.js';

/** The entry points of the package in these examples: the `dist/cli/main.js` under `/opt/ft`. */
const isEntryPoint = ({ text }: { text: string }): boolean => text === '/opt/ft/dist/cli/main.js';
const runsHook = (line: string): boolean => runsFactTracker(line, 'hook', isEntryPoint);

describe('runsFactTracker', () => {
  it("takes no command for fact-tracker's that only names it in another program's arguments", () => {
    const theUsers = [
      'echo fact-tracker hook ran',
      'logger "fact-tracker hook"',
      'grep fact-tracker hook.log',
      'grep "fact-tracker hook" log.txt',
      "notify-send 'fact-tracker hook' done",
      'printf "%s\\n" fact-tracker hook >> seen.log',
      'FOO=1 echo fact-tracker hook',
      "sh -c 'echo fact-tracker hook'",
      'node -e "require(1)" /opt/ft/dist/cli/main.js hook',
      'node /opt/other/dist/cli/main.js hook',
      'timeout 30 echo fact-tracker hook',
      'op run -- echo fact-tracker hook',
      'echo done > fact-tracker hook',
      'echo fact-tracker hook # fact-tracker hook',
      'fact-tracker mcp',
      'fact-tracker-hook hook',
      'my-fact-tracker hook',
      // A substitution or an arithmetic stays in its word: the command is notify-send's, echo's.
      'notify-send $(date +%T) fact-tracker hook finished',
      'echo $((1+1)) fact-tracker hook',
      'diff <(cat a) fact-tracker hook',
      'command -v fact-tracker hook',
      'type fact-tracker hook',
      'env echo fact-tracker hook',
      'npx -p fact-tracker hook',
      'fact-tracker\nhook',
      'fact-tracker\u00a0hook',
      '[ -f x ] || echo missing fact-tracker hook',
    ];
    expect(theUsers.filter(runsHook)).toEqual([]);
  });

  it('takes for its own a command whose program is fact-tracker hook, past assignments, known wrappers and shells', () => {
    const ours = [
      'fact-tracker hook',
      'npx fact-tracker hook',
      'npx --no-install fact-tracker hook --max-facts 3',
      'npx -y -p session-fact-tracker fact-tracker hook',
      'npm exec --no -- fact-tracker hook',
      'npm x fact-tracker hook',
      'pnpm exec fact-tracker hook',
      'yarn fact-tracker hook',
      'FOO=1 BAR="a b" npx fact-tracker hook',
      'exec env -u HOME FACT_TRACKER_STORE=/srv/t fact-tracker hook',
      'node /opt/ft/dist/cli/main.js hook',
      'nodejs --env-file=.env -r ./setup.cjs /opt/ft/dist/cli/main.js hook',
      "/usr/local/bin/node '/opt/ft/dist/cli/main.js' hook --layout grouped",
      'node node_modules/.bin/fact-tracker hook',
      '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/fact-tracker hook',
      '/usr/local/bin/fact-tracker hook',
      'op run --env-file .env.team -- npx --no-install fact-tracker hook',
      'op run --account my-team --no-masking -- fact-tracker hook',
      'doppler run --project facts --config dev -- fact-tracker hook',
      '/opt/bin/dotenv -e .env -- npx fact-tracker hook',
      'timeout -k 5 30 nice -n 10 nohup fact-tracker hook',
      'sh -c "FACT_TRACKER_STORE=/srv/t npx fact-tracker hook"',
      "bash -lc 'exec npx fact-tracker hook'",
      'cd "$CLAUDE_PROJECT_DIR" && npx fact-tracker hook --store /srv/team',
      'npx fact-tracker hook 2>>/tmp/hook.log || true',
      'if true; then fact-tracker hook; fi',
      // What no list of wrappers named: a newline, a comment, a redirection first, any wrapper, any shell.
      "bash -c 'set -e\nnpx --no-install fact-tracker hook'",
      'cd "$CLAUDE_PROJECT_DIR"\nnpx --no-install fact-tracker hook',
      '# the tracker\nnpx --no-install fact-tracker hook',
      "/opt/homebrew/bin/bash -c 'npx --no-install fact-tracker hook'",
      "busybox sh -c 'fact-tracker hook'",
      "fish -c 'fact-tracker hook'",
      "sh -o pipefail -c 'fact-tracker hook'",
      "bash -euo pipefail -c 'fact-tracker hook'",
      "bash -c -- 'fact-tracker hook'",
      'sh -c \'fact-tracker hook "$@"\' _ --store /srv/facts',
      'npx --prefix "$CLAUDE_PROJECT_DIR" --no-install fact-tracker hook',
      'npm --prefix "$CLAUDE_PROJECT_DIR" exec fact-tracker hook',
      'npm -s exec fact-tracker hook',
      'pnpm -C "$CLAUDE_PROJECT_DIR" exec fact-tracker hook',
      'pnpm --filter app exec fact-tracker hook',
      'yarn --cwd "$CLAUDE_PROJECT_DIR" fact-tracker hook',
      'yarn workspace app fact-tracker hook',
      'bun x fact-tracker hook',
      'npx.cmd --no-install fact-tracker hook',
      '2>/dev/null npx --no-install fact-tracker hook',
      'FOO=1 2>/dev/null fact-tracker hook',
      'sudo -u x fact-tracker hook',
      'direnv exec . fact-tracker hook',
      'mise exec -- fact-tracker hook',
      'nix develop -c fact-tracker hook',
      'corepack pnpm exec fact-tracker hook',
      'nice -n 5 ionice -c3 chronic stdbuf -oL flock /tmp/ft.lock fact-tracker hook',
      'eval "fact-tracker hook"',
      "env -S 'fact-tracker hook'",
      "npx -c 'fact-tracker hook'",
      "doppler run --command 'fact-tracker hook'",
      'cmd /c fact-tracker hook',
      'pwsh -c "npx --no-install fact-tracker hook"',
      'npx --yes session-fact-tracker hook',
      'npx -y session-fact-tracker@1 hook',
      'node_modules/.bin/fact-tracker.cmd hook',
      'fact-tracker hook\r\n',
      // Whatever program runs it: these three were once read as the user's, `prettier`, `check.js` and `npm` the programs.
      'npx prettier fact-tracker hook',
      'node tools/check.js fact-tracker hook',
      'npm fact-tracker hook',
    ];
    expect(ours.filter((line) => !runsHook(line))).toEqual([]);
  });

  it('reads a word as a script only where a shell or runner takes one, and a quoted name as text given to a program', () => {
    const theUsers = [
      "curl -s -X POST -d 'fact-tracker hook failed' https://hooks.example.com/x",
      './notify.sh "fact-tracker hook started"',
      "gh issue comment 1 --body 'fact-tracker hook ran'",
      "tmux display-message 'fact-tracker hook ran'",
      "mail -s 'fact-tracker hook' me@example.com < /dev/null",
      "python3 scripts/notify.py --title 'fact-tracker hook'",
      "./notify.sh 'fact-tracker' 'hook'",
      './notify.sh "fact-tracker" hook \'started\'',
      "ssh host 'fact-tracker hook'",
    ];
    expect(theUsers.filter(runsHook)).toEqual([]);
    const ours = [
      "'fact-tracker' hook",
      '"$CLAUDE_PROJECT_DIR/node_modules/.bin/fact-tracker" hook',
      "npx --no-install 'fact-tracker' hook",
      "timeout 5 '/usr/local/bin/fact-tracker' hook",
      "bash -ec 'fact-tracker hook'",
      "bash -euc 'fact-tracker hook'",
      "sudo sh -c 'fact-tracker hook'",
      "su -c 'fact-tracker hook' me",
      "npm exec -c 'fact-tracker hook'",
      "nix develop -c -- 'fact-tracker hook'",
      "cmd /C 'fact-tracker hook'",
      "powershell -Command 'fact-tracker hook'",
      "doppler run --command='fact-tracker hook'",
      "env --split-string 'fact-tracker hook'",
      "eval 'fact-tracker' hook",
      'echo "$(bash -c \'fact-tracker hook\')"',
    ];
    expect(ours.filter((line) => !runsHook(line))).toEqual([]);
  });

  it("finds fact-tracker's hook shared with commands of the user's own, which init keeps as written", () => {
    const ownership = isFactTrackerHook('/nonexistent-project', {
      hook: 'npx --no-install fact-tracker hook',
      mcp: { command: 'npx', args: [] },
    });
    const shared = [
      'fact-tracker hook; ./scripts/notify.sh "$?"',
      'if ! fact-tracker hook; then ./scripts/page-oncall.sh; fi',
      './scripts/backup-transcript.sh; fact-tracker hook',
      'fact-tracker hook | tee -a /tmp/out.log',
      'echo "$(fact-tracker hook)"',
      "bash -c 'fact-tracker hook && ./notify.sh'",
    ];
    expect(shared.map(ownership)).toEqual(shared.map(() => 'shared'));
    expect(
      ['cd "$CLAUDE_PROJECT_DIR" && fact-tracker hook || true', 'npx --no-install fact-tracker hook'].map(ownership),
    ).toEqual([true, true]);
    expect(ownership('echo fact-tracker hook')).toBe(false);
  });
});

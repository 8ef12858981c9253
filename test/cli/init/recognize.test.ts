/** `runsFactTracker`: a hook command is fact-tracker's by the program it runs, never by words in another program's arguments. */
import { describe, expect, it } from 'vitest';
import { runsFactTracker } from '../../../src/cli/init/recognize.js';

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
      'npx prettier fact-tracker hook',
      'node tools/check.js fact-tracker hook',
      'node -e "require(1)" /opt/ft/dist/cli/main.js hook',
      'node /opt/other/dist/cli/main.js hook',
      'timeout 30 echo fact-tracker hook',
      'op run -- echo fact-tracker hook',
      'echo done > fact-tracker hook',
      'echo fact-tracker hook # fact-tracker hook',
      'fact-tracker mcp',
      'fact-tracker-hook hook',
      'my-fact-tracker hook',
      'npm fact-tracker hook',
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
    ];
    expect(ours.filter((line) => !runsHook(line))).toEqual([]);
  });
});

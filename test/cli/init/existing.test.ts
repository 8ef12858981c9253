/** Reading what the settings already give fact-tracker's commands: the shell's words, the store and the options. */
import { describe, expect, it } from 'vitest';
import { keptOptions, readCommandLine, readHooks, readMcpJsonServer } from '../../../src/cli/init/existing.js';
import { shellCommands } from '../../../src/cli/init/shellWords.js';

describe('reading the commands init rewrites', () => {
  it('splits a command line into simple commands and their words as a POSIX shell does', () => {
    const [first, ...others] = shellCommands(`A="x y" b\\ c 'd$e' "f\\"g" $H # note`);
    expect([first?.words, others]).toEqual([
      [
        { text: 'A=x y', expands: false },
        { text: 'b c', expands: false },
        { text: 'd$e', expands: false, quoted: true },
        { text: 'f"g', expands: false, quoted: true },
        { text: '$H', expands: true },
      ],
      [],
    ]);
    const words = (line: string) => shellCommands(line).map((command) => command.words.map(({ text }) => text));
    expect(words('npx fact-tracker hook && echo done')).toEqual([
      ['npx', 'fact-tracker', 'hook'],
      ['echo', 'done'],
    ]);
    // A newline ends a command, a comment ends at its line, and a redirection is no word of the command.
    expect(words('# note\nset -e\n2>/dev/null FOO=1 npx fact-tracker hook >>log')).toEqual([
      ['set', '-e'],
      ['FOO=1', 'npx', 'fact-tracker', 'hook'],
    ]);
    expect(shellCommands('fact-tracker hook 2>>/tmp/hook.log')[0]?.redirections).toEqual(['2>>/tmp/hook.log']);
    // Reserved words are no commands; a substitution stays in its word, its script kept.
    expect(words('if ! fact-tracker hook; then ./page.sh; fi')).toEqual([['fact-tracker', 'hook'], ['./page.sh']]);
    expect(shellCommands('notify-send $(date +%T) "<(x)" done')[0]?.words[1]).toEqual({
      text: '$(date +%T)',
      expands: true,
      scripts: ['date +%T'],
    });
  });

  it('reads the store by --store, --store=, --sessions-dir or FACT_TRACKER_STORE, the option winning', () => {
    expect(readCommandLine('FACT_TRACKER_STORE=a npx fact-tracker hook --sessions-dir b', 'hook')?.store).toBe('b');
    expect(readCommandLine('FACT_TRACKER_STORE="${FACT_TRACKER_STORE:-a}" node x/main.js hook', 'hook')?.store).toBe(
      'a',
    );
    expect(readCommandLine('exec node x/main.js mcp --store=c --tokenizer o200k', 'mcp')).toEqual({
      store: 'c',
      storeGiven: true,
      options: [['tokenizer', 'o200k']],
      dropped: [],
    });
    // --store wins over --sessions-dir in either order, as the commands choose; a no-break space is no word break.
    expect(readCommandLine('npx fact-tracker hook --sessions-dir b --store a', 'hook')?.store).toBe('a');
    expect(readCommandLine('npx fact-tracker hook --store /srv/team\u00a0facts\t--max-facts 3', 'hook')).toEqual({
      store: '/srv/team\u00a0facts',
      storeGiven: true,
      options: [['max-facts', '3']],
      dropped: [],
    });
    // Not a fact-tracker command: nothing to read.
    expect(readCommandLine('node tools/hook.js hook --store c', 'hook')).toBeUndefined();
  });

  it('drops, by name only, an option of another command, one whose value the shell expands, and a value left out', () => {
    expect(readCommandLine('npx fact-tracker hook --max-answer-tokens 9 --max-facts "$N" --tokenizer', 'hook')).toEqual(
      {
        options: [],
        dropped: [
          '--max-answer-tokens',
          'a word that is no option',
          '--max-facts (its value is expanded by the shell)',
          '--tokenizer (without its value)',
        ],
      },
    );
  });

  it('drops, by name only, a value that holds a line break, a control or an invisible character', () => {
    expect(
      readCommandLine(
        "npx fact-tracker hook --max-facts 5 --tokenizer 'o200k\n# x' --reviewer-pattern '\u001b[2Jr\u200b'",
        'hook',
      ),
    ).toEqual({
      options: [['max-facts', '5']],
      dropped: [
        '--tokenizer (its value holds a line break, a control or an invisible character)',
        '--reviewer-pattern (its value holds a line break, a control or an invisible character)',
      ],
    });
  });

  it('keeps an option all the commands giving it give one value, and the layout only when init is given none', () => {
    const readings = ['--max-facts 5 --layout grouped', '--max-facts 5', '--tokenizer o200k --layout grouped'].map(
      (options) => readCommandLine(`npx fact-tracker hook ${options}`, 'hook')!,
    );
    expect(keptOptions(readings, false)).toEqual({
      words: ['--layout', 'grouped', '--max-facts', '5', '--tokenizer', 'o200k'],
      dropped: [],
    });
    expect(keptOptions(readings, true).words).toEqual(['--max-facts', '5', '--tokenizer', 'o200k']);
    expect(keptOptions([...readings, readCommandLine('npx fact-tracker hook --layout wide', 'hook')!], false)).toEqual({
      words: ['--max-facts', '5', '--tokenizer', 'o200k'],
      dropped: ['--layout (not one layout init writes)'],
    });
  });

  it('names a dash-word it does not keep by its option name only, never a value glued or spaced into it', () => {
    const secret = 'postgres://app:S3cretPW@db.internal/facts';
    const reading = readCommandLine(
      `npx fact-tracker hook '--store ${secret}' -S${secret} --frob=${secret} -x '-p S3cretPW' --Weird_S3cretPW`,
      'hook',
    )!;
    expect(reading.dropped).toEqual([
      'an unknown option',
      'an unknown option',
      '--frob',
      '-x',
      'an unknown option',
      'an unknown option',
    ]);
    expect(JSON.stringify(reading)).not.toContain('S3cret');
  });

  it('keeps a value that starts with a dash in the --name=value form, the only one the commands read it in', () => {
    const reading = readCommandLine('npx fact-tracker hook --reviewer-pattern=-review --max-facts 4', 'hook')!;
    expect(keptOptions([reading], false).words).toEqual(['--reviewer-pattern=-review', '--max-facts', '4']);
  });

  it('names a wrapper fact-tracker runs through, reads sh -c and bash -c scripts, and marks a store it cannot read', () => {
    expect(
      readCommandLine('op run --env-file=.env.team -- npx --no-install fact-tracker hook --max-facts 7', 'hook'),
    ).toEqual({
      options: [['max-facts', '7']],
      dropped: ['`op`, which it runs fact-tracker through'],
      loadsEnvironment: true,
    });
    expect(readCommandLine('/opt/x/S3cret=1/dotenv -e .env -- npx fact-tracker hook', 'hook')?.dropped).toEqual([
      '`dotenv`, which it runs fact-tracker through',
    ]);
    expect(readCommandLine('./scripts/fact-tracker hook', 'hook')?.dropped).toEqual([
      "a fact-tracker script of the project's own, which it runs instead of the package",
    ]);
    expect(readCommandLine('node_modules/.bin/fact-tracker hook', 'hook')?.dropped).toEqual([]);
    expect(readCommandLine('/usr/local/bin/fact-tracker hook', 'hook')?.dropped).toEqual([]);
    expect(readCommandLine('node --env-file=.env /x/dist/cli/main.js hook', 'hook')?.dropped).toEqual([
      "the launcher's --env-file",
    ]);
    expect(readCommandLine("bash -c 'npx fact-tracker hook --store /srv/team'", 'hook')).toEqual({
      store: '/srv/team',
      storeGiven: true,
      options: [],
      dropped: [],
    });
    expect(
      readMcpJsonServer({
        mcpServers: {
          'fact-tracker': { command: '/bin/sh', args: ['-c', 'exec npx fact-tracker mcp --store /srv/t'] },
        },
      }).command?.store,
    ).toBe('/srv/t');
    // A store mentioned where init cannot read it: marked, for init to refuse rather than drop it.
    const unread = readMcpJsonServer({
      mcpServers: { 'fact-tracker': { command: 'bash', args: ['-c', 'cd /x && npx fact-tracker mcp --store /srv/t'] } },
    });
    expect([unread.exists, unread.command, unread.unreadStore]).toEqual([true, undefined, true]);
    const hooks = (command: string) =>
      readHooks({ hooks: { SubagentStart: [{ hooks: [{ type: 'command', command }] }] } }, () => true)[0];
    expect(hooks("npx fact-tracker hook '--store /srv/t'")?.unreadStore).toBe(true);
    expect(hooks('cd /x && npx fact-tracker hook --store /srv/t')?.unreadStore).toBe(true);
    expect(hooks('npx fact-tracker hook --store /srv/t')?.unreadStore).toBeUndefined();
    // A kept option's value that says --store is no store mentioned.
    expect(hooks("npx fact-tracker hook --reviewer-pattern 'x--store'")?.unreadStore).toBeUndefined();
    expect(hooks('npx fact-tracker hook --store')?.unreadStore).toBe(true);
  });

  it('reads a hook on its line past a newline, a comment or a redirection, in a script given as one word, and names a launcher option without its value', () => {
    expect(readCommandLine("bash -c 'set -e\n# tracked\nnpx fact-tracker hook --store /srv/t'", 'hook')).toEqual({
      store: '/srv/t',
      storeGiven: true,
      options: [],
      dropped: [],
    });
    expect(readCommandLine("doppler run --command 'fact-tracker hook --max-facts 3'", 'hook')).toEqual({
      options: [['max-facts', '3']],
      dropped: ['`doppler`, which it runs fact-tracker through'],
      loadsEnvironment: true,
    });
    expect(
      readCommandLine('npx --prefix "$CLAUDE_PROJECT_DIR" --no-install fact-tracker hook', 'hook')?.dropped,
    ).toEqual(["the launcher's --prefix"]);
    // Words given to the script may give it the store: one init cannot read, never dropped unsaid.
    expect(readCommandLine('sh -c \'fact-tracker hook "$@"\' _ --store /srv/facts', 'hook')).toEqual({
      options: [],
      dropped: ['a word that is no option', 'the words given to its script'],
      unreadStore: true,
    });
  });

  it('names the "&" that ran a hook it replaces in the background, keeping its store', () => {
    expect(readCommandLine('fact-tracker hook --store /srv/a &', 'hook')).toEqual({
      store: '/srv/a',
      storeGiven: true,
      options: [],
      dropped: ['the "&" that ran it in the background'],
    });
    expect(readCommandLine('fact-tracker hook --store /srv/a;', 'hook')).toEqual({
      store: '/srv/a',
      storeGiven: true,
      options: [],
      dropped: [],
    });
  });
});

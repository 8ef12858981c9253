/**
 * The help pages are generated from the option tables the parser reads: every option a command
 * accepts is on its page, and nothing on a page names an option the command does not accept.
 */
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/args.js';
import { COMMAND_NAMES } from '../../src/cli/command.js';
import { COMMAND_OPTIONS } from '../../src/cli/commandOptions.js';
import { CONTEXT_COMMON_OPTIONS, CONTEXT_SUBCOMMAND_OPTIONS, CONTEXT_SUBCOMMANDS } from '../../src/cli/contextArgs.js';
import { helpText } from '../../src/cli/help.js';

const optionsOnPage = (page: string): string[] => [...page.matchAll(/^ {2}(?:-\w, )?--([\w-]+)/gmu)].map((m) => m[1]!);

describe('help pages', () => {
  it.each(COMMAND_NAMES)('%s lists exactly the options its parser accepts, each once', (command) => {
    const listed = optionsOnPage(helpText(command));
    expect([...listed].sort()).toEqual(Object.keys(COMMAND_OPTIONS[command]).sort());
  });

  it('lists every command in the general help', () => {
    const general = helpText();
    for (const command of COMMAND_NAMES) expect(general).toMatch(new RegExp(`^ {2}fact-tracker ${command}\\b`, 'mu'));
  });

  it.each(CONTEXT_SUBCOMMANDS)('context %s accepts the options its section of the page lists', (action) => {
    for (const option of [...CONTEXT_COMMON_OPTIONS, ...CONTEXT_SUBCOMMAND_OPTIONS[action]]) {
      if (option === 'help') continue;
      const parsed = parseCommandLine(['context', action, `--${option}`, 'x']);
      if (parsed._tag === 'Left') expect(parsed.left.message).not.toMatch(/does not apply|Unknown option/u);
    }
  });
});

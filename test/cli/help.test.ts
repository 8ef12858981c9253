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
import { CompileIn, ExplainIn, IngestIn, InvalidateIn, ListIn } from '../../src/live/mcp/schemas.js';

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

  it('lists each MCP tool with exactly the fields its input schema takes, the optional ones marked', () => {
    const page = helpText('mcp');
    const tools = {
      ingest_result: IngestIn,
      compile_context: CompileIn,
      explain_context: ExplainIn,
      list_facts: ListIn,
      invalidate_fact: InvalidateIn,
    };
    for (const [tool, schema] of Object.entries(tools)) {
      // The tool's line, with the lines that continue its braces.
      const listed = new RegExp(`^ {2}${tool} +\\{([^}]*)\\}`, 'mu').exec(page)?.[1];
      expect(listed, tool).toBeDefined();
      const fields = listed!.split(',').map((field) => field.trim());
      const expected = Object.entries(schema.shape).map(([name, field]) => (field.isOptional() ? `${name}?` : name));
      expect(fields, tool).toEqual(expected);
    }
  });
});

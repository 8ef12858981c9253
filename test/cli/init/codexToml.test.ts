/** `mergeCodexToml`: Codex's `config.toml` edited in place, whatever valid TOML it holds. */
import * as E from 'fp-ts/lib/Either.js';
import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { type Launcher, mergeCodexToml } from '../../../src/cli/init/settings.js';

const LAUNCHER: Launcher = { hook: 'node main.js hook', mcp: { command: 'node', args: ['main.js', 'mcp'] } };

describe('mergeCodexToml', () => {
  it('edits a file holding integers up to 2^63 - 1, in our table or elsewhere, and keeps them exactly', () => {
    const text =
      'limit = 9223372036854775807\nlow = -9223372036854775808\n\n' +
      '[mcp_servers.fact-tracker]\ncommand = "npx"\nstartup_timeout_ms = 9007199254740993\n';
    const merged = mergeCodexToml(text, LAUNCHER);
    expect(E.isRight(merged)).toBe(true);
    const written = E.isRight(merged) ? merged.right : '';
    expect(written).toContain('limit = 9223372036854775807\nlow = -9223372036854775808\n');
    expect(parseToml(written, { integersAsBigInt: 'asNeeded' })).toEqual({
      limit: 9223372036854775807n,
      low: -9223372036854775808n,
      mcp_servers: {
        'fact-tracker': { command: 'node', args: ['main.js', 'mcp'], startup_timeout_ms: 9007199254740993n },
      },
    });
    // Written once, the file is what a second run wants.
    expect(mergeCodexToml(written, LAUNCHER)).toEqual(E.right(written));
  });

  it('keeps a float of our table a float and an integer an integer, whatever their value', () => {
    const text =
      '[mcp_servers.fact-tracker]\ncommand = "npx"\ntool_timeout_sec = 60.0\nstartup_timeout_sec = 20\nlimits = [1, 2.0, 2.5]\n';
    const merged = mergeCodexToml(text, LAUNCHER);
    const written = E.isRight(merged) ? merged.right : '';
    // Read with every integer a BigInt: 60.0 read back as 60n would be the integer TOML tells apart from it.
    expect(parseToml(written, { integersAsBigInt: true })).toEqual({
      mcp_servers: {
        'fact-tracker': {
          command: 'node',
          args: ['main.js', 'mcp'],
          tool_timeout_sec: 60,
          startup_timeout_sec: 20n,
          limits: [1n, 2, 2.5],
        },
      },
    });
    expect(written).toContain('tool_timeout_sec = 60.0\n');
    expect(mergeCodexToml(written, LAUNCHER)).toEqual(E.right(written));
  });

  it('says a file that writes mcp_servers as an inline table is refused for that, not for a table it does not hold', () => {
    for (const text of [
      'mcp_servers = { other = { command = "x" } }\n',
      'model = "m"\n"mcp_servers" = {}\n\n[tui]\n',
    ]) {
      expect(mergeCodexToml(text, LAUNCHER)).toEqual(
        E.left(
          'it writes mcp_servers as an inline table (mcp_servers = { ... }), which no [mcp_servers.fact-tracker] table can be added to; write its servers as [mcp_servers.NAME] tables, or add ours by hand',
        ),
      );
    }
    // Servers given by dotted keys take our table below them.
    expect(E.isRight(mergeCodexToml('mcp_servers.other.command = "x"\n', LAUNCHER))).toBe(true);
  });

  it('still refuses TOML that is not valid, an integer past 2^63 - 1 included', () => {
    const merged = mergeCodexToml('limit = 9223372036854775808\n', LAUNCHER);
    expect(E.isLeft(merged) ? merged.left : '').toMatch(/^it is not valid TOML/u);
  });

  it('updates our table whatever order its keys come in, and keeps the keys and sub-tables the user added', () => {
    for (const body of [
      'env = { MY_VAR = "1" }\nargs = ["x"]',
      'env = { MY_VAR = "1" }',
      'startup_timeout_sec = 30\nenv_vars = ["A"]\ntools = { x = { approval = "never" } }\nargs = ["mcp"]',
    ]) {
      const merged = mergeCodexToml(`[mcp_servers.fact-tracker]\ncommand = "npx"\n${body}\n`, LAUNCHER);
      expect(E.isRight(merged)).toBe(true);
      const written = E.isRight(merged) ? merged.right : '';
      const server = (parseToml(written) as { mcp_servers: Record<string, Record<string, unknown>> }).mcp_servers[
        'fact-tracker'
      ]!;
      expect(server).toMatchObject({ command: 'node', args: ['main.js', 'mcp'] });
      const before = parseToml(body) as Record<string, unknown>;
      for (const [key, value] of Object.entries(before)) if (key !== 'args') expect(server[key]).toEqual(value);
      expect(mergeCodexToml(written, LAUNCHER)).toEqual(E.right(written));
    }
  });

  it('keeps floats JSON cannot write (inf, nan) as they are', () => {
    const text = 'a = inf\nb = nan\nc = -inf\n';
    const merged = mergeCodexToml(text, LAUNCHER);
    expect(E.isRight(merged) ? merged.right : '').toMatch(
      /^a = inf\nb = nan\nc = -inf\n\n\[mcp_servers\.fact-tracker\]/u,
    );
  });

  it("takes FACT_TRACKER_STORE out of the env of our table when it writes a store, which the server would use over the hooks' one", () => {
    const launcher: Launcher = { ...LAUNCHER, store: '/srv/new-store' };
    for (const body of [
      'env = { FACT_TRACKER_STORE = "/srv/old-store", MY_VAR = "1" }',
      '[mcp_servers.fact-tracker.env]\nFACT_TRACKER_STORE = "/srv/old-store"\nMY_VAR = "1"',
    ]) {
      const merged = mergeCodexToml(`[mcp_servers.fact-tracker]\ncommand = "npx"\n${body}\n`, launcher);
      const written = E.isRight(merged) ? merged.right : '';
      expect(written).not.toContain('old-store');
      const server = (parseToml(written) as { mcp_servers: Record<string, Record<string, unknown>> }).mcp_servers[
        'fact-tracker'
      ]!;
      expect(server['env']).toEqual({ MY_VAR: '1' });
      expect(server['env_vars']).toContain('FACT_TRACKER_STORE');
    }
    const alone = mergeCodexToml('[mcp_servers.fact-tracker]\nenv = { FACT_TRACKER_STORE = "/srv/old" }\n', launcher);
    expect(E.isRight(alone) ? alone.right : '').not.toMatch(/old|env = |\.env\]/u);
  });

  it('reads a line inside a multi-line string as text, never as a table header, wherever it is', () => {
    const server = (written: string): unknown =>
      (parseToml(written) as { mcp_servers: Record<string, unknown> }).mcp_servers['fact-tracker'];
    const looksLikeOurs = (quotes: string): string =>
      `${quotes}\nTo set up the server, add:\n[mcp_servers.fact-tracker]\n${quotes}`;
    for (const quotes of ['"""', "'''"]) {
      // No server table at all: the text is kept and the table appended.
      const instructions = `developer_instructions = ${looksLikeOurs(quotes)}\nmodel = "o3"\n`;
      const appended = mergeCodexToml(instructions, LAUNCHER);
      expect(E.isRight(appended) ? appended.right : '').toBe(
        `${instructions}\n[mcp_servers.fact-tracker]\ncommand = "node"\nargs = [ "main.js", "mcp" ]\n`,
      );
      // The table after the string is the one replaced.
      const before = `${instructions}\n[mcp_servers.fact-tracker]\ncommand = "npx"\n`;
      const replaced = mergeCodexToml(before, LAUNCHER);
      const text = E.isRight(replaced) ? replaced.right : '';
      expect(text.startsWith(instructions)).toBe(true);
      expect(server(text)).toEqual({ command: 'node', args: ['main.js', 'mcp'] });
      // A string of the table holding a line like another table's header stays in the table.
      const inside = `[mcp_servers.fact-tracker]\ncommand = "npx"\nnote = ${quotes}\n[projects]\n""${quotes}\n\n[other]\nx = 1\n`;
      const kept = mergeCodexToml(inside, LAUNCHER);
      const keptText = E.isRight(kept) ? kept.right : '';
      expect(server(keptText)).toEqual({ command: 'node', args: ['main.js', 'mcp'], note: '[projects]\n""' });
      expect(keptText).toMatch(/\n\n\[other\]\nx = 1\n$/u);
      expect(mergeCodexToml(keptText, LAUNCHER)).toEqual(E.right(keptText));
    }
    // Quotes inside one-line strings, escaped ones and a comment open no multi-line string.
    const tricky = `a = "say \\"\\"\\" here" # """\nb = 'x"""y'\n[mcp_servers.fact-tracker]\ncommand = "npx"\n`;
    const merged = mergeCodexToml(tricky, LAUNCHER);
    expect(server(E.isRight(merged) ? merged.right : '')).toEqual({ command: 'node', args: ['main.js', 'mcp'] });
  });

  it('merges a file made to stall a pattern: a long line like a header, a long blank run, a header of spaces', () => {
    // Sized so that the patterns that went back over a run of spaces from every place in it (at
    // least quadratic: 3,000 spaces of the first took 10 s, 120 KB of the second 12 s, 60,000 of
    // the third 3.5 s) would run far past the suite's bound for a test that hangs; a merge reads
    // each run once now, in milliseconds. No timing is asserted: a regression hangs.
    const spaces = ' '.repeat(600_000);
    const texts = [
      // Valid TOML all: a line of an array that opens with an array of spaces,
      `a = [\n[${spaces.slice(0, 20_000)}], 1]\n`,
      // blank space before a key,
      `${spaces}\nb = 1\n`,
      // and a table named by a quoted key of spaces, after ours.
      `[mcp_servers.fact-tracker]\ncommand = "npx"\n\n["${spaces}"]\nc = 1\n`,
    ];
    for (const text of texts) {
      const merged = mergeCodexToml(text, LAUNCHER);
      const written = E.isRight(merged) ? merged.right : '';
      const { mcp_servers: servers, ...rest } = parseToml(written) as Record<string, unknown>;
      expect(servers).toEqual({ 'fact-tracker': { command: 'node', args: ['main.js', 'mcp'] } });
      const { mcp_servers: _before, ...restBefore } = parseToml(text) as Record<string, unknown>;
      expect(rest).toEqual(restBefore);
    }
  });

  it('finds the headers of a file that mixes line endings, a comment after one ending in CRLF', () => {
    // Lines a Windows editor added (CRLF) to a file of LF lines: its lines are read with their CR.
    const ours =
      'a = 1\n[mcp_servers.fact-tracker] # ours\r\ncommand = "npx"\r\n# before other\r\n[other] # next\r\nb = 2\n';
    const merged = mergeCodexToml(ours, LAUNCHER);
    expect(merged).toEqual(
      E.right(
        'a = 1\n[mcp_servers.fact-tracker]\ncommand = "node"\nargs = [ "main.js", "mcp" ]\n# before other\r\n[other] # next\r\nb = 2\n',
      ),
    );
  });
});

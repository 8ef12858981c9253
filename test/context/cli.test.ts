/**
 * `fact-tracker context`: the router in-process against a real repository (every subcommand,
 * every usage error), and the built binary run as a process once.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import { describe, expect, it } from 'vitest';
import { formatSavedState } from '../../src/cli/source.js';
import { CONTEXT_BUDGETS } from '../../src/context/budget.js';
import { buildContextBundle } from '../../src/context/index.js';
import { loadContext } from '../../src/context/node/index.js';
import { makeFact } from '../../src/core/fact.js';
import { addFacts } from '../../src/core/store/addFacts.js';
import { emptyFactStore } from '../../src/core/store/state.js';
import { expectOneLineFailure, type Ran, runBinary, runBuiltIn, runIn } from './cliRun.js';
import { commitAll, git, makeRepo } from './repo.js';

describe.concurrent('fact-tracker context', () => {
  it('does nothing and says so when shared context is off', async () => {
    const repo = makeRepo();
    const show = await runIn(repo, ['context', 'show'], {});
    expect(show).toEqual({
      status: 0,
      stdout: expect.stringMatching(/^shared context is off: set SHARED_CONTEXT_ENABLED=true/u),
      stderr: '',
    });
    const checkpoint = await runIn(repo, ['context', 'checkpoint', '--summary', 'x'], {
      SHARED_CONTEXT_ENABLED: 'off',
    });
    expect(checkpoint.status).toBe(0);
    expect(checkpoint.stderr).toMatch(
      /^fact-tracker context: shared context is off: .*; nothing was read or written\n$/u,
    );
    expect((await runIn(repo, ['context', 'bundle', '--json'], {})).stdout).toBe('{\n  "enabled": false\n}\n');
    expect(existsSync(join(repo, 'data'))).toBe(false);
  });

  it('reads no --summary-file when shared context is off, by the environment or by the config file', async () => {
    const repo = makeRepo();
    const off = /^fact-tracker context: shared context is off: .*; nothing was read or written\n$/u;
    const byEnv = await runIn(repo, ['context', 'checkpoint', '--summary-file', 'missing.txt'], {
      SHARED_CONTEXT_ENABLED: 'false',
    });
    expect(byEnv).toEqual({ status: 0, stdout: '', stderr: expect.stringMatching(off) });
    writeFileSync(join(repo, 'fact-tracker.config.json'), '{"sharedContext": {"enabled": false}}\n');
    const byConfig = await runIn(repo, ['context', 'checkpoint', '--summary-file', 'missing.txt'], {});
    expect(byConfig).toEqual({ status: 0, stdout: '', stderr: expect.stringMatching(off) });
    expect(existsSync(join(repo, 'data'))).toBe(false);
  });

  it('shows a hand-edited feature request of invisible characters only as none, as a blank one', async () => {
    const repo = makeRepo();
    const checkpoint = await runIn(repo, ['context', 'checkpoint', '--feature', 'A config parser', '--summary', 'x']);
    expect(checkpoint.status).toBe(0);
    const path = join(repo, 'data', 'context', 'planning_context.json');
    const document = JSON.parse(readFileSync(path, 'utf8')) as { contexts: Array<{ feature_request: string }> };
    document.contexts[0]!.feature_request = '\u200b\u2060';
    writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`);
    const show = await runIn(repo, ['context', 'show']);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain('\nfeature request: (none)\n');
  });

  it('records a checkpoint, claims and a failure, and shows and bundles the context', async () => {
    const repo = makeRepo();
    const checkpoint = await runIn(repo, [
      'context',
      'checkpoint',
      '--feature',
      'A config parser',
      '--summary',
      'Parser skeleton in src/parser.ts.',
      '--decision',
      'Hand-written or PEG?',
      '--step',
      'Write the tokenizer',
      '--pin',
      'Use pnpm.',
    ]);
    expect(checkpoint.stderr).toBe('');
    expect(checkpoint.stdout).toMatch(
      /^checkpoint recorded: planning context · workstream default · HEAD [0-9a-f]{7} · summary [0-9a-f]{8}\nwrote data\/context\/planning_context\.json and data\/context\/planning_context\.md\n$/u,
    );

    expectOneLineFailure(
      await runIn(repo, ['context', 'claim', 'Implemented the parser']),
      /^fact-tracker context: claim refused: "Implemented the parser" says the work is done but gives no evidence/u,
    );
    const claim = await runIn(repo, [
      'context',
      'claim',
      'Implemented the parser',
      '--file',
      'src/parser.ts:L1',
      '--symbol',
      'parse',
    ]);
    expect(claim.stdout).toBe('claim recorded (1 claim in the ledger): Implemented the parser\n');

    const failure = await runIn(repo, [
      'context',
      'record-failure',
      '--failed-step',
      'tests',
      '--error',
      '2 failing',
      '--next-action',
      'fix escapes',
    ]);
    expect(failure.stdout).toMatch(
      /^failure recorded at step tests; the last good summary is kept \(checkpoint [0-9a-f]{7}\)\n$/u,
    );

    const show = await runIn(repo, ['context', 'show']);
    expect(show.status).toBe(0);
    for (const part of [
      '· summary verified\n',
      'summary (updated ',
      '  D1 [open] Hand-written or PEG?\n',
      '  [ ] Write the tokenizer\n',
      '  Implemented the parser · src/parser.ts:L1, parse\n',
      'last run: failed at ',
      'recent failures:\n',
    ])
      expect(show.stdout).toContain(part);
    expect(show.stdout).toMatch(
      /local to this machine; git ignores it: data\/context\/\.gitignore:\d+: \*\.local\.json\)\n$/u,
    );

    const loaded = await loadContext({ kind: 'planning', cwd: repo, enabled: true });
    const expected =
      E.isRight(loaded) && O.isSome(loaded.right)
        ? buildContextBundle(loaded.right.value, { kind: 'planning' }).text
        : 'no context';
    const bundle = await runIn(repo, ['context', 'bundle']);
    expect(bundle).toEqual({ status: 0, stdout: `${expected}\n`, stderr: '' });
    expect(bundle.stdout).toMatch(/- \[pinned by [^\]]+\] Use pnpm\.\n/u);

    const fact = (subject: string, object: string) =>
      makeFact({
        subject,
        relation: 'issue',
        object,
        tags: ['error'],
        validFrom: 1,
        sourceTaskId: '7',
        sourceRole: 'reviewer',
        confidence: 1,
      });
    const others = Array.from({ length: 8 }, (_, i) => fact(`src/module${i}.ts`, `module ${i} needs docs`));
    writeFileSync(
      join(repo, 'state.json'),
      formatSavedState(
        addFacts(emptyFactStore(), [
          fact('src/lexer.ts', 'quoted values keep their quotes'),
          fact('src/billing.ts', 'rounding of values'),
          ...others,
        ]),
      ),
    );
    const retrieved = await runIn(repo, [
      'context',
      'bundle',
      '--facts',
      join(repo, 'state.json'),
      '--query',
      'quoted values in the lexer',
    ]);
    expect(retrieved.stdout).toMatch(
      /\n## Retrieved session facts \(relevance >= 2\)\n- src\/lexer\.ts issue quoted values keep their quotes \[task:7\]$/mu,
    );
    expect(retrieved.stdout).not.toContain('billing');
    // `--facts -` reads standard input, as every command that reads a history does.
    const piped = await runBinary(['context', 'bundle', '--facts', '-', '--query', 'quoted values in the lexer'], {
      cwd: repo,
      shell: 'exec "$@" < state.json',
    });
    expect(piped.stderr).toBe('');
    expect(piped.stdout).toBe(retrieved.stdout);

    const json = JSON.parse(
      (await runIn(repo, ['context', 'bundle', '--kind', 'implementation', '--json'])).stdout,
    ) as { kind: string; chars: number; text: string };
    expect(json.kind).toBe('implementation');
    expect(json.chars).toBe(json.text.length);
    expect(json.chars).toBeGreaterThanOrEqual(CONTEXT_BUDGETS.implementation.total.min);
    const view = JSON.parse((await runIn(repo, ['context', 'show', '--json', '--workstream', 'other'])).stdout) as {
      stored: boolean;
      key: { workstreamId: string };
    };
    expect(view).toMatchObject({ stored: false, key: { workstreamId: 'other' } });
    writeFileSync(join(repo, 'summary.md'), 'From a file.\nSecond paragraph.\n');
    const fromFile = JSON.parse(
      (
        await runIn(repo, [
          'context',
          'checkpoint',
          '--kind',
          'implementation',
          '--summary-file',
          join(repo, 'summary.md'),
          '--json',
        ])
      ).stdout,
    ) as {
      context: { workingSummary: { text: string } };
      status: { stale: boolean };
    };
    expect(fromFile).toMatchObject({
      context: { workingSummary: { text: 'From a file.\nSecond paragraph.' } },
      status: { stale: false },
    });
    expect(readdirSync(join(repo, 'data', 'context')).sort()).toEqual([
      '.gitignore',
      'implementation_context.json',
      'implementation_context.md',
      'planning_context.json',
      'planning_context.md',
    ]);
  });

  it('says so when a checkpoint without a summary verifies a stale one as it stands, and not when it was verified', async () => {
    const repo = makeRepo();
    expect((await runIn(repo, ['context', 'checkpoint', '--summary', 'a.js prints a'])).status).toBe(0);
    commitAll(repo, 'the context');
    const fresh = await runIn(repo, ['context', 'checkpoint', '--decision', 'Keep a.js?']);
    expect(fresh.status).toBe(0);
    expect(fresh.stderr).not.toContain('was stale');
    commitAll(repo, 'the decision');
    writeFileSync(join(repo, 'a.js'), 'rewritten\n');
    commitAll(repo, 'rewrite a.js');
    expect((await runIn(repo, ['context', 'show'])).stdout).toMatch(/STALE: HEAD moved, tracked files changed/u);
    const reverified = await runIn(repo, ['context', 'checkpoint', '--decision', 'Should we log?']);
    expect(reverified.status).toBe(0);
    expect(reverified.stderr).toMatch(
      /^fact-tracker context: note: the summary was stale \(HEAD moved, tracked files changed since its checkpoint\) and is now verified as it stands at HEAD [0-9a-f]{7}, since the checkpoint gave no summary: give one \(--summary\) if it no longer describes the work$/mu,
    );
  });

  it('refuses usage mistakes with one line and exit 1', async () => {
    const repo = makeRepo();
    const cases: ReadonlyArray<[ReadonlyArray<string>, RegExp]> = [
      [
        ['context'],
        /missing subcommand: one of show, bundle, checkpoint, claim, record-failure, resolve, move \(see fact-tracker context --help\)/u,
      ],
      [['context', 'frobnicate'], /unknown subcommand "frobnicate"/u],
      [['context', 'show', '--summary', 'x'], /--summary does not apply to context show/u],
      [['context', 'show', 'extra'], /context show takes no arguments, got: extra/u],
      [['context', 'bundle', '--kind', 'review'], /--kind must be planning or implementation, not "review"/u],
      [['context', 'claim'], /missing the claim TEXT/u],
      [
        ['context', 'claim', 'Fixed it', '--file', 'src/parser.ts'],
        /--file "src\/parser\.ts" needs a line range: PATH:L10-L40/u,
      ],
      [['context', 'claim', 'Fixed it', '--file', 'src/parser.ts:L9-L2'], /ends before it starts/u],
      [
        ['context', 'record-failure', '--error', 'e'],
        /record-failure needs --failed-step STEP, --error TEXT and --next-action TEXT/u,
      ],
      [['context', 'checkpoint', '--decide', 'X1'], /"X1" is not a decision id/u],
      [['context', 'show', '--bogus'], /Unknown option '--bogus'/u],
      [['context', 'move', '--from', ' '], /move needs --from BRANCH/u],
      // Invisible characters only (a zero-width space, a word joiner) name no branch, as spaces do not.
      [['context', 'move', '--from', '\u200b\u2060'], /move needs --from BRANCH/u],
      // An empty value (an unset variable) is said as such, not read as the folder or as every fact.
      [
        ['context', 'bundle', '--facts', ''],
        /--facts needs a file name \(- for standard input\): the value given is empty/u,
      ],
      [['context', 'bundle', '--query', ' '], /--query needs words to rank the facts by: the value given is blank/u],
      [
        ['context', 'checkpoint', '--summary-file', ''],
        /--summary-file needs a file name \(- for standard input\): the value given is empty/u,
      ],
    ];
    for (const [argv, pattern] of cases) expectOneLineFailure(await runIn(repo, argv), pattern);
    // A binary file given as the summary, and an empty summary, are refused: the stored one stays.
    writeFileSync(join(repo, 'binary.bin'), Buffer.from([0x00, 0xff, 0xfe, 0x41, 0x0a]));
    expectOneLineFailure(
      await runIn(repo, ['context', 'checkpoint', '--summary-file', join(repo, 'binary.bin')]),
      /binary\.bin is not text: it holds a NUL or bytes that are not UTF-8/u,
    );
    expectOneLineFailure(
      await runIn(repo, ['context', 'checkpoint', '--summary', '']),
      /the summary is empty: leave it out to keep the current one/u,
    );
    expectOneLineFailure(
      await runIn(repo, ['context', 'show'], { SHARED_CONTEXT_ENABLED: 'perhaps' }),
      /^fact-tracker context: SHARED_CONTEXT_ENABLED must be true or false/u,
    );
    const help = await runIn(repo, ['context', 'bundle', '--help']);
    expect(help.stdout).toMatch(
      /^Usage: fact-tracker context show\|bundle\|checkpoint\|claim\|record-failure\|resolve/u,
    );
    expect((await runIn(repo, ['help', 'context'])).stdout).toBe(help.stdout);
    expect((await runIn(repo, ['--help'])).stdout).toContain(
      '  fact-tracker context SUBCOMMAND [options]    this repository',
    );
  });

  it('refuses an option that takes one value given twice, naming it, and writes nothing; a repeatable one takes each', async () => {
    const repo = makeRepo();
    const twice: ReadonlyArray<[ReadonlyArray<string>, string, string]> = [
      [['context', 'show', '--workstream', 'a', '--workstream', 'b'], '--workstream', 'ID'],
      [['context', 'checkpoint', '--summary', 'First.', '--summary=Second.'], '--summary', 'TEXT'],
      [['context', 'bundle', '--kind', 'planning', '--kind', 'implementation'], '--kind', 'KIND'],
    ];
    const [refused, taken] = await Promise.all([
      Promise.all(twice.map(([argv]) => runBuiltIn(repo, argv))),
      runBuiltIn(repo, ['context', 'claim', 'Parser in place', '--symbol', 'parse', '--symbol', 'Parser', '--json']),
    ]);
    for (const [index, [, option, value]] of twice.entries())
      expect(refused[index]).toEqual({
        status: 1,
        stdout: '',
        stderr: `fact-tracker context: ${option} is given more than once: it takes one ${value} (see fact-tracker context --help)\n`,
      });
    expect(taken.status).toBe(0);
    expect(JSON.parse(taken.stdout)).toMatchObject({
      context: { evidenceLedger: [{ claim: 'Parser in place', symbols: ['parse', 'Parser'] }] },
    });
    // Only the claim was written: the checkpoint given two summaries recorded nothing.
    const stored = JSON.parse(readFileSync(join(repo, 'data', 'context', 'planning_context.json'), 'utf8')) as {
      contexts: Array<{ checkpoint: unknown; working_summary: { text: string } }>;
    };
    expect(stored.contexts.map((context) => [context.checkpoint, context.working_summary.text])).toEqual([[null, '']]);
  });

  it('reads --file with . and .. segments as the path they lead to inside the repository, and refuses one that climbs out, saying why', async () => {
    const repo = makeRepo();
    const [inside, above, root] = await Promise.all([
      runBuiltIn(join(repo, 'src'), [
        'context',
        'claim',
        'Fixed the parser',
        '--file',
        'src/../src/parser.ts:L1',
        '--file',
        './src/./parser.ts:L1',
      ]),
      runBuiltIn(join(repo, 'src'), ['context', 'claim', 'Fixed the parser', '--file', 'src/../../parser.ts:L1']),
      runBuiltIn(repo, ['context', 'claim', 'Fixed the parser', '--file', 'src/..:L1']),
    ]);
    expect(inside).toEqual({
      status: 0,
      stdout: 'claim recorded (1 claim in the ledger): Fixed the parser\n',
      stderr: '',
    });
    expect(above).toEqual({
      status: 1,
      stdout: '',
      stderr:
        'fact-tracker context: --file "src/../../parser.ts:L1": "src/../../parser.ts" goes above the repository root: a path starts at the root (src/a.ts), wherever the command runs (see fact-tracker context --help)\n',
    });
    expect(root).toEqual({
      status: 1,
      stdout: '',
      stderr:
        'fact-tracker context: --file "src/..:L1": "src/.." names the repository root, not a file (see fact-tracker context --help)\n',
    });
    const stored = JSON.parse(readFileSync(join(repo, 'data', 'context', 'planning_context.json'), 'utf8')) as {
      contexts: Array<{ evidence_ledger: unknown }>;
    };
    expect(stored.contexts[0]!.evidence_ledger).toEqual([
      {
        claim: 'Fixed the parser',
        files: [{ path: 'src/parser.ts', lines: 'L1' }],
        symbols: [],
        recorded_at: expect.any(String),
      },
    ]);
  });

  it('runs as a process on the repository of the current directory (here a subdirectory), reporting a corrupt file in one line and leaving it', async () => {
    const repo = makeRepo();
    const dir = join(repo, 'data', 'context');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'planning_context.json'), '{"schema_version": 1, "kind": "planning", "contexts": [');
    expectOneLineFailure(
      await runBinary(['context', 'show'], { cwd: join(repo, 'src') }),
      /^fact-tracker context: data\/context\/planning_context\.json: not valid JSON, the file is truncated or corrupt \(it ends too early\) \(left as it is; the next write moves it aside\)\n$/u,
    );
    expect(readdirSync(dir)).toEqual(['planning_context.json']);
  });

  it('names only the JSON as written when a folder stands where the dashboard goes, as the warning says, in checkpoint, move and resolve', async () => {
    const repo = makeRepo();
    const dashboard = join(repo, 'data', 'context', 'planning_context.md');
    // git keeps no empty folder: this one stays where the dashboard goes through the checkouts and the merge below.
    mkdirSync(dashboard, { recursive: true });
    const context = (...args: string[]) => runBuiltIn(repo, ['context', ...args]);
    const warned = (ran: Ran): string => {
      expect(ran.status).toBe(0);
      expect(ran.stderr).toMatch(
        /warning: the dashboard data\/context\/planning_context\.md was not updated \(.*it is a directory\); the context itself was saved/u,
      );
      return ran.stdout;
    };
    expect(warned(await context('checkpoint', '--summary', 'S.'))).toMatch(
      /\nwrote data\/context\/planning_context\.json\n$/u,
    );
    commitAll(repo, 'base');
    git(repo, 'checkout', '-q', '-b', 'side');
    expect(warned(await context('move', '--from', 'main'))).toMatch(
      /\nwrote data\/context\/planning_context\.json\n$/u,
    );
    expect(
      JSON.parse(warned(await context('checkpoint', '--branch', 'main', '--decision', 'Side?', '--json'))),
    ).toMatchObject({ dashboardWritten: false, dashboardRegenerated: false });
    commitAll(repo, 'side');
    git(repo, 'checkout', '-q', 'main');
    warned(await context('checkpoint', '--decision', 'Main?'));
    commitAll(repo, 'main');
    expect(() => git(repo, 'merge', '-q', '--no-edit', 'side')).toThrow();
    expect(warned(await context('resolve'))).toMatch(
      /\nwrote data\/context\/planning_context\.json; git add it to mark the conflict resolved\n$/u,
    );
    // With the folder gone, the dashboard is written and named again.
    rmdirSync(dashboard);
    const written = await context('checkpoint', '--json');
    expect(written.stderr).toBe('');
    expect(JSON.parse(written.stdout)).toMatchObject({ dashboardWritten: true });
    expect((await context('checkpoint')).stdout).toMatch(
      /\nwrote data\/context\/planning_context\.json and data\/context\/planning_context\.md\n$/u,
    );
  });
});

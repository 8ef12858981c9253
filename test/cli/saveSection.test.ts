/**
 * `--save` writes its section of a saved state and keeps the other one: `replay --save` and
 * `notes replay --save` into one file, in either order and at once from two processes, leave
 * both; a file that holds something else is left as it is. Real files, real processes (the
 * cases of one behaviour run the same built code in this process).
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { selectGlobalFacts } from '../../src/notes/ledger.js';
import { decodeSavedState } from '../../src/saved/savedState.js';
import { selectPairLogs } from '../../src/core/store/write.js';
import { tempDir } from '../tempDirs.js';
import { historyRounds, ROOT, runCli, runCliCut, runCliHere } from './runCli.js';

const HISTORY = join(ROOT, 'examples', 'web-api-session.jsonl');
const CONVERSATIONS = join(ROOT, 'examples', 'couples-coaching.jsonl');

/** The saves as processes: for two commands saving into one file at once. */
const saveFacts = (file: string) => runCli(['replay', HISTORY, '--json', '--save', file]);
const saveNotes = (file: string) => runCli(['notes', 'replay', CONVERSATIONS, '--json', '--save', file]);
/** The same saves through the built router in this process: for the cases of one behaviour (states, links, refusals, modes). */
const saveFactsHere = (file: string) => runCliHere(['replay', HISTORY, '--json', '--save', file]);
const saveNotesHere = (file: string) => runCliHere(['notes', 'replay', CONVERSATIONS, '--json', '--save', file]);

/** The sections the file holds: pairs of the fact store, and the profile facts of maya in the notes. */
const sectionsOf = (file: string): { pairs: number; notes: number | undefined } => {
  const decoded = decodeSavedState(JSON.parse(readFileSync(file, 'utf8')));
  if (E.isLeft(decoded)) throw new Error(decoded.left.message);
  const { store, notes } = decoded.right;
  return {
    pairs: selectPairLogs(store).length,
    notes: notes === undefined ? undefined : selectGlobalFacts(notes, 'maya')?.facts.length,
  };
};

/**
 * The states the two commands write into one file in either order, made once for the file's
 * tests: `factsFirst` (replay --save, then notes replay --save) and `notesFirst` (the other way),
 * and copies of each as it was after its first save (`factsOnly`, `notesOnly`). The tests that
 * start from a state another command wrote start from a copy of one of these.
 */
const savedStates = (() => {
  let made: Promise<Record<'factsFirst' | 'notesFirst' | 'factsOnly' | 'notesOnly', string>> | undefined;
  const make = async () => {
    const dir = tempDir('save-sections-');
    const [factsFirst, notesFirst, factsOnly, notesOnly] = ['facts-first', 'notes-first', 'facts', 'notes'].map(
      (name) => join(dir, `${name}.json`),
    ) as [string, string, string, string];
    for (const [file, first, only, second] of [
      [factsFirst, saveFactsHere, factsOnly, saveNotesHere],
      [notesFirst, saveNotesHere, notesOnly, saveFactsHere],
    ] as const) {
      const saved = await first(file);
      expect([saved.status, saved.stderr]).toEqual([0, '']);
      copyFileSync(file, only);
      const both = await second(file);
      expect([both.status, both.stderr]).toEqual([0, '']);
    }
    return { factsFirst, notesFirst, factsOnly, notesOnly };
  };
  return () => (made ??= make());
})();

/** A copy of `state` in a folder of its own, to be written over. */
const copyInto = (dir: string, state: string): string => {
  const file = join(dir, 'state.json');
  copyFileSync(state, file);
  return file;
};

/** A copy of a state file, its text, and a blank input file beside it (blank lines only, a CRLF among them). */
const copiedBesideBlank = (state: string) => {
  const dir = tempDir('save-empty-');
  const file = copyInto(dir, state);
  const blank = join(dir, 'blank.jsonl');
  writeFileSync(blank, '\n  \r\n');
  return { dir, file, before: readFileSync(file, 'utf8'), blank };
};

describe('--save into a saved state another command wrote', () => {
  it('keeps the notes section when replay saves, and the fact store when notes replay saves, in either order', async () => {
    const { factsFirst, notesFirst, factsOnly, notesOnly } = await savedStates();
    const onlyFacts = sectionsOf(factsOnly);
    expect(onlyFacts.pairs).toBeGreaterThan(0);
    expect(onlyFacts.notes).toBeUndefined();
    expect(sectionsOf(factsFirst)).toEqual({ pairs: onlyFacts.pairs, notes: 13 });

    expect(sectionsOf(notesOnly)).toEqual({ pairs: 0, notes: 13 });
    expect(sectionsOf(notesFirst)).toEqual({ pairs: onlyFacts.pairs, notes: 13 });
    // Either order gives the same document.
    expect(readFileSync(notesFirst, 'utf8')).toBe(readFileSync(factsFirst, 'utf8'));
  });

  it('keeps both sections when the two commands save into one file at once, from two processes', async () => {
    const dir = tempDir('save-race-');
    for (let round = 0; round < 4; round += 1) {
      const file = join(dir, `state-${round}.json`);
      const [facts, notes] = await Promise.all([saveFacts(file), saveNotes(file)]);
      expect([facts.status, notes.status, facts.stderr, notes.stderr]).toEqual([0, 0, '', '']);
      expect(sectionsOf(file).notes).toBe(13);
      expect(sectionsOf(file).pairs).toBeGreaterThan(0);
    }
  });

  it('leaves a file that holds no saved state as it is, says why in one line and exits 1', async () => {
    const dir = tempDir('save-refused-');
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'my own notes, not a saved state\n');
    const refused = await saveNotesHere(file);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /^fact-tracker notes: cannot save into .*notes\.txt: it holds no saved state, which --save would lose: it is not JSON/u,
    );
    expect(refused.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(readFileSync(file, 'utf8')).toBe('my own notes, not a saved state\n');
    writeFileSync(file, '{"format":"something else"}\n');
    expect((await saveFactsHere(file)).status).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe('{"format":"something else"}\n');
  });

  it('leaves a state that gives a key twice in one object as it is, rather than rewrite it keeping only the last', async () => {
    const file = join(tempDir('save-twice-'), 'state.json');
    expect((await saveNotesHere(file)).status).toBe(0);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { notes: unknown };
    // Edited by hand: the notes section given again, as a merge of two files leaves it.
    const text = `${readFileSync(file, 'utf8').trimEnd().slice(0, -1)},"notes":${JSON.stringify(saved.notes)}}\n`;
    writeFileSync(file, text);
    expect(await saveFactsHere(file)).toMatchObject({
      status: 1,
      stderr: `fact-tracker replay: cannot save into ${file}: it holds no saved state, which --save would lose: it gives the key "notes" twice in one object, of which a rewrite would keep only the last\n`,
    });
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('refuses a folder, a device and a pipe in one line, before any lock beside them, and leaves each as it was', async () => {
    const dir = tempDir('save-special-');
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    const pipe = join(dir, 'pipe');
    execFileSync('mkfifo', [pipe]);
    // A device of its own where the test may make one (as root); else the system's, which a user cannot replace.
    let device = join(dir, 'null');
    try {
      execFileSync('mknod', ['-m', '666', device, 'c', '1', '3'], { stdio: 'ignore' });
    } catch {
      device = '/dev/null';
    }
    for (const [target, kind] of [
      [folder, 'a directory'],
      [device, 'a device'],
      [pipe, 'a pipe'],
    ] as const) {
      const refused = await saveFactsHere(target);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toBe(`fact-tracker replay: cannot save into ${target}: it is ${kind}\n`);
      // The report is whole all the same: --json prints one document, not the prompts alone.
      expect(JSON.parse(refused.stdout)).toMatchObject({ summary: { events: 40 } });
    }
    expect(lstatSync(device).isCharacterDevice()).toBe(true);
    expect(lstatSync(pipe).isFIFO()).toBe(true);
    expect(readdirSync(dir).filter((name) => name !== 'null')).toEqual(['folder', 'pipe'].sort());
  });

  it('refuses a state nobody may write in one line and leaves it as it was, whoever runs it (root too)', async () => {
    const dir = tempDir('save-read-only-');
    const file = copyInto(dir, (await savedStates()).notesOnly);
    const before = readFileSync(file, 'utf8');
    chmodSync(file, 0o444);
    const refused = await saveFactsHere(file);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(`fact-tracker replay: cannot save into ${file}: it is read-only\n`);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(statSync(file).mode & 0o777).toBe(0o444);
  });

  it('says permission denied, not read-only, for a state in a folder this user may not enter', async () => {
    const dir = tempDir('save-unsearchable-');
    const file = join(dir, 'state.json');
    chmodSync(dir, 0o000);
    // Root enters any folder: the command runs as another user then (the history comes on standard input).
    const as = process.getuid?.() === 0 ? { uid: 65534, env: {} } : {};
    const history = readFileSync(HISTORY, 'utf8');
    const refused = [
      await runCli(['replay', '-', '--json', '--save', file], history, as),
      await runCli(['notes', 'replay', '-', '--json', '--save', file], readFileSync(CONVERSATIONS, 'utf8'), as),
    ];
    chmodSync(dir, 0o700);
    for (const [command, run] of [
      ['replay', refused[0]!],
      ['notes', refused[1]!],
    ] as const) {
      expect(run.status).toBe(1);
      expect(run.stderr).toBe(
        `fact-tracker ${command}: cannot save into ${file}: permission denied (a folder on its path may not be entered)\n`,
      );
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it('saves when the reader of the report closes it early (| head), and exits with the replay status', async () => {
    const dir = tempDir('save-head-');
    // The example 8 times over, its tasks renamed: a report of about 240 KB, nearly four times what a
    // pipe holds (64 KB).
    const history = join(dir, 'long.jsonl');
    writeFileSync(history, historyRounds(HISTORY, 8).join('\n'));
    const file = join(dir, 'state.json');
    expect(await runCliCut(['replay', history, '--save', file])).toEqual({ status: 0, stderr: '' });
    const saved = await runCliHere(['facts', file, '--json']);
    expect(saved.status).toBe(0);
    expect((JSON.parse(saved.stdout) as { facts: unknown[] }).facts.length).toBeGreaterThan(100);
  });

  it('says a missing folder in one line, rather than a failed lock', async () => {
    const file = join(tempDir('save-no-folder-'), 'missing', 'state.json');
    const [facts, notes] = await Promise.all([saveFactsHere(file), saveNotesHere(file)]);
    expect([facts.status, facts.stderr]).toEqual([
      1,
      `fact-tracker replay: cannot save into ${file}: there is no folder ${dirname(file)}\n`,
    ]);
    expect([notes.status, notes.stderr]).toEqual([
      1,
      `fact-tracker notes: cannot save into ${file}: there is no folder ${dirname(file)}\n`,
    ]);
  });

  it('prints the report before a save that fails, the notes command as the replay command', async () => {
    const file = join(tempDir('save-report-first-'), 'missing', 'state.json');
    const [facts, notes] = await Promise.all([saveFactsHere(file), saveNotesHere(file)]);
    expect([facts.status, notes.status]).toEqual([1, 1]);
    expect(JSON.parse(facts.stdout)).toMatchObject({ summary: { events: 40, prompts: 11 } });
    expect(JSON.parse(notes.stdout)).toMatchObject({ summary: { userMessages: 17, extractions: 17 } });
  });

  it('saves the notes when the reader of the report closes it early (| head)', async () => {
    const file = join(tempDir('save-notes-head-'), 'state.json');
    // The JSON report of the example is about 68 KB, more than a pipe holds (64 KB).
    expect(await runCliCut(['notes', 'replay', CONVERSATIONS, '--json', '--save', file])).toEqual({
      status: 0,
      stderr: '',
    });
    expect(sectionsOf(file).notes).toBe(13);
  });

  it('says a folder named with a trailing slash that does not exist is no folder, as a missing folder, and makes nothing', async () => {
    const dir = tempDir('save-no-folder-slash-');
    for (const file of [`${join(dir, 'x')}/`, `${join(dir, 'x', 'y')}/`]) {
      const [facts, notes] = await Promise.all([saveFactsHere(file), saveNotesHere(file)]);
      expect([facts.status, facts.stderr]).toEqual([
        1,
        `fact-tracker replay: cannot save into ${file}: there is no folder ${file}\n`,
      ]);
      expect([notes.status, notes.stderr]).toEqual([
        1,
        `fact-tracker notes: cannot save into ${file}: there is no folder ${file}\n`,
      ]);
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it("keeps a saved state's permission bits, and a link to it (the file it links to is written)", async () => {
    const dir = tempDir('save-mode-');
    const file = copyInto(dir, (await savedStates()).factsOnly);
    const link = join(dir, 'link.json');
    chmodSync(file, 0o600);
    symlinkSync('state.json', link);
    expect((await saveNotesHere(link)).status).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(sectionsOf(file).notes).toBe(13);
  });

  it("writes through a link to nothing into the file it links to, made new (a relative target read from the link's folder, through a chain of links too), and keeps the link", async () => {
    const dir = tempDir('save-dangling-');
    mkdirSync(join(dir, 'shared'));
    mkdirSync(join(dir, 'links'));
    const link = join(dir, 'links', 'state.json');
    symlinkSync('../shared/state.json', link);
    // Two links: chain.json to hop.json, hop.json to nothing yet.
    const chain = join(dir, 'links', 'chain.json');
    symlinkSync('../shared/chained.json', join(dir, 'links', 'hop.json'));
    symlinkSync('hop.json', chain);
    for (const save of [saveFactsHere, saveNotesHere]) {
      const saved = await save(link);
      expect([saved.status, saved.stderr]).toEqual([0, '']);
    }
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(sectionsOf(join(dir, 'shared', 'state.json'))).toMatchObject({ notes: 13 });
    expect(sectionsOf(join(dir, 'shared', 'state.json')).pairs).toBeGreaterThan(0);
    const chained = await saveNotesHere(chain);
    expect([chained.status, chained.stderr]).toEqual([0, '']);
    expect([lstatSync(chain).isSymbolicLink(), lstatSync(join(dir, 'links', 'hop.json')).isSymbolicLink()]).toEqual([
      true,
      true,
    ]);
    expect(sectionsOf(join(dir, 'shared', 'chained.json'))).toEqual({ pairs: 0, notes: 13 });
    expect(readdirSync(join(dir, 'links')).sort()).toEqual(['chain.json', 'hop.json', 'state.json']);
    expect(readdirSync(join(dir, 'shared')).sort()).toEqual(['chained.json', 'state.json']);
  });

  it('refuses a link into a folder that does not exist in one line, and writes nothing (the link stays)', async () => {
    const dir = tempDir('save-dangling-nowhere-');
    const link = join(dir, 'state.json');
    symlinkSync('nowhere/state.json', link);
    const [facts, notes] = await Promise.all([saveFactsHere(link), saveNotesHere(link)]);
    expect([facts.status, facts.stderr]).toEqual([
      1,
      `fact-tracker replay: cannot save into ${link}: it links to nowhere/state.json, whose folder does not exist\n`,
    ]);
    expect([notes.status, notes.stderr]).toEqual([
      1,
      `fact-tracker notes: cannot save into ${link}: it links to nowhere/state.json, whose folder does not exist\n`,
    ]);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('saves nothing over a state from a file of rejected lines only (a history given by mistake), and says so in one line', async () => {
    const dir = tempDir('save-nothing-');
    const file = copyInto(dir, (await savedStates()).factsFirst);
    const before = readFileSync(file, 'utf8');
    const garbage = join(dir, 'garbage.jsonl');
    writeFileSync(garbage, 'not json\n{"type":"nothing"}\n\u0000\u0001binary\n');
    const facts = await runCliHere(['replay', garbage, '--json', '--save', file]);
    expect([facts.status, facts.stderr]).toEqual([
      1,
      `fact-tracker replay: nothing saved into ${file}: no line of the history could be applied\n`,
    ]);
    expect(JSON.parse(facts.stdout)).toMatchObject({ prompts: [], summary: { events: 0 } });
    const notes = await runCliHere(['notes', 'replay', garbage, '--json', '--save', file]);
    expect([notes.status, notes.stderr]).toEqual([
      1,
      `fact-tracker notes: nothing saved into ${file}: no line of the conversation log could be applied\n`,
    ]);
    // A dispatch history given by mistake is named as one, before anything is read into a report.
    const history = await runCliHere(['notes', 'replay', HISTORY, '--json', '--save', file]);
    expect([history.status, history.stdout, history.stderr]).toEqual([
      1,
      '',
      `fact-tracker notes: ${HISTORY} is a dispatch history, not a conversation log: replay it with fact-tracker replay ${HISTORY}\n`,
    ]);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('saves no empty store over the fact store there from a history that stores nothing (nothing piped in, a blank file, nothing up to --as-of, rejected results, a compact alone, blank prompts)', async () => {
    const { dir, file, before, blank } = copiedBesideBlank((await savedStates()).factsOnly);
    for (const [args, input, reason] of [
      [['replay', '-', '--save', file], '', 'the history holds no line'],
      [['replay', blank, '--json', '--save', file], undefined, 'the history holds no line'],
      [
        ['replay', HISTORY, '--as-of', '2000-01-01T00:00:00Z', '--save', file],
        undefined,
        'the history holds no event up to --as-of',
      ],
      // Lines that apply, yet store nothing: a result without its markers, a compact, an invalidate.
      [
        ['replay', '-', '--save', file],
        '{"type":"dispatch","role":"implementer","taskId":"1","output":"the agent forgot the markers"}\n',
        'the history records no fact and no prompt (the contract rejected every dispatch result)',
      ],
      [
        ['replay', '-', '--save', file],
        '{"type":"compact","maxFacts":5}\n{"type":"invalidate","subject":"src/a.ts","relation":"modified_by"}\n',
        'the history records no fact and no prompt',
      ],
      // Prompts of blank text are counted, and never recorded.
      [
        ['replay', '-', '--save', file],
        '{"type":"prompt","taskId":"9","taskPrompt":""}\n{"type":"prompt","taskId":"9","taskPrompt":" \\u200b "}\n',
        'the history records no fact and no prompt',
      ],
    ] as const) {
      const run = await runCliHere(args, input);
      expect([run.status, run.stderr]).toEqual([1, `fact-tracker replay: nothing saved into ${file}: ${reason}\n`]);
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
    const fresh = join(dir, 'fresh.json');
    expect((await runCliHere(['replay', blank, '--save', fresh])).status).toBe(1);
    expect(existsSync(fresh)).toBe(false);
  });

  it('saves what a compaction leaves of the results it emptied (the files their tasks changed, the closed pairs), and never says the contract rejected a result it took', async () => {
    const dir = tempDir('save-compacted-');
    const file = join(dir, 'state.json');
    // Every fact went, yet the store keeps what task 1 changed and when src/a.ts was closed.
    const emptied = [
      '{"type":"dispatch","role":"implementer","taskId":"1","at":1000,"result":{"task_id":"1","status":"completed","summary":"s","files_changed":["src/a.ts","src/b.ts"]}}',
      '{"type":"invalidate","subject":"src/a.ts","relation":"modified_by","at":2000}',
      '{"type":"compact","maxFacts":0,"at":3000}',
    ].join('\n');
    const saved = await runCliHere(['replay', '-', '--json', '--save', file], `${emptied}\n`);
    expect([saved.status, saved.stderr]).toEqual([0, '']);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      pairs: [],
      files: [
        { taskId: '1', subject: 'src/a.ts', relation: 'modified_by' },
        { taskId: '1', subject: 'src/b.ts', relation: 'modified_by' },
      ],
      tombstones: [{ subject: 'src/a.ts', relation: 'modified_by', invalidatedAt: 2000 }],
    });
    // A result of no file, whose facts a compaction dropped, leaves nothing: the contract took it all the same.
    const fresh = join(dir, 'fresh.json');
    const nothing = await runCliHere(
      ['replay', '-', '--save', fresh],
      '{"type":"dispatch","role":"implementer","taskId":"1","result":{"task_id":"1","status":"completed","summary":"s"}}\n{"type":"compact","maxFacts":0}\n',
    );
    expect([nothing.status, nothing.stderr]).toEqual([
      1,
      `fact-tracker replay: nothing saved into ${fresh}: the history records no fact and no prompt (a compaction removed the facts the results added)\n`,
    ]);
    // A prompt refused for its task id is rejected with the code of a result (invalid_input), yet it is no result.
    const refusedPrompt = await runCliHere(
      ['replay', '-', '--save', fresh],
      [
        '{"type":"dispatch","role":"reviewer","taskId":"1","result":{"task_id":"1","assessment":"approved","strengths":[],"issues":[],"required_fixes":[]}}',
        '{"type":"compact","maxFacts":0}',
        `{"type":"prompt","taskId":"${'x'.repeat(60)}","taskPrompt":"Add a route"}`,
        '',
      ].join('\n'),
    );
    expect([refusedPrompt.status, refusedPrompt.stderr]).toEqual([
      1,
      `fact-tracker replay: nothing saved into ${fresh}: the history records no fact and no prompt (a compaction removed the facts the results added)\n`,
    ]);
    expect(existsSync(fresh)).toBe(false);
  });

  it('saves no empty ledger over the notes there from a conversation log that notes nothing (nothing piped in, a blank file, assistant messages only)', async () => {
    const { file, before, blank } = copiedBesideBlank((await savedStates()).notesOnly);
    for (const [args, input, reason] of [
      [['notes', 'replay', '-', '--save', file], '', 'the conversation log holds no line'],
      [['notes', 'replay', blank, '--json', '--save', file], undefined, 'the conversation log holds no line'],
      // Lines that apply, yet note nothing: the assistant's replies alone start no extraction.
      [
        ['notes', 'replay', '-', '--save', file],
        '{"type":"assistant","user":"maya","session":"s1","text":"Welcome back."}\n',
        'the conversation log holds no user message, extraction, end of stage or rewrite, only assistant messages',
      ],
    ] as const) {
      const run = await runCliHere(args, input);
      expect([run.status, run.stderr]).toEqual([1, `fact-tracker notes: nothing saved into ${file}: ${reason}\n`]);
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(sectionsOf(file).notes).toBe(13);
  });
});

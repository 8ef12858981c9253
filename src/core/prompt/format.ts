import { refuseUnlessDenseArray } from '../../base/record.js';
import { checkedFact, type SessionFact } from '../fact.js';
import { clipEnd, clipStart, collapseWhitespace } from '../../base/text.js';
import { DEFAULT_LAYOUT, type SectionLayout } from '../retrieve/defaults.js';

/** The header line of the injected section. */
export const SESSION_CONTEXT_HEADER = '[Session Context]';

/** The longest rendered fact line. */
export const MAX_LINE_LENGTH = 120;

/** The shortest object kept before the subject is clipped too. */
const OBJECT_FLOOR = 40;
const FIELD_LIMIT = 50;

const field = (value: unknown): string => collapseWhitespace(typeof value === 'string' ? value : String(value ?? ''));

/**
 * Lines already drawn, by fact: facts are frozen values, so a line drawn once is the line
 * forever, and the budget stage draws the same facts' lines again for every candidate it tries.
 */
export type FactLines = WeakMap<SessionFact, string>;

/** An empty table of lines. */
export const createFactLines = (): FactLines => new WeakMap();

/** The lines `formatFactLine` and `formatSessionFacts` remember when given no table of their own. */
export const factLines: FactLines = createFactLines();

const drawFactLine = (fact: SessionFact): string => {
  const relation = clipEnd(field(fact.relation), FIELD_LIMIT);
  const taskId = clipEnd(field(fact.sourceTaskId), FIELD_LIMIT);
  const fixed = `-  ${relation}  [task:${taskId}]`.length;
  const room = MAX_LINE_LENGTH - fixed;
  let subject = field(fact.subject);
  let object = field(fact.object);
  if (subject.length + object.length > room) {
    const objectFloor = Math.min(object.length, OBJECT_FLOOR);
    if (subject.length + objectFloor <= room) {
      object = clipEnd(object, room - subject.length);
    } else {
      object = clipEnd(object, objectFloor);
      subject = clipStart(subject, Math.max(room - object.length, Math.min(subject.length, 3)));
      object = clipEnd(object, room - subject.length);
    }
  }
  return `- ${subject} ${relation} ${object} [task:${taskId}]`;
};

/**
 * One fact as a prompt line, `- {subject} {relation} {object} [task:{id}]`, at most 120
 * characters. Every field is whitespace-collapsed, so a fact can never start a new line.
 * Over-long lines clip the object first (keeping at least 40 characters of it when it can),
 * then the subject from the front, since a path's file name matters most.
 */
export const formatFactLine = (fact: SessionFact): string =>
  rememberedFactLine(checkedFact(fact, 'the fact'), factLines);

/** `formatFactLine`, remembered in `lines` (only a frozen fact's line: another may still change). */
export const rememberedFactLine = (fact: SessionFact, lines: FactLines): string => {
  const frozen = typeof fact === 'object' && fact !== null && Object.isFrozen(fact);
  const known = frozen ? lines.get(fact) : undefined;
  if (known !== undefined) return known;
  const line = drawFactLine(fact);
  if (frozen) lines.set(fact, line);
  return line;
};

/** Options of `formatSessionFacts`. */
export interface SectionFormatOptions {
  readonly layout?: SectionLayout;
  /** Where the lines drawn are remembered (default: `factLines`). */
  readonly lines?: FactLines;
}

/** A task id of no space and none of the characters a grouped line is made of (see `isPlainTaskId`). */
const PLAIN_ID = String.raw`[^\s,[\]]+`;
const PLAIN_TASK_ID = new RegExp(`^${PLAIN_ID}$`, 'u');
/** The start of the grouped line of a task's own files (`filesPrefix`), whose id is plain. */
const FILES_LINE = new RegExp(`^- task:${PLAIN_ID} modified `, 'u');

/**
 * A task id the grouped layout can name on a shared line: one that holds none of the characters
 * its lines are made of (`- task:3 modified a, b`, `[task:3,4]`), nor a space, so that it reads
 * as one id.
 */
const isPlainTaskId = (fact: SessionFact): boolean => PLAIN_TASK_ID.test(field(fact.sourceTaskId));

/**
 * True when `line` has the shape of a line `formatSessionFacts` draws after its header, in
 * either layout: `- ... [task:ID]` (one fact, or facts of one subject, ending with their tasks)
 * or `- task:ID modified a, b` (a task's own files). A reader that skips a section to find what
 * follows it (the hook looking for a `Task ID:` line) ends it at the first line of no such shape.
 */
export const isSectionFactLine = (line: string): boolean =>
  line.startsWith('- ') && ((line.endsWith(']') && line.lastIndexOf(' [task:') > 1) || FILES_LINE.test(line));

/**
 * `modified_by task:N` from task N, of a path and a task id a shared line can hold: the facts the
 * grouped layout lists as `- task:N modified a, b`. A path holding `, ` would read as two files.
 */
const isOwnFileChange = (fact: SessionFact): boolean =>
  fact.relation === 'modified_by' &&
  fact.object === `task:${fact.sourceTaskId}` &&
  isPlainTaskId(fact) &&
  !field(fact.subject).includes(', ');

/**
 * True when a fact can share its subject's line in the grouped layout: none of its text holds
 * the `; ` between the facts of a line or a `[task:` that would read as their tasks, and its
 * task id is plain. Text a model wrote could otherwise forge a second fact on the line
 * (`ok; must_fix delete the tests`); such a fact gets a line of its own, as in the default layout.
 */
const sharesLine = (fact: SessionFact): boolean =>
  isPlainTaskId(fact) && [fact.subject, fact.relation, fact.object].every((text) => !/; |\[task:/u.test(field(text)));

/**
 * The characters one fact adds to a section in a layout, its line break or separator included:
 * its line in `lines`; in `grouped`, a task's own file change adds its path and the `, ` after
 * it to the task's line (the line's `- task:N modified ` is shared), any other fact its line.
 */
export const factCost = (fact: SessionFact, layout: SectionLayout): number =>
  layout === 'grouped' && isOwnFileChange(fact)
    ? Math.min(field(fact.subject).length, MAX_LINE_LENGTH - filesPrefix(fact).length) + 2
    : formatFactLine(fact).length + 1;

/** The start of the grouped line of a task's own file changes: `- task:N modified `. */
const filesPrefix = (fact: SessionFact): string => `- task:${clipEnd(field(fact.sourceTaskId), FIELD_LIMIT)} modified `;

/** Groups in order of their first fact; facts in a group keep their order. */
const groupsOf = (facts: ReadonlyArray<SessionFact>): SessionFact[][] => {
  const groups = new Map<string, SessionFact[]>();
  for (const [i, fact] of facts.entries()) {
    checkedFact(fact, `facts[${i}]`);
    const key = isOwnFileChange(fact)
      ? `files\u0000${field(fact.sourceTaskId)}`
      : sharesLine(fact)
        ? `subject\u0000${field(fact.subject)}`
        : `alone\u0000${i}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [fact]);
    else group.push(fact);
  }
  return [...groups.values()];
};

/**
 * Packs items after a fixed prefix into lines of at most MAX_LINE_LENGTH characters, each line
 * ending with the suffix of the items it holds (`suffixOf(from, to)`, the items' indexes); an
 * item too long for a line of its own is clipped by `alone`.
 */
const pack = (
  prefix: string,
  items: ReadonlyArray<string>,
  separator: string,
  suffixOf: (from: number, to: number) => string,
  alone: (item: string, room: number) => string,
): string[] => {
  const lines: string[] = [];
  let current: string[] = [];
  let start = 0;
  const render = (parts: ReadonlyArray<string>, from: number): string =>
    `${prefix}${parts.join(separator)}${suffixOf(from, from + parts.length)}`;
  items.forEach((item, at) => {
    if (current.length > 0 && render([...current, item], start).length <= MAX_LINE_LENGTH) {
      current.push(item);
      return;
    }
    if (current.length > 0) lines.push(render(current, start));
    start = at;
    current = [alone(item, MAX_LINE_LENGTH - render([''], at).length)];
  });
  if (current.length > 0) lines.push(render(current, start));
  return lines;
};

const taskSuffix = (group: ReadonlyArray<SessionFact>): string => {
  const tasks = [...new Set(group.map((fact) => clipEnd(field(fact.sourceTaskId), FIELD_LIMIT)))];
  return ` [task:${clipEnd(tasks.join(','), FIELD_LIMIT)}]`;
};

/**
 * The lines of one group: a task's own file changes as `- task:N modified a, b, c`, the facts of
 * one subject as `- subject relation object; relation object [task:...]` (the tasks of the facts
 * on that line), as many lines of at most MAX_LINE_LENGTH characters as they need. Every field is
 * collapsed first, as in `formatFactLine`. The subject is clipped for the tasks of the whole
 * group, which no line's are longer than.
 */
const groupLines = (group: ReadonlyArray<SessionFact>, lines: FactLines): string[] => {
  const first = group[0]!;
  if (isOwnFileChange(first)) {
    return pack(
      filesPrefix(first),
      group.map((fact) => field(fact.subject)),
      ', ',
      () => '',
      clipStart,
    );
  }
  if (group.length === 1) return [rememberedFactLine(first, lines)];
  const suffix = taskSuffix(group);
  // The subject gives way to the facts: at most half a line, and less when the tasks' ids are
  // long, so that every fact keeps OBJECT_FLOOR characters of what it says (`- ` and a space aside).
  const subject = clipStart(
    field(first.subject),
    Math.min(MAX_LINE_LENGTH / 2, MAX_LINE_LENGTH - suffix.length - 3 - OBJECT_FLOOR),
  );
  const items = group.map((fact) => `${clipEnd(field(fact.relation), FIELD_LIMIT)} ${field(fact.object)}`);
  // Each line names the tasks of the facts it holds, not those of the whole subject.
  return pack(`- ${subject} `, items, '; ', (from, to) => taskSuffix(group.slice(from, to)), clipEnd);
};

/**
 * The `[Session Context]` section for `facts`: the header and the facts' lines, or `''` for none.
 * The default layout is one line per fact (`formatFactLine`), in the given order; `grouped` puts
 * a task's own file changes on one line and a subject's facts together (groups in the order of
 * their first fact), to fit more facts in the same tokens. Every line is at most 120 characters
 * and untrusted text stays on its line in both.
 */
export const formatSessionFacts = (facts: ReadonlyArray<SessionFact>, options?: SectionFormatOptions): string => {
  refuseUnlessDenseArray('the facts', facts, 'an array of facts');
  if (facts.length === 0) return '';
  const lines = options?.lines ?? factLines;
  const drawn =
    (options?.layout ?? DEFAULT_LAYOUT) === 'grouped'
      ? groupsOf(facts).flatMap((group) => groupLines(group, lines))
      : // Every index, a hole's too (map would leave it a hole, joined as a blank line).
        Array.from(facts, (fact, i) => rememberedFactLine(checkedFact(fact, `facts[${i}]`), lines));
  return [SESSION_CONTEXT_HEADER, ...drawn].join('\n');
};

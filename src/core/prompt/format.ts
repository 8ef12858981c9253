import { refuseUnlessDenseArray } from '../../base/record.js';
import { checkedFact, type SessionFact } from '../fact.js';
import { clipEndRedacted, clipStartRedacted } from '../../base/secrets.js';
import { collapseWhitespace } from '../../base/text.js';
import type { SectionFill } from '../retrieve/budget.js';
import { DEFAULT_LAYOUT, type SectionLayout } from '../retrieve/defaults.js';
import { PLAIN_TASK_ID, SESSION_CONTEXT_HEADER } from '../search/sectionLines.js';

export { SESSION_CONTEXT_HEADER };

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
  const relation = clipEndRedacted(field(fact.relation), FIELD_LIMIT);
  const taskId = clipEndRedacted(field(fact.sourceTaskId), FIELD_LIMIT);
  const fixed = `-  ${relation}  [task:${taskId}]`.length;
  const room = MAX_LINE_LENGTH - fixed;
  let subject = field(fact.subject);
  let object = field(fact.object);
  if (subject.length + object.length > room) {
    const objectFloor = Math.min(object.length, OBJECT_FLOOR);
    if (subject.length + objectFloor <= room) {
      object = clipEndRedacted(object, room - subject.length);
    } else {
      object = clipEndRedacted(object, objectFloor);
      subject = clipStartRedacted(subject, Math.max(room - object.length, Math.min(subject.length, 3)));
      object = clipEndRedacted(object, room - subject.length);
    }
  }
  return `- ${subject} ${relation} ${object} [task:${taskId}]`;
};

/**
 * One fact as a prompt line, `- {subject} {relation} {object} [task:{id}]`, at most 120
 * characters. Every field is whitespace-collapsed, so a fact can never start a new line.
 * Over-long lines clip the object first (keeping at least 40 characters of it when it can),
 * then the subject from the front, since a path's file name matters most. A secret a cut makes
 * of a field holding none (the first characters of a token too long to match) is redacted.
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
  /** Where the lines drawn are remembered (default: `factLines`, as for a value that is no WeakMap). */
  readonly lines?: FactLines;
}

/**
 * A task id the grouped layout can name on a shared line: one that holds none of the characters
 * its lines are made of (`- task:3 modified a, b`, `[task:3,4]`), nor a space, so that it reads
 * as one id.
 */
const isPlainTaskId = (fact: SessionFact): boolean => PLAIN_TASK_ID.test(field(fact.sourceTaskId));

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
const filesPrefix = (fact: SessionFact): string =>
  `- task:${clipEndRedacted(field(fact.sourceTaskId), FIELD_LIMIT)} modified `;

/** What a group of the grouped layout holds: a task's own file changes, the facts of one subject, or one fact alone. */
type GroupKind = 'files' | 'subject' | 'alone';

/** The kind of group a fact joins, and the group's key (`at` is the fact's position in the section). */
const groupOf = (fact: SessionFact, at: number): { kind: GroupKind; key: string } =>
  isOwnFileChange(fact)
    ? { kind: 'files', key: `files\u0000${field(fact.sourceTaskId)}` }
    : sharesLine(fact)
      ? { kind: 'subject', key: `subject\u0000${field(fact.subject)}` }
      : { kind: 'alone', key: `alone\u0000${at}` };

/** Groups in order of their first fact; facts in a group keep their order. */
const groupsOf = (facts: ReadonlyArray<SessionFact>): Array<{ kind: GroupKind; facts: SessionFact[] }> => {
  const groups = new Map<string, { kind: GroupKind; facts: SessionFact[] }>();
  for (const [i, fact] of facts.entries()) {
    const { kind, key } = groupOf(checkedFact(fact, `facts[${i}]`), i);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { kind, facts: [fact] });
    else group.facts.push(fact);
  }
  return [...groups.values()];
};

/** Values pushed one at a time, the last on top: a group shares all it holds with the group one fact larger. */
type Stack<T> = { readonly top: T; readonly below: Stack<T> } | undefined;

const stackToArray = <T>(stack: Stack<T>): T[] => {
  const values: T[] = [];
  for (let at = stack; at !== undefined; at = at.below) values.push(at.top);
  return values.reverse();
};

const taskIdOf = (fact: SessionFact): string => clipEndRedacted(field(fact.sourceTaskId), FIELD_LIMIT);

/** The end of a subject's line: ` [task:...]`, the tasks of `ids` (each once) clipped as one field. */
const taskSuffix = (ids: ReadonlyArray<string>): string => ` [task:${clipEndRedacted(ids.join(','), FIELD_LIMIT)}]`;

/**
 * The tasks of a group's facts, each once, in the order they first come, as far as its
 * `taskSuffix` shows them: past FIELD_LIMIT characters the clipped list no longer changes, so
 * no more are kept, and a group of any size holds a few.
 */
interface GroupTasks {
  readonly ids: ReadonlyArray<string>;
  /** The length of `ids.join(',')`. */
  readonly length: number;
}

const NO_TASKS: GroupTasks = { ids: [], length: -1 };

const withTask = (tasks: GroupTasks, fact: SessionFact): GroupTasks => {
  if (tasks.length > FIELD_LIMIT) return tasks;
  const id = taskIdOf(fact);
  return tasks.ids.includes(id) ? tasks : { ids: [...tasks.ids, id], length: tasks.length + 1 + id.length };
};

/**
 * How a group's facts are packed into lines of at most MAX_LINE_LENGTH characters: after a
 * fixed prefix, each fact's item, separated, and the end of the line from the facts it holds;
 * an item too long for a line of its own is clipped by `alone`.
 */
interface Packing {
  readonly prefix: string;
  readonly separator: string;
  readonly itemOf: (fact: SessionFact) => string;
  readonly suffixOf: (facts: ReadonlyArray<SessionFact>) => string;
  readonly alone: (item: string, room: number) => string;
}

/**
 * The packing of a group of two facts or more: a task's own file changes as `- task:N modified
 * a, b, c`, the facts of one subject as `- subject relation object; relation object [task:...]`
 * (the tasks of the facts on that line). Every field is collapsed first, as in `formatFactLine`.
 * The subject is clipped for the tasks of the whole group (`tasks`), which no line's are longer than.
 */
const packingOf = (kind: GroupKind, first: SessionFact, tasks: GroupTasks): Packing => {
  if (kind === 'files')
    return {
      prefix: filesPrefix(first),
      separator: ', ',
      itemOf: (fact) => field(fact.subject),
      suffixOf: () => '',
      alone: clipStartRedacted,
    };
  // The subject gives way to the facts: at most half a line, and less when the tasks' ids are
  // long, so that every fact keeps OBJECT_FLOOR characters of what it says (`- ` and a space aside).
  const subject = clipStartRedacted(
    field(first.subject),
    Math.min(MAX_LINE_LENGTH / 2, MAX_LINE_LENGTH - taskSuffix(tasks.ids).length - 3 - OBJECT_FLOOR),
  );
  return {
    prefix: `- ${subject} `,
    separator: '; ',
    itemOf: (fact) => `${clipEndRedacted(field(fact.relation), FIELD_LIMIT)} ${field(fact.object)}`,
    // Each line names the tasks of the facts it holds, not those of the whole subject.
    suffixOf: (facts) => taskSuffix([...new Set(facts.map(taskIdOf))]),
    alone: clipEndRedacted,
  };
};

/** The last line of a group, still open to more facts: its facts, their items (the first clipped if it had to be) and its text. */
interface OpenLine {
  readonly facts: ReadonlyArray<SessionFact>;
  readonly items: ReadonlyArray<string>;
  readonly text: string;
}

const lineText = (packing: Packing, items: ReadonlyArray<string>, facts: ReadonlyArray<SessionFact>): string =>
  `${packing.prefix}${items.join(packing.separator)}${packing.suffixOf(facts)}`;

/** A line that starts with `fact`, its item clipped to the room the line leaves it. */
const startLine = (packing: Packing, fact: SessionFact): OpenLine => {
  const items = [packing.alone(packing.itemOf(fact), MAX_LINE_LENGTH - lineText(packing, [''], [fact]).length)];
  return { facts: [fact], items, text: lineText(packing, items, [fact]) };
};

/**
 * A group's lines: those finished (the last on top) and the open one. `prefix` is its packing's,
 * or undefined for a group of one fact that is not a task's file change, whose line is the
 * fact's own. Immutable: the group one fact larger shares what this one holds, so a fact can be
 * tried and left out at the cost of its line (`addToGroup`).
 */
interface GroupLines {
  readonly first: SessionFact;
  readonly facts: Stack<SessionFact>;
  readonly tasks: GroupTasks;
  readonly prefix: string | undefined;
  readonly finished: Stack<string>;
  /** The characters of the finished lines, a line break each. */
  readonly finishedLength: number;
  readonly open: OpenLine;
}

/** `group` with `fact` packed after its facts: on the open line if the line still fits, else on a line of its own. */
const packFact = (group: GroupLines, packing: Packing, fact: SessionFact): GroupLines => {
  const { open } = group;
  const facts: Stack<SessionFact> = { top: fact, below: group.facts };
  const joined = { facts: [...open.facts, fact], items: [...open.items, packing.itemOf(fact)] };
  const text = lineText(packing, joined.items, joined.facts);
  if (text.length <= MAX_LINE_LENGTH) return { ...group, facts, open: { ...joined, text } };
  return {
    ...group,
    facts,
    finished: { top: open.text, below: group.finished },
    finishedLength: group.finishedLength + open.text.length + 1,
    open: startLine(packing, fact),
  };
};

/** The lines of a group's facts (at least one). */
const drawGroup = (kind: GroupKind, facts: ReadonlyArray<SessionFact>, lines: FactLines): GroupLines => {
  const first = facts[0]!;
  const tasks = facts.reduce(withTask, NO_TASKS);
  const packing = kind === 'files' || facts.length > 1 ? packingOf(kind, first, tasks) : undefined;
  let group: GroupLines = {
    first,
    facts: { top: first, below: undefined },
    tasks,
    prefix: packing?.prefix,
    finished: undefined,
    finishedLength: 0,
    open:
      packing === undefined
        ? { facts: [first], items: [], text: rememberedFactLine(first, lines) }
        : startLine(packing, first),
  };
  if (packing !== undefined) for (const fact of facts.slice(1)) group = packFact(group, packing, fact);
  return group;
};

/**
 * `group` with `fact` after its facts, exactly `drawGroup` of them all: packed onto its last
 * line, unless the group's prefix changes (its subject clipped for longer tasks, or its second
 * fact), which draws the group again. A subject's prefix changes only with a new task while its
 * tasks' list is at most FIELD_LIMIT characters long (`GroupTasks`), so about FIELD_LIMIT / 2
 * times at most: a group of any size is drawn in time linear in its facts.
 */
const addToGroup = (
  group: GroupLines | undefined,
  kind: GroupKind,
  fact: SessionFact,
  lines: FactLines,
): GroupLines => {
  if (group === undefined) return drawGroup(kind, [fact], lines);
  const tasks = withTask(group.tasks, fact);
  const packing = packingOf(kind, group.first, tasks);
  return packing.prefix === group.prefix
    ? { ...packFact(group, packing, fact), tasks }
    : drawGroup(kind, [...stackToArray(group.facts), fact], lines);
};

/** The group's lines, in order. */
const linesOfGroup = (group: GroupLines): string[] => [...stackToArray(group.finished), group.open.text];

/** The characters of a group's lines, a line break each. */
const groupLength = (group: GroupLines): number => group.finishedLength + group.open.text.length + 1;

const lineFill = (lines: FactLines): SectionFill => {
  let section = '';
  return {
    tryFact: (fact) => {
      const line = rememberedFactLine(checkedFact(fact, 'the fact'), lines);
      const text = `${section === '' ? SESSION_CONTEXT_HEADER : section}\n${line}`;
      return { length: text.length, text: () => text, take: () => (section = text) };
    },
  };
};

const groupedFill = (lines: FactLines): SectionFill => {
  const groups = new Map<string, GroupLines>();
  let taken = 0;
  // The characters of the groups' lines, a line break each: the section less its header.
  let length = 0;
  return {
    tryFact: (fact) => {
      const { kind, key } = groupOf(checkedFact(fact, `facts[${taken}]`), taken);
      const before = groups.get(key);
      const group = addToGroup(before, kind, fact, lines);
      const added = groupLength(group) - (before === undefined ? 0 : groupLength(before));
      return {
        length: SESSION_CONTEXT_HEADER.length + length + added,
        text: () => {
          const drawn = [SESSION_CONTEXT_HEADER];
          for (const [at, other] of groups) drawn.push(...linesOfGroup(at === key ? group : other));
          if (before === undefined) drawn.push(...linesOfGroup(group));
          return drawn.join('\n');
        },
        take: () => {
          groups.set(key, group);
          taken += 1;
          length += added;
        },
      };
    },
  };
};

/**
 * An empty section to fill one fact at a time in `layout`, its lines remembered in `lines`: each
 * trial costs the fact's own line (the lines layout) or its group's last line (the grouped one,
 * `addToGroup`), not the whole section.
 */
export const createSectionFill = (layout: SectionLayout, lines: FactLines = factLines): SectionFill =>
  layout === 'grouped' ? groupedFill(lines) : lineFill(lines);

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
  // An option not of its kind reads as its default, as a layout that is none does: a table that
  // is no WeakMap would fail deep inside on the first frozen fact, which every store's fact is.
  const given = options?.lines;
  const lines = given instanceof WeakMap ? given : factLines;
  const drawn =
    (options?.layout ?? DEFAULT_LAYOUT) === 'grouped'
      ? groupsOf(facts).flatMap((group) => linesOfGroup(drawGroup(group.kind, group.facts, lines)))
      : // Every index, a hole's too (map would leave it a hole, joined as a blank line).
        Array.from(facts, (fact, i) => rememberedFactLine(checkedFact(fact, `facts[${i}]`), lines));
  return [SESSION_CONTEXT_HEADER, ...drawn].join('\n');
};

import type { SessionFact } from '../fact.js';
import { clipEnd, clipStart, collapseWhitespace } from '../base/text.js';

/** The header line of the injected section. */
export const SESSION_CONTEXT_HEADER = '[Session Context]';

/** The longest rendered fact line. */
export const MAX_LINE_LENGTH = 120;

/** The shortest object kept before the subject is clipped too. */
const OBJECT_FLOOR = 40;
const FIELD_LIMIT = 50;

const field = (value: unknown): string => collapseWhitespace(typeof value === 'string' ? value : String(value ?? ''));

/**
 * One fact as a prompt line, `- {subject} {relation} {object} [task:{id}]`, at most 120
 * characters. Every field is whitespace-collapsed, so a fact can never start a new line.
 * Over-long lines clip the object first (keeping at least 40 characters of it when it can),
 * then the subject from the front, since a path's file name matters most.
 */
export const formatFactLine = (fact: SessionFact): string => {
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

/** The `[Session Context]` section for `facts`: the header and one line per fact, or `''` for none. */
export const formatSessionFacts = (facts: ReadonlyArray<SessionFact>): string =>
  !Array.isArray(facts) || facts.length === 0 ? '' : [SESSION_CONTEXT_HEADER, ...facts.map(formatFactLine)].join('\n');

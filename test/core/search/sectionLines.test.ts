/**
 * `withoutSessionContext`: a prompt's own words, without the `[Session Context]` sections it
 * carries from an earlier prompt.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatSessionFacts, makeFact, type SessionFact } from '../../../src/index.js';
import { SECTION_LAYOUTS } from '../../../src/core/retrieve/defaults.js';
import {
  isSectionFactLine,
  SESSION_CONTEXT_HEADER,
  withoutSessionContext,
} from '../../../src/core/search/sectionLines.js';

const fact = (subject: string, relation: string, object: string, task: string): SessionFact =>
  makeFact({
    subject,
    relation,
    object,
    sourceTaskId: task,
    sourceRole: 'implementer',
    tags: ['file_change'],
    validFrom: 1_000,
    confidence: 1,
  });

const section = formatSessionFacts([
  fact('src/a.ts', 'modified_by', 'task:3', '3'),
  fact('Task ID: 9', 'issue', 'read twice', '3'),
  fact('src/b.ts', 'convention', 'money is integer cents', '4'),
]);

describe('withoutSessionContext', () => {
  it('gives back the very string of a prompt that holds no section header', () => {
    const prompt = 'fix the login\r\n- task:3 modified src/a.ts [task:3]\n';
    expect(withoutSessionContext(prompt)).toBe(prompt);
  });

  it('takes out a leading section and the blank line after it', () => {
    expect(withoutSessionContext(`${section}\n\nTask ID: 4\nfix the login`)).toBe('Task ID: 4\nfix the login');
  });

  it('takes out a section between two parts of a prompt, leaving their own line breaks as written', () => {
    expect(withoutSessionContext(`add a cache\r\n\r\n${section}\n\nthen the docs\r\n`)).toBe(
      'add a cache\r\n\r\nthen the docs\r\n',
    );
  });

  it("ends a section at the first line of no fact line's shape: an orchestrator's bulleted task line stays", () => {
    expect(withoutSessionContext(`${section}\n- Task ID: 4\n- fix src/a.ts`)).toBe('- Task ID: 4\n- fix src/a.ts');
  });

  it('keeps a line of fact shape that follows the blank line after a section: the section ended there', () => {
    expect(withoutSessionContext(`${section}\n\n- keep this [task:2]`)).toBe('- keep this [task:2]');
  });

  it("ends a section at a line of millions of characters opening as a task's files line, outside Latin-1", () => {
    // One match over such a line, 8.5 million characters, overflowed the engine's regexp stack.
    const line = `- task:${'x'.repeat(8_500_000)}設 modified src/a.ts`;
    expect(withoutSessionContext(`${section}\n${line}\nfix it`)).toBe(`${line}\nfix it`);
  });

  it('reads a header with spaces around it, under any line break, and a section that is all the prompt', () => {
    expect(withoutSessionContext(`  ${SESSION_CONTEXT_HEADER} \u2028- src/a.ts modified_by task:3 [task:3]`)).toBe('');
    expect(withoutSessionContext(section)).toBe('');
  });

  it('a section of arbitrary facts in either layout, put before, between or after any lines, is all it takes out', () => {
    const factArb = fc
      .record({
        subject: fc.string({ minLength: 1, maxLength: 60 }),
        relation: fc.constantFrom('modified_by', 'issue', 'convention', 'summary'),
        object: fc.string({ minLength: 1, maxLength: 80 }),
        task: fc.constantFrom('1', '2', '12', 'T-9'),
      })
      .map(({ subject, relation, object, task }) => fact(subject, relation, object, task));
    // Text of the prompt's own: no header of its own, and a first line after the section of no fact line's shape.
    const textArb = fc.string({ maxLength: 200 }).filter((text) => !text.includes(SESSION_CONTEXT_HEADER));
    fc.assert(
      fc.property(
        fc.array(factArb, { minLength: 1, maxLength: 8 }),
        fc.constantFrom(...SECTION_LAYOUTS),
        textArb,
        textArb,
        fc.constantFrom('\n', '\r\n', '\n\n', '\r\n\r\n'),
        (facts, layout, before, after, gap) => {
          const drawn = formatSessionFacts(facts, { layout });
          const head = before === '' ? '' : `${before}\n`;
          const tail = `x${after}`;
          expect(isSectionFactLine(tail.split(/\r\n|[\n\r\u2028\u2029]/u)[0]!)).toBe(false);
          expect(withoutSessionContext(`${head}${drawn}${gap}${tail}`)).toBe(`${head}${tail}`);
        },
      ),
      { numRuns: 300 },
    );
  });
});

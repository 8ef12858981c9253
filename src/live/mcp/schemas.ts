/**
 * The tools' input and output schemas (zod, published as JSON Schema by the SDK), and the
 * shapes answers take. Every bound is a number of src/live/session/limits.ts, so what the
 * server takes is what the session and the hooks take.
 */
import { z } from 'zod';
import { collapseWhitespace } from '../../base/text.js';
import { BEGIN_MARKER } from '../../core/extract/parse.js';
import { FACT_TAGS, type SessionFact, SOURCE_ROLES } from '../../core/fact.js';
import type { RetrievalDecision } from '../../core/retrieve/retrieve.js';
import { DEFAULT_MAX_FACTS, DEFAULT_MAX_TOKENS, SECTION_LAYOUTS } from '../../core/retrieve/defaults.js';
import {
  MAX_OUTPUT_LENGTH,
  MAX_PROMPT_LENGTH,
  MAX_RELATION_LENGTH,
  MAX_SECTION_FACTS,
  MAX_SECTION_TOKENS,
  MAX_SESSION_ID_LENGTH,
  MAX_SUBJECT_LENGTH,
  MAX_TASK_ID_LENGTH,
  MAX_TIME_LENGTH,
} from '../session/limits.js';

/**
 * A bound of a string argument that the SDK checks before a tool runs: its message starts with
 * the code the tool error gets (see `codedToolError`), so a caller can branch on it.
 */
const bounded = (code: string, name: string, limit: number, unit = 'characters') =>
  z.string().max(limit, { error: () => `${code}: ${name} is over ${limit.toLocaleString('en-US')} ${unit}` });

/**
 * The error of an argument that is neither of a union's two kinds, saying which two (zod's own
 * is "Invalid input"); the issue of a value of one kind that breaks its bound is left as it is.
 */
const neither =
  (expected: string) =>
  (issue: { readonly code?: string }): string | undefined =>
    issue.code === 'invalid_union' ? `Invalid input: expected ${expected}` : undefined;

const Time = z
  .union([z.string().max(MAX_TIME_LENGTH), z.number()], {
    error: neither('ISO-8601 text or epoch milliseconds (a finite number)'),
  })
  .describe('ISO-8601 (2026-03-02T10:00:00Z) or epoch milliseconds; default: now');
const SessionId = z
  .string()
  .max(MAX_SESSION_ID_LENGTH, {
    error: () => `invalid_session_id: the session id is over ${MAX_SESSION_ID_LENGTH} characters`,
  })
  .describe(
    `The session: 1 to ${MAX_SESSION_ID_LENGTH} letters, digits, "_", "-" or "."; one per orchestrator session`,
  );
/**
 * A task id as clients send it: text, or an integer, which some clients send for an id of
 * digits (recorded as its decimal digits, see `taskIdText`). Only safe integers: a larger one
 * has already lost its digits when the JSON was read.
 */
const TaskId = (what: string) =>
  z
    .union(
      [
        // Bounded as facts carry it, whitespace collapsed, as the session and the hook bound it. The
        // schema publishes the limit as `maxLength`, which a client checks on the text as it is: an id
        // that is longer only by its whitespace is still taken here.
        z
          .string()
          .refine((taskId) => collapseWhitespace(taskId).length <= MAX_TASK_ID_LENGTH, {
            error: () => `invalid_field: taskId is over ${MAX_TASK_ID_LENGTH} characters once whitespace is collapsed`,
          })
          .meta({ maxLength: MAX_TASK_ID_LENGTH }),
        z.int({
          error: () => 'invalid_field: taskId, given as a number, is not an integer between -(2^53 - 1) and 2^53 - 1',
        }),
      ],
      {
        error: (issue) =>
          issue.code === 'invalid_union' ? 'invalid_field: taskId is neither text nor an integer' : undefined,
      },
    )
    .describe(
      `${what}: at most ${MAX_TASK_ID_LENGTH} characters once whitespace is collapsed (recorded so), or an integer (recorded as its decimal digits)`,
    );

/** The task id a tool hands the session: text as given (the session collapses its whitespace), an integer as its decimal digits. */
export const taskIdText = (taskId: string | number): string => (typeof taskId === 'number' ? String(taskId) : taskId);
const TaskPrompt = bounded('prompt_too_large', 'taskPrompt', MAX_PROMPT_LENGTH);
const Limit = (fallback: number) =>
  z.number().int().min(1).max(1_000).optional().describe(`At most this many (default ${fallback})`);

const TripleOut = z.object({ subject: z.string(), relation: z.string(), object: z.string() });
const FactOut = TripleOut.extend({
  tags: z.array(z.string()),
  validFrom: z.string(),
  validTo: z.string().optional(),
  sourceTaskId: z.string(),
  sourceRole: z.string(),
});
/** A fact as a tool answers it. */
export type FactOut = z.infer<typeof FactOut>;

/** The input of `ingest_result`. */
export const IngestIn = z
  .object({
    sessionId: SessionId,
    taskId: TaskId('The task the subagent worked on'),
    role: z.enum(SOURCE_ROLES),
    output: z
      .union([bounded('output_too_large', 'output', MAX_OUTPUT_LENGTH), z.record(z.string(), z.unknown())], {
        error: neither("the subagent's final message (text) or its result object"),
      })
      .describe(
        `The subagent's final message (with the ${BEGIN_MARKER} block) or the result object; at most ${MAX_OUTPUT_LENGTH} characters (the object as JSON)`,
      ),
    at: Time.optional(),
  })
  .strict();
/** The answer of `ingest_result`. */
export const IngestOut = z.object({
  sessionId: z.string(),
  line: z.number(),
  duplicate: z.boolean(),
  facts: z.array(FactOut),
  omitted: z.number(),
  warnings: z.array(z.string()),
});

/** A section's token budget, and its count of facts, as a call may give them. */
const SectionTokens = z.number().int().min(0).max(MAX_SECTION_TOKENS).optional();
const SectionFacts = z.number().int().min(0).max(MAX_SECTION_FACTS).optional();

/** The input of `compile_context`. */
export const CompileIn = z
  .object({
    sessionId: SessionId,
    taskId: TaskId('The task about to be dispatched'),
    taskPrompt: TaskPrompt.describe(`What the subagent will be asked to do (at most ${MAX_PROMPT_LENGTH} characters)`),
    tags: z.array(z.enum(FACT_TAGS)).max(FACT_TAGS.length).optional().describe('Only facts with one of these tags'),
    maxTokens: SectionTokens.meta({ default: DEFAULT_MAX_TOKENS }).describe(
      `Token budget of the section (default ${DEFAULT_MAX_TOKENS})`,
    ),
    maxFacts: SectionFacts.meta({ default: DEFAULT_MAX_FACTS }).describe(
      `Facts in the section (default ${DEFAULT_MAX_FACTS})`,
    ),
    layout: z
      .enum(SECTION_LAYOUTS)
      .optional()
      .describe(
        "The section's layout: lines, one line per fact; grouped, a task's files on one line (default: the server's, lines unless set)",
      ),
    at: Time.optional(),
  })
  .strict();
/** The answer of `compile_context`. */
export const CompileOut = z.object({
  sessionId: z.string(),
  line: z.number(),
  duplicate: z.boolean(),
  sessionContext: z.string(),
  facts: z.array(TripleOut),
  omitted: z.number(),
});

/** What an explanation's settings default to: those of the prompt as it was recorded, else the server's. */
const AS_RECORDED = "default: the latest prompt of this task and text as it was recorded, else the server's";

/** The input of `explain_context`: the section explained is made as the prompt's own was. */
export const ExplainIn = z
  .object({
    sessionId: SessionId,
    taskId: TaskId('The task'),
    taskPrompt: TaskPrompt,
    tags: z
      .array(z.enum(FACT_TAGS))
      .max(FACT_TAGS.length)
      .optional()
      .describe(`Only facts with one of these tags (${AS_RECORDED})`),
    maxTokens: SectionTokens.describe(`Token budget of the section (${AS_RECORDED}, ${DEFAULT_MAX_TOKENS})`),
    maxFacts: SectionFacts.describe(`Facts in the section (${AS_RECORDED}, ${DEFAULT_MAX_FACTS})`),
    layout: z.enum(SECTION_LAYOUTS).optional().describe(`The section's layout (${AS_RECORDED}, lines unless set)`),
    limit: Limit(30),
  })
  .strict();
const DecisionOut = TripleOut.extend({
  decision: z.enum(['included', 'excluded']),
  reason: z.string().optional(),
  score: z.number(),
  parts: z
    .object({
      terms: z.array(z.object({ term: z.string(), contribution: z.number() })),
      feedback: z.number(),
      context: z.number(),
      recency: z.number(),
      coChange: z.number(),
      base: z.number(),
      priors: z.array(z.string()),
      prior: z.number(),
      boost: z.number(),
      total: z.number(),
    })
    .optional(),
});
/** The answer of `explain_context`. */
export const ExplainOut = z.object({
  sessionId: z.string(),
  /** The recorded prompt whose settings the section was made with, when there is one. */
  line: z.number().optional(),
  layout: z.enum(SECTION_LAYOUTS),
  decisions: z.array(DecisionOut),
  total: z.number(),
  omitted: z.number(),
});

/** The input of `list_facts`. */
export const ListIn = z
  .object({
    sessionId: SessionId,
    subject: z
      .string()
      .max(MAX_SUBJECT_LENGTH)
      .optional()
      .describe('Only facts whose subject contains this, ignoring case'),
    tag: z.enum(FACT_TAGS).optional(),
    asOf: Time.optional().describe('The facts valid at this time (ISO-8601 or epoch ms)'),
    includeClosed: z.boolean().optional().describe('Closed facts too'),
    limit: Limit(50),
  })
  .strict();
/** The answer of `list_facts`. */
export const ListOut = z.object({
  sessionId: z.string(),
  facts: z.array(FactOut),
  total: z.number(),
  omitted: z.number(),
});

/** The input of `invalidate_fact`. */
export const InvalidateIn = z
  .object({
    sessionId: SessionId,
    subject: z.string().max(MAX_SUBJECT_LENGTH),
    relation: z.string().max(MAX_RELATION_LENGTH),
    at: Time.optional(),
  })
  .strict();
/** The answer of `invalidate_fact`. */
export const InvalidateOut = z.object({
  sessionId: z.string(),
  line: z.number(),
  duplicate: z.boolean(),
  closed: z.array(FactOut),
  omitted: z.number(),
});

/** Epoch milliseconds as ISO-8601, or as digits when the date cannot be written in ISO form. */
const isoTime = (at: number): string => {
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? String(at) : date.toISOString();
};

/** A fact as a tool answers it: times in ISO-8601. */
export const factOut = (fact: SessionFact): FactOut => ({
  subject: fact.subject,
  relation: fact.relation,
  object: fact.object,
  tags: [...fact.tags],
  validFrom: isoTime(fact.validFrom),
  ...(fact.validTo === undefined ? {} : { validTo: isoTime(fact.validTo) }),
  sourceTaskId: fact.sourceTaskId,
  sourceRole: fact.sourceRole,
});

/** A ranking decision as `explain_context` answers it. */
export const decisionOut = (entry: RetrievalDecision): z.infer<typeof DecisionOut> => ({
  subject: entry.fact.subject,
  relation: entry.fact.relation,
  object: entry.fact.object,
  decision: entry.decision,
  ...(entry.reason === undefined ? {} : { reason: entry.reason }),
  score: entry.score,
  ...(entry.parts === undefined
    ? {}
    : {
        parts: {
          terms: entry.parts.terms.map(({ term, contribution }) => ({ term, contribution })),
          feedback: entry.parts.feedback,
          context: entry.parts.context,
          recency: entry.parts.recency,
          coChange: entry.parts.coChange,
          base: entry.parts.base,
          priors: [...entry.parts.priors],
          prior: entry.parts.prior,
          boost: entry.parts.boost,
          total: entry.parts.total,
        },
      }),
});

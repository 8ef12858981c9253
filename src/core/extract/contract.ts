/**
 * The dispatch result contract (v1), as one zod schema per role. The same schemas validate
 * input and generate the JSON Schema that orchestrators hand to agents, so the two never drift;
 * the exported ones are twins built alike, so that a caller's change reaches neither.
 */
import * as E from 'fp-ts/lib/Either.js';
import { z } from 'zod';
import { type Failure, failure } from '../../base/failure.js';
import { readInput } from '../../base/record.js';
import { formatIssues, quoteValue } from '../../base/schema.js';
import type { SourceRole } from '../fact.js';

const testRunSchema = () =>
  z.object({
    command: z.string(),
    passed: z.boolean(),
    failures: z.array(z.string()).optional(),
  });

const reviewIssueSchema = () =>
  z.object({
    severity: z.enum(['critical', 'important', 'minor']),
    file: z.string().optional(),
    message: z.string(),
    fix: z.string(),
  });

const implementerResultSchema = () =>
  z.object({
    task_id: z.string(),
    status: z.enum(['completed', 'blocked', 'failed']),
    summary: z.string(),
    files_changed: z.array(z.string()).optional(),
    files_modified: z.array(z.string()).optional(),
    tests: z.array(testRunSchema()).optional(),
    follow_up_actions: z.array(z.string()).optional(),
  });

const reviewerResultSchema = () =>
  z.object({
    task_id: z.string(),
    assessment: z.enum(['approved', 'needs_changes', 'blocked']),
    strengths: z.array(z.string()).optional(),
    issues: z.array(reviewIssueSchema()).optional(),
    required_fixes: z.array(z.string()).optional(),
  });

/**
 * The implementer's result. `files_modified` is accepted as an older name of `files_changed`.
 * Yours to extend: the library validates with a schema of its own, built alike, since a zod
 * schema cannot be frozen and a change to its `shape` would reach every later validation.
 */
export const ImplementerResultSchema = implementerResultSchema();

/** The reviewer's result. Yours to extend, as `ImplementerResultSchema` is. */
export const ReviewerResultSchema = reviewerResultSchema();

/** The schemas the library validates with and publishes, out of every caller's reach. */
const CONTRACT = { implementer: implementerResultSchema(), reviewer: reviewerResultSchema() } as const;

/** An implementer dispatch result (contract v1). */
export type ImplementerResult = z.infer<typeof ImplementerResultSchema>;
/** A reviewer dispatch result (contract v1). */
export type ReviewerResult = z.infer<typeof ReviewerResultSchema>;
/** The result of either role. */
export type DispatchResult = ImplementerResult | ReviewerResult;

/** The contract of `role`; a role that is neither is the caller's mistake, refused by name rather than read as a reviewer. */
const schemaFor = (role: SourceRole) => {
  if (role === 'implementer') return CONTRACT.implementer;
  if (role === 'reviewer') return CONTRACT.reviewer;
  throw new TypeError(`unknown role ${quoteValue(role)}: expected implementer or reviewer`);
};

/**
 * Validates a parsed value against the role's contract; the failure (`schema_invalid`, as
 * `parseDispatchResult` gives it) names each offending field path (the first ten, then how many
 * more: a result of 100,000 bad entries gets a short message).
 */
export const validateDispatchResult = (
  value: unknown,
  role: SourceRole,
): E.Either<Failure<'schema_invalid'>, DispatchResult> => {
  const schema = schemaFor(role);
  // Read once into plain data first (as a parsed result is): a getter that throws, or a list with
  // a hole whose length of billions the schema would walk, is a result that fails, not a crash.
  const read = readInput('result', value, { everyObject: true });
  if (E.isLeft(read)) return E.left(failure('schema_invalid', read.left.message));
  const parsed = schema.safeParse(read.right);
  return parsed.success ? E.right(parsed.data) : E.left(failure('schema_invalid', formatIssues(parsed.error.issues)));
};

/**
 * The JSON Schema (draft 2020-12) of a role's result contract, generated from the validating
 * schema as the input it accepts: fields it does not know are allowed (and ignored), as the
 * validator allows them.
 */
export const dispatchResultJsonSchema = (role: SourceRole): Record<string, unknown> =>
  z.toJSONSchema(schemaFor(role), { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;

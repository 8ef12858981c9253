/**
 * The five tools, each one call of a live session: everything they record is a line of the
 * session's log, which `fact-tracker replay` reads back; each answer is bounded (answer.ts);
 * each failure is a tool error naming its code (errors.ts).
 */
import type { McpServer } from '@modelcontextprotocol/server';
import * as E from 'fp-ts/lib/Either.js';
import * as O from 'fp-ts/lib/Option.js';
import type { Failure } from '../../base/failure.js';
import { BEGIN_MARKER, END_MARKER } from '../../core/extract/parse.js';
import { selectFactsWhere } from '../../core/store/selectors.js';
import type { SessionPool } from '../session/pool.js';
import { atBoundary, failureAnswer, parseTimeArgument, type ToolAnswer } from './errors.js';
import {
  CompileIn,
  CompileOut,
  decisionOut,
  ExplainIn,
  ExplainOut,
  factOut,
  IngestIn,
  IngestOut,
  InvalidateIn,
  InvalidateOut,
  ListIn,
  ListOut,
  taskIdText,
} from './schemas.js';
import { DEFAULT_LAYOUT, type SectionLayout } from '../../core/retrieve/defaults.js';

/** Cuts an answer's list until the answer fits the server's bound (see `fitAnswer`). */
export type FitAnswer = <T>(
  list: ReadonlyArray<T>,
  build: (kept: ReadonlyArray<T>, omitted: number) => Record<string, unknown>,
) => E.Either<Failure, Record<string, unknown>>;

/** A bounded answer, as text (the JSON, or `text` when given) and as structured content. */
const toolAnswer = (
  answer: E.Either<Failure, Record<string, unknown>>,
  text?: (value: Record<string, unknown>) => string,
): ToolAnswer =>
  E.isLeft(answer)
    ? failureAnswer(answer.left)
    : {
        content: [{ type: 'text', text: text === undefined ? JSON.stringify(answer.right) : text(answer.right) }],
        structuredContent: answer.right,
      };

/** What the server's tools take when a call does not say. */
export interface ToolDefaults {
  /** The sections' layout (default `lines`). */
  readonly layout?: SectionLayout;
}

/** The facts of a section as an answer lists them. */
const triplesOf = (
  facts: ReadonlyArray<{ readonly subject: string; readonly relation: string; readonly object: string }>,
) => facts.map(({ subject, relation, object }) => ({ subject, relation, object }));

/** Registers the tools on `server`, over the sessions of `session`. */
export const registerTools = (
  server: McpServer,
  session: SessionPool,
  fit: FitAnswer,
  defaults: ToolDefaults = {},
): void => {
  server.registerTool(
    'ingest_result',
    {
      title: 'Record a subagent result',
      description: `Record a subagent's result in the session: its final message (the JSON between ${BEGIN_MARKER} and ${END_MARKER} lines) or the result object. Returns the facts extracted. Sending the same result again records nothing: with the same "at", or without "at" when it is the last result recorded for the task (same role and output).`,
      inputSchema: IngestIn,
      outputSchema: IngestOut,
      annotations: { idempotentHint: true, destructiveHint: false },
    },
    atBoundary(async ({ sessionId, taskId, role, output, at }) => {
      const time = parseTimeArgument(at, 'at');
      if (E.isLeft(time)) return failureAnswer(time.left);
      const live = await session(sessionId, true);
      if (E.isLeft(live)) return failureAnswer(live.left);
      const ingested = await live.right.ingestResult({
        role,
        taskId: taskIdText(taskId),
        output,
        ...(time.right === undefined ? {} : { at: time.right }),
      });
      if (E.isLeft(ingested)) return failureAnswer(ingested.left);
      const { line, duplicate, facts, warnings } = ingested.right;
      return toolAnswer(
        fit(facts.map(factOut), (kept, omitted) => ({ sessionId, line, duplicate, facts: kept, omitted, warnings })),
      );
    }),
  );

  server.registerTool(
    'compile_context',
    {
      title: 'Session context for a task',
      description:
        'Before dispatching a subagent: the [Session Context] section with the facts earlier tasks established that are relevant to this task, within a token budget. Put sessionContext into the subagent prompt. Records the prompt in the session (sent again with the same "at", it is not recorded twice).',
      inputSchema: CompileIn,
      outputSchema: CompileOut,
      annotations: { idempotentHint: false, destructiveHint: false },
    },
    atBoundary(async ({ sessionId, taskId, taskPrompt, tags, maxTokens: budget, maxFacts, layout, at }) => {
      const time = parseTimeArgument(at, 'at');
      if (E.isLeft(time)) return failureAnswer(time.left);
      const live = await session(sessionId, true);
      if (E.isLeft(live)) return failureAnswer(live.left);
      const chosen = layout ?? defaults.layout;
      const prompt = {
        taskId: taskIdText(taskId),
        taskPrompt,
        ...(tags === undefined ? {} : { tags }),
        ...(maxFacts === undefined ? {} : { maxFacts }),
        ...(budget === undefined ? {} : { maxTokens: budget }),
        ...(chosen === undefined ? {} : { layout: chosen }),
      };
      const answerOf =
        (line: number, duplicate: boolean, sessionContext: string) =>
        (kept: ReadonlyArray<unknown>, omitted: number) => ({
          sessionId,
          line,
          duplicate,
          sessionContext,
          facts: kept,
          omitted,
        });
      // A section is never cut (it is what replay gives): one whose answer cannot fit the bound is
      // refused as planned, in the step that would record it, so nothing is recorded.
      const compiled = await live.right.compileContext(
        { ...prompt, ...(time.right === undefined ? {} : { at: time.right }) },
        {
          accept: ({ line, sessionContext, facts }) =>
            E.mapLeft((failed: Failure) => ({
              code: 'answer_too_large' as const,
              message: `${failed.message}: the section does not fit in an answer of the server's --max-answer-tokens; nothing was recorded (ask for a smaller maxTokens)`,
            }))(fit(triplesOf(facts), answerOf(line, false, sessionContext))),
        },
      );
      if (E.isLeft(compiled)) return failureAnswer(compiled.left);
      const { line, duplicate, sessionContext, facts } = compiled.right;
      return toolAnswer(fit(triplesOf(facts), answerOf(line, duplicate, sessionContext)), () =>
        sessionContext === '' ? 'No session fact is relevant to this task yet.' : sessionContext,
      );
    }),
  );

  server.registerTool(
    'explain_context',
    {
      title: 'Why these facts',
      description:
        "For a task prompt: the facts ranked for it, each with its score, the parts of the score and whether it would be included (or why not), in the section made as the latest prompt of this task and text was recorded (its tags, limits and layout; else the server's), on the session as it is now. Records nothing.",
      inputSchema: ExplainIn,
      outputSchema: ExplainOut,
      annotations: { readOnlyHint: true },
    },
    atBoundary(async ({ sessionId, taskId, taskPrompt, tags, maxTokens, maxFacts, layout, limit = 30 }) => {
      const live = await session(sessionId, false);
      if (E.isLeft(live)) return failureAnswer(live.left);
      const asked = { taskId: taskIdText(taskId), taskPrompt };
      const recorded = await live.right.recordedPrompt(asked);
      if (E.isLeft(recorded)) return failureAnswer(recorded.left);
      // The section as it was given: the recorded prompt's settings, else the server's; the call's own go first.
      const { line, ...given } = O.isSome(recorded.right)
        ? recorded.right.value
        : { ...asked, line: undefined, ...(defaults.layout === undefined ? {} : { layout: defaults.layout }) };
      const query = {
        ...given,
        ...(tags === undefined ? {} : { tags }),
        ...(maxFacts === undefined ? {} : { maxFacts }),
        ...(maxTokens === undefined ? {} : { maxTokens }),
        ...(layout === undefined ? {} : { layout }),
      };
      const explained = await live.right.explainContext(query);
      if (E.isLeft(explained)) return failureAnswer(explained.left);
      const decisions = explained.right;
      const top = decisions.slice(0, limit).map(decisionOut);
      return toolAnswer(
        fit(top, (kept, omitted) => ({
          sessionId,
          ...(line === undefined ? {} : { line }),
          layout: query.layout ?? DEFAULT_LAYOUT,
          decisions: kept,
          total: decisions.length,
          omitted: omitted + decisions.length - top.length,
        })),
      );
    }),
  );

  server.registerTool(
    'list_facts',
    {
      title: 'List session facts',
      description: 'The facts of the session, oldest first, optionally by subject, tag or time; at most limit of them.',
      inputSchema: ListIn,
      outputSchema: ListOut,
      annotations: { readOnlyHint: true },
    },
    atBoundary(async ({ sessionId, subject, tag, asOf, includeClosed, limit = 50 }) => {
      const time = parseTimeArgument(asOf, 'asOf');
      if (E.isLeft(time)) return failureAnswer(time.left);
      const live = await session(sessionId, false);
      if (E.isLeft(live)) return failureAnswer(live.left);
      const store = await live.right.snapshot();
      if (E.isLeft(store)) return failureAnswer(store.left);
      const facts = selectFactsWhere(store.right, {
        all: includeClosed === true,
        ...(time.right === undefined ? {} : { asOf: time.right }),
        ...(tag === undefined ? {} : { tags: [tag] }),
        ...(subject === undefined ? {} : { subject }),
      });
      const first = facts.slice(0, limit).map(factOut);
      return toolAnswer(
        fit(first, (kept, omitted) => ({
          sessionId,
          facts: kept,
          total: facts.length,
          omitted: omitted + facts.length - first.length,
        })),
      );
    }),
  );

  server.registerTool(
    'invalidate_fact',
    {
      title: 'Close a fact',
      description:
        'Close the valid facts of a (subject, relation) pair, for example a file that was deleted. A pair asserted after "at" stays valid.',
      inputSchema: InvalidateIn,
      outputSchema: InvalidateOut,
      annotations: { idempotentHint: true, destructiveHint: true },
    },
    atBoundary(async ({ sessionId, subject, relation, at }) => {
      const time = parseTimeArgument(at, 'at');
      if (E.isLeft(time)) return failureAnswer(time.left);
      const live = await session(sessionId, false);
      if (E.isLeft(live)) return failureAnswer(live.left);
      const invalidated = await live.right.invalidateFact({
        subject,
        relation,
        ...(time.right === undefined ? {} : { at: time.right }),
      });
      if (E.isLeft(invalidated)) return failureAnswer(invalidated.left);
      const { line, duplicate, closed } = invalidated.right;
      return toolAnswer(
        fit(closed.map(factOut), (kept, omitted) => ({ sessionId, line, duplicate, closed: kept, omitted })),
      );
    }),
  );
};

/**
 * A dispatch history as MCP tool calls: the call an orchestrator makes for each event, with the
 * event's own time, so a history driven through the server can be compared with its replay.
 */
import type { HistoryEvent } from '../../../src/core/history/events.js';

/** The tool and arguments for `event` in session `sessionId`; undefined for an event no tool records (a compaction). */
export const toolCallOf = (
  event: HistoryEvent,
  sessionId: string,
): { readonly name: string; readonly args: Record<string, unknown> } | undefined => {
  switch (event.type) {
    case 'dispatch':
      return {
        name: 'ingest_result',
        args: { sessionId, taskId: event.taskId, role: event.role, output: event.output, at: event.at },
      };
    case 'invalidate':
      return {
        name: 'invalidate_fact',
        args: { sessionId, subject: event.subject, relation: event.relation, at: new Date(event.at).toISOString() },
      };
    case 'prompt':
      return {
        name: 'compile_context',
        args: {
          sessionId,
          taskId: event.taskId,
          taskPrompt: event.taskPrompt,
          ...(event.tags === undefined ? {} : { tags: event.tags }),
          ...(event.maxFacts === undefined ? {} : { maxFacts: event.maxFacts }),
          ...(event.maxTokens === undefined ? {} : { maxTokens: event.maxTokens }),
          at: event.at,
        },
      };
    default:
      return undefined;
  }
};

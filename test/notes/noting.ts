/** A model for tracker tests that notes each user message as a fact, keeping the facts its prompt shows. */
import type { CompleteFn } from '../../src/notes/port.js';

export const noting: CompleteFn = async (prompt) => {
  const shown = [...prompt.matchAll(/"fact":"([^"]*)"/gu)].map((match) => match[1]!);
  const latest = /Latest user message:\nUser: (.*)/u.exec(prompt)?.[1] ?? '';
  const facts = [...new Set([...shown, `Said ${latest}`])];
  return JSON.stringify({ notableFacts: facts.map((fact) => ({ category: 'History', fact })) });
};

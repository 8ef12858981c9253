/**
 * The seed design, built the way it describes, as the benchmark's baseline: a rule-based
 * extractor hashing with node:crypto, a mutable Map store that invalidates the previous fact
 * of a subject+relation on add, and a retriever that scans every valid fact and re-tokenizes
 * it for keyword overlap on every query. For comparison only; not part of the library.
 */
import { createHash } from 'node:crypto';
import type { ImplementerResult, ReviewerResult } from '../src/index.js';

export interface SeedFact {
  id: string;
  subject: string;
  relation: string;
  object: string;
  tags: string[];
  validFrom: Date;
  validTo?: Date;
  sourceTaskId: string;
  sourceRole: 'implementer' | 'reviewer';
  confidence: number;
}

const id = (s: string, r: string, o: string): string =>
  createHash('sha256')
    .update(s + r + o)
    .digest('hex')
    .slice(0, 16);
const clip = (text: string): string => (text.length > 120 ? `${text.slice(0, 117)}...` : text);

const fact = (
  subject: string,
  relation: string,
  object: string,
  tag: string,
  taskId: string,
  role: SeedFact['sourceRole'],
): SeedFact => ({
  id: id(subject, relation, object),
  subject,
  relation,
  object,
  tags: [tag],
  validFrom: new Date(),
  sourceTaskId: taskId,
  sourceRole: role,
  confidence: 1,
});

/** The seed design's extraction table, each rule guarded. */
export const seedExtractImplementer = (result: ImplementerResult, taskId: string): SeedFact[] => {
  const out: SeedFact[] = [];
  const task = `task:${taskId}`;
  const rules: Array<() => void> = [
    () => out.push(fact(task, 'completed_with', result.status, 'decision', taskId, 'implementer')),
    () => out.push(fact(task, 'summary', clip(result.summary), 'decision', taskId, 'implementer')),
    () =>
      (result.files_changed ?? []).forEach((path) =>
        out.push(fact(path, 'modified_by', task, 'file_change', taskId, 'implementer')),
      ),
    () =>
      (result.follow_up_actions ?? []).forEach((action) =>
        out.push(fact(task, 'requires', clip(action), 'dependency', taskId, 'implementer')),
      ),
  ];
  for (const rule of rules) {
    try {
      rule();
    } catch {
      // The seed design logs and goes on.
    }
  }
  return out;
};

/** The seed design's reviewer rules. */
export const seedExtractReviewer = (result: ReviewerResult, taskId: string): SeedFact[] => {
  const out: SeedFact[] = [];
  const task = `task:${taskId}`;
  const rules: Array<() => void> = [
    () => out.push(fact(task, 'reviewed_as', result.assessment, 'decision', taskId, 'reviewer')),
    () =>
      (result.issues ?? []).forEach((issue) =>
        out.push(fact(issue.file ?? task, 'issue', clip(issue.message), 'error', taskId, 'reviewer')),
      ),
    () =>
      (result.required_fixes ?? []).forEach((fix) =>
        out.push(fact(task, 'must_fix', clip(fix), 'convention', taskId, 'reviewer')),
      ),
  ];
  for (const rule of rules) {
    try {
      rule();
    } catch {
      // The seed design logs and goes on.
    }
  }
  return out;
};

/** The seed design's in-memory store. */
export class SeedStore {
  readonly facts = new Map<string, SeedFact>();
  readonly bySubject = new Map<string, Set<string>>();

  add(facts: SeedFact[]): void {
    for (const next of facts) {
      for (const existingId of this.bySubject.get(next.subject) ?? []) {
        const existing = this.facts.get(existingId)!;
        if (existing.relation === next.relation && existing.validTo === undefined && existing.id !== next.id)
          this.facts.set(existingId, { ...existing, validTo: next.validFrom });
      }
      this.facts.set(next.id, next);
      let ids = this.bySubject.get(next.subject);
      if (ids === undefined) this.bySubject.set(next.subject, (ids = new Set()));
      ids.add(next.id);
    }
  }

  getValid(): SeedFact[] {
    return [...this.facts.values()].filter((f) => f.validTo === undefined);
  }
}

const STOPWORDS = new Set(
  'a an the is are was were be been to of in on at for and or but with by from as it this that these those into'.split(
    ' ',
  ),
);
const words = (text: string): string[] =>
  text
    .toLowerCase()
    .split(/[\s/\\.,;:!?()[\]{}"'`<>=+*&|_-]+/u)
    .filter((word) => word !== '' && !STOPWORDS.has(word));

/** What the seed retriever reads of a fact. */
export interface KeywordFact {
  readonly subject: string;
  readonly relation: string;
  readonly object: string;
  readonly tags: ReadonlyArray<string>;
  readonly sourceTaskId: string;
}

/** What the seed retriever is asked. */
export interface KeywordQuery {
  readonly taskDescription: string;
  readonly taskId: string;
  readonly tags?: ReadonlyArray<string>;
  readonly maxFacts: number;
  readonly maxTokens: number;
}

/**
 * The seed design's retriever, the one implementation both the benchmark and the evaluation
 * compare against, exactly as the design describes it: valid facts -> tag filter -> not the
 * query's own task -> keyword overlap (re-tokenizing every fact) -> score, then most recent ->
 * top maxFacts, zero-score facts included (the design filters nothing out by score) ->
 * truncated where subject + relation + object at 4 characters per token first overruns the
 * budget.
 */
export const keywordOverlapRetrieve = <F extends KeywordFact>(
  validFacts: ReadonlyArray<F>,
  query: KeywordQuery,
  timeOf: (fact: F) => number,
): F[] => {
  const wanted = new Set(query.tags ?? []);
  const queryWords = new Set(words(query.taskDescription));
  const scored = validFacts
    .filter((f) => wanted.size === 0 || f.tags.some((tag) => wanted.has(tag)))
    .filter((f) => f.sourceTaskId !== query.taskId)
    .map((f) => ({ f, score: words(`${f.subject} ${f.relation} ${f.object}`).filter((w) => queryWords.has(w)).length }))
    .sort((a, b) => b.score - a.score || timeOf(b.f) - timeOf(a.f))
    .slice(0, query.maxFacts);
  const out: F[] = [];
  let tokens = 0;
  for (const { f } of scored) {
    const cost = Math.ceil((f.subject.length + f.relation.length + f.object.length) / 4);
    if (tokens + cost > query.maxTokens) break;
    tokens += cost;
    out.push(f);
  }
  return out;
};

/** The seed design's retriever over its own store. */
export const seedRetrieve = (
  store: SeedStore,
  taskDescription: string,
  taskId: string,
  maxFacts: number,
  maxTokens: number,
): SeedFact[] =>
  keywordOverlapRetrieve(store.getValid(), { taskDescription, taskId, maxFacts, maxTokens }, (f) =>
    f.validFrom.getTime(),
  );

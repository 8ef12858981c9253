import type { Either } from 'fp-ts/lib/Either.js';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as api from '../src/index.js';
import type {
  CompactionReport,
  ContractError,
  Extraction,
  FactQuery,
  FactStore,
  FactTag,
  FactTracker,
  ImplementerResult,
  RetrievalDecision,
  ReviewerResult,
  SessionFact,
  SourceRole,
  TrackerEvent,
} from '../src/index.js';

/** The functions the spec's Public API names, each of which must be exported from the barrel. */
const SPEC_FUNCTIONS = [
  'createFactId',
  'emptyFactStore',
  'addFacts',
  'invalidate',
  'compact',
  'compactWithReport',
  'selectValidFacts',
  'selectValidFactsByTags',
  'selectValidCount',
  'selectFactsValidAt',
  'selectAllFacts',
  'extractFromImplementer',
  'extractFromReviewer',
  'createExtractor',
  'retrieveFacts',
  'explainRetrieval',
  'formatSessionFacts',
  'buildDispatchDynamicTail',
  'parseDispatchOutput',
  'createFactTracker',
  'applyEvent',
  'replay',
  'toStateSnapshotFacts',
] as const;

/** The registered rule lists the spec names. */
const SPEC_RULE_LISTS = ['implementerRules', 'reviewerRules'] as const;

describe('public API', () => {
  it.each(SPEC_FUNCTIONS)('exports %s as a function', (name) => {
    expect(name in api).toBe(true);
    expect(typeof api[name]).toBe('function');
  });

  it.each(SPEC_RULE_LISTS)('exports %s as an array of named rules', (name) => {
    const rules: ReadonlyArray<unknown> = api[name];

    expect(Array.isArray(rules)).toBe(true);
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of api[name]) {
      expect(typeof rule.name).toBe('string');
      expect(typeof rule.extract).toBe('function');
    }
  });

  it('exports nothing undefined', () => {
    for (const [name, value] of Object.entries(api)) expect(value, name).not.toBeUndefined();
  });
});

describe('public types', () => {
  it('FactTag and SourceRole are exactly the spec unions', () => {
    expectTypeOf<FactTag>().toEqualTypeOf<
      'file_change' | 'convention' | 'decision' | 'error' | 'dependency' | 'test'
    >();
    expectTypeOf<SourceRole>().toEqualTypeOf<'implementer' | 'reviewer'>();
  });

  it('SessionFact has exactly the spec fields', () => {
    expectTypeOf<SessionFact>().toEqualTypeOf<{
      readonly id: string;
      readonly subject: string;
      readonly relation: string;
      readonly object: string;
      readonly tags: ReadonlyArray<FactTag>;
      readonly validFrom: number;
      readonly validTo?: number;
      readonly sourceTaskId: string;
      readonly sourceRole: SourceRole;
      readonly confidence: number;
    }>();
  });

  it('createFactId takes the triple and returns a string', () => {
    expectTypeOf(api.createFactId).toEqualTypeOf<(subject: string, relation: string, object: string) => string>();
  });

  it('the store reducers have the spec signatures', () => {
    expectTypeOf(api.emptyFactStore).toBeCallableWith();
    expectTypeOf(api.emptyFactStore).toBeCallableWith({ maxValidFacts: 10 });
    expectTypeOf(api.emptyFactStore).returns.toEqualTypeOf<FactStore>();
    expectTypeOf(api.addFacts).toEqualTypeOf<(store: FactStore, facts: ReadonlyArray<SessionFact>) => FactStore>();
    expectTypeOf(api.invalidate).toEqualTypeOf<
      (store: FactStore, subject: string, relation: string, at: number) => FactStore
    >();
    expectTypeOf(api.compact).toEqualTypeOf<(store: FactStore, maxFacts: number) => FactStore>();
    expectTypeOf(api.compactWithReport).parameters.toEqualTypeOf<[FactStore, number]>();
    expectTypeOf(api.compactWithReport).returns.toEqualTypeOf<{ store: FactStore; report: CompactionReport }>();
  });

  it('CompactionReport has the spec fields', () => {
    expectTypeOf<CompactionReport['removedClosed']>().toEqualTypeOf<string[]>();
    expectTypeOf<CompactionReport['summaries']>().toEqualTypeOf<{ id: string; merged: string[] }[]>();
    expectTypeOf<CompactionReport['dropped']>().toEqualTypeOf<string[]>();
  });

  it('the selectors have the spec signatures', () => {
    expectTypeOf(api.selectValidFacts).toEqualTypeOf<(store: FactStore) => ReadonlyArray<SessionFact>>();
    expectTypeOf(api.selectValidFactsByTags).toEqualTypeOf<
      (store: FactStore, tags: ReadonlyArray<FactTag>) => ReadonlyArray<SessionFact>
    >();
    expectTypeOf(api.selectValidCount).toEqualTypeOf<(store: FactStore) => number>();
    expectTypeOf(api.selectFactsValidAt).toEqualTypeOf<(store: FactStore, at: number) => ReadonlyArray<SessionFact>>();
    expectTypeOf(api.selectAllFacts).toEqualTypeOf<(store: FactStore) => ReadonlyArray<SessionFact>>();
  });

  it('the extractors have the spec signatures', () => {
    expectTypeOf(api.extractFromImplementer).toEqualTypeOf<
      (result: ImplementerResult, taskId: string, at: number) => Extraction
    >();
    expectTypeOf(api.extractFromReviewer).toEqualTypeOf<
      (result: ReviewerResult, taskId: string, at: number) => Extraction
    >();
    expectTypeOf<Extraction>().toEqualTypeOf<{
      readonly facts: ReadonlyArray<SessionFact>;
      readonly warnings: ReadonlyArray<string>;
    }>();
    expectTypeOf(api.createExtractor).toBeCallableWith({
      implementerRules: api.implementerRules,
      reviewerRules: api.reviewerRules,
    });
  });

  it('the dispatch result contract accepts results shaped as the spec describes', () => {
    type SpecImplementerResult = {
      task_id: string;
      status: 'completed' | 'blocked' | 'failed';
      summary: string;
      files_changed: string[];
      tests: { command: string; passed: boolean; failures?: string[] }[];
      follow_up_actions: string[];
    };
    type SpecReviewerResult = {
      task_id: string;
      assessment: 'approved' | 'needs_changes' | 'blocked';
      strengths: string[];
      issues: { severity: 'critical' | 'important' | 'minor'; file?: string; message: string; fix: string }[];
      required_fixes: string[];
    };

    expectTypeOf<SpecImplementerResult>().toExtend<ImplementerResult>();
    expectTypeOf<SpecReviewerResult>().toExtend<ReviewerResult>();
    expectTypeOf<ImplementerResult['status']>().toEqualTypeOf<'completed' | 'blocked' | 'failed'>();
    expectTypeOf<ReviewerResult['assessment']>().toEqualTypeOf<'approved' | 'needs_changes' | 'blocked'>();
  });

  it('retrieveFacts and explainRetrieval have the spec signatures', () => {
    type SpecFactQuery = {
      taskDescription: string;
      taskId: string;
      tags?: ReadonlyArray<FactTag>;
      maxFacts: number;
      maxTokens: number;
      countTokens?: (text: string) => number;
    };
    type SpecRetrievalDecision = {
      fact: SessionFact;
      score: number;
      decision: 'included' | 'excluded';
      reason?: 'invalidated' | 'tag' | 'own_task' | 'no_match' | 'max_facts' | 'budget';
    };

    expectTypeOf(api.retrieveFacts).toEqualTypeOf<(store: FactStore, query: FactQuery) => ReadonlyArray<SessionFact>>();
    expectTypeOf(api.explainRetrieval).toEqualTypeOf<
      (store: FactStore, query: FactQuery) => ReadonlyArray<RetrievalDecision>
    >();
    expectTypeOf<FactQuery>().toExtend<SpecFactQuery>();
    expectTypeOf<SpecFactQuery>().toExtend<FactQuery>();
    expectTypeOf<RetrievalDecision>().toExtend<SpecRetrievalDecision>();
    expectTypeOf<SpecRetrievalDecision>().toExtend<RetrievalDecision>();
  });

  it('formatSessionFacts and buildDispatchDynamicTail have the spec signatures', () => {
    expectTypeOf(api.formatSessionFacts).toEqualTypeOf<
      (facts: ReadonlyArray<SessionFact>, options?: api.SectionFormatOptions) => string
    >();
    expectTypeOf(api.formatSessionFacts).toExtend<(facts: ReadonlyArray<SessionFact>) => string>();
    type SpecTailInput = {
      taskId: string;
      maxOutputTokens: number;
      deltaPacket: Record<string, unknown>;
      guideCacheKey?: string;
      guideInstruction?: string;
      sessionContext?: string;
      taskPrompt: string;
    };
    expectTypeOf(api.buildDispatchDynamicTail).parameter(0).toExtend<SpecTailInput>();
    expectTypeOf<SpecTailInput>().toExtend<Parameters<typeof api.buildDispatchDynamicTail>[0]>();
    expectTypeOf(api.buildDispatchDynamicTail).returns.toEqualTypeOf<string>();
  });

  it('parseDispatchOutput returns Either<ContractError, ImplementerResult | ReviewerResult>', () => {
    expectTypeOf(api.parseDispatchOutput).parameters.toEqualTypeOf<[string, SourceRole]>();
    expectTypeOf(api.parseDispatchOutput).returns.toEqualTypeOf<
      Either<ContractError, ImplementerResult | ReviewerResult>
    >();
    type SpecContractError = {
      code: 'marker_missing' | 'json_parse_failed' | 'schema_invalid' | 'invalid_input';
      message: string;
    };
    expectTypeOf<ContractError>().toExtend<SpecContractError>();
    expectTypeOf<SpecContractError>().toExtend<ContractError>();
    expectTypeOf<ContractError['code']>().toEqualTypeOf<SpecContractError['code']>();
  });

  it('createFactTracker takes the spec options and returns a FactTracker', () => {
    type SpecTrackerOptions = {
      clock?: () => number;
      maxValidFacts?: number;
      maxFacts?: number;
      maxTokens?: number;
      countTokens?: (text: string) => number;
    };

    expectTypeOf(api.createFactTracker).toBeCallableWith();
    expectTypeOf(api.createFactTracker).toBeCallableWith({
      clock: () => 0,
      maxValidFacts: 500,
      maxFacts: 10,
      maxTokens: 500,
      countTokens: (text: string) => text.length,
    });
    expectTypeOf(api.createFactTracker).returns.toEqualTypeOf<FactTracker>();
    expectTypeOf<SpecTrackerOptions>().toExtend<NonNullable<Parameters<typeof api.createFactTracker>[0]>>();
    expectTypeOf<NonNullable<Parameters<typeof api.createFactTracker>[0]>>().toExtend<SpecTrackerOptions>();
  });

  it('FactTracker has the spec methods', () => {
    type SpecIngestInput = { role: SourceRole; taskId: string; output: string | unknown };
    type SpecCompileInput = {
      taskId: string;
      taskPrompt: string;
      tags?: ReadonlyArray<FactTag>;
      deltaPacket?: Record<string, unknown>;
      maxOutputTokens?: number;
      guideCacheKey?: string;
      guideInstruction?: string;
    };
    type SpecCompiled = { prompt: string; sessionContext: string; facts: ReadonlyArray<SessionFact> };

    // The contract's errors, and `internal` for a bug the shell's boundary caught (issue 51).
    type SpecTrackerError = { readonly code: ContractError['code'] | 'internal'; readonly message: string };
    expectTypeOf<FactTracker['ingestOutput']>().returns.toEqualTypeOf<Either<SpecTrackerError, Extraction>>();
    expectTypeOf<FactTracker['ingestOutput']>().parameter(0).toExtend<SpecIngestInput>();
    expectTypeOf<SpecIngestInput>().toExtend<Parameters<FactTracker['ingestOutput']>[0]>();

    expectTypeOf<FactTracker['compilePrompt']>().parameter(0).toExtend<SpecCompileInput>();
    expectTypeOf<SpecCompileInput>().toExtend<Parameters<FactTracker['compilePrompt']>[0]>();
    expectTypeOf<FactTracker['compilePrompt']>().returns.toExtend<SpecCompiled>();
    expectTypeOf<SpecCompiled>().toExtend<ReturnType<FactTracker['compilePrompt']>>();

    expectTypeOf<FactTracker['getSnapshot']>().toEqualTypeOf<() => FactStore>();
    expectTypeOf<FactTracker['subscribe']>().parameters.toEqualTypeOf<
      [listener: (next: FactStore, previous: FactStore) => void]
    >();
    expectTypeOf<FactTracker['subscribe']>().returns.toEqualTypeOf<() => void>();
    expectTypeOf<FactTracker['events']>().toEqualTypeOf<() => ReadonlyArray<TrackerEvent>>();
  });

  it('the event functions and the snapshot mapping have the spec signatures', () => {
    expectTypeOf(api.applyEvent).toEqualTypeOf<(store: FactStore, event: TrackerEvent) => FactStore>();
    expectTypeOf(api.replay).toBeCallableWith([] as ReadonlyArray<TrackerEvent>);
    expectTypeOf(api.replay).toBeCallableWith([] as ReadonlyArray<TrackerEvent>, api.emptyFactStore());
    expectTypeOf(api.replay).returns.toEqualTypeOf<FactStore>();
    expectTypeOf(api.toStateSnapshotFacts).toEqualTypeOf<
      (facts: ReadonlyArray<SessionFact>) => ReadonlyArray<{ k: string; v: string; confidence: number }>
    >();
  });
});

/**
 * No secret a model copies into its result becomes a fact, a warning, a recorded prompt, a
 * saved state or a line of a section: a dispatch result is redacted before its rules run (so
 * before any text is clipped), a prompt before it is recorded, and a text a clip cut is scanned
 * again. A result without a secret is passed on as the very same value.
 */
import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clipEndRedacted,
  clipStartRedacted,
  findSecret,
  findSecretField,
  redactSecrets,
  withoutSecrets,
} from '../../src/base/secrets.js';
import { clipEnd, clipStart } from '../../src/base/text.js';
import { normalizeTaskId } from '../../src/core/extract/extractor.js';
import { redactedOutput } from '../../src/core/extract/redact.js';
import {
  addFacts,
  compact,
  createFactTracker,
  emptyFactStore,
  encodeState,
  extractFromImplementer,
  extractFromReviewer,
  formatSessionFacts,
  makeFact,
  parseDispatchOutput,
  parseHistory,
  recordTaskPrompt,
  replay,
  replayHistory,
  retrieveFacts,
  selectValidFacts,
  SUMMARY_RELATION,
} from '../../src/index.js';
import { HARMLESS, SECRETS, secretPart } from '../fixtures/secrets.js';

/** The texts a fact or an extraction shows. */
const textsOf = (extraction: ReturnType<typeof extractFromImplementer>): string[] => [
  ...extraction.facts.flatMap((fact) => [fact.subject, fact.relation, fact.object, fact.sourceTaskId]),
  ...extraction.warnings,
];

const jsonWithHarmless: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(...HARMLESS),
    fc.string(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string(), fc.constantFrom(...HARMLESS)), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('withoutSecrets', () => {
  it('gives back the very same value when no string or key of it holds a secret', () => {
    fc.assert(
      fc.property(jsonWithHarmless, (value) => {
        fc.pre(findSecretField(value) === undefined);
        expect(withoutSecrets(value)).toBe(value);
      }),
      { numRuns: 300 },
    );
  });

  it('leaves no secret in any string or key, changes no other string, and never changes its input', () => {
    const placed = fc.record({
      value: jsonWithHarmless,
      secret: fc.constantFrom(...SECRETS.map(([, secret]) => secret)),
      asKey: fc.boolean(),
      before: fc.constantFrom('', 'see ', 'token: '),
    });
    fc.assert(
      fc.property(placed, ({ value, secret, asKey, before }) => {
        const text = `${before}${secret} here`;
        const input = { kept: value, [asKey ? text : 'field']: asKey ? 1 : text, list: ['a', text] };
        const copy = structuredClone(input);
        const output = withoutSecrets(input) as typeof input;
        expect(findSecretField(output)).toBeUndefined();
        expect(JSON.stringify(output)).not.toContain(secretPart(secret));
        expect(output.kept).toEqual(findSecretField(value) === undefined ? value : output.kept);
        expect(output.list[0]).toBe('a');
        expect(input).toEqual(copy);
      }),
      { numRuns: 300 },
    );
  });

  it('ends on a cycle, with or without a secret, and keeps a key named __proto__ as a field', () => {
    const plain: Record<string, unknown> = { a: 'text' };
    plain['self'] = plain;
    expect(withoutSecrets(plain)).toBe(plain);
    const [, secret] = SECRETS[4]!;
    const holding: Record<string, unknown> = { a: `use ${secret}` };
    holding['self'] = holding;
    const redacted = withoutSecrets(holding) as Record<string, unknown>;
    expect(redacted['a']).toBe('use [redacted: a GitHub token]');
    expect(redacted['self']).toBe(redacted);
    const proto = JSON.parse(`{"__proto__": {"x": "${secret}"}}`) as object;
    const cleaned = withoutSecrets(proto) as Record<string, unknown>;
    expect(Object.getPrototypeOf(cleaned)).toBe(Object.prototype);
    expect(Object.hasOwn(cleaned, '__proto__')).toBe(true);
    expect(JSON.stringify(cleaned)).toBe('{"__proto__":{"x":"[redacted: a GitHub token]"}}');
  });
});

describe('extraction', () => {
  it.each(SECRETS)('keeps %s out of every fact and warning of an implementer result', (shape, secret) => {
    const extraction = extractFromImplementer(
      {
        task_id: `T ${secret}`,
        status: 'completed' as const,
        // The secret straddles the 120 characters free text is clipped to: none of it may stay.
        summary: `${'Wired the client to the upstream service. '.repeat(3).slice(0, 110)} ${secret} done`,
        files_changed: [`config/${secret}.env`, 'src/client.ts'],
        tests: [{ command: `API_TOKEN=${secret} npm test`, passed: false, failures: [`401 with ${secret}`] }],
        follow_up_actions: [`rotate ${secret}`],
      },
      'T',
      1_000,
    );
    expect(extraction.facts.length).toBeGreaterThanOrEqual(7);
    for (const text of textsOf(extraction)) {
      expect(findSecret(text)).toBeUndefined();
      expect(text).not.toContain(secretPart(secret));
    }
    expect(extraction.facts.some((fact) => fact.object.includes(`[redacted: ${shape}]`))).toBe(true);
    expect(extraction.facts.some((fact) => fact.subject === 'src/client.ts')).toBe(true);
  });

  it.each(SECRETS)('keeps %s out of every fact and warning of a reviewer result', (_shape, secret) => {
    const extraction = extractFromReviewer(
      {
        task_id: 'T',
        assessment: 'needs_changes',
        issues: [
          {
            file: 'src/auth.ts',
            message: `the naming convention: ${secret} is hard-coded`,
            severity: 'important',
            fix: `read ${secret} from the environment`,
          },
        ],
        required_fixes: [`move ${secret} to the vault`],
      },
      'T',
      2_000,
    );
    expect(extraction.facts.length).toBeGreaterThanOrEqual(3);
    for (const text of textsOf(extraction)) expect(text).not.toContain(secretPart(secret));
  });

  it('keeps a key block and a Bearer token out of every fact when a control or bidi character, which a fact turns into a space, separates them', () => {
    const body = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj';
    const token = 'abcd1234efgh5678ijkl';
    for (const separator of ['\u0085', '\u001f', '\u0000', '\u007f', '\u2066', '\u202e']) {
      const key = `-----BEGIN PRIVATE KEY-----${separator}${body}${separator}-----END PRIVATE KEY-----`;
      const extraction = extractFromImplementer(
        {
          task_id: 'T',
          status: 'completed' as const,
          summary: `Deploy key is ${key}`,
          files_changed: ['src/client.ts'],
          follow_up_actions: [`send Authorization: Bearer${separator}${token}`],
        },
        'T',
        1_000,
      );
      const texts = textsOf(extraction).join('\n');
      expect(texts).not.toContain(body.slice(0, 12));
      expect(texts).not.toContain(token);
      expect(texts).toContain('[redacted: a private key block]');
      expect(texts).toContain('[redacted: a Bearer token]');
    }
  });

  it('answers a result whose getter throws as it is scanned with no facts and one warning, never an exception', () => {
    const result = {
      task_id: 'T',
      status: 'completed' as const,
      summary: 'ok',
      get files_changed(): string[] {
        throw new Error('boom');
      },
    };
    expect(extractFromImplementer(result, 'T', 1)).toEqual({
      facts: [],
      warnings: ['no facts extracted: the result could not be read (boom)'],
    });
  });

  it('extracts from a result without a secret exactly what it did, prose about tokens included', () => {
    const result = {
      task_id: 'T',
      status: 'completed' as const,
      summary: HARMLESS.join('; '),
      files_changed: ['src/lexer.js', 'src/auth/bearer.ts'],
      tests: [{ command: 'npm test -- auth', passed: true }],
      follow_up_actions: [HARMLESS[0]!],
    };
    const objects = extractFromImplementer(result, 'T', 1).facts.map((fact) => fact.object);
    expect(objects.some((object) => object.startsWith('Bearer tokens are checked'))).toBe(true);
    expect(objects.join('\n')).not.toContain('[redacted');
  });
});

describe('a raw answer as it is kept', () => {
  const [, token] = SECRETS[4]!;
  /** `text` with every letter written as a JSON escape, as some serializers write what they do not trust. */
  const escaped = (text: string): string =>
    [...text]
      .map((char) => (/[a-z]/iu.test(char) ? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}` : char))
      .join('');
  const answer = (summary: string, fence: boolean): string =>
    [
      'Deployed.',
      'BEGIN_DISPATCH_RESULT',
      ...(fence ? ['```json'] : []),
      `{"task_id":"1","status":"completed","summary":"${summary}","files_changed":["deploy/release.sh"]}`,
      ...(fence ? ['```'] : []),
      'END_DISPATCH_RESULT',
      'Bye.',
    ].join('\r\n');
  const factsOf = (raw: string) => {
    const result = parseDispatchOutput(raw, 'implementer');
    if (result._tag === 'Left') throw new Error(result.left.message);
    return extractFromImplementer(result.right as never, '1', 5).facts;
  };

  it.each([false, true])(
    'writes again a block whose escaped secret only its JSON shows (fenced: %s), and reads back the same facts',
    (fence) => {
      const raw = answer(`Deployed with ${escaped(token)}`, fence);
      expect(raw).not.toContain(secretPart(token));
      const kept = redactedOutput(raw);
      expect(kept).not.toContain(escaped(secretPart(token)));
      expect(kept.startsWith('Deployed.\r\nBEGIN_DISPATCH_RESULT\r\n')).toBe(true);
      expect(kept.endsWith('END_DISPATCH_RESULT\r\nBye.')).toBe(true);
      expect(factsOf(kept)).toEqual(factsOf(raw));
      expect(factsOf(kept).some((fact) => fact.object === 'Deployed with [redacted: a GitHub token]')).toBe(true);
    },
  );

  it('keeps no secret that a JSON escape other than \\u hides, in the last block, an earlier one or the prose', () => {
    const body = 'MIIEpAIBAAKCAQEA7bq98s0SECRETKEYBODYAAAAAB3NzaC1yc2EAAAADAQABAAABAQC';
    const key = `-----BEGIN RSA PRIVATE KEY-----\\n${body}\\n-----END RSA PRIVATE KEY-----`;
    const earlier = `{"task_id":"1","summary":"old ${escaped(token)}"}`;
    const raw = [
      'First try:',
      'BEGIN_DISPATCH_RESULT',
      earlier,
      'END_DISPATCH_RESULT',
      'The database is at postgres:\\/\\/app:hunter2pass@db.internal\\/prod.',
      'BEGIN_DISPATCH_RESULT',
      `{"task_id":"1","status":"completed","summary":"Deploy key ${key}, auth Bearer\\tabc123def456ghi789jkl","files_changed":["deploy/release.sh"]}`,
      'END_DISPATCH_RESULT',
    ].join('\n');
    const kept = redactedOutput(raw);
    for (const part of [body.slice(0, 16), 'abc123def456', 'hunter2pass', escaped(secretPart(token))])
      expect(kept).not.toContain(part);
    expect(factsOf(kept)).toEqual(factsOf(raw).map((fact) => fact));
    expect(kept.startsWith('First try:\nBEGIN_DISPATCH_RESULT\n')).toBe(true);
    expect(redactedOutput(kept)).toBe(kept);
  });

  it.each([false, true])(
    'keeps no secret escaped in a key given twice, whose value the parsed result no longer holds (a plain secret beside it: %s)',
    (plain) => {
      const summary = plain ? `Deployed with ${token}` : 'Deployed';
      const raw = [
        'BEGIN_DISPATCH_RESULT',
        `{"task_id":"1","status":"completed","summary":"${escaped(token)}","summary":"${summary}","notes":{"key":"${escaped(token)}","key":1}}`,
        'END_DISPATCH_RESULT',
      ].join('\n');
      const kept = redactedOutput(raw);
      expect(kept).not.toContain(escaped(secretPart(token)));
      expect(
        kept.replace(/\\u([0-9a-f]{4})/giu, (_, code: string) => String.fromCharCode(parseInt(code, 16))),
      ).not.toContain(secretPart(token));
      expect(factsOf(kept)).toEqual(factsOf(raw));
      expect(redactedOutput(kept)).toBe(kept);
    },
  );

  it('never keeps a secret of an answer, and keeps one without an escape as the text scan leaves it', () => {
    fc.assert(
      fc.property(fc.string(), fc.boolean(), fc.boolean(), (text, fence, withToken) => {
        const raw = answer(JSON.stringify(`${text} ${withToken ? token : ''}`).slice(1, -1), fence);
        const kept = redactedOutput(raw);
        expect(kept).not.toContain(secretPart(token));
        if (!raw.includes('\\u')) expect(kept).toBe(redactSecrets(raw));
      }),
      { numRuns: 300 },
    );
  });
});

describe('a line or a block that is not valid JSON', () => {
  it.each(SECRETS)('is refused without quoting its text, so %s in it is never shown', (_shape, secret) => {
    const history = parseHistory(`{"type":"prompt","taskId":"1","taskPrompt": ${secret}}`);
    const contract = parseDispatchOutput(
      `BEGIN_DISPATCH_RESULT\n{"task_id": ${secret}}\nEND_DISPATCH_RESULT`,
      'implementer',
    );
    expect(new Set(history.errors.map((error) => error.code))).toEqual(new Set(['invalid_json']));
    expect(contract._tag === 'Left' && contract.left.code).toBe('json_parse_failed');
    expect(JSON.stringify([history.errors, contract])).not.toContain(secret.slice(0, 6));
  });
});

describe('prompts and sections', () => {
  it('records a prompt without its secrets, still found by its other words', () => {
    const [, secret] = SECRETS[4]!;
    const store = recordTaskPrompt(emptyFactStore(), '1', `Call the billing API with ${secret}`, 10);
    expect(JSON.stringify(encodeState(store))).not.toContain(secretPart(secret));
    expect(JSON.stringify(encodeState(store))).toContain('billing');
  });

  it("keeps no secret of a prompt in a tracker's events, which replay into the same store", () => {
    const [, secret] = SECRETS[4]!;
    const tracker = createFactTracker({ clock: () => 10 });
    tracker.compilePrompt({ taskId: '1', taskPrompt: `Call the billing API with ${secret}` });
    tracker.recordPrompt('2', `Rotate ${secret}`, 20);
    const events = tracker.events();
    expect(events.map((event) => event.type)).toEqual(['prompt/recorded', 'prompt/recorded']);
    expect(JSON.stringify(events)).not.toContain(secretPart(secret));
    expect(JSON.stringify(events)).toContain('[redacted: a GitHub token]');
    expect(encodeState(replay(JSON.parse(JSON.stringify(events))))).toEqual(encodeState(tracker.getSnapshot()));
  });

  it('replays a history whose results and prompts hold secrets into sections that hold none', () => {
    const lines = SECRETS.flatMap(([, secret], i) => [
      { type: 'prompt', taskId: String(i + 1), at: 1_000 * i + 1, taskPrompt: `Wire billing with ${secret}` },
      {
        type: 'dispatch',
        role: 'implementer',
        taskId: String(i + 1),
        at: 1_000 * i + 2,
        result: {
          task_id: String(i + 1),
          status: 'completed',
          summary: `Billing wired, key ${secret}`,
          files_changed: ['src/billing.ts'],
          tests: [{ command: `TOKEN=${secret} npm test`, passed: true }],
          follow_up_actions: [],
        },
      },
    ]);
    lines.push({ type: 'prompt', taskId: 'last', at: 100_000, taskPrompt: 'Fix billing' });
    const { report, store } = replayHistory(lines.map((line) => JSON.stringify(line)).join('\n'), {
      keepRetrievals: false,
    });
    const shown = JSON.stringify(report);
    for (const [, secret] of SECRETS) expect(shown).not.toContain(secretPart(secret));
    expect(JSON.stringify(encodeState(store))).not.toMatch(/ghp_|AKIA|sk_live|xoxb-|npm_[A-Za-z0-9]{20}/u);
    const section = retrieveFacts(store, {
      taskDescription: 'billing key test',
      taskId: 'next',
      maxFacts: 10,
      maxTokens: 500,
    });
    expect(section.length).toBeGreaterThan(0);
  });
});

const [, token] = SECRETS.find(([shape]) => shape === 'a GitHub token')!;

/** A result of task `taskId` that changed `file`. */
const changed = (taskId: string, file: string) => ({
  task_id: taskId,
  status: 'completed',
  summary: 'Changed the config',
  files_changed: [file],
});

describe('task ids', () => {
  it('refuses a task id holding any secret shape, in the core every front door takes ids through', () => {
    for (const [shape, secret] of SECRETS) {
      const refused = normalizeTaskId(`deploy-${secret}`);
      expect(refused).toEqual(E.left(expect.stringContaining(`task id holds what looks like ${shape}`) as string));
      expect(JSON.stringify(refused)).not.toContain(secretPart(secret));
    }
    for (const harmless of ['1', 'T-42', 'ghp_short', 'deploy-sk-learn'])
      expect(normalizeTaskId(harmless)).toEqual(E.right(harmless));
  });

  it('has the tracker refuse a task id holding a secret, so no fact, section or event holds it', () => {
    const tracker = createFactTracker({ clock: () => 10 });
    const taskId = `deploy-${token}`;
    const ingested = tracker.ingestOutput({ role: 'implementer', taskId, output: changed(taskId, 'src/a.ts') });
    expect(ingested).toEqual(E.left(expect.objectContaining({ code: 'invalid_input' })));
    const compiled = tracker.compilePrompt({ taskId, taskPrompt: 'edit src/a.ts' });
    expect(compiled.error).toEqual(expect.objectContaining({ code: 'invalid_input' }));
    tracker.recordPrompt(taskId, 'edit src/a.ts', 20);
    expect(tracker.events()).toEqual([]);
    // The prompt to dispatch with is the caller's own, given back: nothing the tracker keeps or wrote.
    const { error, sessionContext } = compiled;
    expect(JSON.stringify([ingested, error, sessionContext, encodeState(tracker.getSnapshot())])).not.toContain(
      secretPart(token),
    );
  });

  it("rejects a history's dispatch and prompt lines whose task id holds a secret, in a report that holds none", () => {
    const lines = [
      { type: 'dispatch', role: 'implementer', taskId: `deploy-${token}`, at: 1_000, result: changed('1', 'src/a.ts') },
      { type: 'prompt', taskId: `deploy-${token}`, at: 2_000, taskPrompt: 'edit src/a.ts' },
      { type: 'prompt', taskId: '3', at: 3_000, taskPrompt: 'edit src/a.ts' },
    ];
    const { report } = replayHistory(lines.map((line) => JSON.stringify(line)).join('\n'), { keepRetrievals: false });
    expect(report.errors.map(({ line, code }) => [line, code])).toEqual([
      [1, 'invalid_input'],
      [2, 'invalid_input'],
    ]);
    expect(report.facts).toEqual([]);
    expect(JSON.stringify(report)).not.toContain(secretPart(token));
  });
});

describe('invalidations of a pair whose path holds a secret', () => {
  const path = `deploy/${token}/config.ts`;

  it("closes, from the tracker, the pair by the path as the result gave it, with the pair redacted in the tracker's events", () => {
    const tracker = createFactTracker({ clock: () => 10 });
    const ingested = tracker.ingestOutput({ role: 'implementer', taskId: '1', output: changed('1', path) });
    expect(E.isRight(ingested)).toBe(true);
    const invalidated = tracker.invalidate(path, 'modified_by', 20);
    expect(invalidated).toEqual(E.right({ closed: [expect.objectContaining({ relation: 'modified_by' })] }));
    const events = tracker.events();
    expect(events.at(-1)).toEqual({
      type: 'facts/invalidated',
      subject: 'deploy/[redacted: a GitHub token]/config.ts',
      relation: 'modified_by',
      at: 20,
    });
    expect(JSON.stringify(events)).not.toContain(secretPart(token));
    expect(encodeState(replay(JSON.parse(JSON.stringify(events))))).toEqual(encodeState(tracker.getSnapshot()));
  });

  it("replays a history's invalidate line of the path as the result gave it, which closes the pair the result made", () => {
    const lines = [
      { type: 'dispatch', role: 'implementer', taskId: '1', at: 1_000, result: changed('1', path) },
      { type: 'invalidate', subject: path, relation: 'modified_by', at: 2_000 },
    ];
    const { report } = replayHistory(lines.map((line) => JSON.stringify(line)).join('\n'), { keepRetrievals: false });
    expect(report.errors).toEqual([]);
    expect(report.facts.filter((fact) => fact.relation === 'modified_by')).toEqual([]);
    expect(report.facts.length).toBeGreaterThan(0);
  });
});

describe('texts a clip cuts', () => {
  const generated = 'a1B2c3D4e5'.repeat(30);
  // No shape matches these as given (a letter glued before the token, or more characters after
  // it than a token has), and each clip of them would: it cuts the glued letter or the extra characters.
  const kept = `ghp_${generated.slice(0, 36)}/${'d'.repeat(148)}/file.ts`;
  const path = `${'a'.repeat(170)}/x${kept}`;
  const long = `ghp_${generated}`;
  const result = {
    task_id: long,
    status: 'completed' as const,
    summary: long,
    files_changed: [path, 'src/client.ts'],
    follow_up_actions: [`rotate npm_${generated.slice(0, 40)}`.padStart(121, '.')],
  };
  const fieldsOf = (facts: ReadonlyArray<{ subject: string; relation: string; object: string }>): string[] =>
    facts.flatMap((fact) => [fact.subject, fact.relation, fact.object]);

  it('are texts a scan finds no secret in before their clip, and finds one in after it', () => {
    for (const text of [path, long]) expect(findSecret(text)).toBeUndefined();
    expect(findSecret(clipStart(path, 200))).toBe('a GitHub token');
    expect(findSecret(clipEnd(long, 120))).toBe('a GitHub token');
    expect(findSecret(clipEnd(long, 43))).toBe('a GitHub token');
  });

  it('are clipped by the redacting clips to no longer than asked, holding no secret, and left whole when short enough', () => {
    // Tokens no shape matches whole (too long, run on into `_`, a letter glued before them), which a
    // cut can make match, and the two halves of a password in a URL.
    const piece = fc.constantFrom(
      'x',
      ' ',
      '_',
      '/',
      'https://u:pw1',
      '@h',
      `ghp_${generated}`,
      `ghp_${generated.slice(0, 60)}_`,
      `xghp_${generated.slice(0, 40)}`,
      `npm_${generated.slice(0, 45)}`,
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), fc.nat({ max: 130 }), (pieces, max) => {
        const text = pieces.join('');
        for (const clip of [clipEndRedacted, clipStartRedacted]) {
          const clipped = clip(text, max);
          expect(clipped.length).toBeLessThanOrEqual(max);
          if (text.length <= max) expect(clipped).toBe(text);
          else expect(findSecret(clipped)).toBeUndefined();
        }
      }),
      { numRuns: 500 },
    );
  });

  it('leave no secret in a fact or a warning of the extraction, and the same facts every time', () => {
    const extraction = extractFromImplementer(result, 'T', 1_000);
    expect(extraction.facts.length).toBeGreaterThanOrEqual(5);
    for (const text of [...fieldsOf(extraction.facts), ...extraction.warnings])
      expect(findSecret(text)).toBeUndefined();
    expect(extraction.facts.map((fact) => fact.subject)).toContain(
      `...[redacted: a GitHub token]/${'d'.repeat(148)}/file.ts`,
    );
    expect(extraction.facts.some((fact) => fact.subject === 'src/client.ts')).toBe(true);
    expect(extraction.warnings).toHaveLength(1);
    expect(extractFromImplementer(result, 'T', 1_000)).toEqual(extraction);
  });

  it("leave no secret in the tracker's facts, events, saved state or sections, and replay into the same store", () => {
    const tracker = createFactTracker({ clock: () => 10 });
    expect(E.isRight(tracker.ingestOutput({ role: 'implementer', taskId: 'T', output: result }))).toBe(true);
    tracker.invalidate(path, 'modified_by', 20);
    const { sessionContext } = tracker.compilePrompt({ taskId: 'next', taskPrompt: `rotate the token ${path}` });
    const snapshot = tracker.getSnapshot();
    const events = tracker.events();
    const facts = events.flatMap((event) => ('facts' in event ? event.facts : []));
    expect(facts.length).toBeGreaterThan(0);
    for (const text of [...fieldsOf(facts), ...sessionContext.split('\n')]) expect(findSecret(text)).toBeUndefined();
    expect(events.at(-2)).toEqual(expect.objectContaining({ type: 'facts/invalidated' }));
    // The prompt is kept whole, its glued token with it: no clip cuts it.
    expect(findSecret(JSON.stringify(encodeState(snapshot)))).toBeUndefined();
    expect(JSON.stringify(encodeState(snapshot))).toContain(`/x${kept}`);
    expect(encodeState(replay(JSON.parse(JSON.stringify(events))))).toEqual(encodeState(snapshot));
  });

  it('leave no secret in a line of a section that clips a fact holding none', () => {
    // Held whole the token runs on past its last character ('_'); a line clips the object inside it.
    const object = `${'word '.repeat(10)}ghp_${generated.slice(0, 60)}_tail`;
    const { facts } = extractFromImplementer(
      { task_id: 'T', status: 'completed', summary: object, files_changed: [path] },
      'T',
      1_000,
    );
    expect(facts.map((fact) => fact.object)).toContain(object);
    for (const layout of ['lines', 'grouped'] as const) {
      const lines = formatSessionFacts(facts, { layout }).split('\n');
      expect(lines.length).toBeGreaterThan(1);
      for (const line of lines) expect(findSecret(line)).toBeUndefined();
    }
  });

  it('leave no secret in the summary a compaction merges facts holding none into', () => {
    const facts = [`${'x'.repeat(100)}`, `ghp_${generated.slice(0, 150)}_`, 'z'].map((object, i) =>
      makeFact({
        subject: 's',
        relation: `r${i}`,
        object,
        tags: ['decision'],
        validFrom: i + 1,
        sourceTaskId: '1',
        sourceRole: 'implementer',
        confidence: 1,
      }),
    );
    for (const fact of facts) expect(findSecret(fact.object)).toBeUndefined();
    const summary = selectValidFacts(compact(addFacts(emptyFactStore(), facts), 2)).find(
      (fact) => fact.relation === SUMMARY_RELATION,
    )!;
    expect(summary.object).toMatch(/^r0 x+; r1 /u);
    expect(findSecret(summary.object)).toBeUndefined();
  });
});

describe('a text of millions of characters', () => {
  // One match of a shape over a run this long, in a text holding a character outside Latin-1,
  // overflowed the engine's regexp stack: each loop of a shape is bounded (base/secrets.ts).
  const run = 'x'.repeat(8_500_000);

  it.each([
    ['a scheme', `see a://${run}設`],
    ['a JSON Web Token prefix', `eyJ${run}設`],
    ['Bearer and its spaces', `Bearer${' '.repeat(8_500_000)}abc123設`],
    ['a key label of half a million words', `-----BEGIN ${'ABCDEFGHIJKLMNOP '.repeat(500_000)}${'PRIVATE KEY'}-----設`],
  ])('is scanned whole when a run follows %s, and holds no secret', (_name, text) => {
    expect(findSecret(text)).toBeUndefined();
    expect(redactSecrets(text)).toBe(text);
  });

  it('has the secret it holds found and redacted, a key block whose body runs on included', () => {
    const [, secret] = SECRETS.find(([shape]) => shape === 'a GitHub token')!;
    const text = `${secret} then a://${run}設`;
    expect(findSecret(text)).toBe('a GitHub token');
    expect(redactSecrets(text)).toBe(`[redacted: a GitHub token] then a://${run}設`);
    const block = `-----BEGIN ${'PRIVATE KEY'}-----\n${run}設`;
    expect(findSecret(block)).toBe('a private key block');
    expect(redactSecrets(block).startsWith('[redacted: a private key block]')).toBe(true);
  });

  it('has a token that runs on past a million characters redacted up to there', () => {
    expect(findSecret(`glpat-${run}設`)).toBe('a GitLab token');
    expect(redactSecrets(`glpat-${run}設`)).toBe(`[redacted: a GitLab token]${'x'.repeat(7_500_000)}設`);
  });

  it("keeps a result's facts when one of its texts holds such a run", () => {
    const extraction = extractFromImplementer(
      { task_id: 'T', status: 'completed', summary: `see a://${run}設`, files_changed: ['src/a.ts'] },
      'T',
      1_000,
    );
    expect(extraction.warnings).toEqual([]);
    expect(extraction.facts.map((fact) => fact.subject)).toContain('src/a.ts');
  });
});

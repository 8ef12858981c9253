/**
 * Secrets never enter a context: each common shape is found in every text field, the write is
 * refused as a `Left` naming the field, and the secret itself is never echoed. Look-alikes
 * (prose about tokens, commit ids, paths) pass.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type { ContextStatus, RepositorySnapshot } from '../../src/context/checkpoint.js';
import type { ContextError } from '../../src/context/model.js';
import { findContextSecret } from '../../src/context/schema.js';
import { findSecret, findSecretField, redactSecrets } from '../../src/context/secrets.js';
import {
  applyRunOutcome,
  buildContextBundle,
  emptySharedContext,
  recordContextClaim,
  redactContext,
  renderContextDashboard,
} from '../../src/context/index.js';
import type { SharedContext } from '../../src/context/model.js';
import { HARMLESS, SECRETS } from '../fixtures/secrets.js';

const GIT: RepositorySnapshot = { kind: 'git', head: 'a'.repeat(40), trackedFilesHash: 'f'.repeat(32) };
const context = emptySharedContext({ repo: 'r', branch: 'main', workstreamId: 'default' });

const refusal = (result: E.Either<ContextError, unknown>): ContextError => {
  if (E.isRight(result)) throw new Error('expected the write to be refused');
  return result.left;
};

describe('secret detection', () => {
  it.each(SECRETS)('finds %s', (shape, secret) => {
    expect(findSecret(`see ${secret} here`)).toBe(shape);
  });

  it.each(HARMLESS)('lets look-alikes pass: %s', (text) => {
    expect(findSecret(text)).toBeUndefined();
  });

  it('refuses every shape in every text field of a run, naming the field and never quoting the secret', () => {
    for (const [, secret] of SECRETS) {
      const fields: ReadonlyArray<readonly [string, Parameters<typeof applyRunOutcome>[1]]> = [
        ['the summary', { status: 'succeeded', summary: `Done. ${secret}` }],
        ['the feature request', { status: 'succeeded', featureRequest: `Build ${secret}` }],
        ['pinned rule 1', { status: 'succeeded', pinRules: [`Use ${secret}`] }],
        ['decision 2', { status: 'succeeded', decisions: ['Fine?', `Keep ${secret}?`] }],
        ['step 1', { status: 'succeeded', checklist: [`Rotate ${secret}`] }],
        [
          'claim 1 refused: the claim',
          { status: 'succeeded', claims: [{ claim: `Looked at ${secret}`, symbols: ['x'] }] },
        ],
        ['the failed step', { status: 'failed', failedStep: `curl ${secret}`, error: 'e', nextAction: 'n' }],
        ['the error', { status: 'failed', failedStep: 's', error: `401 for ${secret}`, nextAction: 'n' }],
        ['the next action', { status: 'failed', failedStep: 's', error: 'e', nextAction: `use ${secret}` }],
      ];
      for (const [field, outcome] of fields) {
        const error = refusal(applyRunOutcome(context, outcome, 1_000, GIT));
        expect(error.code).toBe('secret');
        expect(error.message.startsWith(field)).toBe(true);
        expect(error.message).toContain('holds what looks like');
        expect(error.message).not.toContain(secret.slice(-12));
      }
    }
  });

  it('finds a secret split by an invisible format character, which every renderer removes', () => {
    // A zero-width space, a soft hyphen, a word joiner, a tag character: each renders as nothing.
    for (const hidden of ['\u200b', '\u00ad', '\u2060', '\u{E0041}'])
      for (const [shape, secret] of SECRETS)
        for (let at = 1; at < secret.length; at += 1) {
          const split = `${secret.slice(0, at)}${hidden}${secret.slice(at)}`;
          expect(findSecret(`see ${split} here`)).toBe(shape);
          const redacted = redactSecrets(`see ${split} here`);
          expect(redacted).toContain(`[redacted: ${shape}]`);
          expect(findSecret(redacted)).toBeUndefined();
        }
  });

  it('refuses a claim whose text, file path or symbol holds a secret', () => {
    const [, token] = SECRETS[4]!;
    for (const claim of [
      { claim: `Checked ${token}` },
      { claim: 'Fixed it', files: [{ path: `src/${token}.ts`, lines: 'L1' }] },
      { claim: 'Fixed it', symbols: [token] },
    ]) {
      const error = refusal(recordContextClaim(context, claim));
      expect(error).toEqual({
        code: 'secret',
        message: expect.stringMatching(
          /^claim refused: (the claim|files\[0\]|symbols\[0\]) holds what looks like a GitHub token/u,
        ),
      });
    }
  });

  it('finds a secret anywhere in a stored context, by its field path', () => {
    const [, jwt] = SECRETS[10]!;
    expect(
      findContextSecret({ ...context, recentFailures: [{ failedStep: 's', error: jwt, nextAction: 'n' }] }),
    ).toEqual({ path: 'recent_failures[0].error', shape: 'a JSON Web Token' });
    expect(findSecretField({ a: [{ b: 'fine' }, { [jwt]: 1 }] })).toEqual({
      path: 'a[1].(key)',
      shape: 'a JSON Web Token',
    });
    expect(findContextSecret(context)).toBeUndefined();
  });

  it('redacts every field a stored context can hold a secret in, the checkpoint included', () => {
    const [, token] = SECRETS[4]!;
    const checkpoint = { gitHead: 'a'.repeat(40), trackedFilesHash: 'f'.repeat(32), summaryHash: 'e'.repeat(32) };
    const failure = { failedStep: 's', error: 'e', nextAction: 'n' };
    const holding: ReadonlyArray<readonly [string, SharedContext]> = [
      ['the key', { ...context, key: { ...context.key, branch: `fix/${token}` } }],
      ['the feature request', { ...context, featureRequest: token }],
      ['a pinned rule', { ...context, pinnedRules: [token] }],
      ['who pinned a rule', { ...context, pinnedRules: ['r'], pinnedBy: { r: token } }],
      ['the summary', { ...context, workingSummary: { text: token, stale: false } }],
      ['a decision', { ...context, openDecisions: [{ id: 'D1', text: token, status: 'open' }] }],
      ['a step', { ...context, checklist: [{ text: token, done: false }] }],
      [
        'a claim',
        { ...context, evidenceLedger: [{ claim: 'c', files: [{ path: token, lines: 'L1' }], symbols: [token] }] },
      ],
      ['the last run', { ...context, lastRun: { status: 'failed', ...failure, error: token } }],
      ['a recent failure', { ...context, recentFailures: [{ ...failure, nextAction: token }] }],
      ['an uncommitted path', { ...context, checkpoint: { ...checkpoint, uncommitted: [`src/${token}.ts`] } }],
      ['the tracked files hash', { ...context, checkpoint: { ...checkpoint, trackedFilesHash: token } }],
      ['the summary hash', { ...context, checkpoint: { ...checkpoint, summaryHash: token } }],
      ['an unknown field', { ...context, checkpoint: { ...checkpoint, unknownFields: { note: token } } }],
    ];
    for (const [where, stored] of holding) {
      expect(findContextSecret(stored), where).toBeDefined();
      const shown = redactContext(stored);
      expect(findContextSecret(shown), where).toBeUndefined();
      expect(JSON.stringify(shown), where).toContain('[redacted: a GitHub token]');
    }
  });
});

describe('paths git names', () => {
  it('records a checkpoint over an uncommitted file whose path looks like a secret, with the path redacted', () => {
    const token = SECRETS.find(([shape]) => shape === 'a GitHub token')![1];
    const cut = `${'d'.repeat(280)}/x${token}/f.ts`;
    // Whole, no shape matches the glued path; cut at its start to the schema's limit, one does.
    expect(findSecret(cut)).toBeUndefined();
    const snapshot: RepositorySnapshot = { ...GIT, uncommitted: [`notes/${token}.md`, cut, 'src/a.ts'] };
    const stored = applyRunOutcome(context, { status: 'succeeded', summary: 'Rotated the keys' }, 1_000, snapshot);
    if (E.isLeft(stored)) throw new Error(stored.left.message);
    const uncommitted = stored.right.checkpoint?.uncommitted ?? [];
    expect(uncommitted).toHaveLength(3);
    expect(uncommitted[0]).toBe('notes/[redacted: a GitHub token].md');
    expect(uncommitted[2]).toBe('src/a.ts');
    for (const path of uncommitted) expect(findSecret(path)).toBeUndefined();
    expect(findContextSecret(stored.right)).toBeUndefined();
  });
});

describe('texts a clip cuts', () => {
  const generated = 'a1B2c3D4e5'.repeat(30);
  // No shape matches these whole (more characters after the token than a token has, a word
  // character glued after it, a space after the `@`), and the bundle's and the dashboard's clips would.
  const longToken = `ghp_${generated.slice(0, 260)}`;
  const gluedKey = (length: number): string => `sk_live_${generated.slice(0, length)}_prod`;
  const branch = gluedKey(40);
  const pinner = 'xy a://b:pwd@ zzz <xy@example.com>';

  it('makes no secret of a stored text in a bundle or a dashboard', () => {
    for (const text of [longToken, gluedKey(150), branch, pinner]) expect(findSecret(text)).toBeUndefined();
    const stored = applyRunOutcome(
      emptySharedContext({ repo: 'r', branch, workstreamId: 'default' }),
      {
        status: 'succeeded',
        // Longer than the summary's section: its cut falls inside one of the tokens.
        summary: `Rotated the deploy keys ${Array.from({ length: 10 }, () => longToken).join(' ')}`,
        featureRequest: `Rotate ${longToken}`,
        decisions: [`Keep ${longToken}?`],
        checklist: [`Revoke ${gluedKey(150)}`],
        pinRules: ['Rotate keys monthly'],
        pinnedBy: pinner,
      },
      1_000,
      GIT,
    );
    if (E.isLeft(stored)) throw new Error(stored.left.message);
    const texts = [
      ...(['planning', 'implementation'] as const).map((kind) => buildContextBundle(stored.right, { kind }).text),
      renderContextDashboard({ kind: 'planning', contexts: [stored.right] }, 'planning_context.json'),
    ];
    expect(texts.join('\n')).toContain('[redacted: a GitHub token]');
    for (const text of texts) expect(findSecret(text)).toBeUndefined();
  });

  it('makes no secret of the path of a changed file cut at its start', () => {
    const stale = (path: string): ContextStatus => ({
      repository: 'git',
      head: 'b'.repeat(40),
      stale: true,
      reasons: ['head_moved'],
      changes: [{ status: 'M', path }],
      missingEvidence: [],
    });
    const changed = (path: string): string =>
      buildContextBundle({ context, status: stale(path) }, { kind: 'implementation' })
        .text.split('\n')
        .find((line) => line.startsWith('- M '))!;
    // The line keeps the same number of the path's last characters whatever the path: the cut is
    // put just after the letter glued before the token.
    const kept = changed('e'.repeat(2_000)).length - '- M ...'.length;
    const tail = `ghp_${generated.slice(0, 36)}/${'f'.repeat(kept - 44)}.ts`;
    const path = `${'d'.repeat(100)}/x${tail}`;
    expect(findSecret(path)).toBeUndefined();
    expect(changed(path)).toContain('[redacted: a GitHub token]');
  });
});

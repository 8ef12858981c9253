import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mentionedPaths, queryTerms, textTerms } from '../../../src/core/search/terms.js';
import {
  addFacts,
  emptyFactStore,
  explainRetrieval,
  makeFact,
  retrieveFacts,
  selectValidFacts,
} from '../../../src/index.js';

describe('code-aware terms', () => {
  it('split a path into its segments and keep the file name whole and split', () => {
    expect(textTerms('src/auth/loginRoute.ts')).toEqual(['src', 'auth', 'loginrout', 'login', 'rout', 'ts']);
  });

  it('split camelCase, PascalCase, snake_case and kebab-case, keeping the compound so the spellings meet', () => {
    const spellings = ['rateLimit', 'RateLimit', 'rate_limit', 'rate-limit'].map(textTerms);
    for (const terms of spellings) expect(terms).toEqual(['ratelimit', 'rate', 'limit']);
    expect(textTerms('parseJSONBody')).toEqual(['parsejsonbodi', 'pars', 'json', 'bodi']);
  });

  it('stem so that validate, validation and validates meet, and drop stopwords from prose', () => {
    expect(new Set(textTerms('validate validation validates'))).toEqual(new Set(['valid']));
    expect(textTerms('the and of is')).toEqual([]);
  });

  it('keep stopwords inside paths, and in queries (they match paths only)', () => {
    expect(textTerms('src/commands/up.rs')).toContain('up');
    expect(queryTerms('make up take a lock')).toContain('up');
    expect(textTerms('set up the database')).not.toContain('up');
  });

  it('a text’s terms are the same whichever texts were read before it (the memo tables never change an answer)', () => {
    // Small alphabets make tokens, path segments and file names recur between texts.
    const piece = fc.constantFrom(
      'src',
      'Auth',
      'login',
      'Route',
      'rate_limit',
      '.ts',
      '.',
      '/',
      ' ',
      '-',
      'task:3',
      'the',
      '2',
    );
    const text = fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join(''));
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 8 }), (texts) => {
        const forwards = texts.map((t) => [...textTerms(t)]);
        const backwards = [...texts].reverse().map((t) => [...textTerms(`${t} `)]);
        expect(backwards.reverse()).toEqual(forwards);
        // A text's terms are its space-separated parts' terms, in order.
        for (const t of texts) expect(t.split(' ').flatMap((part) => [...textTerms(part)])).toEqual([...textTerms(t)]);
        // The same for a query's distinct terms.
        const queries = texts.map((t) => queryTerms(t));
        expect(
          [...texts]
            .reverse()
            .map((t) => queryTerms(`${t} `))
            .reverse(),
        ).toEqual(queries);
        for (const t of texts)
          expect([...new Set(t.split(' ').flatMap((part) => queryTerms(part)))]).toEqual(queryTerms(t));
      }),
    );
  });

  it('carry no terms for task references', () => {
    expect(textTerms('task:12 modified_by')).toEqual(['modifiedbi', 'modifi']);
  });

  it('find the paths a query names', () => {
    expect(mentionedPaths('Update ./src/config.ts, then config.ts and docs/api/ but not e.g. this')).toEqual([
      'src/config.ts',
      'config.ts',
      'docs/api',
    ]);
  });

  it('find each path a query names in the spelling extraction gives its subject', () => {
    const text = 'See .\\src\\a.ts, src/./b.ts:12:5, `src/x/../c.ts#L3-L9` and lib/cafe\u0301.ts:L2-L4.';
    expect(mentionedPaths(text)).toEqual(['src/a.ts', 'src/b.ts', 'src/c.ts', 'lib/caf\u00e9.ts']);
  });
});

describe('text in Chinese, Japanese and Korean', () => {
  // Writers of these scripts put an ASCII path right against their own words, with no space.
  it.each([
    ['Japanese', 'src/config.tsを修正して', ['src/config.ts']],
    ['Chinese', '修复src/db/pool.ts中的连接泄漏', ['src/db/pool.ts']],
    ['Korean', 'src/config.ts를 수정해 주세요', ['src/config.ts']],
    ['Korean, after the path', '설정은src/config.ts에서 읽는다', ['src/config.ts']],
    ['full-width punctuation', 'src/config.ts、src/db.ts。', ['src/config.ts', 'src/db.ts']],
    ['brackets', '「src/config.ts」のバグを直す', ['src/config.ts']],
    ['two paths', 'src/a.tsとsrc/b.tsを比較して', ['src/a.ts', 'src/b.ts']],
    [
      'a path with CJK segment names',
      'docs/設計.mdとsrc/한글.ts를 보고 設計/メモ.mdを更新',
      ['docs/設計.md', 'src/한글.ts', '設計/メモ.md'],
    ],
    [
      'a CJK name beside other characters in its segment',
      'docs/API設計.mdとdocs/設計_v2.mdとdocs/設計-メモ.mdを読む',
      ['docs/API設計.md', 'docs/設計_v2.md', 'docs/設計-メモ.md'],
    ],
    ['a word before a path with a CJK name', '更新docs/設計.md', ['docs/設計.md']],
    ['a relative path', './src/a.tsを見て', ['src/a.ts']],
  ])('%s: find the paths a prompt names against its words', (_label, text, paths) => {
    expect(mentionedPaths(text)).toEqual(paths);
  });

  it('give a prompt and a fact the terms of the path they name, and none of the words around it', () => {
    expect(queryTerms('src/config.tsを修正して')).toEqual(['src', 'config', 'ts']);
    expect(queryTerms('修复src/db/pool.ts中的连接泄漏')).toEqual(queryTerms('src/db/pool.ts'));
    expect(textTerms('src/db/pool.tsの接続リークを修正した')).toEqual(textTerms('src/db/pool.ts'));
    expect(textTerms('src/a.tsとsrc/b.tsを比較して')).toEqual(textTerms('src/a.ts src/b.ts'));
    expect(textTerms('docs/設計.mdを更新')).toEqual(textTerms('docs/設計.md'));
  });

  it('leave English text as it was', () => {
    const text = 'Fix the rateLimit bug in ./src/auth/loginRoute.ts, then docs/api/ and config.ts.';
    expect(mentionedPaths(text)).toEqual(['src/auth/loginRoute.ts', 'docs/api', 'config.ts']);
    expect(textTerms(text)).toEqual([
      'fix',
      'ratelimit',
      'rate',
      'limit',
      'bug',
      'src',
      'auth',
      'loginrout',
      'login',
      'rout',
      'ts',
      'doc',
      'api',
      'config',
      'ts',
    ]);
  });
});

describe('untrusted prompt text of any size', () => {
  // A pattern that backtracks over a long token is quadratic in it: 10 MB would take hours.
  it.each([
    ['one 10 MB word', 'a'.repeat(10_000_000)],
    ['10 MB of dots', 'x.'.repeat(5_000_000)],
    ['10 MB of slashes', 'a/'.repeat(5_000_000)],
    ['a 40,000-character file name', `${'ab'.repeat(20_000)}.ts`],
  ])('retrieves for %s without stalling', (_label, text) => {
    const store = addFacts(emptyFactStore(), [
      makeFact({
        subject: 'src/a.ts',
        relation: 'modified_by',
        object: 'task:1',
        tags: ['file_change'],
        validFrom: 1,
        sourceTaskId: '1',
        sourceRole: 'implementer',
        confidence: 1,
      }),
    ]);
    // Nothing in the text matches: the most recent task's fact comes on its recency alone.
    const query = { taskDescription: text, taskId: '2', maxFacts: 10, maxTokens: 500 };
    expect(retrieveFacts(store, query)).toEqual(selectValidFacts(store));
    expect(explainRetrieval(store, query)[0]!.parts!.terms).toEqual([]);
    expect(mentionedPaths(text).length).toBeLessThanOrEqual(1);
  });
});

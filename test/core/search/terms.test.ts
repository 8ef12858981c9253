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

  it('split a path from the words written against it, as if a space stood between them', () => {
    expect(queryTerms('src/config.tsを修正して')).toEqual(['src', 'config', 'ts', 'を修', '修正', '正し', 'して']);
    expect(queryTerms('修复src/db/pool.ts中的连接泄漏')).toEqual(queryTerms('修复 src/db/pool.ts 中的连接泄漏'));
    expect(textTerms('src/db/pool.tsの接続リークを修正した')).toEqual(
      textTerms('src/db/pool.ts の接続リークを修正した'),
    );
    expect(textTerms('src/a.tsとsrc/b.tsを比較して')).toEqual(textTerms('src/a.ts と src/b.ts を比較して'));
    expect(textTerms('docs/設計.mdを更新')).toEqual(textTerms('docs/設計.md を更新'));
  });

  it.each([
    [
      'Chinese',
      '修复登录页面的缓存问题',
      ['修复', '复登', '登录', '录页', '页面', '面的', '的缓', '缓存', '存问', '问题'],
    ],
    [
      'Japanese, of every script in one run',
      'ログイン画面のキャッシュ',
      ['ログ', 'グイ', 'イン', 'ン画', '画面', '面の', 'のキ', 'キャ', 'ャッ', 'ッシ', 'シュ'],
    ],
    ['Korean, a run at each space', '캐시 문제를 고쳐', ['캐시', '문제', '제를', '고쳐']],
    ['a run of one letter, as itself', '改 a 한', ['改', '한']],
    ['runs beside ASCII words', 'Fix 登录 loginRoute', ['fix', '登录', 'loginrout', 'login', 'rout']],
    ['letters outside the Basic Multilingual Plane', '𠮷野家', ['𠮷野', '野家']],
  ])('%s: give each run of CJK letters its overlapping bigrams', (_label, text, terms) => {
    expect(textTerms(text)).toEqual(terms);
    expect(queryTerms(text)).toEqual([...new Set(terms)]);
  });

  it('give a path’s CJK names their bigrams beside the path’s other terms', () => {
    expect(textTerms('docs/設計書.md')).toEqual(['doc', '設計', '計書', 'md']);
    expect(textTerms('docs/API設計.md')).toEqual(['doc', 'api', '設計', 'md']);
    expect(textTerms('src/한글/설정_v2.ts')).toEqual(['src', '한글', 'v2', '설정', 'ts']);
    expect(queryTerms('docs/設計書.md')).toEqual(['doc', '設計', '計書', 'md']);
  });

  it.each([
    ['請修改docs/設計.md', ['請修', '修改'], 'docs/設計.md'],
    ['見て docs/設計.md', ['見て'], 'docs/設計.md'],
    ['見てdocs/設計.md', ['見て'], 'docs/設計.md'],
    ['请看src/한글.ts', ['请看'], 'src/한글.ts'],
  ])('%s: keep the words before a path out of it, and the path’s CJK name in it', (text, words, path) => {
    expect(mentionedPaths(text)).toEqual([path]);
    expect(textTerms(text)).toEqual([...words, ...textTerms(path)]);
  });

  it('keep a 100,000-letter run linear: its terms are its bigrams', () => {
    const run = '设计'.repeat(50_000);
    const terms = textTerms(run);
    expect(terms).toHaveLength(99_999);
    expect(new Set(terms)).toEqual(new Set(['设计', '计设']));
    expect(queryTerms(`${run}，${run}`)).toEqual(['设计', '计设']);
  });

  it('give English text the terms it had, with CJK text beside it or not', () => {
    const english = fc.constantFrom(
      'Fix',
      'the',
      'rateLimit',
      'src/auth/loginRoute.ts',
      'docs/api/',
      'a',
      'task:3',
      'x_y-z',
      '2',
    );
    const cjk = fc.constantFrom('修复', '登录页面', 'を', 'キャッシュ', '캐시');
    fc.assert(
      fc.property(fc.array(english, { maxLength: 8 }), fc.array(cjk, { maxLength: 4 }), (words, runs) => {
        const text = words.join(' ');
        const withRuns = [...words, ...runs].join(' ');
        expect(textTerms(withRuns).slice(0, textTerms(text).length)).toEqual(textTerms(text));
        expect(textTerms(withRuns).slice(textTerms(text).length)).toEqual(runs.flatMap((run) => textTerms(run)));
        expect(mentionedPaths(withRuns)).toEqual(mentionedPaths(text));
      }),
    );
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
    // A run of CJK letters is read whatever its length, and so is what a long word is split from.
    ['a 100,000-character word beside a CJK word', `${'a'.repeat(100_000)} 修复`],
    ['a 100,000-character word against a CJK word', `${'a'.repeat(100_000)}修复`],
    ['a 100,000-character run of CJK letters', '修复缓存'.repeat(25_000)],
    // Past a million characters a text is matched a piece at a time: one match overflowed the
    // engine's regexp stack on a run of 5 million characters outside Latin-1.
    ['a word of 6 million characters against a CJK letter', `${'a'.repeat(6_000_000)}設`],
    ['6 million CJK letters', '設計'.repeat(3_000_000)],
    ['6 million characters of CJK paths', 'docs/設計'.repeat(750_000)],
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

describe('a long text', () => {
  // Texts past a million characters are matched a piece at a time (MATCHED_WHOLE in terms.ts).
  const padding = ' '.repeat(1_000_001);
  const token = fc.oneof(
    fc.constantFrom('Fix', 'src/auth/loginRoute.ts', 'rate_limit', 'docs/設計.md', '修复缓存问题', 'を修正して', ','),
    fc
      .constantFrom(511, 512, 513, 4_095, 4_096, 4_097, 8_193, 100_000, 100_001)
      .chain((length) =>
        fc
          .constantFrom('a', '設', 'a/', '設計/')
          .map((unit) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length)),
      ),
  );

  it('has the terms and paths it has when matched whole, whatever its tokens and their lengths', () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 6 }), fc.constantFrom(' ', '\n', '，'), (tokens, gap) => {
        const text = tokens.join(gap);
        const long = `${text}${padding}`;
        expect(textTerms(long)).toEqual(textTerms(text));
        expect(queryTerms(long)).toEqual(queryTerms(text));
        expect(mentionedPaths(long)).toEqual(mentionedPaths(text));
      }),
      { numRuns: 25 },
    );
  });
});

describe('the memo tables', () => {
  it('keep no entry of a token past 512 characters: the query terms of 20 distinct runs of 60,000 CJK letters leave the heap as it was', async () => {
    const { setFlagsFromString } = await import('node:v8');
    const { runInNewContext } = await import('node:vm');
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const letters = Array.from('设计缓存登录页面问题修复');
    // Each run a walk of its own through the 12 letters: a pattern of the run's number alone
    // repeats every 12 runs, and a run met again adds nothing a table could keep.
    const runs = Array.from({ length: 20 }, (_, n) => {
      let seed = n + 1;
      return Array.from({ length: 60_000 }, () => {
        seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
        return letters[(seed >>> 16) % letters.length];
      }).join('');
    });
    expect(new Set(runs).size).toBe(runs.length);
    gc();
    const before = process.memoryUsage().heapUsed;
    for (const run of runs) {
      expect(queryTerms(run).length).toBeGreaterThan(0);
    }
    gc();
    // Kept, each run and its terms would hold about 250 KB (a term is one of few, shared by the
    // stems' table): 4.9 MB for the 20, where nothing kept leaves about 0.2 MB.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(3_000_000);
  });
});

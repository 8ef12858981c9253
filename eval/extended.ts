/**
 * The signals of a prompt's candidates that only the ranking experiments read (eval/loop.ts):
 * other shares of a task's context, churn, directory proximity, path words, recency-weighted
 * changes, co-change with the latest task and a file's history as one document, each computed from the store and the prompt.
 */
import { explainRetrieval } from '../src/index.js';
import { isFileFact } from '../src/core/fact.js';
import { planTerm } from '../src/core/retrieve/rank.js';
import { queryTerms, textTerms as indexTextTerms } from '../src/core/search/terms.js';
import { BM25_K1, FIELD_WEIGHTS } from '../src/core/search/weights.js';
import { selectValidFacts } from '../src/core/store/selectors.js';
import { type FactStore, pairKey, validCount } from '../src/core/store/state.js';
import * as PMap from '../src/persistent/persistentMap.js';
import { START } from './fit.js';
import { type History, type LabeledPrompt, queryOf } from './lib.js';
import { type Candidate, promptCandidates, type PromptCandidates } from './model.js';

/** A candidate with the signals only the experiments read. */
export interface Extended extends Candidate {
  /** Files the task the label points to changed (labels only; -1 otherwise). */
  readonly labelFiles: number;
  /** The file's context with each task's score over its files' number (1), their fourth root (0.25) or whole (0). */
  readonly contextEven: number;
  readonly contextQuarter: number;
  readonly contextWhole: number;
  /** How many tasks changed the file (file facts; 0 otherwise). */
  readonly churn: number;
  /**
   * Directory proximity to the first pass's best file facts (the co-change seeds, read under
   * START): per seed, the share of leading directory components the two files have in common
   * (1 in the same directory), times the seed's score relative to the best seed's; the largest.
   */
  readonly seedProximity: number;
  /** The same with only the same directory counting (1 or 0 per seed). */
  readonly seedSameDir: number;
  /** Directory proximity (as for the seeds) to the files of the latest other task, the largest. */
  readonly recentProximity: number;
  /** The same over the last three other tasks, each halved per task further back. */
  readonly recentProximity3: number;
  /** The share of the file's path terms (its directories and name, split and stemmed) the prompt holds. */
  readonly pathWords: number;
  /** Directory proximity to the best file facts under START's whole score (recency and co-change included). */
  readonly startProximity: number;
  /** How recently and often the file changed: over the tasks that changed it among the last 63, 0.9^age summed. */
  readonly heat: number;
  /** The same over the tasks that changed a file of its directory (at most one per task). */
  readonly dirHeat: number;
  /**
   * Co-change with the latest other task's files: per such file, the share of its latest 32
   * tasks (of at most 32 files, the latest itself aside) that changed this one; their mean.
   */
  readonly recentCoChange: number;
  /**
   * BM25 (k1 1.2, b 0.75) of the prompt's terms against the file's history as one document: the
   * prompts and summaries of every task that changed it, each text's terms counted once.
   */
  readonly fileDoc: number;
  /** The task context the latest other task's prompt gives the fact (that task's own facts aside): the work the last task continues. */
  readonly prevContext: number;
  /** The same with the query part of that prompt too (its words against the fact's own). */
  readonly prevMatch: number;
  /** Its task's place among every other task the store knows, by prompt time (0: the latest); -1 for a task it does not know. */
  readonly taskAge: number;
  /** The seed's relative score when the file's name stem (test markers aside) is a seed's and it is another file. */
  readonly seedStem: number;
  /** 1 when the file's name stem (as `seedStem` reads it, 3 characters or more) is one of the prompt's words. */
  readonly promptStem: number;
  /** The same when one stem starts with the other (of 4 characters or more). */
  readonly seedPrefix: number;
  /** The query part the prompt's first `HEAD_WORDS` words give the fact (all of it when the prompt is no longer; 0 unless asked for). */
  readonly headQuery: number;
  /** The task context those words give it. */
  readonly headContext: number;
  /**
   * The task context with each lending task's score times `AGE_DECAYS[i]` to the power of its
   * place among the other tasks by prompt time (0: the latest), one entry per decay.
   */
  readonly contextAged: ReadonlyArray<number>;
  /**
   * The query part with BM25's length normalization, one entry per `QUERY_BS` value of b: each
   * term's weighted frequency in the fact (subject 3, object 1) saturated against k1 times
   * (1 - b + b x the fact's weighted length over the mean of the valid facts'); b 0 is the library's.
   */
  readonly queryNorm: ReadonlyArray<number>;
  /**
   * The query part with each prompt term weighted by how often the prompt says it, saturated as
   * BM25 saturates a query's term frequency: (k3 + 1) x qtf / (k3 + qtf), one entry per `QTF_K3`
   * value (the library counts each term once).
   */
  readonly queryQtf: ReadonlyArray<number>;
  /** Hours from the fact's start of validity to the prompt (0 or more). */
  readonly gapHours: number;
}

/** The numbers an environment variable lists, comma-separated (none when it is unset). */
const listedNumbers = (name: string): ReadonlyArray<number> =>
  (process.env[name] ?? '')
    .split(',')
    .filter((s) => s !== '')
    .map(Number);

/** The decays of `contextAged` (`AGE_DECAYS=0.999,0.99`). */
export const AGE_DECAYS = listedNumbers('AGE_DECAYS');

/** The values of k3 of `queryQtf` (`QTF_K3=1.2,8`). */
export const QTF_K3 = listedNumbers('QTF_K3');

/** How often a text says each of its query terms: the terms of each whitespace-separated word, counted. */
const queryTermCounts = (text: string): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const word of text.split(/\s+/u))
    for (const term of queryTerms(word)) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
};

/** The values of b of `queryNorm` (`QUERY_BS=0,0.25,0.5`). */
export const QUERY_BS = listedNumbers('QUERY_BS');

/** The subject's weight in `queryNorm` (`QUERY_SUBJECT=2`; the library's is 3). */
const QUERY_SUBJECT = Number(process.env['QUERY_SUBJECT'] ?? FIELD_WEIGHTS.subject);

/** A fact's weighted term frequencies (subject `QUERY_SUBJECT`, object 1), as the index counts them before saturation. */
const weightedFrequencies = (
  fact: { readonly subject: string; readonly object: string },
  subject = QUERY_SUBJECT,
): Map<string, number> => {
  const frequencies = new Map<string, number>();
  for (const term of indexTextTerms(fact.subject)) frequencies.set(term, (frequencies.get(term) ?? 0) + subject);
  for (const term of indexTextTerms(fact.object))
    frequencies.set(term, (frequencies.get(term) ?? 0) + FIELD_WEIGHTS.object);
  return frequencies;
};

/** The length of a fact as `queryNorm` reads it: the sum of its weighted frequencies. */
const weightedLength = (frequencies: ReadonlyMap<string, number>): number => {
  let length = 0;
  frequencies.forEach((f) => (length += f));
  return length;
};

/**
 * The query part of a fact with the weighted `frequencies`: over the query's terms with their
 * idf, each saturated with length normalization `b` at the fact's `relative` length, times the
 * term's query weight (1 unless `queryWeight` says otherwise).
 */
const queryPart = (
  idfs: ReadonlyArray<readonly [string, number]>,
  frequencies: ReadonlyMap<string, number>,
  b: number,
  relative: number,
  queryWeight: (term: string) => number = () => 1,
): number => {
  let sum = 0;
  for (const [term, idfOf] of idfs) {
    const f = frequencies.get(term);
    if (f !== undefined)
      sum += queryWeight(term) * ((idfOf * f * (BM25_K1 + 1)) / (f + BM25_K1 * (1 - b + b * relative)));
  }
  return sum;
};

/** How many of a prompt's leading words are its head (a commit's subject line is about this long). */
const HEAD_WORDS = Number(process.env['HEAD_WORDS'] ?? 10);

/** A file name's stem: no extensions, letters and digits only, lower case, test markers aside. */
const stemOf = (path: string): string => {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.indexOf('.', 1);
  let stem = (dot < 0 ? name : name.slice(0, dot)).toLowerCase().replace(/[^a-z0-9]/g, '');
  stem = stem.replace(/^tests?(?=.)/, '').replace(/(?<=.)(tests?|spec|specs)$/, '');
  return stem;
};

/** Each text's terms, once per distinct text. */
const textTerms = (() => {
  const memo = new Map<string, ReadonlyArray<string>>();
  return (text: string): ReadonlyArray<string> => {
    let terms = memo.get(text);
    if (terms === undefined) {
      terms = queryTerms(text);
      memo.set(text, terms);
    }
    return terms;
  };
})();

/** A path's directories (every segment but the last). */
const directoriesOf = (path: string): string[] => path.split('/').slice(0, -1);

/** The share of leading directories two files have in common (1 in the same directory, root included). */
const proximity = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): number => {
  const longest = Math.max(a.length, b.length);
  if (longest === 0) return 1;
  let common = 0;
  while (common < Math.min(a.length, b.length) && a[common] === b[common]) common += 1;
  return common / longest;
};

/** How many of the first pass's best facts the seeds are taken from, and how many seeds (as the library's co-change). */
const FIRST_PASS_FACTS = 10;
const SEEDS = 3;

/** What a query gives a fact: its task context and the sum of its query terms. */
interface MatchParts {
  readonly context: number;
  readonly query: number;
}

/**
 * The parts `prompt`, as a query under START with no budget, gives each fact it reaches (the
 * facts of task `aside` left out).
 */
const matchParts = (store: FactStore, prompt: LabeledPrompt, aside?: string): Map<string, MatchParts> => {
  const parts = new Map<string, MatchParts>();
  const query = queryOf(prompt, {
    maxFacts: Number.MAX_SAFE_INTEGER,
    maxTokens: Number.MAX_SAFE_INTEGER,
    ranking: START,
  });
  for (const decision of explainRetrieval(store, query))
    if (decision.parts !== undefined && decision.fact.sourceTaskId !== aside)
      parts.set(decision.fact.id, {
        context: decision.parts.context,
        query: decision.parts.terms.reduce((sum, t) => sum + t.contribution, 0),
      });
  return parts;
};

/**
 * One prompt's candidates with the extended signals, the task scores read from its non-file
 * facts. The head signals cost a third query a prompt: read only when `head` is true.
 */
export const extended = (history: History, index: number, head = false): PromptCandidates => {
  const prompt = history.prompts[index]!;
  const { store } = prompt;
  const base = promptCandidates(history.name, prompt, START);
  const decisions = explainRetrieval(
    store,
    queryOf(prompt, { maxFacts: Number.MAX_SAFE_INTEGER, maxTokens: Number.MAX_SAFE_INTEGER, ranking: START }),
  );
  const tasks = store.index.tasks;
  const filesOf = (taskId: string): number => Math.max(1, PMap.size(PMap.get(tasks, taskId)?.touched ?? PMap.empty));
  // A task's whole context score: a non-file fact's context is it over the task's facts.
  const taskScores = new Map<string, number>();
  const byId = new Map(decisions.map((d) => [d.fact.id, d]));
  for (const { fact, parts } of decisions)
    if (parts !== undefined && !isFileFact(fact) && parts.context > 0) {
      const facts = Math.max(1, PMap.size(PMap.get(tasks, fact.sourceTaskId)?.facts ?? PMap.empty));
      taskScores.set(fact.sourceTaskId, (parts.context / START.contextWeight) * facts);
    }
  // The first pass under START: query and context, every prior 1, a named file first.
  const firstScore = (c: Candidate): number => c.query + c.context + (c.named && c.query + c.context > 0 ? 100 : 0);
  const first = [...base.candidates]
    .filter((c) => firstScore(c) > 0)
    .sort((a, b) => firstScore(b) - firstScore(a) || b.validFrom - a.validFrom || (a.id < b.id ? -1 : 1))
    .slice(0, FIRST_PASS_FACTS);
  const seedFacts = first.filter((c) => isFileFact(byId.get(c.id)!.fact)).slice(0, SEEDS);
  const top = seedFacts.length === 0 ? 0 : seedFacts[0]!.query + seedFacts[0]!.context;
  const seeds = seedFacts.map((c) => ({
    subject: byId.get(c.id)!.fact.subject,
    stem: stemOf(byId.get(c.id)!.fact.subject),
    dirs: directoriesOf(byId.get(c.id)!.fact.subject),
    weight: top > 0 ? (c.query + c.context) / top : 0,
  }));
  const recent = base.candidates
    .filter((c) => c.age >= 0 && c.age < 3 && isFileFact(byId.get(c.id)!.fact))
    .map((c) => ({ dirs: directoriesOf(byId.get(c.id)!.fact.subject), age: c.age }));
  const promptTerms = new Set(queryTerms(prompt.taskPrompt));
  // The recomputed query parts: idf per query term (as the library plans it), the mean length, the prompt's term counts.
  const documents = validCount(store);
  const recomputed = QUERY_BS.length > 0 || QTF_K3.length > 0;
  const queryIdfs = recomputed
    ? queryTerms(prompt.taskPrompt).map((term) => [term, planTerm(store.index, documents, term, 1).idf] as const)
    : [];
  let meanLength = 1;
  if (QUERY_BS.length > 0) {
    const valid = selectValidFacts(store);
    const total = valid.reduce((sum, fact) => sum + weightedLength(weightedFrequencies(fact)), 0);
    meanLength = valid.length === 0 ? 1 : Math.max(1, total / valid.length);
  }
  const qtfCounts = QTF_K3.length === 0 ? new Map<string, number>() : queryTermCounts(prompt.taskPrompt);
  const queryNormOf = (fact: { readonly subject: string; readonly object: string }): number[] => {
    if (QUERY_BS.length === 0) return [];
    const frequencies = weightedFrequencies(fact);
    const relative = weightedLength(frequencies) / meanLength;
    return QUERY_BS.map((b) => queryPart(queryIdfs, frequencies, b, relative));
  };
  const queryQtfOf = (fact: { readonly subject: string; readonly object: string }): number[] => {
    if (QTF_K3.length === 0) return [];
    const frequencies = weightedFrequencies(fact, FIELD_WEIGHTS.subject);
    return QTF_K3.map((k3) =>
      queryPart(queryIdfs, frequencies, 0, 1, (term) => {
        const q = qtfCounts.get(term) ?? 1;
        return ((k3 + 1) * q) / (k3 + q);
      }),
    );
  };
  const promptWords = new Set(prompt.taskPrompt.toLowerCase().split(/[^a-z0-9]+/u));
  // The best file facts under START's whole score (recency at decay 0.9, shared over the root of the task's files).
  const startScore = (c: Candidate): number =>
    c.query +
    c.context +
    c.coChange +
    (c.age >= 0 ? (1 + 1 / Math.sqrt(Math.max(1, c.taskFiles))) * 0.9 ** c.age : 0) +
    (c.named && c.query + c.context > 0 ? 100 : 0);
  const startBest = base.candidates
    .filter((c) => startScore(c) > 0 && isFileFact(byId.get(c.id)!.fact))
    .sort((a, b) => startScore(b) - startScore(a) || b.validFrom - a.validFrom || (a.id < b.id ? -1 : 1))
    .slice(0, SEEDS);
  const startTop = startBest.length === 0 ? 0 : startScore(startBest[0]!);
  const startSeeds = startBest.map((c) => ({
    dirs: directoriesOf(byId.get(c.id)!.fact.subject),
    weight: startTop > 0 ? startScore(c) / startTop : 0,
  }));
  // Every other task's place by prompt time (0: the latest; ties by id, later first).
  const places = new Map<string, number>();
  const timed: Array<[string, number]> = [];
  PMap.forEach(tasks, (doc, taskId) => {
    if (taskId !== prompt.taskId) timed.push([taskId, doc.promptAt ?? -Infinity]);
  });
  timed.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0));
  timed.forEach(([taskId], place) => places.set(taskId, place));
  // The other tasks' ages (0: the latest), over the last 63.
  const ages = new Map<string, number>();
  for (let at = 0; at < store.index.recent.length && ages.size < 63; at += 2) {
    const taskId = store.index.recent[at] as string;
    if (taskId !== prompt.taskId) ages.set(taskId, ages.size);
  }
  const dirKey = (subject: string): string => directoriesOf(subject).join('/');
  const dirHeats = new Map<string, number>();
  for (const [taskId, age] of ages) {
    const dirs = new Set<string>();
    PMap.forEach(PMap.get(tasks, taskId)?.touched ?? PMap.empty, (_t, pair) => {
      const subject = PMap.get(store.index.files, pair)?.subject;
      if (subject !== undefined) dirs.add(dirKey(subject));
    });
    for (const dir of dirs) dirHeats.set(dir, (dirHeats.get(dir) ?? 0) + 0.9 ** age);
  }
  // Co-change with the latest other task's files.
  const latest = [...ages].find(([, age]) => age === 0)?.[0];
  const recentCo = new Map<string, number>();
  const latestTouched = latest === undefined ? PMap.empty : (PMap.get(tasks, latest)?.touched ?? PMap.empty);
  const latestSize = PMap.size(latestTouched);
  if (latestSize > 0 && latestSize <= 32)
    PMap.forEach(latestTouched, (_t, key) => {
      const others = (PMap.get(store.index.files, key)?.tasks ?? [])
        .filter((t) => t !== latest && t !== prompt.taskId)
        .map((t) => PMap.get(tasks, t))
        .filter((t) => t !== undefined && PMap.size(t.touched) <= 32)
        .slice(0, 32);
      for (const task of others)
        PMap.forEach(task!.touched, (_u, pair) => {
          if (pair !== key) recentCo.set(pair, (recentCo.get(pair) ?? 0) + 1 / others.length / latestSize);
        });
    });
  // Each file's history as one document: the terms of the texts of the tasks that changed it.
  const fileDocs = new Map<string, { counts: Map<string, number>; length: number }>();
  let totalLength = 0;
  PMap.forEach(store.index.files, (record, key) => {
    const counts = new Map<string, number>();
    let length = 0;
    for (const taskId of record.tasks) {
      if (taskId === prompt.taskId) continue;
      const task = PMap.get(tasks, taskId);
      if (task === undefined) continue;
      for (const text of [task.prompt, ...task.summaries])
        for (const term of textTerms(text)) {
          counts.set(term, (counts.get(term) ?? 0) + 1);
          length += 1;
        }
    }
    fileDocs.set(key, { counts, length });
    totalLength += length;
  });
  const averageLength = fileDocs.size === 0 ? 1 : Math.max(1, totalLength / fileDocs.size);
  const fileIdf = new Map<string, number>();
  for (const term of promptTerms) {
    let df = 0;
    for (const doc of fileDocs.values()) if (doc.counts.has(term)) df += 1;
    if (df > 0) fileIdf.set(term, Math.log(1 + (fileDocs.size - df + 0.5) / (df + 0.5)));
  }
  const fileDocScore = (key: string): number => {
    const doc = fileDocs.get(key);
    if (doc === undefined) return 0;
    let score = 0;
    const norm = 1.2 * (0.25 + (0.75 * doc.length) / averageLength);
    for (const [term, idf] of fileIdf) {
      const tf = doc.counts.get(term);
      if (tf !== undefined) score += (idf * tf * 2.2) / (tf + norm);
    }
    return score;
  };
  // The latest other task's prompt as a query of its own (its own facts aside).
  const latestTask = latest === undefined ? undefined : PMap.get(tasks, latest);
  const previous =
    latest !== undefined && latestTask !== undefined && latestTask.prompt !== ''
      ? matchParts(store, { ...prompt, taskPrompt: latestTask.prompt, taskId: latest }, prompt.taskId)
      : new Map<string, MatchParts>();
  // The prompt's head as a query of its own: the words a subject line puts first.
  const heads = head
    ? matchParts(store, { ...prompt, taskPrompt: prompt.taskPrompt.split(/\s+/).slice(0, HEAD_WORDS).join(' ') })
    : new Map<string, MatchParts>();
  const labelFiles = new Map(prompt.expect.map((t, i) => [`${t.subject}\u001f${t.relation}\u001f${t.object}`, i]));
  const candidates = base.candidates.map((c): Extended => {
    const fact = byId.get(c.id)!.fact;
    let contextEven = c.context;
    let contextQuarter = c.context;
    let contextWhole = c.context;
    let churn = 0;
    let seedProximity = 0;
    let seedSameDir = 0;
    let recentProximity = 0;
    let recentProximity3 = 0;
    let pathWords = 0;
    let startProximity = 0;
    let heat = 0;
    let dirHeat = 0;
    let recentCoChange = 0;
    let fileDoc = 0;
    let seedStem = 0;
    let seedPrefix = 0;
    let promptStem = 0;
    const ownPlace = places.get(fact.sourceTaskId) ?? 0;
    let contextAged = AGE_DECAYS.map((decay) => c.context * decay ** ownPlace);
    if (isFileFact(fact)) {
      const stem = stemOf(fact.subject);
      if (stem.length >= 3 && promptWords.has(stem)) promptStem = 1;
      for (const seed of seeds)
        if (seed.subject !== fact.subject && stem.length > 0) {
          if (stem === seed.stem) seedStem = Math.max(seedStem, seed.weight);
          if (
            Math.min(stem.length, seed.stem.length) >= 4 &&
            (stem.startsWith(seed.stem) || seed.stem.startsWith(stem))
          )
            seedPrefix = Math.max(seedPrefix, seed.weight);
        }
      const dirs = directoriesOf(fact.subject);
      for (const seed of startSeeds)
        startProximity = Math.max(startProximity, seed.weight * proximity(dirs, seed.dirs));
      const key = pairKey(fact.subject, fact.relation);
      for (const taskId of PMap.get(store.index.files, key)?.tasks ?? []) {
        const age = ages.get(taskId);
        if (age !== undefined) heat += 0.9 ** age;
      }
      dirHeat = dirHeats.get(dirKey(fact.subject)) ?? 0;
      recentCoChange = recentCo.get(key) ?? 0;
      fileDoc = fileDocScore(key);
      for (const seed of seeds) {
        const near = proximity(dirs, seed.dirs);
        seedProximity = Math.max(seedProximity, seed.weight * near);
        if (near === 1) seedSameDir = Math.max(seedSameDir, seed.weight);
      }
      for (const other of recent) {
        const near = proximity(dirs, other.dirs);
        if (other.age === 0) recentProximity = Math.max(recentProximity, near);
        recentProximity3 = Math.max(recentProximity3, near * 0.5 ** other.age);
      }
      const terms = new Set(queryTerms(fact.subject));
      if (terms.size > 0) pathWords = [...terms].filter((t) => promptTerms.has(t)).length / terms.size;
      const record = PMap.get(store.index.files, pairKey(fact.subject, fact.relation));
      churn = record?.tasks.length ?? 0;
      contextEven = 0;
      contextQuarter = 0;
      contextWhole = 0;
      contextAged = AGE_DECAYS.map(() => 0);
      // In id order, as the sums were always made (a record lists its tasks latest prompt first).
      for (const taskId of [...(record?.tasks ?? [])].sort()) {
        const score = taskScores.get(taskId);
        if (score === undefined) continue;
        const place = places.get(taskId) ?? 0;
        contextAged = contextAged.map((sum, i) => sum + (score / filesOf(taskId) ** 0.25) * AGE_DECAYS[i]! ** place);
        contextEven += score / filesOf(taskId);
        contextQuarter += score / filesOf(taskId) ** 0.25;
        contextWhole += score;
      }
    }
    const label = labelFiles.get(`${fact.subject}\u001f${fact.relation}\u001f${fact.object}`);
    return {
      ...c,
      group: PMap.get(tasks, fact.sourceTaskId)?.num ?? -1,
      labelFiles: label === undefined ? -1 : prompt.labelFiles[label]!,
      contextEven,
      contextQuarter,
      contextWhole,
      churn,
      seedProximity,
      seedSameDir,
      recentProximity,
      recentProximity3,
      pathWords,
      startProximity,
      heat,
      dirHeat,
      recentCoChange,
      fileDoc,
      prevContext: previous.get(c.id)?.context ?? 0,
      prevMatch: (previous.get(c.id)?.context ?? 0) + (previous.get(c.id)?.query ?? 0),
      seedStem,
      promptStem,
      seedPrefix,
      headQuery: heads.get(c.id)?.query ?? 0,
      headContext: heads.get(c.id)?.context ?? 0,
      contextAged,
      taskAge: places.get(fact.sourceTaskId) ?? -1,
      gapHours: Math.max(0, (prompt.at - c.validFrom) / 3_600_000),
      queryNorm: queryNormOf(fact),
      queryQtf: queryQtfOf(fact),
    };
  });
  return { ...base, candidates };
};

/**
 * Secret shapes that must never be stored or put into a prompt: API keys, tokens, private-key
 * blocks and passwords in URLs. The shared context refuses a text that holds one; the fact
 * tracker redacts them from the dispatch results and prompts it records (a model may quote a
 * token from a command line or an environment file), so no section, saved state or store holds
 * one.
 *
 * The patterns are written here rather than taken from a package: the maintained sets on npm
 * (secretlint's rule presets) need Node 22 and report asynchronously through their own engine,
 * and the pure core must decide synchronously, in a browser too. Each shape is tested, along
 * with look-alikes that must pass (prose about tokens, commit ids, paths).
 */
import { refuseArgument } from './describe.js';
import { clipEnd, clipStart, hasInvisible, removeInvisible } from './text.js';

/** One secret shape: a name to show and the pattern that finds it. */
interface SecretShape {
  readonly name: string;
  readonly pattern: RegExp;
}

/** True when a token mixes letters and digits, as generated keys do and words rarely do. */
const looksGenerated = (token: string): boolean => /\d/u.test(token) && /[A-Za-z]/u.test(token);

/**
 * The separators inside a key block and after `Bearer` are matched as every text here is
 * collapsed (`collapseWhitespace`): whitespace, and also control and bidi characters, which
 * `\s` leaves out and collapsing turns into a space, so one of them between `Bearer` and its
 * token would otherwise hide the token until the text is collapsed.
 *
 * No match of a shape runs over more than about a million characters: the engine's regexp stack
 * holds the loops of one match over about 5 million characters of a text outside Latin-1, and a
 * history line may hold a text of 16 Mi. So each loop over a key's body, a token or a URL's parts
 * stops at 1,000,000 characters (a text of live use, at most a million, is matched as without the
 * bound; past it, a run longer than that, which no key or token is, is redacted up to there), a
 * key's label at a thousand words of a thousand letters, and a URL's scheme at 64 characters (a
 * longer bound would try each start in a run of `a.a.a...` over the whole run: quadratic).
 */
const SHAPES: ReadonlyArray<SecretShape & { readonly check?: (match: string) => boolean }> = [
  {
    name: 'a private key block',
    // The header, and the key's base64 lines after it up to its end line, if any: redacting the
    // header alone would leave the key.
    pattern:
      /-----BEGIN (?:[A-Z0-9]{1,1000} ){0,1000}PRIVATE KEY(?: BLOCK)?-----[A-Za-z0-9+/=\s\p{Cc}\u202A-\u202E\u2066-\u2069]{0,1000000}(?:-----END (?:[A-Z0-9]{1,1000} ){0,1000}PRIVATE KEY(?: BLOCK)?-----)?/u,
  },
  { name: 'an AWS access key id', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[A-Z0-9]{16}\b/u },
  {
    name: 'an AWS secret access key',
    pattern: /\baws_?secret_?(?:access_?)?key\b\W{0,4}[A-Za-z0-9/+]{40}\b/iu,
  },
  { name: 'a GitHub token', pattern: /\bgh[pousr]_[A-Za-z0-9]{36,255}\b/u },
  { name: 'a GitHub token', pattern: /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/u },
  { name: 'a GitLab token', pattern: /\bglpat-[A-Za-z0-9_-]{20,1000000}/u },
  { name: 'an Anthropic API key', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,1000000}/u },
  {
    name: 'an API key (sk-)',
    pattern: /\bsk-(?!ant-)[A-Za-z0-9_-]{20,1000000}/u,
    check: (match) => looksGenerated(match.slice(3)),
  },
  { name: 'a Stripe key', pattern: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{20,1000000}\b/u },
  { name: 'a Slack token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,1000000}/u },
  { name: 'a Google API key', pattern: /\bAIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/u },
  { name: 'an npm token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/u },
  {
    name: 'a JSON Web Token',
    pattern: /\beyJ[A-Za-z0-9_-]{8,1000000}\.eyJ[A-Za-z0-9_-]{8,1000000}\.[A-Za-z0-9_-]{8,1000000}/u,
  },
  {
    name: 'a Bearer token',
    pattern: /\bBearer[\s\p{Cc}\u202A-\u202E\u2066-\u2069]{1,1000000}[A-Za-z0-9._~+/-]{16,1000000}={0,1000000}/u,
    check: (match) => looksGenerated(match.slice(6)),
  },
  // The host after the `@` is looked at, not taken: a redaction keeps it.
  {
    name: 'a password in a URL',
    pattern: /\b[a-z][a-z0-9+.-]{0,63}:\/\/[^\s/:@]{1,1000000}:[^\s/@]{3,1000000}@(?=[^\s/@])/iu,
  },
];

/**
 * The literal part every shape starts with or holds, in one pattern: a text without any of
 * them (nearly every text) holds no secret, and is passed in one cheap pass instead of one
 * pass per shape. A whole file is scanned before each write, so this is most of that cost.
 * Kept in step with SHAPES (the tests of every shape go through it).
 */
const ANY_ANCHOR =
  /PRIVATE KEY|AKIA|ASIA|ABIA|ACCA|AROA|AIDA|aws|gh[pousr]_|github_pat_|glpat-|sk-|[rs]k_|xox|AIza|npm_|eyJ|Bearer|:\/\//iu;

/** The fewest characters any shape matches: a password in a URL, `a://b:pwd@h`. Most of a result's texts are shorter. */
const SHORTEST_SECRET = 11;

/**
 * `text` as every renderer shows it: the bundle, the dashboard and `show` remove invisible
 * format characters, so a zero-width space or a soft hyphen inside a token would hide it from
 * the shapes here and still render it whole. The shapes look at what is shown.
 */
const asShown = (text: string): string => (hasInvisible(text) ? removeInvisible(text) : text);

/** The name of the first secret shape `text` holds ("a GitHub token"), or undefined when it holds none. */
export const findSecret = (raw: string): string | undefined => {
  // One typeof: a text that is none (null) holds no secret to say so of, it is a mistake.
  if (typeof raw !== 'string') refuseArgument('the text', raw, 'a string');
  // Removing invisible characters only shortens a text.
  if (raw.length < SHORTEST_SECRET) return undefined;
  const text = asShown(raw);
  if (!ANY_ANCHOR.test(text)) return undefined;
  for (const shape of SHAPES) {
    const match = shape.pattern.exec(text);
    if (match !== null && (shape.check === undefined || shape.check(match[0]))) return shape.name;
  }
  return undefined;
};

const GLOBAL_SHAPES = SHAPES.map((shape) => ({
  ...shape,
  pattern: new RegExp(shape.pattern.source, `${shape.pattern.flags}g`),
}));

/**
 * `text` with every secret it holds replaced by `[redacted: a GitHub token]`: what a reader
 * shows of a file someone else wrote with a secret in it (writes refuse such a file).
 */
export const redactSecrets = (text: string): string =>
  findSecret(text) === undefined
    ? text
    : GLOBAL_SHAPES.reduce(
        (current, shape) =>
          current.replace(shape.pattern, (match) =>
            shape.check === undefined || shape.check(match) ? `[redacted: ${shape.name}]` : match,
          ),
        asShown(text),
      );

/** A clip of a text to at most `max` characters (or terminal columns), as `clipEnd` and `clipStart` are. */
type Clip = (text: string, max: number) => string;

/**
 * `clip`, redacting what its cut makes a secret: cutting the letter glued before a token
 * (`xghp_...` kept from its `g`), or the characters past a token's longest (`ghp_` and 300
 * letters kept to 120), gives a text a shape matches that the whole text did not. So a text the
 * clip cut is scanned again, and redacted and clipped again until it holds none; a text it
 * leaves whole costs nothing more. The rounds end: each replaces at least one match, 11
 * characters of the text or more, by a marker no match ever takes part in, and a clip only
 * removes characters.
 */
export const redactingCut =
  (clip: Clip): Clip =>
  (text, max) => {
    let clipped = clip(text, max);
    while (clipped !== text && findSecret(clipped) !== undefined) clipped = clip(redactSecrets(clipped), max);
    return clipped;
  };

/** `clipEnd` that redacts a secret its cut makes (see `redactingCut`): how every stored or injected text is clipped. */
export const clipEndRedacted: Clip = redactingCut(clipEnd);

/** `clipStart` that redacts a secret its cut makes (see `redactingCut`): how every stored or injected path is clipped. */
export const clipStartRedacted: Clip = redactingCut(clipStart);

/** A text from outside that no step redacted yet (an error's message, a model's category), redacted and then clipped as `clipEndRedacted` clips. */
export const redactedClipEnd: Clip = (text, max) => clipEndRedacted(redactSecrets(text), max);

/**
 * Every string and key in `value` long enough to hold a secret, into `texts` (each object
 * walked once, so a cycle ends). A result's own keys (`task_id`) are too short to: their letters
 * would otherwise match an anchor in every result.
 */
const collectTexts = (value: unknown, seen: Set<object>, texts: string[]): void => {
  if (typeof value === 'string') {
    if (value.length >= SHORTEST_SECRET) texts.push(value);
    return;
  }
  if (typeof value !== 'object' || value === null || seen.has(value)) return;
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) collectTexts(value[i], seen, texts);
    return;
  }
  for (const key in value)
    if (Object.hasOwn(value, key)) {
      if (key.length >= SHORTEST_SECRET) texts.push(key);
      collectTexts((value as Record<string, unknown>)[key], seen, texts);
    }
};

/**
 * True when a string or key anywhere in `value` holds a secret. The texts are tested together
 * first (a secret sits inside one text, and no shape's anchor spans the line break that joins
 * them), so a value without any anchor, nearly every one, costs one pass of each pattern.
 */
const holdsSecret = (value: unknown): boolean => {
  const texts: string[] = [];
  collectTexts(value, new Set(), texts);
  const all = texts.join('\n');
  if (!ANY_ANCHOR.test(all) && !hasInvisible(all)) return false;
  return texts.some((text) => findSecret(text) !== undefined);
};

/** A copy of `value` with every secret redacted, each object copied once (`copies`: a cycle stays a cycle). */
const redactedCopy = (value: unknown, copies: Map<object, unknown>): unknown => {
  if (typeof value === 'string') return redactSecrets(value);
  if (typeof value !== 'object' || value === null) return value;
  const known = copies.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    copies.set(value, copy);
    for (const item of value) copy.push(redactedCopy(item, copies));
    return copy;
  }
  const copy: Record<string, unknown> = {};
  copies.set(value, copy);
  for (const [key, item] of Object.entries(value))
    // Defined, not assigned: a key `__proto__` stays a field.
    Object.defineProperty(copy, redactSecrets(key), {
      value: redactedCopy(item, copies),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return copy;
};

/** A copy of `value` (plain JSON) with every secret in its strings and keys redacted (see `redactSecrets`). */
export const redactSecretsIn = (value: unknown): unknown => redactedCopy(value, new Map());

/**
 * `value` itself when none of its strings and keys holds a secret (nearly always: one cheap
 * pass), else a copy of its arrays and plain objects with each secret redacted: what the fact
 * tracker keeps of a dispatch result, whose text a model wrote and may have copied a token into.
 */
export const withoutSecrets = <T>(value: T): T => (holdsSecret(value) ? (redactedCopy(value, new Map()) as T) : value);

/** Where in a parsed document a secret sits: the JSON path of the field and the shape found. */
export interface SecretLocation {
  readonly path: string;
  readonly shape: string;
}

const joinPath = (path: string, part: string | number): string =>
  typeof part === 'number' ? `${path}[${part}]` : path === '' ? part : `${path}.${part}`;

/** The first string field of `value` (walked depth-first, keys included) that holds a secret. */
export const findSecretField = (value: unknown, path = ''): SecretLocation | undefined => {
  if (typeof value === 'string') {
    const shape = findSecret(value);
    return shape === undefined ? undefined : { path: path === '' ? '(root)' : path, shape };
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findSecretField(item, joinPath(path, index));
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const inKey = findSecret(key);
      if (inKey !== undefined) return { path: joinPath(path, '(key)'), shape: inKey };
      const found = findSecretField(item, joinPath(path, key));
      if (found !== undefined) return found;
    }
  }
  return undefined;
};

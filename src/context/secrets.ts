/**
 * Secret shapes that must never be stored in a context: the files are committed, the dashboard
 * is read in any viewer and the bundle goes into prompts. There is no reason to store a secret,
 * so a text that holds one is refused, naming the field, and never echoed.
 *
 * The patterns are written here rather than taken from a package: the maintained sets on npm
 * (secretlint's rule presets) need Node 22 and report asynchronously through their own engine,
 * and the pure core must decide synchronously, in a browser too. Each shape is tested, along
 * with look-alikes that must pass (prose about tokens, commit ids, paths).
 */
import { refuseArgument } from '../base/describe.js';
import { removeInvisible } from '../base/text.js';

/** One secret shape: a name to show and the pattern that finds it. */
interface SecretShape {
  readonly name: string;
  readonly pattern: RegExp;
}

/** True when a token mixes letters and digits, as generated keys do and words rarely do. */
const looksGenerated = (token: string): boolean => /\d/u.test(token) && /[A-Za-z]/u.test(token);

const SHAPES: ReadonlyArray<SecretShape & { readonly check?: (match: string) => boolean }> = [
  { name: 'a private key block', pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/u },
  { name: 'an AWS access key id', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[A-Z0-9]{16}\b/u },
  {
    name: 'an AWS secret access key',
    pattern: /\baws_?secret_?(?:access_?)?key\b\W{0,4}[A-Za-z0-9/+]{40}\b/iu,
  },
  { name: 'a GitHub token', pattern: /\bgh[pousr]_[A-Za-z0-9]{36,255}\b/u },
  { name: 'a GitHub token', pattern: /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/u },
  { name: 'a GitLab token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}/u },
  { name: 'an Anthropic API key', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/u },
  {
    name: 'an API key (sk-)',
    pattern: /\bsk-(?!ant-)[A-Za-z0-9_-]{20,}/u,
    check: (match) => looksGenerated(match.slice(3)),
  },
  { name: 'a Stripe key', pattern: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{20,}\b/u },
  { name: 'a Slack token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/u },
  { name: 'a Google API key', pattern: /\bAIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/u },
  { name: 'an npm token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/u },
  {
    name: 'a JSON Web Token',
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/u,
  },
  {
    name: 'a Bearer token',
    pattern: /\bBearer\s+[A-Za-z0-9._~+/-]{16,}=*/u,
    check: (match) => looksGenerated(match.slice(6).trim()),
  },
  { name: 'a password in a URL', pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]{3,}@[^\s/@]/iu },
];

/**
 * The literal part every shape starts with or holds, in one pattern: a text without any of
 * them (nearly every text) holds no secret, and is passed in one cheap pass instead of one
 * pass per shape. A whole file is scanned before each write, so this is most of that cost.
 * Kept in step with SHAPES (the tests of every shape go through it).
 */
const ANY_ANCHOR =
  /PRIVATE KEY|AKIA|ASIA|ABIA|ACCA|AROA|AIDA|aws|gh[pousr]_|github_pat_|glpat-|sk-|[rs]k_|xox|AIza|npm_|eyJ|Bearer|:\/\//iu;

/** Any format character, the class `removeInvisible` draws from: a cheap test before the copy. */
const ANY_FORMAT = /\p{Cf}/u;

/**
 * `text` as every renderer shows it: the bundle, the dashboard and `show` remove invisible
 * format characters, so a zero-width space or a soft hyphen inside a token would hide it from
 * the shapes here and still render it whole. The shapes look at what is shown.
 */
const asShown = (text: string): string => (ANY_FORMAT.test(text) ? removeInvisible(text) : text);

/** The name of the first secret shape `text` holds ("a GitHub token"), or undefined when it holds none. */
export const findSecret = (raw: string): string | undefined => {
  // One typeof: a text that is none (null) holds no secret to say so of, it is a mistake.
  if (typeof raw !== 'string') refuseArgument('the text', raw, 'a string');
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

/** `value` (plain JSON) with every secret in its strings and keys redacted (see `redactSecrets`). */
export const redactSecretsIn = (value: unknown): unknown =>
  typeof value === 'string'
    ? redactSecrets(value)
    : Array.isArray(value)
      ? value.map(redactSecretsIn)
      : typeof value === 'object' && value !== null
        ? Object.fromEntries(Object.entries(value).map(([key, item]) => [redactSecrets(key), redactSecretsIn(item)]))
        : value;

/** Why `field` may not hold `text` (it holds a secret, named by shape, never quoted), or undefined. */
export const secretProblem = (field: string, text: string): string | undefined => {
  if (typeof field !== 'string') refuseArgument('the field', field, 'a string (what the text is)');
  const found = findSecret(text);
  return found === undefined
    ? undefined
    : `${field} holds what looks like ${found}: secrets are never stored in the shared context (it is committed and goes into prompts); remove it and try again`;
};

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

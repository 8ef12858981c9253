/**
 * Secrets in the shared context: the files are committed, the dashboard is read in any viewer
 * and the bundle goes into prompts. There is no reason to store a secret, so a text that holds
 * one is refused, naming the field, and never echoed. The shapes are those of
 * `base/secrets.ts`, which the fact tracker redacts with.
 */
import { refuseArgument } from '../base/describe.js';
import { findSecret } from '../base/secrets.js';

export {
  clipEndRedacted,
  clipStartRedacted,
  findSecret,
  findSecretField,
  redactSecrets,
  redactSecretsIn,
  type SecretLocation,
} from '../base/secrets.js';

/** Why `field` may not hold `text` (it holds a secret, named by shape, never quoted), or undefined. */
export const secretProblem = (field: string, text: string): string | undefined => {
  if (typeof field !== 'string') refuseArgument('the field', field, 'a string (what the text is)');
  const found = findSecret(text);
  return found === undefined
    ? undefined
    : `${field} holds what looks like ${found}: secrets are never stored in the shared context (it is committed and goes into prompts); remove it and try again`;
};

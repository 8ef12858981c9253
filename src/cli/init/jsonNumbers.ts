/**
 * Numbers in JSON text that `JSON.parse` cannot keep: past a double's precision
 * (12345678901234567891) or its range (1e400), which a rewrite would change.
 */
import { endOfString } from '../../base/jsonKeys.js';

/** A number's decimal value as significant digits (no leading or trailing zeros) and an exponent. */
const decimalOf = (number: string): string => {
  const [, whole = '', fraction = '', exponent = '0'] = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/u.exec(number) ?? [];
  const digits = `${whole}${fraction}`;
  const leading = digits.length - digits.replace(/^0+/u, '').length;
  const significant = digits.replace(/^0+/u, '').replace(/0+$/u, '');
  if (significant === '') return '0';
  // Value = 0.significant × 10^(whole's length - leading zeros + exponent).
  return `${significant}e${whole.length - leading + Number(exponent)}`;
};

/**
 * The first number of a JSON document (valid JSON) whose value `JSON.parse` would not keep
 * exactly, as written, or undefined when every number survives (`1.0` and `1e2` do: only their
 * spelling would change, not what they mean).
 */
export const findInexactNumber = (json: string): string | undefined => {
  // Outside strings, valid JSON holds only punctuation, true, false, null and numbers. A scan
  // rather than one pattern with strings in it: a pattern that steps through a string's
  // characters ran out of stack on a string of megabytes.
  const number = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/uy;
  for (let at = 0; at < json.length;) {
    const char = json[at]!;
    if (char === '"') {
      at = endOfString(json, at);
      continue;
    }
    if (char !== '-' && (char < '0' || char > '9')) {
      at += 1;
      continue;
    }
    number.lastIndex = at;
    const token = number.exec(json)?.[0] ?? char;
    at += token.length;
    const value = Number(token);
    if (!Number.isFinite(value) || decimalOf(token) !== decimalOf(String(Math.abs(value)))) return token;
  }
  return undefined;
};

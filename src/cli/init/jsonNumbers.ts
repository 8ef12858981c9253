/**
 * Numbers in JSON text that `JSON.parse` cannot keep: past a double's precision
 * (12345678901234567891) or its range (1e400), which a rewrite would change.
 */

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
  // Outside strings, valid JSON holds only punctuation, true, false, null and numbers.
  const tokens = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/gu;
  for (const [token] of json.matchAll(tokens)) {
    if (token.startsWith('"')) continue;
    const value = Number(token);
    if (!Number.isFinite(value) || decimalOf(token) !== decimalOf(String(Math.abs(value)))) return token;
  }
  return undefined;
};

/**
 * Counts as people read them, for every message and report: the CLI's, and the shared context's
 * bundle and notices, so no text shows one count grouped and another not.
 */

/** Thousands grouped with commas, the same on every machine whatever its locale. */
export const number = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/gu, ',');

/**
 * `n` and its noun, singular for one (`1 fact`, `2 facts`), thousands grouped as every figure of
 * a report is (`1,024 events`), so no line shows one count grouped and another not.
 */
export const count = (n: number, one: string, many: string): string => `${number(n)} ${n === 1 ? one : many}`;

/**
 * The best few of many scores, for a query that offers thousands: a short sorted list in typed
 * scratch, so that no entry is made for each score offered and none of them is sorted.
 */

/**
 * The best `limit` of the scores offered it (ties: the smaller key), in order. Reused across
 * queries (retrieval is synchronous): `start`, offer, then `take`.
 */
export class Leaders {
  private scores = new Float64Array(64);
  private readonly keys: string[] = [];
  private limit = 0;
  private size = 0;

  /** Empties the list and sets how many it keeps. */
  start(limit: number): void {
    if (this.scores.length < limit) this.scores = new Float64Array(Math.max(limit, 2 * this.scores.length));
    this.limit = limit;
    this.size = 0;
    this.keys.length = 0;
  }

  /** True when a score is sure to stay out: below the last of a full list. */
  refuses(score: number): boolean {
    return this.size === this.limit && score < this.scores[this.limit - 1]!;
  }

  /** Puts a score in its place, if it ranks within the list. */
  offer(score: number, key: string): void {
    const { scores, keys, limit } = this;
    let at = this.size;
    while (at > 0 && (score > scores[at - 1]! || (score === scores[at - 1]! && key < keys[at - 1]!))) at -= 1;
    if (at === limit) return;
    for (let j = Math.min(this.size, limit - 1); j > at; j -= 1) {
      scores[j] = scores[j - 1]!;
      keys[j] = keys[j - 1]!;
    }
    scores[at] = score;
    keys[at] = key;
    if (this.size < limit) this.size += 1;
  }

  /** The entries kept, in order; the list is empty after. */
  take(): Array<[string, number]> {
    // By pushes, not `map`, for the reason `planQuery` gives: one shape of list in every tier.
    const entries: Array<[string, number]> = [];
    for (let i = 0; i < this.size; i += 1) entries.push([this.keys[i]!, this.scores[i]!]);
    this.keys.length = 0;
    this.size = 0;
    return entries;
  }
}

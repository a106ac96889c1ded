/**
 * A map keyed by a pair of strings (a run or turn id and a call id) without
 * joining them into one key: a joined key is a new string per entry that the
 * map keeps (and hashes again, built anew, at every lookup), while both parts
 * are strings the entries already hold.
 *
 * @module
 */

/** Values by `(outer, inner)`. */
export class PairMap<V> {
  readonly #outer = new Map<string, Map<string, V>>();

  /** The value of `(outer, inner)`, if set. */
  get(outer: string, inner: string): V | undefined {
    return this.#outer.get(outer)?.get(inner);
  }

  /** Sets the value of `(outer, inner)`. */
  set(outer: string, inner: string, value: V): void {
    let byInner = this.#outer.get(outer);
    if (!byInner) this.#outer.set(outer, byInner = new Map());
    byInner.set(inner, value);
  }
}

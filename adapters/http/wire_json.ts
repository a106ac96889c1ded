/**
 * JSON text for views on the wire. A tool item's `structured` value may hold
 * what JSON cannot write (a BigInt makes `JSON.stringify` throw; a Map or Set
 * would become `{}`): a BigInt is sent as its digits, a Map as its entry
 * pairs, a Set as an array, so a response never fails over host data.
 *
 * @module
 */

/**
 * Serialises a response body.
 *
 * @param value a view, an update batch, a result
 * @returns its JSON text
 */
export function wireJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === "bigint") return item.toString();
    if (item instanceof Map) return [...item];
    if (item instanceof Set) return [...item];
    return item;
  });
}

/**
 * Appending to lists that mostly stay short, without the room a first push
 * reserves: V8 grows an empty array to 17 slots on its first push, which
 * every idle cached actor would keep for each such list.
 *
 * @module
 */

/**
 * `list` with `value` at its end: an empty list is replaced by a literal of
 * one element (one slot), a longer one is pushed onto and returned.
 *
 * @param list the list so far (not changed when empty)
 * @param value the element to append
 * @returns the list to keep
 */
export function appended<T>(list: T[], value: T): T[] {
  if (list.length === 0) return [value];
  list.push(value);
  return list;
}

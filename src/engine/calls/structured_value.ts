/**
 * `ToolResult.structured` is host data of any shape. The journal keeps it in
 * the codec's form (JSON plus type notes), so `undefined`, BigInt, Date, Map,
 * Set, RegExp and non-finite numbers read back as returned. A value that
 * cannot be carried faithfully — a function, a symbol, a cycle, nesting deeper
 * than {@link MAX_STRUCTURED_DEPTH} — is refused, and the call's result becomes
 * an error the model sees, rather than failing the commit and stranding the turn.
 *
 * @module
 */
import {
  type EncodedStructured,
  encodeStructured,
  MAX_STRUCTURED_DEPTH,
} from "../../journal/structured_codec.ts";
import { callHostCodeSync, type HostOutcome } from "../run/host_code.ts";

export { MAX_STRUCTURED_DEPTH };

/**
 * Turns a handler's `structured` value into what the journal stores. Guarded:
 * getters and `toJSON` are host code.
 *
 * @param value the handler's value
 * @returns the stored form, or why it cannot be stored
 */
export function storableStructured(value: unknown): HostOutcome<EncodedStructured> {
  return callHostCodeSync(() => encodeStructured(value));
}

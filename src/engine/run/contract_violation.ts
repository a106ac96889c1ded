/**
 * Something inside a run broke a contract: a gateway sent what the engine
 * cannot accept (duplicate call ids, state that cannot be stored), or the
 * engine itself failed. The run ends the turn `failed` with code
 * `engine_contract` and this message; it never reaches a caller.
 *
 * @module
 */

/** A broken contract inside a run; its message names the cause. */
export class ContractViolation extends Error {
  /**
   * @param message what broke, for the turn's failure message
   * @param options `cause`: the underlying failure
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ContractViolation";
  }
}

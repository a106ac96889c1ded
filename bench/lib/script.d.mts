/**
 * Types for `script.mjs`, a copy of the peers' scripted model
 * (`bench/peers/lib/script.mjs` of the shared docs).
 *
 * @module
 */

/** The final answer text. */
export const FINAL_TEXT: string;
/** The system prompt every engine uses. */
export const SYSTEM_PROMPT: string;
/** The user message of every conversation. */
export const USER_PROMPT: string;
/** Global counters the harness checks after every run. */
export const counters: { modelCalls: number; toolCalls: number };

/** The scripted model's next action. */
export type Action =
  | { type: "tool"; callId: string; a: number; b: number }
  | { type: "final"; text: string };

/** The scripted model: decides from the last tool value alone (counts a model call). */
export function nextAction(lastToolValue: number | undefined, N: number): Action;
/** The `add` tool body (counts a tool call). */
export function addHandler(input: { a: number; b: number }): number;
/** Reads a tool result handed back as a number, a string or JSON text. */
export function toNumber(x: unknown): number;

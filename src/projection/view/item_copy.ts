/**
 * Copies of view parts that the engine hands to hosts — in views, history
 * pages and update batches. Every object in a copy is the host's own: a host
 * that edits what it received (applying a batch in place, say) must not edit
 * the view model, or every later view would show the edit until a reload.
 * Strings are immutable and shared.
 *
 * @module
 */
import type { Interaction, ThreadItem, TurnSummary } from "./view_types.ts";
import { copyTurn } from "./turn_shape.ts";

/**
 * A host's own copy of a view item: every object in it is a copy, so a host
 * that edits its view (or a value inside, such as a tool's decoded
 * `structured` data) changes no later view. Strings are immutable and shared.
 *
 * @param item an item of the view model
 * @returns a copy the host may change
 */
export function copyItem(item: ThreadItem): ThreadItem {
  const copy = { ...item };
  if (copy.tool) copy.tool = copyToolPart(copy.tool);
  if (copy.sources) copy.sources = copy.sources.map((source) => ({ ...source }));
  if (copy.interaction) copy.interaction = copyInteraction(copy.interaction);
  if (copy.kind === "user") {
    if (copy.references) copy.references = copy.references.map((ref) => ({ ...ref }));
    if (copy.context) copy.context = copy.context.map((part) => ({ ...part }));
  }
  return copy;
}

// The tool part: its structured value and activity are objects the view
// model decoded once and keeps, so a shallow copy would hand them out shared.
function copyToolPart(tool: NonNullable<ThreadItem["tool"]>): NonNullable<ThreadItem["tool"]> {
  const copy = { ...tool };
  // Decoded values are JSON plus Date, Map, Set, RegExp and BigInt: all cloneable.
  if (typeof copy.structured === "object" && copy.structured !== null) {
    copy.structured = structuredClone(copy.structured);
  }
  if (copy.activity) copy.activity = structuredClone(copy.activity);
  return copy;
}

/**
 * A host's own copy of an interaction: its questions (with their options)
 * and its resolution (with its answers) are copies too.
 *
 * @param interaction an interaction as the view model keeps it
 * @returns a copy the host may change
 */
export function copyInteraction(interaction: Interaction): Interaction {
  const copy = { ...interaction };
  if (copy.questions) copy.questions = copy.questions.map(copyQuestion);
  const resolution = copy.resolution;
  if (resolution) {
    const own = { ...resolution };
    if (own.answers) own.answers = own.answers.map((answer) => ({ ...answer }));
    if (own.redacted) own.redacted = own.redacted.slice();
    copy.resolution = own;
  }
  return copy;
}

function copyQuestion(
  question: NonNullable<Interaction["questions"]>[number],
): NonNullable<Interaction["questions"]>[number] {
  const copy = { ...question };
  if (copy.options) {
    copy.options = copy.options.map((entry) => typeof entry === "string" ? entry : { ...entry });
  }
  return copy;
}

/**
 * A host's own copy of a turn: its final items, usage, failure and retry
 * origin are copies too (`copyTurn` shares them, as the view model may).
 *
 * @param turn a turn as the view model keeps it
 * @returns a copy the host may change
 */
export function copyTurnSummary(turn: TurnSummary): TurnSummary {
  const copy = copyTurn(turn);
  copy.finalItemIds = copy.finalItemIds.slice();
  if (copy.usage) copy.usage = { ...copy.usage };
  if (copy.failure) {
    copy.failure = { ...copy.failure };
    if (copy.failure.provider) copy.failure.provider = structuredClone(copy.failure.provider);
  }
  if (copy.retryOf) copy.retryOf = { ...copy.retryOf };
  return copy;
}

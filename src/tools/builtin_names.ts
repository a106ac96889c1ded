/**
 * Names and shapes of the engine's built-in tools, shared by the tools, the
 * run loop and the projections (which must not import the tools' handlers).
 *
 * @module
 */
/** One entry of the durable todo list (`todo_write`), shown in `view.todos`. */
export interface Todo {
  /** Stable id within the list. */
  id: string;
  /** What to do. */
  text: string;
  /** Where it stands. */
  status: "pending" | "in_progress" | "done";
}

/** The built-in tool that asks the user questions. */
export const ASK_USER_TOOL = "ask_user";
/** The built-in tool that replaces the todo list. */
export const TODO_WRITE_TOOL = "todo_write";
/** Names hosts cannot give their own tools while the built-in is on. */
export const BUILTIN_TOOL_NAMES: ReadonlySet<string> = new Set([ASK_USER_TOOL, TODO_WRITE_TOOL]);

/** At most this many todos. */
export const MAX_TODOS = 100;
/** At most this many characters per todo. */
export const MAX_TODO_TEXT = 500;

/**
 * Reads a todo list from a `todo_write` result's structured value.
 *
 * @returns the list, or `undefined` for any other shape
 */
export function todosOf(value: unknown): Todo[] | undefined {
  const todos = (value as { todos?: unknown } | null)?.todos;
  if (!Array.isArray(todos)) return undefined;
  return todos.filter((todo): todo is Todo =>
    typeof todo?.id === "string" && typeof todo.text === "string" &&
    (todo.status === "pending" || todo.status === "in_progress" || todo.status === "done")
  ).map((todo) => ({ id: todo.id, text: todo.text, status: todo.status }));
}

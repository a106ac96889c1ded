/**
 * The engine's built-in tools: `ask_user` (its handler never runs: the run
 * loop turns a valid call into a durable question) and `todo_write` (replaces
 * the thread's todo list, kept in `view.todos`).
 *
 * @module
 */
import { z } from "zod";
import { defineTool, type ToolDefinition } from "./define_tool.ts";
import { type Question, questionSchema } from "./question_shape.ts";
import { ASK_USER_TOOL, MAX_TODO_TEXT, MAX_TODOS, TODO_WRITE_TOOL } from "./builtin_names.ts";

/** Bounds of one `ask_user` call. */
export const MAX_QUESTIONS = 20;

const question = questionSchema;

/** The input of `ask_user`. */
export const askUserInput: z.ZodType<{ questions: Question[] }> = z.object({
  questions: z.array(question).min(1).max(MAX_QUESTIONS).refine(
    (questions) => new Set(questions.map((q) => q.id)).size === questions.length,
    "Question ids must be unique",
  ),
}).strict();

const askUser: ToolDefinition = defineTool({
  name: ASK_USER_TOOL,
  description: "Ask the user one or more questions and wait for the answers. Use `options` " +
    "when the answer must be one of a few choices, and `secret: true` for passwords or keys " +
    "(secret answers are never stored).",
  input: askUserInput,
  execute: () => {
    // The run loop opens an interaction instead of running this.
    throw new Error("ask_user is handled by the engine");
  },
});

const todoWriteInput = z.object({
  todos: z.array(
    z.object({
      id: z.string().min(1).max(64).optional(),
      text: z.string().min(1).max(MAX_TODO_TEXT),
      status: z.enum(["pending", "in_progress", "done"]),
    }).strict(),
  ).max(MAX_TODOS),
}).strict();

const todoWrite: ToolDefinition = defineTool({
  name: TODO_WRITE_TOOL,
  description: `Replace the whole todo list (at most ${MAX_TODOS} items). Send every item ` +
    "each time, with its status: pending, in_progress or done.",
  input: todoWriteInput,
  execute: ({ todos }) => {
    const list = todos.map((todo, i) => ({
      id: todo.id ?? `todo-${i + 1}`,
      text: todo.text,
      status: todo.status,
    }));
    const done = list.filter((todo) => todo.status === "done").length;
    return {
      output: `Todo list saved: ${list.length} items, ${done} done.`,
      structured: { todos: list },
    };
  },
});

/** The built-in `ask_user` tool. */
export function askUserTool(): ToolDefinition {
  return askUser;
}

/** The built-in `todo_write` tool. */
export function todoWriteTool(): ToolDefinition {
  return todoWrite;
}

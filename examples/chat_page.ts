/**
 * The example server's chat page: one HTML document with a little script that
 * uses the thread API directly (JSON commands and the `events` stream). It
 * shows streaming text, tool items with Approve / Deny buttons when a call
 * waits for approval, ask-user forms (a password field for secret questions),
 * the todo list, the title (click to rename), the queue, cancel, retry and
 * the thread list. Everything the server sends is inserted as text, never as
 * HTML. Batches are applied with the engine's own `applyUpdate`, whose
 * source the page carries (it is self-contained: no bundler needed).
 *
 * @module
 */
import { applyUpdate } from "@floret/engine";

/**
 * The page, for an API mounted at `apiBase`.
 *
 * @param apiBase the API's base path, such as `/api`
 * @returns the HTML document
 */
export function chatPage(apiBase: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Floret chat</title>
<style>
  body { font: 15px system-ui, sans-serif; margin: 0; display: flex; height: 100vh; }
  nav { width: 240px; border-right: 1px solid #ddd; overflow-y: auto; padding: 8px; }
  nav button.thread { display: block; width: 100%; text-align: left; margin: 2px 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  nav button.current { font-weight: bold; }
  main { flex: 1; display: flex; flex-direction: column; }
  #items { flex: 1; overflow-y: auto; padding: 12px; }
  .item { margin: 8px 0; white-space: pre-wrap; }
  .user { color: #0b5394; }
  .thinking { color: #888; font-style: italic; }
  .tool { border: 1px solid #ccc; border-radius: 6px; padding: 6px; font-family: monospace; }
  form { display: flex; gap: 6px; padding: 8px; border-top: 1px solid #ddd; }
  #text { flex: 1; }
  #status { padding: 0 12px; color: #666; }
  header { display: flex; gap: 12px; align-items: baseline; padding: 8px 12px; border-bottom: 1px solid #ddd; }
  #title { margin: 0; font-size: 18px; cursor: pointer; }
  aside { width: 220px; border-left: 1px solid #ddd; padding: 8px; overflow-y: auto; }
  aside h2 { font-size: 14px; margin: 4px 0; }
  .todo.done { text-decoration: line-through; color: #888; }
  .todo.in_progress { font-weight: bold; }
  .actions, .ask { margin-top: 6px; display: flex; gap: 6px; flex-wrap: wrap; font-family: system-ui, sans-serif; }
  .ask label { display: flex; flex-direction: column; font-size: 13px; }
  .interaction { border: 1px dashed #c90; border-radius: 6px; padding: 6px; }
  .queued { color: #666; margin: 2px 0; }
</style>
</head>
<body>
<nav>
  <button id="new">New thread</button>
  <div id="threads"></div>
</nav>
<main>
  <header><h1 id="title" title="Click to rename">New conversation</h1><span id="status"></span></header>
  <div id="items"></div>
  <form id="composer">
    <input id="text" autocomplete="off" placeholder="Message (try: weather in Lisbon)">
    <button>Send</button>
    <button type="button" id="cancel">Cancel</button>
    <button type="button" id="retry">Retry</button>
  </form>
</main>
<aside>
  <h2>Goal</h2>
  <div id="goal"></div>
  <button type="button" id="set-goal">Set goal</button>
  <button type="button" id="submit-goal">Work on a goal</button>
  <h2>Todos</h2>
  <ul id="todos"></ul>
  <h2>Queued</h2>
  <div id="queue"></div>
</aside>
<script type="module">
const api = ${JSON.stringify(apiBase)};
const key = () => crypto.randomUUID();
let threadId = null, view = null, events = null;
const here = (rest = "") => "/threads/" + encodeURIComponent(threadId) + rest;
const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};

async function call(method, path, body) {
  const init = { method, headers: {} };
  if (method !== "GET") init.headers["idempotency-key"] = key();
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(api + path, init);
  if (!response.ok) {
    const { error } = await response.json();
    alert(error.code + ": " + error.message);
    throw new Error(error.code);
  }
  return response.status === 204 ? null : response.json();
}

async function loadThreads() {
  const { threads } = await call("GET", "/threads?limit=50");
  const list = document.getElementById("threads");
  list.replaceChildren(...threads.map((t) => {
    const button = document.createElement("button");
    button.className = "thread" + (t.threadId === threadId ? " current" : "");
    button.textContent = (t.title ?? "Untitled") + " · " + t.status;
    button.onclick = () => open(t.threadId);
    return button;
  }));
}

function open(id) {
  threadId = id;
  // The thread lives in the address, so a reload comes back to it (rebuilt from its view).
  history.replaceState(null, "", "#" + encodeURIComponent(id));
  events?.close();
  events = new EventSource(api + "/threads/" + encodeURIComponent(id) + "/events");
  events.addEventListener("view", (e) => { view = JSON.parse(e.data); render(); });
  events.addEventListener("batch", (e) => { apply(JSON.parse(e.data)); render(); });
  // The stream ends after a resync; open it again at once (it starts with a view).
  events.addEventListener("resync", () => open(id));
  loadThreads();
}

// The engine's reducer (applyUpdate from @floret/engine), carried as its source.
class FloretError extends Error {
  constructor(code, message) { super(message); this.code = code; }
}
${applyUpdate.toString()}

function apply(batch) {
  view = applyUpdate(view, batch);
  if (batch.ops.some((op) => op.op === "component" && (op.name === "status" || op.name === "title"))) {
    loadThreads();
  }
}

let shownQueue = "";

function render() {
  document.getElementById("status").textContent =
    view.status + (view.stopping ? " · stopping (" + view.stopping.mode + ")" : "") +
    (view.queue.length ? " · " + view.queue.length + " queued" : "");
  renderGoal();
  document.getElementById("title").textContent = view.title ?? "New conversation";
  document.getElementById("todos").replaceChildren(...(view.todos ?? []).map((todo) =>
    el("li", { className: "todo " + todo.status, textContent: todo.text })
  ));
  // Rebuilt only when it changed: a streaming turn renders many times a second,
  // and a button rebuilt under the pointer would never take its click.
  const queueShown = JSON.stringify(view.queue);
  if (queueShown !== shownQueue) {
    shownQueue = queueShown;
    document.getElementById("queue").replaceChildren(...view.queue.map((queued) =>
      el("div", { className: "queued" }, queued.text + " ",
        el("button", { textContent: "Edit", onclick: () => editQueued(queued) }),
        // Turn control: the queued message joins the running turn instead of waiting for it.
        el("button", { textContent: "Steer now", onclick: () => call("POST", here("/queue/" + encodeURIComponent(queued.id) + "/steer"), { expectedText: queued.text }) }),
        el("button", { textContent: "Remove", onclick: () => call("DELETE", here("/queue/" + encodeURIComponent(queued.id))) }))
    ));
  }
  const box = document.getElementById("items");
  box.replaceChildren(...view.items.map(renderItem));
  box.scrollTop = box.scrollHeight;
}

const drafts = new Map();

/** The thread goal: its objective, status, version and latest review. */
function renderGoal() {
  const goal = view.goal;
  const box = document.getElementById("goal");
  if (!goal) {
    box.replaceChildren(el("p", { className: "goal none", textContent: "No goal" }));
    return;
  }
  box.replaceChildren(el("div", { className: "goal " + goal.status },
    el("strong", { textContent: goal.text }),
    el("div", { textContent: goal.status + " · version " + goal.version }),
    ...(goal.review ? [el("div", { className: "review", textContent: "Review: " + goal.review.evidence })] : []),
    el("button", { textContent: "Clear", onclick: () => call("DELETE", here("/goal")) })));
}

/** Sets the goal (without starting work) or submits it (starting a turn when idle). */
async function editGoal(submit) {
  if (!threadId) await createThread();
  const text = prompt(submit ? "Goal to work on" : "Goal", view?.goal?.text ?? "");
  if (text) await call("PUT", here("/goal"), submit ? { text, submit: true } : { text });
}

/** Edits a queued message; the server refuses (409) if it changed or started meanwhile. */
async function editQueued(queued) {
  const text = prompt("Queued message", queued.text);
  if (text && text !== queued.text) {
    await call("PATCH", here("/queue/" + encodeURIComponent(queued.id)), { text, expectedText: queued.text });
  }
}

/** The interaction still waiting for an answer, if this is one. */
const pendingOf = (interaction) =>
  interaction && view.pending.find((p) => p.id === interaction.id && p.status === "pending");

const respond = (interactionId, body) =>
  call("POST", here("/interactions/" + encodeURIComponent(interactionId)), body);

function renderItem(item) {
  const div = el("div", { className: "item " + item.kind });
  if (item.kind === "tool" && item.tool.activity) {
    // The tool's own display facts (ToolResult.activity), shown as plain text.
    const activity = item.tool.activity;
    div.textContent = (activity.label ?? item.tool.name) + " → " + item.tool.status +
      (activity.rows ?? []).map((row) => "\\n" + row.text).join("") +
      (activity.omittedRows ? "\\n… " + activity.omittedRows + " more" : "");
  } else if (item.kind === "tool") {
    div.textContent = item.tool.name + "(" + item.tool.arguments + ") → " + item.tool.status +
      (item.tool.output !== undefined ? "\\n" + item.tool.output : "");
    const pending = pendingOf(item.interaction);
    if (pending?.kind === "approval") {
      div.append(el("div", { className: "actions" },
        el("button", { className: "approve", textContent: "Approve", onclick: () => respond(pending.id, { decision: "approve" }) }),
        el("button", { className: "deny", textContent: "Deny", onclick: () => respond(pending.id, { decision: "deny" }) })));
    }
  } else if (item.kind === "interaction") {
    const questions = item.interaction?.questions ?? [];
    const pending = pendingOf(item.interaction);
    if (!pending) {
      div.textContent = questions.map((q) => q.prompt).join("\\n") + "\\n(answered)";
      return div;
    }
    const form = el("form", { className: "ask" });
    for (const q of questions) {
      // Options are values or { value, description }; exhaustive (the default with options)
      // means a choice, otherwise they are suggestions for a free-text answer.
      const options = (q.options ?? []).map((o) => typeof o === "string" ? { value: o } : o);
      const label = (o) => o.description ? o.value + " — " + o.description : o.value;
      let field;
      if (options.length && q.exhaustive !== false) {
        field = el("select", { name: q.id }, ...options.map((o) => el("option", { value: o.value, textContent: label(o) })));
      } else {
        field = el("input", { name: q.id, type: q.secret ? "password" : "text", autocomplete: "off", required: true, placeholder: q.placeholder ?? "" });
        if (options.length) {
          const list = el("datalist", { id: "options-" + pending.id + "-" + q.id }, ...options.map((o) => el("option", { value: o.value, label: label(o) })));
          field.setAttribute("list", list.id);
          form.append(list);
        }
      }
      // Batches re-render the page; keep what was typed so far.
      const draft = pending.id + ":" + q.id;
      if (drafts.has(draft)) field.value = drafts.get(draft);
      field.oninput = field.onchange = () => drafts.set(draft, field.value);
      if (q.header) form.append(el("h3", { textContent: q.header }));
      if (q.reason) form.append(el("p", { className: "reason", textContent: q.reason }));
      form.append(el("label", {}, q.prompt, field));
    }
    form.append(el("button", { textContent: "Answer" }));
    form.onsubmit = (e) => {
      e.preventDefault();
      const data = new FormData(form);
      respond(pending.id, { answers: questions.map((q) => ({ questionId: q.id, value: String(data.get(q.id) ?? "") })) });
    };
    div.append(form);
  } else {
    div.textContent = item.text ?? "";
  }
  return div;
}

async function createThread() {
  const { threadId: id } = await call("POST", "/threads", {});
  open(id);
}
document.getElementById("new").onclick = createThread;
document.getElementById("set-goal").onclick = () => editGoal(false);
document.getElementById("submit-goal").onclick = () => editGoal(true);
document.getElementById("composer").onsubmit = async (e) => {
  e.preventDefault();
  const input = document.getElementById("text");
  if (!threadId) await createThread();
  const text = input.value.trim();
  if (!text) return;
  input.value = "";
  await call("POST", here("/messages"), { input: { text } });
};
document.getElementById("cancel").onclick = () => threadId && call("POST", here("/cancel"), {});
document.getElementById("retry").onclick = () => threadId && call("POST", here("/retry"), {});
document.getElementById("title").onclick = async () => {
  const title = threadId && prompt("Title", view?.title ?? "");
  if (title) await call("PATCH", here(), { title });
};
if (location.hash.length > 1) open(decodeURIComponent(location.hash.slice(1)));
else loadThreads();
</script>
</body>
</html>`;
}

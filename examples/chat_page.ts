/**
 * The example server's chat page: one HTML document with a little script that
 * uses the thread API directly (JSON commands and the `events` stream). It
 * shows streaming text, tool items, cancel, retry and a thread list, and has
 * marked hooks where approval buttons and ask-user forms go.
 *
 * @module
 */

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
  nav button.thread { display: block; width: 100%; text-align: left; margin: 2px 0; }
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
</style>
</head>
<body>
<nav>
  <button id="new">New thread</button>
  <div id="threads"></div>
</nav>
<main>
  <div id="status"></div>
  <div id="items"></div>
  <form id="composer">
    <input id="text" autocomplete="off" placeholder="Message (try: weather in Lisbon)">
    <button>Send</button>
    <button type="button" id="cancel">Cancel</button>
    <button type="button" id="retry">Retry</button>
  </form>
</main>
<script type="module">
const api = ${JSON.stringify(apiBase)};
const key = () => crypto.randomUUID();
let threadId = null, view = null, events = null;

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

function apply(batch) {
  for (const op of batch.ops) {
    if (op.op === "add") view.items.push(op.item);
    else if (op.op === "replace") view.items = view.items.map((i) => i.id === op.item.id ? op.item : i);
    else if (op.op === "remove") view.items = view.items.filter((i) => i.id !== op.itemId);
    else if (op.op === "append-text") {
      const item = view.items.find((i) => i.id === op.itemId);
      item.text = (item.text ?? "") + op.text;
    } else if (op.op === "component") view[op.name] = op.value;
  }
  if (batch.ops.some((op) => op.op === "component" && (op.name === "status" || op.name === "title"))) {
    loadThreads();
  }
}

function render() {
  document.getElementById("status").textContent =
    view.status + (view.queue.length ? " · " + view.queue.length + " queued" : "");
  const box = document.getElementById("items");
  box.replaceChildren(...view.items.map(renderItem));
  box.scrollTop = box.scrollHeight;
}

function renderItem(item) {
  const div = document.createElement("div");
  div.className = "item " + item.kind;
  if (item.kind === "tool" && item.tool.activity) {
    // The tool's own display facts (ToolResult.activity), shown as plain text.
    const activity = item.tool.activity;
    div.textContent = (activity.label ?? item.tool.name) + " → " + item.tool.status +
      (activity.rows ?? []).map((row) => "\\n" + row.text).join("") +
      (activity.omittedRows ? "\\n… " + activity.omittedRows + " more" : "");
  } else if (item.kind === "tool") {
    div.textContent = item.tool.name + "(" + item.tool.arguments + ") → " + item.tool.status +
      (item.tool.output !== undefined ? "\\n" + item.tool.output : "");
    // HOOK (approvals): when item.interaction?.kind === "approval" and it is pending,
    // add Approve / Deny buttons that POST
    //   /threads/:id/interactions/:interactionId  {"decision":"approve"|"deny"}
  } else if (item.kind === "interaction") {
    div.textContent = (item.interaction?.questions ?? []).map((q) => q.prompt).join("\\n");
    // HOOK (ask_user): render a form with one field per question (a password field when
    // q.secret, a select when q.options) and POST
    //   /threads/:id/interactions/:interactionId  {"answers":[{"questionId","value"}]}
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
document.getElementById("composer").onsubmit = async (e) => {
  e.preventDefault();
  const input = document.getElementById("text");
  if (!threadId) await createThread();
  const text = input.value.trim();
  if (!text) return;
  input.value = "";
  await call("POST", "/threads/" + encodeURIComponent(threadId) + "/messages", { input: { text } });
};
document.getElementById("cancel").onclick = () =>
  threadId && call("POST", "/threads/" + encodeURIComponent(threadId) + "/cancel", {});
document.getElementById("retry").onclick = () =>
  threadId && call("POST", "/threads/" + encodeURIComponent(threadId) + "/retry", {});
if (location.hash.length > 1) open(decodeURIComponent(location.hash.slice(1)));
else loadThreads();
</script>
</body>
</html>`;
}

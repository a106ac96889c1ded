import { threadApi } from "@floret/engine/http";
const service = { subscribe: () => (async function* () { await new Promise((r) => setTimeout(r, 60000)); })(), view: async (id: string) => ({ threadId: id, status: "idle", items: [], pending: [], queue: [], turns: [], viewVersion: 1 }) } as never;
const app = threadApi(service, { authorize: () => true });
const ac = new AbortController();
const res = await app.fetch(new Request("http://x/threads/t/events", { signal: ac.signal }));
const reader = res.body!.getReader(); const dec = new TextDecoder(); let text = ""; const start = Date.now();
while (Date.now() - start < 17000) { const r = await Promise.race([reader.read(), new Promise<null>((ok) => setTimeout(() => ok(null), 17000 - (Date.now() - start)))]); if (!r || r.done) break; text += dec.decode(r.value); console.log(((Date.now()-start)/1000).toFixed(1), JSON.stringify(dec.decode(r.value).slice(0,80))); }
ac.abort(); await reader.cancel(); process.exit(0);

// Starts examples/server.ts as a child process of the runtime running the test.
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Starts the example on a free port; resolves with its base URL once it listens. */
export function startServer(scratch: string): { child: ChildProcess; ready: Promise<string> } {
  const args = "Deno" in globalThis
    ? ["run", "-A", "examples/server.ts"]
    : "Bun" in globalThis
    ? ["./examples/server.ts"]
    : ["--import", "tsx", "examples/server.ts"];
  const env: Record<string, string> = { PORT: "0", FLORET_DB_URL: `file:${scratch}/smoke.db` };
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/_API_KEY$/.test(name) && !(name in env)) env[name] = value;
  }
  const child = spawn(process.execPath, args, {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const ready = new Promise<string>((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk;
      const match = /Floret chat on (http:\/\/127\.0\.0\.1:\d+)\//.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on("data", read);
    child.stderr!.on("data", read);
    child.on("exit", () => {
      clearTimeout(timer);
      reject(new Error(`server exited:\n${output}`));
    });
  });
  return { child, ready };
}

/** Stops a server started by {@link startServer} and waits for it to exit. */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill();
  await exited;
}

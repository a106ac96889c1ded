/**
 * Starts tests/support/scale_child.ts on the same runtime as the caller and
 * collects the sends it acknowledged. A kill decision is final: what the child
 * prints after it is not counted as acknowledged.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const childPath = fileURLToPath(new URL("./scale_child.ts", import.meta.url));

/** One send the child saw accepted. */
export interface ScaleAck {
  threadId: string;
  requestKey: string;
  queued: boolean;
  turnId?: string;
}

/** How a child run ended. */
export interface ScaleRun {
  acks: ScaleAck[];
  /** Sends that failed with storage_failure (bounded re-plans) and were sent again. */
  contended: number;
  code: number | null;
  killed: boolean;
  stderr: string;
}

/**
 * Runs a child with `config` (see scale_child.ts) until it exits, or SIGKILLs
 * it `killDelayMs` after `killWhen(acks)` held, or once `killAfterMs` passed.
 */
export function runScaleChild(
  config: Record<string, unknown>,
  options: {
    killWhen?: (acks: ScaleAck[]) => boolean;
    /** The kill lands this long after `killWhen` held (ACKs meanwhile still count). */
    killDelayMs?: number;
    killAfterMs?: number;
  } = {},
): Promise<ScaleRun> {
  const arg = JSON.stringify(config);
  // --unstable-kv: the child may open a Deno KV file (a `denokv:` URL); deno.json enables KV
  // too, but only where Deno finds that config, and the flag does not depend on it.
  const [cmd, argv]: [string, string[]] = "Deno" in globalThis
    ? [process.execPath, ["run", "-A", "--unstable-kv", childPath, arg]]
    : "Bun" in globalThis
    ? [process.execPath, [childPath, arg]]
    : [process.execPath, ["--import", "tsx", childPath, arg]];
  return new Promise((resolve, reject) => {
    const proc = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
    const acks: ScaleAck[] = [];
    let buffered = "";
    let stderr = "";
    let killed = false;
    let contended = 0;
    let doomed = false;
    const kill = (): void => {
      if (killed) return;
      killed = true;
      proc.kill("SIGKILL");
    };
    const timer = options.killAfterMs === undefined
      ? undefined
      : setTimeout(kill, options.killAfterMs);
    proc.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    proc.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      if (killed) return;
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (line.startsWith("DONE ")) contended = JSON.parse(line.slice(5)).contended ?? 0;
        if (!line.startsWith("ACK ")) continue;
        acks.push(JSON.parse(line.slice(4)));
        if (!doomed && options.killWhen?.(acks)) {
          doomed = true;
          if (options.killDelayMs) setTimeout(kill, options.killDelayMs);
          else return kill();
        }
      }
    });
    proc.on("error", reject);
    proc.on("close", (code) => {
      if (timer !== undefined) clearTimeout(timer);
      resolve({ acks, contended, code, killed, stderr });
    });
  });
}

// A throwaway PostgreSQL cluster on loopback for the tests, from Debian's
// packages (`apt-get install postgresql`). `startPostgres()` is what the gate
// uses; run this file directly to keep one running while you work:
//
//   node scripts/postgres_server.mjs start [--durable]   # prints FLORET_POSTGRES_URL=...
//   node scripts/postgres_server.mjs stop
//
// The cluster lives in a temporary folder, trusts loopback connections only,
// and is deleted by stop.
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const STATE = join(tmpdir(), "floret-postgres.json");

/** The newest installed server's bin folder, or undefined when none is installed. */
export function postgresBin() {
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).filter((v) => existsSync(join(base, v, "bin", "initdb")));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(base, versions[0], "bin") : undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// PostgreSQL refuses to run as root: as root, run its tools as the package's
// `postgres` user.
function asServerUser(bin, args) {
  const root = process.getuid?.() === 0;
  const [cmd, argv] = root ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  const result = spawnSync(cmd, argv, { encoding: "utf8" });
  if (result.status !== 0) {
    throw new Error(`${bin} ${args.join(" ")} failed: ${result.stderr || result.stdout}`);
  }
  return result.stdout;
}

/**
 * Starts a cluster; resolves to `{ url, stop }`, or `{ url: undefined, reason }`
 * when no server is installed. `durable: false` (the tests) turns fsync off:
 * the tests kill processes, never the machine, so what a commit returned is
 * still in the server's memory; benchmarks keep PostgreSQL's durable defaults.
 */
export async function startPostgres({ durable = false } = {}) {
  const bin = postgresBin();
  if (!bin) {
    return {
      url: undefined,
      reason: "no PostgreSQL server installed (apt-get install postgresql)",
    };
  }
  const dir = mkdtempSync(join(tmpdir(), "floret-pg-"));
  if (process.getuid?.() === 0) execFileSync("chown", ["postgres", dir]);
  chmodSync(dir, 0o700);
  const data = join(dir, "data");
  const port = await freePort();
  asServerUser(join(bin, "initdb"), [
    "-D",
    data,
    "-A",
    "trust",
    "-U",
    "floret",
    "--no-sync",
    "-E",
    "UTF8",
  ]);
  const speed = durable ? "" : " -c fsync=off -c synchronous_commit=off -c full_page_writes=off";
  asServerUser(join(bin, "pg_ctl"), [
    "-D",
    data,
    "-l",
    join(dir, "server.log"),
    "-w",
    "-t",
    "60",
    "-o",
    `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${dir} -c max_connections=300${speed}`,
    "start",
  ]);
  const url = `postgres://floret@127.0.0.1:${port}/postgres`;
  const stop = () => {
    try {
      asServerUser(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  return { url, stop, dir, data, bin };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const command = process.argv[2];
  if (command === "start") {
    const server = await startPostgres({ durable: process.argv.includes("--durable") });
    if (!server.url) {
      console.error(server.reason);
      process.exit(1);
    }
    writeFileSync(
      STATE,
      JSON.stringify({ data: server.data, dir: server.dir, bin: server.bin, url: server.url }),
    );
    console.log(`FLORET_POSTGRES_URL=${server.url}`);
  } else if (command === "stop") {
    if (!existsSync(STATE)) process.exit(0);
    const { data, dir, bin } = JSON.parse(readFileSync(STATE, "utf8"));
    try {
      asServerUser(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(STATE, { force: true });
    }
  } else {
    console.error("usage: node scripts/postgres_server.mjs start|stop");
    process.exit(2);
  }
}

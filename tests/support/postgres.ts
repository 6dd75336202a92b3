/**
 * A throwaway PostgreSQL cluster for the tests: started once per test process (initdb in a temp
 * dir, pg_ctl on a free loopback port, its unix socket in that dir, trust auth), a fresh database
 * per test, stopped when the process ends. Tests that need it are ignored, with the reason
 * printed, only when no PostgreSQL binaries exist (`.ci/run` installs them).
 */
import { join } from "node:path";
import postgres from "postgres";

/** The newest directory holding initdb and pg_ctl: PATH first, then Debian's layout. */
function findBinDir(): string | null {
  const onPath = (Deno.env.get("PATH") ?? "").split(":").filter((dir) => dir !== "");
  let debian: string[] = [];
  try {
    debian = [...Deno.readDirSync("/usr/lib/postgresql")].map((entry) => entry.name)
      .sort((a, b) => Number(b) - Number(a))
      .map((version) => `/usr/lib/postgresql/${version}/bin`);
  } catch {
    // No Debian PostgreSQL; PATH may still have it.
  }
  return [...onPath, ...debian].find((dir) =>
    isFile(join(dir, "initdb")) && isFile(join(dir, "pg_ctl"))
  ) ??
    null;
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

const BIN_DIR = findBinDir();

/** Why PostgreSQL tests are ignored here, or null when they run. */
export const postgresMissing: string | null = BIN_DIR === null
  ? "no PostgreSQL binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin"
  : null;

let toldMissing = false;

/** `ignore` for a Deno.test that needs PostgreSQL; prints the reason once when it is ignored. */
export function ignoreWithoutPostgres(): boolean {
  if (postgresMissing !== null && !toldMissing) {
    toldMissing = true;
    console.log(`ignoring PostgreSQL tests: ${postgresMissing}`);
  }
  return postgresMissing !== null;
}

/** A running cluster: where to reach it and how to run its tools. */
export interface Cluster {
  port: number;
  dir: string;
  dataDir: string;
  /** Runs a PostgreSQL tool (initdb, pg_ctl, …) as the cluster's owner. */
  run(tool: string, args: string[]): Promise<void>;
}

/** initdb refuses root: as root the cluster belongs to the unprivileged `postgres` user. */
function asOwner(tool: string, args: string[]): { command: string; args: string[] } {
  const path = join(BIN_DIR ?? "", tool);
  return Deno.uid() === 0
    ? { command: "runuser", args: ["-u", "postgres", "--", path, ...args] }
    : { command: path, args };
}

async function runTool(tool: string, args: string[]): Promise<void> {
  const { command, args: full } = asOwner(tool, args);
  const out = await new Deno.Command(command, { args: full, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
    throw new Error(`${tool} ${args.join(" ")} failed (exit ${out.code}): ${text.trim()}`);
  }
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function startCluster(stopAtExit = true): Promise<Cluster> {
  if (BIN_DIR === null) throw new Error(postgresMissing ?? "no PostgreSQL");
  // As root the cluster runs as `postgres`, who must reach the dir: /tmp, whatever TMPDIR says.
  const dir = await Deno.makeTempDir({
    prefix: "cg-pg-",
    ...(Deno.uid() === 0 ? { dir: "/tmp" } : {}),
  });
  if (Deno.uid() === 0) {
    const owner = postgresOwner();
    await Deno.chown(dir, owner.uid, owner.gid);
  }
  const dataDir = join(dir, "data");
  await runTool("initdb", [
    "-D",
    dataDir,
    "-A",
    "trust",
    "-U",
    "postgres",
    "--no-sync",
    "-E",
    "UTF8",
  ]);
  const cluster: Cluster = { port: 0, dir, dataDir, run: runTool };
  for (let attempt = 0; attempt < 3; attempt++) {
    cluster.port = freePort();
    try {
      await startServer(cluster);
      break;
    } catch (error) {
      if (attempt === 2) throw error;
    }
  }
  if (stopAtExit) globalThis.addEventListener("unload", () => stopClusterSync(cluster));
  return cluster;
}

/**
 * A cluster of the test's own, for a test that stops and restarts the server (the shared one
 * must stay up for the others); removed when disposed.
 */
export async function ownCluster(): Promise<Cluster & { [Symbol.asyncDispose](): Promise<void> }> {
  const own = await startCluster(false);
  return {
    ...own,
    [Symbol.asyncDispose]: () => Promise.resolve(stopClusterSync(own)),
  };
}

/** Creates a database in `cluster` and returns its URL. */
export async function createDatabase(cluster: Cluster, name: string): Promise<string> {
  await admin(cluster.port, (sql) => sql.unsafe(`CREATE DATABASE ${name}`));
  return clusterUrl(cluster.port, name);
}

/** Starts (or restarts) the cluster's server on its port; waits until it accepts connections. */
export function startServer(cluster: Cluster): Promise<void> {
  const options = [
    `-p ${cluster.port}`,
    `-k ${cluster.dir}`,
    "-c listen_addresses=127.0.0.1",
    // Throwaway data: no fsync. Commits stay synchronous, so a stopped server (even one killed
    // with -m immediate) keeps every commit it acknowledged, as a real one does.
    "-c fsync=off",
    "-c full_page_writes=off",
    "-c max_connections=200",
  ].join(" ");
  return cluster.run("pg_ctl", [
    "-D",
    cluster.dataDir,
    "-o",
    options,
    "-l",
    join(cluster.dir, "server.log"),
    "-w",
    "-t",
    "30",
    "start",
  ]);
}

/** Stops the cluster's server at once (the tests' "database went down"). */
export function stopServer(cluster: Cluster): Promise<void> {
  return cluster.run("pg_ctl", ["-D", cluster.dataDir, "-m", "immediate", "-w", "stop"]);
}

function postgresOwner(): { uid: number; gid: number } {
  const line = Deno.readTextFileSync("/etc/passwd").split("\n")
    .find((entry) => entry.startsWith("postgres:"));
  if (line === undefined) throw new Error("running as root, but there is no `postgres` user");
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

function stopClusterSync(cluster: Cluster): void {
  const { command, args } = asOwner("pg_ctl", ["-D", cluster.dataDir, "-m", "immediate", "stop"]);
  new Deno.Command(command, { args, stdout: "null", stderr: "null" }).outputSync();
  Deno.removeSync(cluster.dir, { recursive: true });
}

let started: Promise<Cluster> | null = null;

/** The process's cluster, started on first use. */
export function cluster(): Promise<Cluster> {
  started ??= startCluster();
  return started;
}

export function clusterUrl(port: number, database: string): string {
  return `postgres://postgres@127.0.0.1:${port}/${database}`;
}

let databases = 0;

/** A fresh, empty database for one test, dropped when disposed. */
export async function freshDatabase(): Promise<
  { url: string; name: string; cluster: Cluster; [Symbol.asyncDispose](): Promise<void> }
> {
  const running = await cluster();
  const name = `t${Deno.pid}_${++databases}_${crypto.randomUUID().slice(0, 8)}`;
  const url = await createDatabase(running, name);
  return {
    url,
    name,
    cluster: running,
    async [Symbol.asyncDispose]() {
      await admin(running.port, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
        .catch(() => {}); // the server may be down at the end of a "database stopped" test
    },
  };
}

async function admin<T>(port: number, work: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(clusterUrl(port, "postgres"), { max: 1, onnotice: () => {} });
  try {
    return await work(sql);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

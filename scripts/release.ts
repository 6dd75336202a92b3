/**
 * Release builder: compiles `main.ts` into one self-contained binary per target with exactly the
 * flags of `deno task start` (permissions and V8 tuning), packages each binary with README.md and
 * LICENSE (`.tar.gz` for unix, `.zip` for Windows) and writes `SHA256SUMS` over the archives.
 *
 * Usage (from the repository root, normally via `deno task compile`):
 *   deno task compile [--dry-run] [--target T]... [--out-dir dist] [--skip-compile]
 *                     [--expect-version vX.Y.Z]
 *
 * `--dry-run` prints the exact commands and packaging steps instead of running them (our dev
 * machines cannot download `denort`, so compiling only happens in the release workflow).
 * `--skip-compile` packages binaries already present in the out dir.
 */
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { VERSION } from "../src/base/version.ts";

export const PROGRAM = "council-gateway";
export const ENTRY_POINT = "main.ts";
/** GitHub repository the release assets are published to, unless a `--repo` flag says otherwise. */
export const DEFAULT_REPO = "council-gateway/council-gateway";

export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;
export type Target = typeof TARGETS[number];

/**
 * Files the app reads from the source tree at run time, embedded with `--include`. None today:
 * config and ledger live in the user's directories. A test fails when source code starts reading
 * files relative to itself without being listed here.
 */
export const INCLUDES: readonly string[] = [];

/** Documents shipped inside every archive next to the binary. */
export const PACKAGED_DOCS = ["README.md", "LICENSE"] as const;

export const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

export function isTarget(value: string): value is Target {
  return (TARGETS as readonly string[]).includes(value);
}

export function isWindows(target: Target): boolean {
  return target.includes("windows");
}

/** Name of the executable inside an archive (and after installation). */
export function executableName(target: Target): string {
  return isWindows(target) ? `${PROGRAM}.exe` : PROGRAM;
}

/** Compiled binary in the out dir, named per target so all targets can sit side by side. */
export function binaryName(target: Target): string {
  return `${PROGRAM}-${target}${isWindows(target) ? ".exe" : ""}`;
}

/**
 * Release asset name. Deliberately version-free so `releases/latest/download/<asset>` always
 * works for the installer; the version is in the release tag and the URL.
 */
export function archiveName(target: Target): string {
  return `${PROGRAM}-${target}${isWindows(target) ? ".zip" : ".tar.gz"}`;
}

const PERMISSION_FLAG = /^(-A|--allow-all|--(allow|deny)-[a-z-]+(=\S+)?)$/;
/**
 * Runtime flags `deno compile` bakes into the binary as `deno run` applies them: V8 tuning (the
 * start task's small young generation keeps an idle gateway's RSS after use tens of MB lower).
 */
const RUNTIME_FLAG = /^--v8-flags=\S+$/;

/** The pieces of a `deno run <flags> <entry> <args>` task string. */
export interface RunTask {
  flags: string[];
  entry: string;
  args: string[];
}

/**
 * Parses a `deno run` task (the `start` task) into flags, entry point and arguments. Every flag
 * must be a permission flag or `--v8-flags=…`, both of which the compiled binary carries too:
 * anything else would silently differ between `deno task start` and the binary, so it is refused
 * here and must be decided on deliberately.
 */
export function parseRunTask(task: string): RunTask {
  const tokens = task.trim().split(/\s+/);
  if (tokens[0] !== "deno" || tokens[1] !== "run") {
    throw new Error(`expected a "deno run …" task, got: ${task}`);
  }
  const entryIndex = tokens.findIndex((token, i) => i >= 2 && !token.startsWith("-"));
  if (entryIndex < 0) throw new Error(`no entry point in task: ${task}`);
  const flags = tokens.slice(2, entryIndex);
  const foreign = flags.filter((flag) => !PERMISSION_FLAG.test(flag) && !RUNTIME_FLAG.test(flag));
  if (foreign.length > 0) {
    throw new Error(
      `start task has flags other than permissions and --v8-flags: ${foreign.join(" ")}; ` +
        "decide in scripts/release.ts whether the compiled binary needs them",
    );
  }
  return { flags, entry: tokens[entryIndex], args: tokens.slice(entryIndex + 1) };
}

export interface DenoJson {
  version: string;
  tasks: Record<string, string>;
}

export async function readDenoJson(root = REPO_ROOT): Promise<DenoJson> {
  return JSON.parse(await Deno.readTextFile(join(root, "deno.json")));
}

/** The flags of `deno task start`: the single definition shared with the binary. */
export function compileFlags(denoJson: DenoJson): string[] {
  const start = denoJson.tasks.start;
  if (!start) throw new Error('deno.json has no "start" task');
  const task = parseRunTask(start);
  if (task.entry !== ENTRY_POINT) {
    throw new Error(`start task runs ${task.entry}, expected ${ENTRY_POINT}`);
  }
  return task.flags;
}

/** Arguments after `deno` that compile one target. */
export function compileArgs(target: Target, flags: string[], outDir: string): string[] {
  return [
    "compile",
    ...flags,
    "--target",
    target,
    "--output",
    join(outDir, binaryName(target)),
    ...INCLUDES.flatMap((path) => ["--include", path]),
    ENTRY_POINT,
  ];
}

/** One step of the release, as data so it can be printed (dry run) or executed. */
export type Step =
  | { kind: "run"; cmd: string[] }
  | { kind: "mkdir"; path: string }
  | { kind: "copy"; from: string; to: string; mode?: number }
  | { kind: "remove"; path: string }
  | { kind: "checksums"; files: string[]; out: string };

export interface PlanOptions {
  targets: readonly Target[];
  flags: string[];
  outDir: string;
  compile: boolean;
}

/** Every step for the given targets: compile, stage, archive, then checksums. */
export function releasePlan({ targets, flags, outDir, compile }: PlanOptions): Step[] {
  const steps: Step[] = [{ kind: "mkdir", path: outDir }];
  for (const target of targets) {
    if (compile) steps.push({ kind: "run", cmd: ["deno", ...compileArgs(target, flags, outDir)] });
    steps.push(...packageSteps(target, outDir));
  }
  steps.push({
    kind: "checksums",
    files: targets.map((target) => join(outDir, archiveName(target))),
    out: join(outDir, "SHA256SUMS"),
  });
  return steps;
}

function packageSteps(target: Target, outDir: string): Step[] {
  const stage = join(outDir, `stage-${target}`);
  const archive = join(outDir, archiveName(target));
  const exe = executableName(target);
  const members = [exe, ...PACKAGED_DOCS];
  const archiveCmd = isWindows(target)
    ? ["zip", "-q", "-j", archive, ...members.map((member) => join(stage, member))]
    : ["tar", "-czf", archive, "-C", stage, ...members];
  return [
    { kind: "remove", path: stage },
    { kind: "remove", path: archive },
    { kind: "mkdir", path: stage },
    {
      kind: "copy",
      from: join(outDir, binaryName(target)),
      to: join(stage, exe),
      mode: isWindows(target) ? undefined : 0o755,
    },
    ...PACKAGED_DOCS.map((doc): Step => ({ kind: "copy", from: doc, to: join(stage, doc) })),
    { kind: "run", cmd: archiveCmd },
    { kind: "remove", path: stage },
  ];
}

/** A shell-like rendering of a step, for `--dry-run`. */
export function describeStep(step: Step): string {
  switch (step.kind) {
    case "run":
      return step.cmd.map(shellQuote).join(" ");
    case "mkdir":
      return `mkdir -p ${shellQuote(step.path)}`;
    case "copy": {
      const copy = `cp ${shellQuote(step.from)} ${shellQuote(step.to)}`;
      return step.mode === undefined
        ? copy
        : `${copy} && chmod ${step.mode.toString(8)} ${shellQuote(step.to)}`;
    }
    case "remove":
      return `rm -rf ${shellQuote(step.path)}`;
    case "checksums": {
      // Computed in-process; this is the equivalent shell command (same output format).
      const names = step.files.map((file) => basename(file)).sort((a, b) => a.localeCompare(b));
      const dir = dirname(step.out);
      return `(cd ${shellQuote(dir)} && sha256sum ${names.map(shellQuote).join(" ")}) > ` +
        shellQuote(step.out);
    }
  }
}

function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** `sha256sum`-compatible lines (`<hex>  <name>`), sorted by name. */
export function formatSha256Sums(entries: ReadonlyMap<string, string>): string {
  return [...entries].sort(([a], [b]) => a.localeCompare(b))
    .map(([name, hex]) => `${hex}  ${name}\n`).join("");
}

/** Parses `sha256sum` output (text or binary mode) into name → lowercase hex. */
export function parseSha256Sums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const match = /^([0-9a-fA-F]{64}) [ *](.+)$/.exec(line.trimEnd());
    if (!match) throw new Error(`malformed SHA256SUMS line: ${line}`);
    sums.set(match[2], match[1].toLowerCase());
  }
  return sums;
}

export async function sha256File(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

async function executeStep(step: Step): Promise<void> {
  switch (step.kind) {
    case "run": {
      const [cmd, ...args] = step.cmd;
      const program = cmd === "deno" ? Deno.execPath() : cmd;
      const { code } = await new Deno.Command(program, { args, cwd: REPO_ROOT }).spawn().status;
      if (code !== 0) throw new Error(`command failed (exit ${code}): ${describeStep(step)}`);
      return;
    }
    case "mkdir":
      return await Deno.mkdir(inRoot(step.path), { recursive: true });
    case "copy":
      await Deno.copyFile(inRoot(step.from), inRoot(step.to));
      if (step.mode !== undefined && Deno.build.os !== "windows") {
        await Deno.chmod(inRoot(step.to), step.mode);
      }
      return;
    case "remove":
      return await Deno.remove(inRoot(step.path), { recursive: true }).catch((error) => {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      });
    case "checksums": {
      const sums = new Map<string, string>();
      for (const file of step.files) {
        sums.set(basename(file), await sha256File(inRoot(file)));
      }
      return await Deno.writeTextFile(inRoot(step.out), formatSha256Sums(sums));
    }
  }
}

function inRoot(path: string): string {
  return resolve(REPO_ROOT, path);
}

/** Accepts `v1.2.3` or `1.2.3`; fails unless it equals both deno.json and src/base/version.ts. */
export function checkVersion(expected: string, denoJson: DenoJson): void {
  const wanted = expected.replace(/^v/, "");
  if (wanted !== denoJson.version || wanted !== VERSION) {
    throw new Error(
      `release tag ${expected} does not match deno.json version ${denoJson.version} ` +
        `and src/base/version.ts VERSION ${VERSION}`,
    );
  }
}

function usage(): string {
  return [
    "usage: deno task compile [--dry-run] [--target T]... [--out-dir DIR] [--skip-compile]",
    "                         [--expect-version vX.Y.Z]",
    `targets: ${TARGETS.join(", ")} (default: all)`,
  ].join("\n");
}

export async function main(argv: string[]): Promise<number> {
  let options;
  try {
    options = parseArgs({
      args: argv,
      options: {
        "dry-run": { type: "boolean", default: false },
        target: { type: "string", multiple: true },
        "out-dir": { type: "string", default: "dist" },
        "skip-compile": { type: "boolean", default: false },
        "expect-version": { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
      strict: true,
    }).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage()}`);
    return 2;
  }
  if (options.help) {
    console.log(usage());
    return 0;
  }
  const requested = options.target ?? [];
  const unknown = requested.filter((target) => target !== "all" && !isTarget(target));
  if (unknown.length > 0) {
    console.error(`unknown target ${unknown.join(", ")}\n${usage()}`);
    return 2;
  }
  const targets = requested.length === 0 || requested.includes("all")
    ? TARGETS
    : [...new Set(requested)] as Target[];

  const denoJson = await readDenoJson();
  if (options["expect-version"] !== undefined) checkVersion(options["expect-version"], denoJson);
  const outDir = relativeToRoot(options["out-dir"]);
  const plan = releasePlan({
    targets,
    flags: compileFlags(denoJson),
    outDir,
    compile: !options["skip-compile"],
  });

  console.log(`# council-gateway ${denoJson.version}: ${targets.length} target(s) into ${outDir}`);
  for (const step of plan) {
    console.log(describeStep(step));
    if (!options["dry-run"]) await executeStep(step);
  }
  return 0;
}

/** Paths inside the repository print relative to it; others stay absolute. */
function relativeToRoot(path: string): string {
  const absolute = resolve(Deno.cwd(), path);
  const rel = relative(REPO_ROOT, absolute);
  return rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? absolute : rel;
}

if (import.meta.main) {
  try {
    Deno.exit(await main(Deno.args));
  } catch (error) {
    console.error(`release: ${(error as Error).message}`);
    Deno.exit(1);
  }
}

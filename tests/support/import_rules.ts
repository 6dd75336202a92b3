/**
 * The architecture's rules as a checker over src/'s import graph: the layer direction, no
 * cycles, small files and folders, one name per meaning, and a mod.ts per folder.
 */
import { basename, dirname, join, normalize, relative } from "node:path";

/** Module path (repo-relative, `src/…`) → the `src/…` modules it imports. */
export type ImportGraph = Map<string, string[]>;

/** The layers above base, each a top folder of src/. */
const FEATURES = [
  "server",
  "protocol",
  "council",
  "agents",
  "workspace",
  "ledger",
  "store",
  "status",
  "daemon",
  "cli",
  "eval",
] as const;

/** Every feature layer except the given ones. */
function featuresBut(...allowed: string[]): string[] {
  return FEATURES.filter((layer) => !allowed.includes(layer));
}

/**
 * What each layer may not import. The flow is protocol → council → agents, meeting only in
 * neutral types; base (src/base, src/config) sits under every feature layer.
 */
export const FORBIDDEN: Record<string, readonly string[]> = {
  base: ["config", ...FEATURES],
  config: [...FEATURES],
  workspace: featuresBut("workspace"),
  agents: featuresBut("agents"),
  council: featuresBut("council", "agents", "workspace"),
  protocol: featuresBut("protocol", "council", "workspace"),
  // The shared database implements the council's and the ledger's interfaces, nothing above.
  store: featuresBut("store", "council", "ledger"),
};

export const MAX_FILE_LINES = 400;
export const MAX_FOLDER_FILES = 20;

/** Base names several files may share because they mean the same thing in each folder. */
export const SHARED_NAMES: ReadonlySet<string> = new Set([
  "mod.ts", // each folder's own
  "types.ts", // each layer's neutral types
  "handler.ts", // each protocol's …
  "hints.ts",
  "reply.ts",
  "request.ts",
  "stream.ts",
]);

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"'\n]+)["']/g;

/** The relative specifiers a module imports or re-exports, static or dynamic. */
export function relativeImports(source: string): string[] {
  return [...source.matchAll(SPECIFIER)].map((match) => match[1]);
}

/** The layer of a `src/…` path: its first folder (`src/x.ts` is its own, "root"). */
export function layerOf(path: string): string {
  const parts = path.split("/");
  return parts.length > 2 ? parts[1] : "root";
}

/** Each import that goes against the layer direction, as "from → to (layer → layer)". */
export function layerViolations(graph: ImportGraph): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    const forbidden = FORBIDDEN[layerOf(from)] ?? [];
    for (const to of targets) {
      if (forbidden.includes(layerOf(to))) {
        found.push(`${from} → ${to} (${layerOf(from)} must not import ${layerOf(to)})`);
      }
    }
  }
  return found.sort();
}

/** Every import cycle, as its modules in order (each cycle once, from its smallest path). */
export function importCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!graph.has(to)) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (;;) {
      const member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
      if (member === node) break;
    }
    const selfLoop = (graph.get(node) ?? []).includes(node);
    if (component.length > 1 || selfLoop) components.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components;
}

/** Files over the line limit, as "path (N lines)". */
export function oversizeFiles(lines: Map<string, number>): string[] {
  return [...lines].filter(([, count]) => count > MAX_FILE_LINES)
    .map(([path, count]) => `${path} (${count} lines)`).sort();
}

/** Folders holding more files directly than the limit, as "folder (N files)". */
export function crowdedFolders(paths: Iterable<string>): string[] {
  const counts = new Map<string, number>();
  for (const path of paths) counts.set(dirname(path), (counts.get(dirname(path)) ?? 0) + 1);
  return [...counts].filter(([, count]) => count > MAX_FOLDER_FILES)
    .map(([folder, count]) => `${folder} (${count} files)`).sort();
}

/** Base names used by more than one file (beyond `SHARED_NAMES`), with their paths. */
export function nameClashes(paths: Iterable<string>): string[] {
  const byName = new Map<string, string[]>();
  for (const path of paths) {
    const name = basename(path);
    if (!SHARED_NAMES.has(name)) byName.set(name, [...byName.get(name) ?? [], path]);
  }
  return [...byName].filter(([, all]) => all.length > 1)
    .map(([name, all]) => `${name}: ${all.sort().join(", ")}`).sort();
}

/** Files named like a folder beside them (`x.ts` next to `x/`): the folder's mod.ts is the place. */
export function filesBesideFolders(paths: Iterable<string>): string[] {
  const all = [...paths];
  const folders = new Set(all.map((path) => dirname(path)));
  return all.filter((path) => folders.has(path.replace(/\.ts$/, ""))).sort();
}

/** Folders without a mod.ts. */
export function foldersWithoutMod(paths: Iterable<string>): string[] {
  const all = new Set(paths);
  const folders = new Set([...all].map((path) => dirname(path)));
  return [...folders].filter((folder) => !all.has(`${folder}/mod.ts`)).sort();
}

async function tsFiles(root: string, dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(join(root, dir))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await tsFiles(root, path));
    else if (entry.name.endsWith(".ts")) found.push(path);
  }
  return found;
}

/** src/'s modules with their sources, repo-relative. */
export async function srcModules(repo: string): Promise<Map<string, string>> {
  const modules = new Map<string, string>();
  for (const path of (await tsFiles(repo, "src")).sort()) {
    modules.set(path, await Deno.readTextFile(join(repo, path)));
  }
  return modules;
}

/** The import graph of the given modules (imports outside src/ are left out). */
export function importGraph(modules: Map<string, string>): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const [path, source] of modules) {
    const targets = relativeImports(source)
      .map((specifier) => relative(".", normalize(join(dirname(path), specifier))))
      .filter((target) => target.startsWith("src/"));
    graph.set(path, [...new Set(targets)]);
  }
  return graph;
}

/**
 * An eval task: a directory with `task.yaml` (the prompt, an optional setup command, the check
 * command and its time limit) and a `workspace/` of files or a git repository; a suite is a
 * directory of such tasks.
 */
import { join, resolve } from "node:path";
import YAML from "yaml";
import { z } from "zod";

export const TaskFileSchema = z.strictObject({
  /** What the host is asked to do, as a user would type it. */
  prompt: z.string().trim().min(1),
  /** Run in the fresh copy before the host starts (e.g. installing dependencies). */
  setup: z.string().min(1).optional(),
  /** Exit 0 means solved. Runs in the copy; `$TASK_DIR` is the task directory (hidden files). */
  check: z.string().min(1),
  /** The check's time limit: a check still running then is killed and the run failed. */
  timeoutSec: z.number().positive().default(60),
  /** The host's time limit. */
  hostTimeoutSec: z.number().positive().default(900),
  /** For a git workspace: the commit each run starts from (default: the repository's HEAD). */
  commit: z.string().regex(/^[0-9a-fA-F]{4,40}$/, "must be a commit hash").optional(),
});
export type TaskFile = z.infer<typeof TaskFileSchema>;

export interface Task extends TaskFile {
  /** The directory's name: how results and reports name the task. */
  name: string;
  dir: string;
  workspace: string;
}

/** A task directory that cannot be used: the message names the file and the field. */
export class TaskError extends Error {
  override name = "TaskError";
}

function fieldProblem(file: string, error: z.ZodError): string {
  const issue = error.issues[0];
  const field = issue.path.join(".");
  if (issue.code === "unrecognized_keys") {
    return `${file}: unknown field ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}`;
  }
  return `${file}: field ${field ? JSON.stringify(field) : "(file)"}: ${issue.message}`;
}

/** Reads a task's `task.yaml` text (pure): the fields, or a TaskError naming `file` and field. */
export function parseTaskFile(file: string, text: string): TaskFile {
  let value: unknown;
  try {
    value = YAML.parse(text);
  } catch (err) {
    throw new TaskError(`${file}: not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TaskError(`${file}: expected a mapping with the fields prompt, check, timeoutSec`);
  }
  const parsed = TaskFileSchema.safeParse(value);
  if (!parsed.success) throw new TaskError(fieldProblem(file, parsed.error));
  return parsed.data;
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** Loads one task directory. */
export function loadTask(dir: string): Task {
  const root = resolve(dir);
  const file = join(root, "task.yaml");
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch {
    throw new TaskError(`${file}: cannot be read (a task directory needs a task.yaml)`);
  }
  const fields = parseTaskFile(file, text);
  const workspace = join(root, "workspace");
  if (!isDirectory(workspace)) {
    throw new TaskError(`${root}: no workspace/ directory (the files each run starts from)`);
  }
  const name = root.split(/[\\/]/).filter(Boolean).pop() ?? root;
  return { ...fields, name, dir: root, workspace };
}

/** The tasks of a suite: the directory itself when it is a task, else its task subdirectories. */
export function loadSuite(dir: string): Task[] {
  const root = resolve(dir);
  if (!isDirectory(root)) throw new TaskError(`${root}: not a directory`);
  try {
    Deno.statSync(join(root, "task.yaml"));
    return [loadTask(root)];
  } catch (err) {
    if (err instanceof TaskError) throw err;
  }
  const dirs = [...Deno.readDirSync(root)]
    .filter((entry) => entry.isDirectory && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort()
    .filter((name) => {
      try {
        return Deno.statSync(join(root, name, "task.yaml")).isFile;
      } catch {
        return false;
      }
    });
  if (dirs.length === 0) throw new TaskError(`${root}: no task directories (with a task.yaml)`);
  return dirs.map((name) => loadTask(join(root, name)));
}

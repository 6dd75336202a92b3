/**
 * .github/workflows: the files parse as YAML, trigger on the right events, and every deno task,
 * script and local workflow they reference exists.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import YAML from "yaml";
import { TARGETS } from "../../scripts/release.ts";
import { REPO_ROOT } from "../support/tool_runs.ts";

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Job {
  uses?: string;
  steps?: Step[];
  strategy?: { matrix?: { include?: Record<string, string>[] } };
}
interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, Job>;
}

const WORKFLOWS = ["ci.yml", "release.yml", "compat.yml"];

async function loadWorkflow(name: string): Promise<Workflow> {
  const text = await Deno.readTextFile(join(REPO_ROOT, ".github/workflows", name));
  const document = YAML.parseDocument(text);
  assert.deepEqual(document.errors, [], `${name} does not parse`);
  return document.toJS() as Workflow;
}

function steps(workflow: Workflow): Step[] {
  return Object.values(workflow.jobs).flatMap((job) => job.steps ?? []);
}

function runScripts(workflow: Workflow): string {
  return steps(workflow).map((step) => step.run ?? "").join("\n");
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(join(REPO_ROOT, path)).then(() => true, () => false);
}

const denoJson = JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "deno.json")));

for (const name of WORKFLOWS) {
  Deno.test(`${name}: every deno task, script and local workflow it references exists`, async () => {
    const workflow = await loadWorkflow(name);
    assert.ok(Object.keys(workflow.jobs).length > 0);
    const runs = runScripts(workflow);
    for (const [, task] of runs.matchAll(/\bdeno task (?:--quiet )?([\w:-]+)/g)) {
      assert.ok(task in denoJson.tasks, `${name} runs unknown deno task "${task}"`);
    }
    const paths = [
      ...runs.matchAll(/(?:^|[\s"'])((?:\.ci|scripts)\/[\w./-]+)/g),
      ...steps(workflow).flatMap((step) =>
        String(step.with?.files ?? "").split("\n").map((line) => [line, line.trim()])
      ),
    ].map(([, path]) => path).filter((path) =>
      /^(\.ci|scripts)\//.test(path) && !path.includes("*")
    );
    for (const path of paths) assert.ok(await exists(path), `${name} references missing ${path}`);
    for (const job of Object.values(workflow.jobs)) {
      if (job.uses?.startsWith("./")) {
        assert.ok(await exists(job.uses), `${name} calls missing workflow ${job.uses}`);
      }
    }
  });
}

Deno.test("ci.yml runs .ci/run with Node on pushes and pull requests, and can be called", async () => {
  const ci = await loadWorkflow("ci.yml");
  assert.ok("push" in ci.on && "pull_request" in ci.on && "workflow_call" in ci.on);
  const all = steps(ci);
  assert.ok(all.some((step) => step.uses?.startsWith("actions/setup-node@")));
  assert.ok(all.some((step) => step.run?.trim() === "bash .ci/run"));
});

Deno.test("release.yml: v* tags, tests first, every target smoke-tested, assets attached", async () => {
  const release = await loadWorkflow("release.yml");
  assert.deepEqual(release.on, { push: { tags: ["v*"] } });
  assert.equal(release.jobs.test.uses, "./.github/workflows/ci.yml");

  const build = (release.jobs.build.steps ?? []).map((step) => step.run ?? "").join("\n");
  assert.match(build, /deno task compile --expect-version "\$GITHUB_REF_NAME"/);

  const smoked = release.jobs.smoke.strategy?.matrix?.include?.map((entry) => entry.target);
  assert.deepEqual(smoked?.toSorted(), [...TARGETS].sort());

  const publish = release.jobs.publish.steps?.find((step) =>
    step.uses?.startsWith("softprops/action-gh-release@")
  );
  const files = String(publish?.with?.files ?? "");
  for (const pattern of ["dist/*.tar.gz", "dist/*.zip", "dist/SHA256SUMS", "scripts/install.sh"]) {
    assert.ok(files.includes(pattern), `release does not attach ${pattern}`);
  }

  const homebrew = runScripts({ on: {}, jobs: { homebrew: release.jobs.homebrew } });
  assert.match(homebrew, /scripts\/homebrew\.ts "\$GITHUB_REF_NAME" dist\/SHA256SUMS/);
  assert.match(homebrew, /--repo "\$GITHUB_REPOSITORY"/);
});

Deno.test("compat.yml: weekly with --latest, by hand too, read-only, failing visibly", async () => {
  const workflow = await loadWorkflow("compat.yml");
  assert.ok("schedule" in workflow.on && "workflow_dispatch" in workflow.on);
  const text = await Deno.readTextFile(join(REPO_ROOT, ".github/workflows/compat.yml"));
  assert.match(text, /^permissions:\n {2}contents: read$/m, "it can open nothing");
  const run = steps(workflow).find((step) =>
    /deno@[\d.]+ task compat --latest/.test(step.run ?? "")
  );
  assert.ok(run, "runs the matrix against the newest CLIs");
  assert.equal((run as { shell?: string }).shell, "bash", "bash -o pipefail: its exit code counts");
  assert.ok(!/continue-on-error/.test(text), "a failure fails the run");
});

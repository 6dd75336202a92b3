/**
 * How each kind of child gets a turn's images and documents (fake CLIs and HTTP stubs): claude
 * as stream-json content blocks, codex as `--image` files, gemini as `@path` references, the
 * HTTP runners in their API's shape, a command child as a note; files live in the child's own
 * temp dir and are gone when the run ends, aborted or not.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { labelAttachments, type LabelledAttachment } from "../../src/base/attachment.ts";
import { fakeAgent, readFakeLog } from "../fixtures/fakes.ts";
import { pdfBase64, PNG_4X3, sha256 } from "../fixtures/images.ts";
import { cleanBaseEnv, tempDir, testRunner } from "../support/agent_runner.ts";
import {
  anthropicFrames,
  httpAgent,
  openaiFrames,
  sseResponse,
  startStub,
} from "../support/model_api_stub.ts";
import { eventually } from "../support/wait.ts";

const PDF = pdfBase64(2);
const URL_IMAGE = "https://example.com/chart.png";

/** image #1 (base64 PNG), document #1 (base64 PDF), image #2 (a URL). */
const ATTACHMENTS: LabelledAttachment[] = labelAttachments([
  { kind: "image", mediaType: "image/png", source: { type: "base64", data: PNG_4X3 } },
  {
    kind: "document",
    mediaType: "application/pdf",
    source: { type: "base64", data: PDF },
    name: "spec.pdf",
  },
  { kind: "image", mediaType: "image/png", source: { type: "url", url: URL_IMAGE } },
]);

const PROMPT = "[user]\nWhat does [image #1: image/png] show?";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("attachments: codex gets images as --image files in its own temp dir, removed after the run", async () => {
  await using work = await tempDir();
  await using scratch = await tempDir();
  const log = `${scratch.path}/fake.log`;
  {
    const result = await testRunner()(fakeAgent("codex", { log }), PROMPT, {
      role: "child",
      cwd: work.path,
      attachments: ATTACHMENTS,
    });
    assert.equal(result.ok, true, result.error);
    const [entry] = await readFakeLog(log);
    const images = entry.argv.filter((arg) => arg.startsWith("--image="));
    assert.equal(images.length, 1, "only the base64 image is an --image");
    const dir = dirname(images[0].slice("--image=".length));
    assert.match(dir, /council-files-/);
    assert.notEqual(dir, work.path, "never the working directory");
    assert.equal(entry.argv.at(-1), "-", "the prompt still comes from stdin");
    assert.deepEqual(entry.files, [{ path: `${dir}/image-1.png`, sha256: await sha256(PNG_4X3) }]);
    assert.ok(entry.prompt.startsWith(PROMPT));
    assert.match(entry.prompt, /image-1\.png is image #1/);
    assert.match(
      entry.prompt,
      new RegExp(`document #1 \\(spec\\.pdf.*saved at ${dir}/document-1\\.pdf`),
    );
    assert.match(
      entry.prompt,
      /image #2 \(image\/png at https:\/\/example\.com\/chart\.png\).*cannot view/,
    );
    assert.equal(await exists(dir), false, "the files went with the run");
    assert.deepEqual(
      [...Deno.readDirSync(work.path)],
      [],
      "nothing written to the working directory",
    );
  }
});

Deno.test("attachments: a cancelled child's files are gone once the run ends", async () => {
  await using scratch = await tempDir();
  const log = `${scratch.path}/fake.log`;
  const controller = new AbortController();
  const running = testRunner()(fakeAgent("codex", { log, modes: ["hang"] }), PROMPT, {
    role: "child",
    attachments: ATTACHMENTS,
    signal: controller.signal,
  });
  const [entry] = await eventually(async () => {
    const entries = await readFakeLog(log);
    return entries.length ? entries : undefined;
  }, "the child started");
  const image = entry.argv.find((arg) => arg.startsWith("--image="))!.slice("--image=".length);
  assert.equal(await exists(image), true, "the file is there while the child runs");
  controller.abort();
  const result = await running;
  assert.equal(result.aborted, true);
  assert.equal(await exists(dirname(image)), false, "removed after the cancellation");
});

Deno.test("attachments: gemini reads them through @path references it is allowed to read", async () => {
  await using scratch = await tempDir();
  const log = `${scratch.path}/fake.log`;
  const result = await testRunner()(fakeAgent("gemini", { log }), PROMPT, {
    role: "child",
    attachments: ATTACHMENTS,
  });
  assert.equal(result.ok, true, result.error);
  const [entry] = await readFakeLog(log);
  const dir = entry.argv[entry.argv.indexOf("--include-directories") + 1];
  assert.match(dir, /council-files-/);
  assert.match(entry.prompt, new RegExp(`image #1: @${dir}/image-1\\.png`));
  assert.match(entry.prompt, new RegExp(`document #1: @${dir}/document-1\\.pdf`));
  assert.deepEqual(entry.files, [
    { path: `${dir}/image-1.png`, sha256: await sha256(PNG_4X3) },
    { path: `${dir}/document-1.pdf`, sha256: await sha256(PDF) },
  ]);
  assert.match(entry.prompt, /image #2 .*cannot view/, "a URL is no file it can read");
  assert.equal(await exists(dir), false);
});

Deno.test("attachments: claude gets content blocks through --input-format stream-json", async () => {
  await using scratch = await tempDir();
  const log = `${scratch.path}/fake.log`;
  const result = await testRunner()(fakeAgent("claude", { log }), PROMPT, {
    role: "synth",
    attachments: ATTACHMENTS,
  });
  assert.equal(result.ok, true, result.error);
  const [entry] = await readFakeLog(log);
  const format = entry.argv.indexOf("--input-format");
  assert.equal(entry.argv[format + 1], "stream-json");
  assert.equal(entry.prompt, `image #1:\ndocument #1:\nimage #2:\n${PROMPT}`);
  assert.deepEqual(entry.attachments, [
    { type: "image", source: "base64", mediaType: "image/png", sha256: await sha256(PNG_4X3) },
    {
      type: "document",
      source: "base64",
      mediaType: "application/pdf",
      sha256: await sha256(PDF),
    },
    { type: "image", source: "url", url: URL_IMAGE },
  ]);
  assert.equal(entry.files, undefined, "nothing written to files for claude");
});

Deno.test("attachments: a command child gets the placeholder and a note that it cannot see them", async () => {
  await using scratch = await tempDir();
  const log = `${scratch.path}/fake.log`;
  const agent = fakeAgent("command", { log });
  const result = await testRunner()(agent, PROMPT, { role: "child", attachments: ATTACHMENTS });
  assert.equal(result.ok, true, result.error);
  const [entry] = await readFakeLog(log);
  assert.equal(
    entry.prompt,
    `${PROMPT}\n\nNote: the user supplied image #1 (image/png), document #1 (spec.pdf ` +
      `(application/pdf)) and image #2 (image/png at ${URL_IMAGE}), which you cannot view: ` +
      "they were not given to you. Work from the text, and say so where the answer depends on " +
      "what you cannot see.",
  );
  assert.equal(entry.files, undefined);
});

Deno.test("attachments: without attachments every CLI gets the plain prompt as before", async () => {
  await using scratch = await tempDir();
  const log = `${scratch.path}/fake.log`;
  for (const runner of ["claude", "codex", "gemini", "command"] as const) {
    const result = await testRunner()(fakeAgent(runner, { log }), PROMPT, {
      role: "child",
      attachments: [],
    });
    assert.equal(result.ok, true, result.error);
  }
  for (const entry of await readFakeLog(log)) {
    assert.equal(entry.prompt, PROMPT, entry.cli);
    // claude always reads its prompt as a stream-json message (cacheable blocks); only it does.
    assert.equal(entry.argv.includes("--input-format"), entry.cli === "claude", entry.cli);
    assert.ok(!entry.argv.some((a) => a.startsWith("--image") || a === "--include-directories"));
  }
});

const KEYS = cleanBaseEnv({ ANTHROPIC_API_KEY: "sk-ant-test", OPENAI_API_KEY: "sk-test" });

Deno.test("attachments: the anthropic runner sends them as Messages content blocks", async () => {
  await using stub = startStub(() =>
    sseResponse(anthropicFrames(["seen"], { input: 5, output: 1 }))
  );
  const result = await testRunner({ baseEnv: KEYS })(
    httpAgent("anthropic", stub.origin),
    PROMPT,
    { role: "child", attachments: ATTACHMENTS },
  );
  assert.equal(result.ok, true, result.error);
  const body = stub.requests[0].body as { messages: { role: string; content: unknown }[] };
  assert.deepEqual(body.messages, [{
    role: "user",
    content: [
      { type: "text", text: "image #1:" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_4X3 } },
      { type: "text", text: "document #1:" },
      {
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: PDF },
        title: "spec.pdf",
      },
      { type: "text", text: "image #2:" },
      { type: "image", source: { type: "url", url: URL_IMAGE } },
      { type: "text", text: PROMPT },
    ],
  }]);
});

Deno.test("attachments: the openai runner sends image_url parts; a PDF a compatible server cannot take is a note", async () => {
  await using stub = startStub(() => sseResponse(openaiFrames(["seen"], { input: 5, output: 1 })));
  const result = await testRunner({ baseEnv: KEYS })(
    httpAgent("openai", `${stub.origin}/v1`),
    PROMPT,
    { role: "child", attachments: ATTACHMENTS },
  );
  assert.equal(result.ok, true, result.error);
  const body = stub.requests[0].body as { messages: { role: string; content: unknown[] }[] };
  const [message] = body.messages;
  assert.deepEqual(message.content.slice(0, 4), [
    { type: "text", text: "image #1:" },
    { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_4X3}` } },
    { type: "text", text: "image #2:" },
    { type: "image_url", image_url: { url: URL_IMAGE } },
  ]);
  const text = message.content[4] as { type: string; text: string };
  assert.equal(message.content.length, 5);
  assert.ok(text.text.startsWith(PROMPT));
  assert.match(text.text, /document #1 \(spec\.pdf \(application\/pdf\)\), which you cannot view/);
});

Deno.test("attachments: a prepared child has its files while it waits; discarded, they are gone", async () => {
  await using scratch = await tempDir();
  const argvFile = `${scratch.path}/argv`;
  const script = `${scratch.path}/codex`;
  await Deno.writeTextFile(
    script,
    `#!/bin/sh\nprintf '%s\\n' "$@" > ${argvFile}\ncat >/dev/null\n`,
  );
  await Deno.chmod(script, 0o755);
  const agent = fakeAgent("codex", {}, { command: script });
  const prepared = await testRunner().prepare(agent, { role: "child", attachments: ATTACHMENTS });
  const argv = await eventually(async () => {
    const lines = (await Deno.readTextFile(argvFile).catch(() => "")).split("\n");
    return lines.includes("-") ? lines : undefined;
  }, "the prepared child's argv");
  const image = argv.find((arg) => arg.startsWith("--image="))!.slice("--image=".length);
  assert.equal(await sha256(await Deno.readFile(image)), await sha256(PNG_4X3));
  await prepared.discard();
  assert.equal(await exists(dirname(image)), false, "removed with the discarded child");
});

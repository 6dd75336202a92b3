import assert from "node:assert/strict";
import { childFirstRequests } from "./child_startup.ts";
import type { RecordedRequest } from "./fake_vendor/mod.ts";

function request(api: string, prompt: string, arrivedAt: number): RecordedRequest {
  return { api, prompt, arrivedAt } as unknown as RecordedRequest;
}

Deno.test("child start-up: each isolated child's first model request after the turn's start", () => {
  const slot = "/home/u/.local/state/council-gateway/workspaces/s-0123abcd";
  const requests = [
    request("messages", `cwd: ${slot}/child-1 (an earlier turn)`, 50),
    request("responses", `<cwd>${slot}/child-2</cwd>`, 180),
    request("messages", `Working directory: ${slot}/child-1`, 400),
    request("messages", `Working directory: ${slot}/child-1, again`, 900),
    request("messages", `Candidate replies … ${slot}/child-2`, 1000),
    request("gemini", "no isolated path at all", 120),
  ];
  assert.deepEqual(
    Object.fromEntries(childFirstRequests(requests, 100)),
    {
      "child-2": { api: "responses", delayMs: 80 },
      "child-1": { api: "messages", delayMs: 300 },
    },
  );
});

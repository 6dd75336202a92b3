/**
 * The real gateway under a small file limit (`ulimit -n 256`): hundreds of idle connections are
 * refused beyond the cap it derives from the limit, and it keeps running and serving.
 */
import assert from "node:assert/strict";
import { tempDir } from "../support/git_repos.ts";
import { spawnGateway } from "../support/gateway_process.ts";

Deno.test({
  name: "e2e fd limit: 400 idle connections under ulimit -n 256 do not end the gateway",
  ignore: Deno.build.os === "windows",
  async fn() {
    await using scratch = await tempDir("council-e2e-fd-");
    const dir = scratch.path;
    const gateway = await spawnGateway(
      dir,
      {
        headerTimeoutMs: 60_000,
        defaultAgents: [{ runner: "command", model: "m", command: "cat" }],
      },
      {},
      { fileLimit: 256 },
    );
    // A bound, not a timing: the test takes a few seconds.
    const deadline = setTimeout(() => gateway.kill("SIGKILL"), 60_000);
    const conns: Deno.Conn[] = [];
    try {
      const lowered = await gateway.waitForLine(/maxConnections lowered from 256 to (\d+)/);
      const cap = Number(/to (\d+)/.exec(lowered)![1]);
      assert.ok(cap > 0 && cap < 256 / 3, `cap ${cap}`);
      for (let i = 0; i < 400; i++) {
        conns.push(await Deno.connect({ hostname: "127.0.0.1", port: gateway.port }));
      }
      // Those beyond the cap are answered 503 and closed; the rest stay open, idle.
      const buffer = new Uint8Array(512);
      const states = await Promise.all(conns.map((conn) =>
        Promise.race([
          conn.read(buffer).then((n) => n === null ? "closed" : "answered", () => "closed"),
          new Promise<string>((resolve) => setTimeout(() => resolve("open"), 2000)),
        ])
      ));
      const open = states.filter((s) => s === "open").length;
      assert.ok(open <= cap, `${open} connections open, cap ${cap}`);
      assert.ok(open > 0, "the gateway accepted connections up to its cap");
      for (const conn of conns) conn.close();
      conns.length = 0;
      // Still running, and serving once the connections are gone.
      let status = 0;
      for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
        const res = await fetch(`${gateway.origin}/v1/models`).catch(() => undefined);
        status = res?.status ?? 0;
        await res?.body?.cancel();
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(status, 200, gateway.lines().slice(-5).join("\n"));
    } finally {
      for (const conn of conns) conn.close();
      clearTimeout(deadline);
      assert.equal(await gateway.stop(), 0);
    }
  },
});

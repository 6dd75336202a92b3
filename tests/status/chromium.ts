/**
 * Headless Chromium (Debian's `chromium` package) driven over the DevTools protocol: open a page,
 * evaluate script in it, watch the URLs it requests, take a screenshot. Tests skip themselves when
 * no Chromium is installed (`.ci/run` installs it).
 */
import { findOnPath } from "../../src/base/executables.ts";

export const CHROMIUM: string | null = ["chromium", "chromium-browser", "google-chrome"]
  .map((name) => findOnPath(name, (key) => Deno.env.get(key)))
  .find((path) => path !== null) ?? null;

/** The flags every run uses: headless, no sandbox (CI runs as root), nothing phoning home. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

interface Pending {
  resolve: (value: Record<string, unknown>) => void;
  reject: (error: Error) => void;
}

export interface BrowserPage {
  /** Evaluates `expression` in the page (awaiting a promise) and returns its JSON value. */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** Polls `expression` until it is truthy; returns that value. */
  waitFor<T = unknown>(expression: string, what: string, ms?: number): Promise<T>;
  /** Every URL the page has requested so far. */
  requestedUrls(): string[];
  screenshot(path: string): Promise<void>;
}

export interface Browser extends AsyncDisposable {
  open(url: string): Promise<BrowserPage>;
}

async function devtoolsUrl(stderr: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stderr.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`chromium exited before DevTools listened:\n${text}`);
    text += value;
    const match = /DevTools listening on (ws:\/\/\S+)/.exec(text);
    if (match) {
      // Keep draining so Chromium never blocks on a full pipe.
      (async () => {
        while (!(await reader.read()).done) { /* drain */ }
      })().catch(() => {});
      return match[1];
    }
  }
}

/** Starts Chromium with a fresh profile; dispose to close it and remove the profile. */
export async function launchChromium(): Promise<Browser> {
  if (!CHROMIUM) throw new Error("no chromium installed");
  const profile = await Deno.makeTempDir({ prefix: "cg-chromium-" });
  const child = new Deno.Command(CHROMIUM, {
    args: [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, "--remote-debugging-port=0"],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const socket = new WebSocket(await devtoolsUrl(child.stderr));
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error("cannot connect to DevTools"));
  });
  let nextId = 1;
  const pending = new Map<number, Pending>();
  const listeners: ((message: Record<string, unknown>) => void)[] = [];
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    const waiter = pending.get(message.id);
    if (waiter) {
      pending.delete(message.id);
      if (message.error) waiter.reject(new Error(JSON.stringify(message.error)));
      else waiter.resolve(message.result);
    } else listeners.forEach((listen) => listen(message));
  };
  const send = (method: string, params: unknown = {}, sessionId?: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });

  return {
    async open(url: string): Promise<BrowserPage> {
      const { targetId } = await send("Target.createTarget", { url: "about:blank" });
      const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true }) as {
        sessionId: string;
      };
      const urls: string[] = [];
      listeners.push((message) => {
        if (message.sessionId !== sessionId) return;
        if (message.method === "Network.requestWillBeSent") {
          urls.push((message.params as { request: { url: string } }).request.url);
        }
      });
      await send("Network.enable", {}, sessionId);
      await send("Emulation.setDeviceMetricsOverride", {
        width: 1280,
        height: 1000,
        deviceScaleFactor: 1,
        mobile: false,
      }, sessionId);
      await send("Page.navigate", { url }, sessionId);
      const evaluate = async <T>(expression: string): Promise<T> => {
        const reply = await send("Runtime.evaluate", {
          expression,
          returnByValue: true,
          awaitPromise: true,
        }, sessionId) as { result: { value: T }; exceptionDetails?: unknown };
        if (reply.exceptionDetails) {
          throw new Error(`page script failed: ${JSON.stringify(reply.exceptionDetails)}`);
        }
        return reply.result.value;
      };
      return {
        evaluate,
        async waitFor<T>(expression: string, what: string, ms = 15_000): Promise<T> {
          const until = Date.now() + ms;
          for (;;) {
            const value = await evaluate<T>(expression).catch(() => undefined);
            if (value) return value;
            if (Date.now() > until) throw new Error(`timed out waiting in the page for: ${what}`);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        },
        requestedUrls: () => [...urls],
        async screenshot(path: string) {
          const { data } = await send("Page.captureScreenshot", { format: "png" }, sessionId);
          await Deno.writeFile(path, Uint8Array.from(atob(data as string), (c) => c.charCodeAt(0)));
        },
      };
    },
    async [Symbol.asyncDispose]() {
      await send("Browser.close").catch(() => {});
      socket.close();
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 5000);
      await child.status;
      clearTimeout(timer);
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}

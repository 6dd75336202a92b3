/**
 * The real-chain bench's model upstream: the fake vendor API on epoch time, answering each council
 * prompt in the shape the gateway asks for (a draft, a tool proposal, a pick, the final answer)
 * per CLI, after a set delay or at once, or failing on command (an HTTP status such as 500, 503 or
 * 529, or a hang); its records say when each CLI's request arrived and when its reply ended.
 */
import {
  type Answer,
  type FakeVendor,
  realClock,
  type RecordedRequest,
  routeOf,
  startFakeVendor,
} from "../../../tests/support/fake_vendor/mod.ts";

/** Which CLI a request came from, by the protocol it speaks. */
export type Vendor = "claude" | "codex" | "gemini";

/** What the gateway asked, told apart by the section titles of its prompts. */
export type PromptKind = "answer" | "action" | "synthesis" | "selection" | "other";

/** How the upstream treats one vendor's requests. */
export interface Behaviour {
  /** Wait this long before replying (model time). */
  delayMs: number;
  /** Reply with this HTTP status instead of an answer, or never reply ("hang"). */
  fail?: number | "hang";
}

/** One model call as the upstream saw it; times are epoch milliseconds with sub-ms precision. */
export interface StubRecord {
  vendor: Vendor;
  path: string;
  kind: PromptKind;
  /** The CLI process's own session header, when it sends one (tells a child from the synth). */
  session?: string;
  /** The stamping wrapper's pid (its `x-realchain-pid` header), when the request carries it. */
  pid?: number;
  status: number;
  arrivedAt: number;
  /** When the last byte of the reply was handed to the socket (NaN while hanging). */
  repliedAt: number;
}

export interface ChainStub {
  origin: string;
  /** The model calls so far, in arrival order. */
  readonly records: StubRecord[];
  /** Sets how `vendor`'s requests are treated from now on. */
  behave(vendor: Vendor, behaviour: Behaviour): void;
  close(): Promise<void>;
}

/** Epoch time in ms, with performance.now()'s precision. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

/** The kind of council prompt a request body carries (matched on the raw JSON text). */
export function promptKind(body: string): PromptKind {
  if (body.includes("=== Candidate replies ===")) return "synthesis";
  if (body.includes("=== Proposed next steps ===")) return "selection";
  if (body.includes("=== Tools the assistant may call ===")) return "action";
  if (body.includes("=== Your task ===") || body.includes("=== Conversation")) return "answer";
  return "other";
}

/** The file each vendor proposes to read on an action turn: three different proposals. */
export function proposedFile(vendor: Vendor): string {
  return `notes-${vendor}.txt`;
}

/** The reply text for a prompt: a draft, a proposal, a pick, or the final answer. */
export function replyText(vendor: Vendor, kind: PromptKind): string {
  switch (kind) {
    case "action":
      return JSON.stringify({
        kind: "tool",
        name: "Read",
        input: { file_path: `/tmp/${proposedFile(vendor)}` },
      });
    case "selection":
      return '{"choose": 1}';
    case "synthesis":
      return "Final answer from the synthesizer.";
    default:
      return `Draft answer from ${vendor}.`;
  }
}

const VENDORS_BY_API: Readonly<Record<string, Vendor>> = {
  messages: "claude",
  responses: "codex",
  gemini: "gemini",
};

/** The vendor a request's method and path belong to, or undefined. */
export function vendorOf(method: string, path: string): Vendor | undefined {
  const route = routeOf(method, path);
  return route ? VENDORS_BY_API[route.api] : undefined;
}

/** The vendor of a recorded model call, or undefined for other requests. */
export function vendorOfRequest(request: RecordedRequest): Vendor | undefined {
  return VENDORS_BY_API[request.api];
}

function recordOf(request: RecordedRequest, vendor: Vendor): StubRecord {
  const pid = Number(request.headers.get("x-realchain-pid")) || undefined;
  return {
    vendor,
    path: request.path,
    kind: promptKind(request.raw),
    session: request.headers.get("x-claude-code-session-id") ??
      request.headers.get("session-id") ?? undefined,
    pid,
    status: request.status,
    arrivedAt: request.arrivedAt,
    repliedAt: request.repliedAt,
  };
}

/** What the upstream answers `request` with under `behaviour`. */
function answerOf(vendor: Vendor, request: RecordedRequest, behaviour: Behaviour): Answer {
  if (behaviour.fail === "hang") return { hang: true };
  const message = `realchain upstream: failing with ${behaviour.fail} on command`;
  if (typeof behaviour.fail === "number") {
    return { fail: { status: behaviour.fail, message }, delayMs: behaviour.delayMs };
  }
  return { text: replyText(vendor, promptKind(request.raw)), delayMs: behaviour.delayMs };
}

/** Starts the upstream on a free loopback port. */
export function startChainStub(initial: Partial<Record<Vendor, Behaviour>> = {}): ChainStub {
  const behaviours = new Map<Vendor, Behaviour>();
  for (const vendor of ["claude", "codex", "gemini"] as const) {
    behaviours.set(vendor, initial[vendor] ?? { delayMs: 0 });
  }
  const vendor: FakeVendor = startFakeVendor({
    clock: { now: epochNow, sleep: realClock.sleep },
    answer: (request) => {
      const which = vendorOfRequest(request);
      return which ? answerOf(which, request, behaviours.get(which)!) : undefined;
    },
  });
  return {
    origin: vendor.origin,
    get records() {
      return vendor.requests.flatMap((r) => {
        const which = vendorOfRequest(r);
        return which ? [recordOf(r, which)] : [];
      });
    },
    behave: (which, behaviour) => behaviours.set(which, behaviour),
    close: () => vendor.close(),
  };
}

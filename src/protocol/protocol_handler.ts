/**
 * The contract between the HTTP server and a protocol: a parsed JSON body in, a Response out.
 */
import type { Context } from "hono";
import type { Clock } from "../base/clock.ts";
import type { RunTurn } from "../council/types.ts";
import type { WorkspacePolicy } from "../council/request/workdir.ts";
import type { AttachmentPolicy } from "./attachment_policy.ts";

export interface ProtocolDeps {
  runTurn: RunTurn;
  /** Config `streamProgress`: whether streaming replies carry the progress channel. */
  streamProgress: boolean;
  /** Keep-alive interval for SSE (`ping` / `response.in_progress`). */
  keepAliveMs: number;
  /** Forward the host's provider credentials to children (config `passApiKeys`). */
  passApiKeys: boolean;
  /** The gateway's own inbound token; never forwarded as a provider credential. */
  gatewayToken?: string;
  /** Limits on images and documents, and whether URL sources are fetched (default: config's). */
  attachments?: AttachmentPolicy;
  /** Where children may work (config `workspaceRoots`). */
  workspace?: WorkspacePolicy;
  clock?: Clock;
}

/** Handles one request whose body the server already read and parsed as JSON. */
export type ProtocolHandler = (c: Context, body: unknown) => Response | Promise<Response>;

export type ProtocolFactory = (deps: ProtocolDeps) => ProtocolHandler;

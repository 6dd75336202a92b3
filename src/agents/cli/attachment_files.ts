/**
 * Writes the attachments a CLI child reads from files into a fresh temporary directory of its
 * own (never its working directory), and removes that directory with everything in it.
 */
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { attachmentFileName, type LabelledAttachment } from "../../base/attachment.ts";
import type { AgentConfig } from "../../config/mod.ts";
import type { Adapter, AgentPrompt, AttachmentDelivery } from "../types.ts";
import { promptText } from "../prompt_text.ts";
import { unseenNote, withNotes } from "../attachment_notes.ts";

/** The delivery of a run's attachments to a child of `adapter`; undefined when there are none. */
export async function deliverAttachments(
  adapter: Adapter,
  attachments: readonly LabelledAttachment[] | undefined,
): Promise<AttachmentDelivery | undefined> {
  if (!attachments?.length) return undefined;
  const wanted = attachments.filter((a) => a.source.type === "base64" && adapter.takesFile?.(a));
  if (wanted.length === 0) return { attachments, files: new Map() };
  const dir = await Deno.makeTempDir({ prefix: "council-files-" });
  const files = new Map<string, string>();
  try {
    for (const attachment of wanted) {
      if (attachment.source.type !== "base64") continue;
      const path = join(dir, attachmentFileName(attachment));
      await Deno.writeFile(path, Buffer.from(attachment.source.data, "base64"), { mode: 0o600 });
      files.set(attachment.label, path);
    }
  } catch (error) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  }
  return { attachments, files, dir };
}

/** Removes the delivery's directory, if it made one. */
export async function removeDelivery(delivery: AttachmentDelivery | undefined): Promise<void> {
  if (delivery?.dir) await Deno.remove(delivery.dir, { recursive: true });
}

/** What goes to the child's stdin: the adapter's shape, else the prompt and what it cannot see. */
export function stdinFor(
  adapter: Adapter,
  agent: AgentConfig,
  prompt: AgentPrompt,
  delivery: AttachmentDelivery | undefined,
): string {
  const structured = adapter.structuredStdin?.(agent, prompt, delivery);
  if (structured !== undefined) return structured;
  const text = promptText(prompt);
  if (!delivery) return text;
  return adapter.stdin
    ? adapter.stdin(text, delivery)
    : withNotes(text, unseenNote(delivery.attachments));
}

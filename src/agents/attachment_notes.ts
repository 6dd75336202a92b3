/**
 * The words a child's prompt gets about the turn's attachments: which ones it cannot see, and
 * where the ones given to it as files are.
 */
import { basename } from "node:path";
import { describeAttachment, type LabelledAttachment } from "../base/attachment.ts";
import type { AttachmentDelivery } from "./types.ts";

function list(items: readonly string[]): string {
  return items.length <= 1
    ? items.join("")
    : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** A note naming attachments the child is not given ("" when there are none). */
export function unseenNote(attachments: readonly LabelledAttachment[]): string {
  if (attachments.length === 0) return "";
  const named = attachments.map((a) => `${a.label} (${describeAttachment(a)})`);
  const they = attachments.length === 1 ? "it was" : "they were";
  return `Note: the user supplied ${list(named)}, which you cannot view: ${they} not given to ` +
    "you. Work from the text, and say so where the answer depends on what you cannot see.";
}

/** The prompt followed by the given paragraphs (empty ones left out). */
export function withNotes(prompt: string, ...notes: string[]): string {
  const added = notes.filter((note) => note !== "");
  return added.length ? `${prompt}\n\n${added.join("\n\n")}` : prompt;
}

/**
 * The prompt and notes for a CLI given images as files on its command line: which file is which
 * image, where each document was saved, and what it is not given.
 */
export function withFileNotes(prompt: string, delivery: AttachmentDelivery): string {
  const files = inFiles(delivery);
  const images = files.filter((f) => f.attachment.kind === "image").map((f) =>
    `${basename(f.path)} is ${f.attachment.label}`
  );
  const documents = files.filter((f) => f.attachment.kind === "document").map((f) =>
    `${f.attachment.label} (${describeAttachment(f.attachment)}) is saved at ${f.path}`
  );
  return withNotes(
    prompt,
    images.length ? `The images attached to this message: ${images.join(", ")}.` : "",
    documents.length ? `${documents.join("; ")}: read it there if you need it.` : "",
    unseenNote(notInFiles(delivery)),
  );
}

/** Attachments of the delivery that were not written to a file for the child. */
export function notInFiles(delivery: AttachmentDelivery): LabelledAttachment[] {
  return delivery.attachments.filter((a) => !delivery.files.has(a.label));
}

/** Attachments that were written to a file, with its path. */
export function inFiles(
  delivery: AttachmentDelivery,
): { attachment: LabelledAttachment; path: string }[] {
  return delivery.attachments.flatMap((attachment) => {
    const path = delivery.files.get(attachment.label);
    return path ? [{ attachment, path }] : [];
  });
}

/**
 * The text and the attachments of one transcript entry as a protocol parser gathers them,
 * block by block, in order.
 */
import type { Attachment } from "../base/attachment.ts";

/** What one block or part adds to its entry. */
export type BlockPart = { attachment: Attachment } | { text: string };

export class EntryParts {
  texts: string[] = [];
  attachments: Attachment[] = [];

  add(parts: readonly BlockPart[]): void {
    for (const part of parts) {
      if ("text" in part) this.texts.push(part.text);
      else this.attachments.push(part.attachment);
    }
  }

  get empty(): boolean {
    return this.texts.length === 0 && this.attachments.length === 0;
  }

  /** `{ text }` plus the attachments, when there are any. */
  get fields(): { text: string; attachments?: Attachment[] } {
    const text = this.texts.join("\n");
    return this.attachments.length ? { text, attachments: this.attachments } : { text };
  }
}

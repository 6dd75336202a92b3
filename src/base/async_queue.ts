/**
 * An unbounded async queue: producers push without waiting, one consumer iterates until close.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #closed = false;
  #wake: (() => void) | undefined;

  push(item: T): void {
    if (this.#closed) return;
    this.#items.push(item);
    this.#signal();
  }

  /** No more items; the iterator ends once the buffered ones are taken. */
  close(): void {
    this.#closed = true;
    this.#signal();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      while (this.#items.length) yield this.#items.shift()!;
      if (this.#closed) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/**
 * A byte budget shared by the request bodies in flight, so that concurrent large requests
 * cannot together take the gateway's memory: a body is read only once its size fits.
 */

/** Gives the bytes back; calling it again does nothing. */
type Release = () => void;

export class BodyBudget {
  /** Bytes in flight at most; a reload may change it (bodies in flight keep their bytes). */
  capacity: number;
  #inUse = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** Bytes reserved now. */
  get inUse(): number {
    return this.#inUse;
  }

  /**
   * Reserves `bytes`, or returns null when they do not fit beside the bodies in flight. With
   * nothing in flight any one body fits, so a budget below the body limit cannot lock it out.
   */
  reserve(bytes: number): Release | null {
    if (this.#inUse > 0 && this.#inUse + bytes > this.capacity) return null;
    this.#inUse += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inUse -= bytes;
    };
  }
}

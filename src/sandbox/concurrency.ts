// A counting semaphore that hands out numbered slots (0 .. capacity-1): at most `capacity`
// sandboxed runs execute at once.

export class SlotLimiter {
  private readonly free: number[];
  private readonly waiting: Array<(slot: number) => void> = [];

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`concurrency must be a positive integer, got ${capacity}`);
    this.free = Array.from({ length: capacity }, (_, i) => capacity - 1 - i);
  }

  /** Runs `task` once a slot is free, passing it the slot number; the slot is released when it settles. */
  async run<T>(task: (slot: number) => Promise<T>): Promise<T> {
    const slot = await this.acquire();
    try {
      return await task(slot);
    } finally {
      this.release(slot);
    }
  }

  get inUse(): number {
    return this.capacity - this.free.length;
  }

  private acquire(): Promise<number> {
    const slot = this.free.pop();
    if (slot !== undefined) return Promise.resolve(slot);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(slot: number): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else this.free.push(slot);
  }
}

// Large float32 buffers carved out of the SIMD kernels' WebAssembly memory, so that the kernels
// (wasm/simd.ts) read and write them in place instead of copying them in and out, while BLAS
// (through koffi) and JavaScript see ordinary Float32Arrays.
//
// The memory is sized once, when the kernels are instantiated, and never grown afterwards:
// growing a WebAssembly memory detaches its ArrayBuffer, which would empty every view handed out.
// When the arena is full, buffer-pool.ts falls back to shared buffers of its own (the kernels then copy).
//
// Blocks come in size classes (eight per power of two, so a pass with a slightly different token
// count reuses the previous pass's blocks); a released block goes back to its class's free list, and a
// request whose class has none free takes the smallest free block of up to twice its size.
// A view that is dropped without being released (a retained forward whose backward never came)
// is reclaimed through a FinalizationRegistry once the garbage collector frees it.

/** Smallest block (small buffers take a whole one). */
const MIN_BLOCK_BYTES = 1 << 16;

/** Bytes of the size class holding `bytes`: a multiple of 1/8 of the next-lower power of two. */
export function sizeClassBytes(bytes: number): number {
  const b = Math.max(bytes, MIN_BLOCK_BYTES);
  const step = 2 ** (Math.floor(Math.log2(b)) - 3);
  return Math.ceil(b / step) * step;
}

export class WasmArena {
  private next: number;
  private readonly free = new Map<number, number[]>();
  private readonly freeOffsets = new Set<number>();
  /** Start offset → class bytes of every block handed out and not yet returned. */
  private readonly live = new Map<number, number>();
  /**
   * The view each block was handed out as (weakly: dropping it must let it be collected). A WeakMap
   * rather than a WeakRef per block: WeakRefs stay alive to the end of the current task, and a pass
   * takes hundreds of small blocks (measured: the heap then kept growing for 1,500 steps).
   */
  private readonly owner = new WeakMap<Float32Array, number>();
  private readonly registry = new FinalizationRegistry<number>((offset) => this.reclaim(offset));

  /** The memory's buffer, taken once: the memory is never grown, so it stays the same. */
  private readonly buf: ArrayBufferLike;

  constructor(memory: WebAssembly.Memory, start: number, private readonly end: number) {
    this.next = start;
    this.buf = memory.buffer;
  }

  /** A view of n floats at the start of a free block (contents unspecified), or null when the arena is full. */
  take(n: number): Float32Array | null {
    let bytes = sizeClassBytes(n * 4);
    let offset = this.free.get(bytes)?.pop();
    if (offset === undefined) {
      // A free block of a larger class, up to twice the size, before carving a new one: passes whose
      // token counts vary (every RL micro-batch differs) then reuse each other's blocks instead of
      // filling the arena with one class each.
      const larger = this.smallestFreeClass(bytes, 2 * bytes);
      if (larger !== null) {
        bytes = larger;
        offset = this.free.get(bytes)!.pop()!;
      }
    }
    if (offset === undefined) {
      if (this.next + bytes > this.end) return null;
      offset = this.next;
      this.next += bytes;
    } else this.freeOffsets.delete(offset);
    const view = new Float32Array(this.buf, offset, n);
    this.live.set(offset, bytes);
    this.owner.set(view, offset);
    this.registry.register(view, offset, view);
    return view;
  }

  /** The smallest class in (above, atMost] with a free block, or null. */
  private smallestFreeClass(above: number, atMost: number): number | null {
    let best: number | null = null;
    for (const [bytes, list] of this.free) {
      if (list.length > 0 && bytes > above && bytes <= atMost && (best === null || bytes < best)) best = bytes;
    }
    return best;
  }

  /**
   * Whether b is a view handed out by take (not a view into one): then its length rounded up to a
   * multiple of 4 floats is still inside its block (class sizes are multiples of 16 bytes), so
   * four-lane kernels may process the rounded length.
   */
  isBlock(b: Float32Array): boolean {
    return b.buffer === this.buf && this.owner.get(b) === b.byteOffset;
  }

  /** Returns b's block to its free list. False when b is not a view handed out by take; throws when released twice. */
  release(b: Float32Array): boolean {
    if (b.buffer !== this.buf) return false;
    if (this.freeOffsets.has(b.byteOffset)) throw new Error('releaseBuffers: buffer released twice');
    if (!this.isBlock(b)) return false;
    this.registry.unregister(b);
    this.owner.delete(b);
    this.reclaim(b.byteOffset);
    return true;
  }

  private reclaim(offset: number): void {
    const bytes = this.live.get(offset);
    if (bytes === undefined) return;
    this.live.delete(offset);
    this.freeOffsets.add(offset);
    const list = this.free.get(bytes);
    if (list) list.push(offset);
    else this.free.set(bytes, [offset]);
  }

  /** Bytes handed out and not returned, and bytes ever carved from the arena (reports and tests). */
  usage(): { liveBytes: number; carvedBytes: number; capacityBytes: number } {
    let liveBytes = 0;
    for (const bytes of this.live.values()) liveBytes += bytes;
    return { liveBytes, carvedBytes: this.next, capacityBytes: this.end };
  }
}

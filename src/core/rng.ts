// Seeded randomness for every layer above the engine. Every step's sampling seed is derived from
// (run seed, step) alone, so a resumed run draws exactly what an uninterrupted one would have,
// whatever happened before; the demo draws its data, noise and split from --seed alone; the maths
// verifier's symbolic checks draw the same points every run.
//
// The engine's sampler keeps its own generator (xoshiro128**, src/engine/embedded/sampling.ts)
// behind the engine interface: nothing above the engine imports engine internals, and the engine
// imports nothing from here.

/** mulberry32: a small, fast 32-bit generator returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 31-bit seed mixed from integers (splitmix-style finaliser), e.g. deriveSeed(runSeed, step, stream). */
export function deriveSeed(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x85ebca6b) >>> 0;
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h ^= h >>> 16;
  }
  return h & 0x7fffffff;
}

/** Seeded draws (picks, shuffles, integers) over mulberry32: the demo's data, noise and split. */
export class Rng {
  readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Fisher–Yates, in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}

// Splitting a batch, for every layer that trains on one:
//   groupBy       items by a key, in order of first appearance (per adapter, per critic, per group)
//   microBatches  items into micro-batches capped in tokens (memory only: results do not depend on the cap)
//   minibatches   deterministic minibatches for the actor's and the critic's updates: a seeded shuffle of the
//                 batch dealt round-robin into `count` minibatches (empty ones dropped), so a step's split depends
//                 only on (run seed, step, epoch) and a resumed run splits exactly as an uninterrupted one.
import { mulberry32 } from './rng.ts';

export function minibatches<T>(items: readonly T[], count: number, seed: number): T[][] {
  if (count <= 1) return [[...items]];
  const rng = mulberry32(seed);
  const order = items.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return Array.from({ length: count }, (_, m) => order.filter((_, r) => r % count === m).map((i) => items[i]!)).filter((mb) => mb.length > 0);
}

export function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    let list = out.get(k);
    if (!list) out.set(k, (list = []));
    list.push(item);
  }
  return out;
}

/** Groups items into micro-batches whose summed token counts stay within the cap (an oversized item goes alone). */
export function microBatches<T>(items: T[], tokens: (item: T) => number, cap: number): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let used = 0;
  for (const item of items) {
    const n = tokens(item);
    if (current.length > 0 && used + n > cap) {
      out.push(current);
      current = [];
      used = 0;
    }
    current.push(item);
    used += n;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/**
 * Minibatches of whole episodes: a seeded shuffle of the `episodes` episode indices dealt in runs of
 * `size`, giving ceil(episodes / size) minibatches (empty ones dropped); each item goes with its
 * episode (`episodeOf`), so an episode is never split. One minibatch when size ≥ episodes.
 */
export function episodeMinibatches<T>(items: readonly T[], episodeOf: (item: T) => number, episodes: number, size: number, seed: number): T[][] {
  const count = Math.max(1, Math.ceil(episodes / Math.max(1, size)));
  if (count === 1) return [[...items]];
  const order = Array.from({ length: episodes }, (_, i) => i);
  const rng = mulberry32(seed);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const slot = new Map(order.map((e, pos) => [e, Math.floor(pos / size)]));
  return Array.from({ length: count }, (_, m) => items.filter((item) => slot.get(episodeOf(item)) === m)).filter((mb) => mb.length > 0);
}

// Deterministic minibatches for the actor's and the critic's updates: a seeded shuffle of the
// batch dealt round-robin into `count` minibatches (empty ones dropped), so a step's split depends
// only on (run seed, step, epoch) and a resumed run splits exactly as an uninterrupted one.
import { mulberry32 } from '../rng.ts';

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

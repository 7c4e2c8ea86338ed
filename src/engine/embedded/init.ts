// Seeded initialisation of base weights over the sampler's generator (sampling.ts: Rng), so
// `createEngine(config, {seed})` is reproducible (new adapters and critics: ../trainables.ts).
import { Rng } from './sampling.ts';

/** N(0, std²), both Box–Muller outputs used (Rng.fillNormal). */
export function fillNormal(rng: Rng, out: Float32Array, std: number): Float32Array {
  return rng.fillNormal(out, 0, std);
}

// Seeded initialisation helpers over the sampler's generator (sampling.ts: Rng), so
// `createEngine(config, {seed})` and `createAdapter(name, lora, seed)` are reproducible.
import { Rng } from './sampling.ts';

/** N(0, std²), both Box–Muller outputs used (Rng.fillNormal). */
export function fillNormal(rng: Rng, out: Float32Array, std: number): Float32Array {
  return rng.fillNormal(out, 0, std);
}

/** U(−bound, bound). */
export function fillUniform(rng: Rng, out: Float32Array, bound: number): Float32Array {
  for (let i = 0; i < out.length; i++) out[i] = (2 * rng.nextUint32() / 4294967296 - 1) * bound;
  return out;
}

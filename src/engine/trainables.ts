// What an engine trains besides its base, as every engine holds it between a file (hf/trainable-folders.ts)
// and its own tensors: LoRA adapters and critics, and the seeded initialisers of new ones.
//
//   LoRA adapter: for each wrapped linear module of each layer,
//     y = x Wᵀ + b + (alpha / rank) · (x Aᵀ) Bᵀ,   A [rank, in], B [out, rank]   (PEFT's LoraLayer).
//   Critic (spec section 4): per-token values from the final normed hidden state, either
//     lora-critic: its own LoRA adapter over the base + a linear head hidden → 1, or
//     mlp:         the frozen base + an MLP head hidden → h1 → … → 1 with ReLU between layers.
//
// The containers are generic in the tensor `T` an engine keeps them in, made by the engine's
// MakeTensor: the embedded engine's parameters (embedded/param.ts: shared memory and a gradient), the
// torch engine's plain host tensors (hostTensor), which it sends to its worker.
//
// The initialisers draw from the embedded sampler's generator (embedded/sampling.ts: Rng,
// xoshiro128**), so that the same seed gives the same starting weights in every engine. That import
// and stop-strings.ts's findStopString are the engine level's only imports from an engine's folder,
// both from sampling.ts, which is to give them up to the engine level (issue 17);
// test/engine/engine-boundary.test.ts holds the list.
import type { LinearModule, LoraConfig, ModelConfig, ValueHeadSpec } from './types.ts';
import type { HostTensor } from './hf/safetensors.ts';
import { linearShape } from './hf/linear-shape.ts';
import { Rng } from './embedded/sampling.ts';

/** An engine's tensor of `shape`: zeros, or `data` (which holds exactly the shape's count of values). */
export type MakeTensor<T extends HostTensor> = (shape: number[], data?: Float32Array) => T;

/** The plain tensor: `data` as it is, or new zeros. */
export function hostTensor(shape: number[], data?: Float32Array): HostTensor {
  const size = shape.reduce((a, b) => a * b, 1);
  if (data && data.length !== size) throw new Error(`tensor of shape [${shape.join(', ')}] needs ${size} values, got ${data.length}`);
  return { shape, data: data ?? new Float32Array(size) };
}

// ---- LoRA adapters -------------------------------------------------------------------------

export interface LoraModule<T extends HostTensor = HostTensor> {
  A: T;
  B: T;
}

export interface LoraAdapter<T extends HostTensor = HostTensor> {
  config: LoraConfig;
  /** alpha / rank. */
  scale: number;
  /** layers[i][module] for the wrapped modules. */
  layers: Partial<Record<LinearModule, LoraModule<T>>>[];
}

/**
 * A new adapter as PEFT initialises one: A ~ kaiming_uniform(a=√5), i.e. U(−1/√in, 1/√in), and B = 0,
 * so the adapted model starts equal to the base.
 */
export function createLora<T extends HostTensor>(cfg: ModelConfig, lora: LoraConfig, seed: number, make: MakeTensor<T>): LoraAdapter<T> {
  if (!(lora.rank >= 1) || !Number.isInteger(lora.rank)) throw new Error(`LoRA rank must be a positive integer, got ${lora.rank}`);
  const rng = new Rng(seed);
  const layers: LoraAdapter<T>['layers'] = [];
  for (let i = 0; i < cfg.numHiddenLayers; i++) {
    const layer: Partial<Record<LinearModule, LoraModule<T>>> = {};
    for (const m of lora.targetModules) {
      const [out, inF] = linearShape(cfg, m);
      const A = make([lora.rank, inF]);
      fillUniform(rng, A.data, 1 / Math.sqrt(inF));
      layer[m] = { A, B: make([out, lora.rank]) };
    }
    layers.push(layer);
  }
  return { config: { ...lora, targetModules: [...lora.targetModules] }, scale: lora.alpha / lora.rank, layers };
}

// ---- critics -------------------------------------------------------------------------------

export interface DenseLayer<T extends HostTensor = HostTensor> {
  W: T; // [out, in]
  b: T; // [out]
}

/** The critic's head on the final normed hidden state: hidden → h1 → … → 1, ReLU between layers. */
export interface ValueHead<T extends HostTensor = HostTensor> {
  layers: DenseLayer<T>[];
}

export interface Critic<T extends HostTensor = HostTensor> {
  spec: ValueHeadSpec;
  lora: LoraAdapter<T> | null;
  head: ValueHead<T>;
}

/**
 * A new head, each layer initialised as torch.nn.Linear does (W, b ~ U(−1/√in, 1/√in)); with
 * `zeroLastLayer` the last layer is then set to 0 (the other layers' draws are unchanged, so the two
 * initialisations differ in that layer only).
 */
export function createValueHead<T extends HostTensor>(input: number, hidden: number[], seed: number, make: MakeTensor<T>, zeroLastLayer = false): ValueHead<T> {
  const rng = new Rng(seed);
  const widths = [input, ...hidden, 1];
  const layers: DenseLayer<T>[] = [];
  for (let i = 0; i + 1 < widths.length; i++) {
    const inF = widths[i]!, out = widths[i + 1]!;
    const bound = 1 / Math.sqrt(inF);
    const W = make([out, inF]), b = make([out]);
    fillUniform(rng, W.data, bound);
    fillUniform(rng, b.data, bound);
    layers.push({ W, b });
  }
  if (zeroLastLayer) {
    const last = layers[layers.length - 1]!;
    last.W.data.fill(0);
    last.b.data.fill(0);
  }
  return { layers };
}

/** A new critic: a LoRA critic's adapter from `seed` and its head from seed + 1; an MLP critic's head from `seed`. */
export function createCritic<T extends HostTensor>(cfg: ModelConfig, spec: ValueHeadSpec, seed: number, make: MakeTensor<T>): Critic<T> {
  if (spec.kind === 'lora-critic') {
    return { spec, lora: createLora(cfg, spec.lora, seed, make), head: createValueHead(cfg.hiddenSize, [], seed + 1, make, spec.zeroLastLayer) };
  }
  if (spec.hidden.some((h) => !(Number.isInteger(h) && h >= 1))) throw new Error(`MLP value head widths must be positive integers, got [${spec.hidden.join(', ')}]`);
  return { spec, lora: null, head: createValueHead(cfg.hiddenSize, spec.hidden, seed, make, spec.zeroLastLayer) };
}

/** U(−bound, bound). */
function fillUniform(rng: Rng, out: Float32Array, bound: number): Float32Array {
  for (let i = 0; i < out.length; i++) out[i] = (2 * rng.nextUint32() / 4294967296 - 1) * bound;
  return out;
}

// A LoRA adapter merged into its base's weights: for each target module of each layer,
// W' = W + (alpha / r) · B · A (PEFT's merge for the plain LoRA the engine trains; A: [r, in],
// B: [out, r], W: [out, in]). Each merged weight is float32; its sum over the rank is formed in double
// precision and rounded once. The adapter and the base files are read with the engine's own readers,
// so an adapter that does not fit the base is refused as loading it would be.
import type { LinearModule } from '../engine/types.ts';
import { loadHfWeights, readHfConfig, readPeftAdapter, type HostTensor, type PeftAdapter } from '../engine/index.ts';

export { readHfConfig, saveHfWeights, writeGenerationConfig, type HostTensor } from '../engine/index.ts';

const ATTENTION: ReadonlySet<LinearModule> = new Set(['q_proj', 'k_proj', 'v_proj', 'o_proj']);

/** The Hugging Face name of a linear module's weight. */
export function linearWeightName(layer: number, module: LinearModule): string {
  return `model.layers.${layer}.${ATTENTION.has(module) ? 'self_attn' : 'mlp'}.${module}.weight`;
}

/** Adds scale · B · A to W (row-major [out, in]) in place. */
export function addLowRank(W: HostTensor, B: HostTensor, A: HostTensor, scale: number): void {
  const [out, inF] = W.shape as [number, number];
  const r = A.shape[0]!;
  if (B.shape[0] !== out || B.shape[1] !== r || A.shape[1] !== inF) {
    throw new Error(`LoRA factors B ${JSON.stringify(B.shape)} and A ${JSON.stringify(A.shape)} do not fit a weight of shape ${JSON.stringify(W.shape)}`);
  }
  const sum = new Float64Array(inF);
  for (let o = 0; o < out; o++) {
    sum.fill(0);
    for (let k = 0; k < r; k++) {
      const b = B.data[o * r + k]!;
      if (b === 0) continue;
      const row = k * inF;
      for (let i = 0; i < inF; i++) sum[i]! += b * A.data[row + i]!;
    }
    const w = o * inF;
    for (let i = 0; i < inF; i++) W.data[w + i] = W.data[w + i]! + scale * sum[i]!;
  }
}

export interface MergedWeights {
  tensors: Map<string, HostTensor>;
  adapter: PeftAdapter;
  /** The weights that changed, by Hugging Face name. */
  merged: string[];
}

/** The base folder's weights (float32) with the adapter folder's LoRA merged in. */
export function mergeAdapterIntoBase(baseDir: string, adapterDir: string): MergedWeights {
  const config = readHfConfig(baseDir);
  const adapter = readPeftAdapter(adapterDir, config);
  const tensors = loadHfWeights(baseDir);
  const scale = adapter.config.alpha / adapter.config.rank;
  const merged: string[] = [];
  for (const w of adapter.weights) {
    const name = linearWeightName(w.layer, w.module);
    const W = tensors.get(name);
    if (!W) throw new Error(`${baseDir}: no tensor ${name} for the adapter's ${w.module} of layer ${w.layer}`);
    addLowRank(W, w.B, w.A, scale);
    merged.push(name);
  }
  return { tensors, adapter, merged };
}

// A LoRA adapter over the frozen base: for each wrapped linear module of each layer,
//   y = x Wᵀ + b + (alpha / rank) · (x Aᵀ) Bᵀ,   A [rank, in], B [out, rank]   (PEFT's LoraLayer).
import type { LinearModule, LoraConfig, ModelConfig } from '../types.ts';
import { param, type Param } from './param.ts';
import { Rng } from './sampling.ts';
import { fillUniform } from './init.ts';
import { linearShape } from '../hf/linear-shape.ts';

export interface LoraModule {
  A: Param;
  B: Param;
}

export interface LoraAdapter {
  config: LoraConfig;
  /** alpha / rank. */
  scale: number;
  /** layers[i][module] for the wrapped modules. */
  layers: Partial<Record<LinearModule, LoraModule>>[];
}

/**
 * A new adapter as PEFT initialises one: A ~ kaiming_uniform(a=√5), i.e. U(−1/√in, 1/√in), and B = 0,
 * so the adapted model starts equal to the base.
 */
export function createLora(cfg: ModelConfig, lora: LoraConfig, seed: number): LoraAdapter {
  if (!(lora.rank >= 1) || !Number.isInteger(lora.rank)) throw new Error(`LoRA rank must be a positive integer, got ${lora.rank}`);
  const rng = new Rng(seed);
  const layers: LoraAdapter['layers'] = [];
  for (let i = 0; i < cfg.numHiddenLayers; i++) {
    const layer: Partial<Record<LinearModule, LoraModule>> = {};
    for (const m of lora.targetModules) {
      const [out, inF] = linearShape(cfg, m);
      const A = param([lora.rank, inF]);
      fillUniform(rng, A.data, 1 / Math.sqrt(inF));
      layer[m] = { A, B: param([out, lora.rank]) };
    }
    layers.push(layer);
  }
  return { config: { ...lora, targetModules: [...lora.targetModules] }, scale: lora.alpha / lora.rank, layers };
}

export function loraParams(a: LoraAdapter): Param[] {
  const out: Param[] = [];
  for (const layer of a.layers) for (const m of Object.values(layer)) out.push(m.A, m.B);
  return out;
}

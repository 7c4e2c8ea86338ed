// A critic (spec section 4): per-token values from the final normed hidden state, either
//   lora-critic: its own LoRA adapter over the base + a linear head hidden → 1, or
//   mlp:         the frozen base + an MLP head hidden → h1 → … → 1 with ReLU between layers.
import type { ModelConfig, ValueHeadSpec } from '../types.ts';
import { createLora, loraParams, type LoraAdapter } from './lora.ts';
import { createValueHead, valueHeadParams, type ValueHead } from './value-head.ts';
import type { Param } from './param.ts';

export interface Critic {
  spec: ValueHeadSpec;
  lora: LoraAdapter | null;
  head: ValueHead;
}

export function createCritic(cfg: ModelConfig, spec: ValueHeadSpec, seed: number): Critic {
  if (spec.kind === 'lora-critic') {
    return { spec, lora: createLora(cfg, spec.lora, seed), head: createValueHead(cfg.hiddenSize, [], seed + 1) };
  }
  if (spec.hidden.some((h) => !(Number.isInteger(h) && h >= 1))) throw new Error(`MLP value head widths must be positive integers, got [${spec.hidden.join(', ')}]`);
  return { spec, lora: null, head: createValueHead(cfg.hiddenSize, spec.hidden, seed) };
}

export function criticParams(c: Critic): Param[] {
  return [...(c.lora ? loraParams(c.lora) : []), ...valueHeadParams(c.head)];
}

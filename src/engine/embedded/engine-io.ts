// Files of the embedded engine: base checkpoints (Hugging Face folders), LoRA adapters (PEFT folders)
// and critics (a folder with critic_config.json, value_head.safetensors and, for a LoRA critic, the
// PEFT adapter files).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelConfig, ValueHeadSpec } from '../types.ts';
import { ALL_LINEAR_MODULES } from '../types.ts';
import { loadHfWeights, readSafetensors, saveHfWeights, writeSafetensors, type HostTensor } from '../hf/safetensors.ts';
import { readHfConfig, writeGenerationConfig, writeHfConfig } from '../hf/config.ts';
import { readPeftAdapter, writePeftAdapter, type LoraWeights } from '../hf/peft.ts';
import { weightsFromHf, weightsToHf, type BaseWeights } from './weights.ts';
import { param } from './param.ts';
import type { LoraAdapter } from './lora.ts';
import type { Critic } from './critic.ts';
import type { DenseLayer } from './value-head.ts';

// ---- base checkpoints ----------------------------------------------------------------------

export function loadBaseDir(dir: string): { config: ModelConfig; weights: BaseWeights } {
  const config = readHfConfig(dir);
  return { config, weights: weightsFromHf(config, loadHfWeights(dir)) };
}

/**
 * model.safetensors, generation_config.json (the model's bos/eos) and config.json, in that order:
 * each file is written atomically, and config.json (what marks a folder as a model) comes last, so
 * a write cut short never leaves a config.json beside missing or partial weights.
 */
export function saveBaseDir(cfg: ModelConfig, w: BaseWeights, dir: string): void {
  mkdirSync(dir, { recursive: true });
  saveHfWeights(dir, weightsToHf(w) as Map<string, HostTensor>);
  writeGenerationConfig(dir, { bosTokenId: cfg.bosTokenId, eosTokenIds: cfg.eosTokenIds, padTokenId: null });
  writeHfConfig(dir, cfg);
}

// ---- PEFT adapters (names and files: peft.ts) ----------------------------------------------

export function saveAdapterDir(a: LoraAdapter, dir: string, baseModelName = ''): void {
  const weights: LoraWeights[] = [];
  a.layers.forEach((layer, i) => {
    for (const m of ALL_LINEAR_MODULES) {
      const mod = layer[m];
      if (mod) weights.push({ layer: i, module: m, A: { shape: mod.A.shape, data: mod.A.data }, B: { shape: mod.B.shape, data: mod.B.data } });
    }
  });
  writePeftAdapter(dir, a.config, baseModelName, weights);
}

export function loadAdapterDir(cfg: ModelConfig, dir: string): LoraAdapter {
  const peft = readPeftAdapter(dir, cfg);
  const layers: LoraAdapter['layers'] = Array.from({ length: cfg.numHiddenLayers }, () => ({}));
  for (const w of peft.weights) {
    layers[w.layer]![w.module] = { A: param(w.A.shape, w.A.data), B: param(w.B.shape, w.B.data) };
  }
  return { config: peft.config, scale: peft.config.alpha / peft.config.rank, layers };
}

// ---- critics -------------------------------------------------------------------------------

export function saveCriticDir(c: Critic, dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'critic_config.json'), JSON.stringify({ format: 'marft-critic', spec: c.spec }, null, 2));
  const tensors = new Map<string, HostTensor>();
  c.head.layers.forEach((l, i) => {
    tensors.set(`layers.${i}.weight`, { shape: l.W.shape, data: l.W.data });
    tensors.set(`layers.${i}.bias`, { shape: l.b.shape, data: l.b.data });
  });
  writeSafetensors(join(dir, 'value_head.safetensors'), tensors, { format: 'pt' });
  if (c.lora) saveAdapterDir(c.lora, dir);
}

export function loadCriticDir(cfg: ModelConfig, dir: string): Critic {
  const cfgFile = join(dir, 'critic_config.json');
  if (!existsSync(cfgFile)) throw new Error(`${dir} has no critic_config.json (not a critic folder)`);
  const spec = (JSON.parse(readFileSync(cfgFile, 'utf8')) as { spec: ValueHeadSpec }).spec;
  const tensors = readSafetensors(join(dir, 'value_head.safetensors'));
  const layers: DenseLayer[] = [];
  for (let i = 0; tensors.has(`layers.${i}.weight`); i++) {
    const W = tensors.get(`layers.${i}.weight`)!, b = tensors.get(`layers.${i}.bias`)!;
    layers.push({ W: param(W.shape, W.data), b: param(b.shape, b.data) });
  }
  return { spec, lora: spec.kind === 'lora-critic' ? loadAdapterDir(cfg, dir) : null, head: { layers } };
}

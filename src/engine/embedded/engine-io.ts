// Base checkpoints of the embedded engine: Hugging Face folders (config.json, generation_config.json,
// model.safetensors; the formats are ../hf/) to and from its base weights (weights.ts). Adapter and
// critic folders, which every engine shares, are ../hf/trainable-folders.ts.
import { mkdirSync } from 'node:fs';
import type { ModelConfig } from '../types.ts';
import { loadHfWeights, saveHfWeights, type HostTensor } from '../hf/safetensors.ts';
import { readHfConfig, writeGenerationConfig, writeHfConfig } from '../hf/config.ts';
import { weightsFromHf, weightsToHf, type BaseWeights } from './weights.ts';

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

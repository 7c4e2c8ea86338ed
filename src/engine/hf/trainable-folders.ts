// Folders of what an engine trains besides its base, the same bytes from every engine: LoRA adapters
// as PEFT folders (names and files: peft.ts) and critics (a folder with critic_config.json,
// value_head.safetensors and, for a LoRA critic, the PEFT adapter files). Readers build the
// containers of ../trainables.ts in the caller's tensors (`make`).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelConfig, ValueHeadSpec } from '../types.ts';
import { ALL_LINEAR_MODULES } from '../types.ts';
import type { Critic, DenseLayer, LoraAdapter, MakeTensor } from '../trainables.ts';
import { readSafetensors, writeSafetensors, type HostTensor } from './safetensors.ts';
import { readPeftAdapter, writePeftAdapter, type LoraWeights } from './peft.ts';

// ---- PEFT adapters -------------------------------------------------------------------------

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

export function loadAdapterDir<T extends HostTensor>(cfg: ModelConfig, dir: string, make: MakeTensor<T>): LoraAdapter<T> {
  const peft = readPeftAdapter(dir, cfg);
  const layers: LoraAdapter<T>['layers'] = Array.from({ length: cfg.numHiddenLayers }, () => ({}));
  for (const w of peft.weights) {
    layers[w.layer]![w.module] = { A: make(w.A.shape, w.A.data), B: make(w.B.shape, w.B.data) };
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

export function loadCriticDir<T extends HostTensor>(cfg: ModelConfig, dir: string, make: MakeTensor<T>): Critic<T> {
  const cfgFile = join(dir, 'critic_config.json');
  if (!existsSync(cfgFile)) throw new Error(`${dir} has no critic_config.json (not a critic folder)`);
  const spec = (JSON.parse(readFileSync(cfgFile, 'utf8')) as { spec: ValueHeadSpec }).spec;
  const tensors = readSafetensors(join(dir, 'value_head.safetensors'));
  const layers: DenseLayer<T>[] = [];
  for (let i = 0; tensors.has(`layers.${i}.weight`); i++) {
    const W = tensors.get(`layers.${i}.weight`)!, b = tensors.get(`layers.${i}.bias`)!;
    layers.push({ W: make(W.shape, W.data), b: make(b.shape, b.data) });
  }
  return { spec, lora: spec.kind === 'lora-critic' ? loadAdapterDir(cfg, dir, make) : null, head: { layers } };
}

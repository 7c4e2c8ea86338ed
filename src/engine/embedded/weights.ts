// The base model's parameters, keyed the way Hugging Face names them, with random initialisation
// (normal std 0.02 for matrices, ones for norms, zeros for biases, as transformers' _init_weights).
import type { ModelConfig, LinearModule } from '../types.ts';
import { param, type Param } from './param.ts';
import { linearShape } from '../hf/linear-shape.ts';
import { Rng } from './sampling.ts';
import { fillNormal } from './init.ts';

export interface HostTensorLike {
  shape: number[];
  data: Float32Array;
}

export interface LayerWeights {
  inputNorm: Param;
  postNorm: Param;
  linears: Record<LinearModule, Param>;
  /** q/k/v biases (Qwen2). */
  biases: Partial<Record<'q_proj' | 'k_proj' | 'v_proj', Param>>;
  /** Per-head RMSNorm weights (Qwen3), [headDim]. */
  qNorm: Param | null;
  kNorm: Param | null;
}

export interface BaseWeights {
  embed: Param;
  layers: LayerWeights[];
  finalNorm: Param;
  /** null when tied to the embedding. */
  lmHead: Param | null;
}

const ATTENTION: readonly LinearModule[] = ['q_proj', 'k_proj', 'v_proj', 'o_proj'];

export function hfLinearName(layer: number, m: LinearModule): string {
  return `model.layers.${layer}.${ATTENTION.includes(m) ? 'self_attn' : 'mlp'}.${m}`;
}

/** Every parameter with its Hugging Face name (the lm_head only when untied). */
export function namedParams(w: BaseWeights): [string, Param][] {
  const out: [string, Param][] = [['model.embed_tokens.weight', w.embed]];
  w.layers.forEach((l, i) => {
    out.push([`model.layers.${i}.input_layernorm.weight`, l.inputNorm], [`model.layers.${i}.post_attention_layernorm.weight`, l.postNorm]);
    for (const [m, p] of Object.entries(l.linears) as [LinearModule, Param][]) out.push([`${hfLinearName(i, m)}.weight`, p]);
    for (const [m, p] of Object.entries(l.biases) as [LinearModule, Param][]) out.push([`${hfLinearName(i, m)}.bias`, p]);
    if (l.qNorm) out.push([`model.layers.${i}.self_attn.q_norm.weight`, l.qNorm]);
    if (l.kNorm) out.push([`model.layers.${i}.self_attn.k_norm.weight`, l.kNorm]);
  });
  out.push(['model.norm.weight', w.finalNorm]);
  if (w.lmHead) out.push(['lm_head.weight', w.lmHead]);
  return out;
}

function allocate(cfg: ModelConfig): BaseWeights {
  const H = cfg.hiddenSize;
  const modules: LinearModule[] = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];
  const layers: LayerWeights[] = [];
  for (let i = 0; i < cfg.numHiddenLayers; i++) {
    const linears = {} as Record<LinearModule, Param>;
    for (const m of modules) linears[m] = param(linearShape(cfg, m));
    const biases: LayerWeights['biases'] = {};
    if (cfg.attentionBias) for (const m of ['q_proj', 'k_proj', 'v_proj'] as const) biases[m] = param([linearShape(cfg, m)[0]]);
    layers.push({
      inputNorm: param([H]), postNorm: param([H]), linears, biases,
      qNorm: cfg.qkNorm ? param([cfg.headDim]) : null,
      kNorm: cfg.qkNorm ? param([cfg.headDim]) : null,
    });
  }
  return {
    embed: param([cfg.vocabSize, H]),
    layers,
    finalNorm: param([H]),
    lmHead: cfg.tieWordEmbeddings ? null : param([cfg.vocabSize, H]),
  };
}

/** Random weights in transformers' style: matrices N(0, 0.02²), norms 1, biases 0. */
export function randomWeights(cfg: ModelConfig, seed: number): BaseWeights {
  const w = allocate(cfg);
  const rng = new Rng(seed);
  for (const [name, p] of namedParams(w)) {
    if (name.endsWith('norm.weight')) p.data.fill(1);
    else if (name.endsWith('.bias')) p.data.fill(0);
    else fillNormal(rng, p.data, 0.02);
  }
  return w;
}

/** Builds the weights from a Hugging Face state dict; every expected tensor must be present with its shape. */
export function weightsFromHf(cfg: ModelConfig, tensors: Map<string, HostTensorLike>): BaseWeights {
  const w = allocate(cfg);
  for (const [name, p] of namedParams(w)) {
    const t = tensors.get(name);
    if (!t) throw new Error(`checkpoint is missing tensor ${name}`);
    if (t.data.length !== p.data.length) throw new Error(`tensor ${name} has shape [${t.shape.join(', ')}], expected [${p.shape.join(', ')}]`);
    p.data = t.data;
  }
  return w;
}

export function weightsToHf(w: BaseWeights): Map<string, HostTensorLike> {
  const out = new Map<string, HostTensorLike>();
  for (const [name, p] of namedParams(w)) out.set(name, { shape: p.shape, data: p.data });
  return out;
}

/** The output projection [vocab, hidden]: the lm_head, or the embedding when tied. */
export function outputMatrix(w: BaseWeights): Param {
  return w.lmHead ?? w.embed;
}

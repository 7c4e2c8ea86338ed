// PEFT LoRA adapter folders (issue 2, item 3): adapter_config.json + adapter_model.safetensors,
// as PEFT 0.21's save_pretrained writes them, so adapters trained here load in PEFT and vLLM and
// PEFT's adapters load here.
//
// Tensor names: base_model.model.model.layers.{i}.self_attn.{q,k,v,o}_proj.lora_{A,B}.weight and
// base_model.model.model.layers.{i}.mlp.{gate,up,down}_proj.lora_{A,B}.weight, with
// A: [r, in_features] and B: [out_features, r]; the update is W x + (alpha / r) · B (A x).

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_LINEAR_MODULES, type LinearModule, type LoraConfig, type ModelConfig } from '../types.ts';
import { readSafetensors, writeSafetensors, type HostTensor } from './safetensors.ts';
import { linearShape } from './linear-shape.ts';

export interface LoraWeights {
  layer: number;
  module: LinearModule;
  /** [rank, in_features]. */
  A: HostTensor;
  /** [out_features, rank]. */
  B: HostTensor;
}

export interface PeftAdapter {
  config: LoraConfig;
  /** base_model_name_or_path from adapter_config.json (null when absent). */
  baseModelNameOrPath: string | null;
  /** lora_dropout as saved; it only matters for training, the embedded engine trains with 0. */
  loraDropout: number;
  /** Sorted by layer, then by the order of ALL_LINEAR_MODULES. */
  weights: LoraWeights[];
}

export const ADAPTER_CONFIG_FILE = 'adapter_config.json';
export const ADAPTER_WEIGHTS_FILE = 'adapter_model.safetensors';
/** The PEFT release whose adapter_config.json layout writePeftAdapter reproduces. */
export const PEFT_FORMAT_VERSION = '0.21.2';

const ATTENTION_MODULES: ReadonlySet<LinearModule> = new Set(['q_proj', 'k_proj', 'v_proj', 'o_proj']);

/** PEFT's state-dict name of one LoRA factor. */
export function loraTensorName(layer: number, module: LinearModule, factor: 'A' | 'B'): string {
  const group = ATTENTION_MODULES.has(module) ? 'self_attn' : 'mlp';
  return `base_model.model.model.layers.${layer}.${group}.${module}.lora_${factor}.weight`;
}

const NAME_RE = /^base_model\.model\.model\.layers\.(\d+)\.(self_attn|mlp)\.([a-z_]+)\.lora_(A|B)\.weight$/;

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'object' && Object.keys(v as object).length === 0);
}

/** Validates adapter_config.json against what the embedded engine computes; returns the LoRA settings. */
function parseAdapterConfig(json: Record<string, unknown>, file: string): { rank: number; alpha: number; listed: LinearModule[] | null; dropout: number } {
  const bad = (field: string, msg: string): never => { throw new Error(`${file}: ${field}: ${msg}`); };
  if (json.peft_type !== 'LORA') bad('peft_type', `${JSON.stringify(json.peft_type)} is not supported (only LORA adapters)`);
  if (json.use_rslora === true) bad('use_rslora', 'rank-stabilised LoRA (alpha / sqrt(r)) is not supported');
  if (json.use_dora === true) bad('use_dora', 'DoRA adapters are not supported');
  if (json.use_qalora === true) bad('use_qalora', 'QA-LoRA adapters are not supported');
  if ((json.bias ?? 'none') !== 'none') bad('bias', `${JSON.stringify(json.bias)} is not supported (only "none")`);
  if (json.lora_bias === true) bad('lora_bias', 'biases on lora_B are not supported');
  if (json.fan_in_fan_out === true) bad('fan_in_fan_out', 'transposed (Conv1D) weights are not supported');
  if (!isEmpty(json.rank_pattern)) bad('rank_pattern', 'per-module ranks are not supported');
  if (!isEmpty(json.alpha_pattern)) bad('alpha_pattern', 'per-module alphas are not supported');
  if (!isEmpty(json.modules_to_save)) bad('modules_to_save', `${JSON.stringify(json.modules_to_save)}: fully trained extra modules are not supported`);
  if (!isEmpty(json.trainable_token_indices)) bad('trainable_token_indices', 'trainable token embeddings are not supported');
  if (!isEmpty(json.layer_replication)) bad('layer_replication', 'layer replication is not supported');
  if (!isEmpty(json.alora_invocation_tokens)) bad('alora_invocation_tokens', 'activated LoRA is not supported');
  if (!isEmpty(json.target_parameters)) bad('target_parameters', 'LoRA on parameters (rather than modules) is not supported');
  const tt = json.task_type;
  if (tt !== undefined && tt !== null && tt !== 'CAUSAL_LM') bad('task_type', `${JSON.stringify(tt)} is not supported (only CAUSAL_LM)`);
  const rank = json.r;
  if (typeof rank !== 'number' || !Number.isInteger(rank) || rank < 1) bad('r', `expected a positive integer, got ${JSON.stringify(rank)}`);
  const alpha = json.lora_alpha ?? 8;
  if (typeof alpha !== 'number' || !Number.isFinite(alpha)) bad('lora_alpha', `expected a number, got ${JSON.stringify(alpha)}`);
  const dropout = typeof json.lora_dropout === 'number' ? json.lora_dropout : 0;
  let listed: LinearModule[] | null = null;
  // A string is a regular expression or "all-linear": the modules present in the weights decide.
  if (Array.isArray(json.target_modules)) {
    for (const m of json.target_modules) {
      if (!(ALL_LINEAR_MODULES as readonly unknown[]).includes(m)) {
        bad('target_modules', `"${String(m)}" is not supported (supported: ${ALL_LINEAR_MODULES.join(', ')})`);
      }
    }
    listed = json.target_modules as LinearModule[];
  }
  return { rank: rank as number, alpha: alpha as number, listed, dropout };
}

/**
 * Reads a PEFT LoRA adapter folder. With `model`, also checks that every layer has every target
 * module and that each factor has the shape the model needs.
 */
export function readPeftAdapter(dir: string, model?: ModelConfig): PeftAdapter {
  const cfgFile = join(dir, ADAPTER_CONFIG_FILE);
  const wFile = join(dir, ADAPTER_WEIGHTS_FILE);
  if (!existsSync(cfgFile)) throw new Error(`${dir}: no ${ADAPTER_CONFIG_FILE} (not a PEFT adapter folder?)`);
  if (!existsSync(wFile)) {
    const hint = existsSync(join(dir, 'adapter_model.bin')) ? ' (adapter_model.bin is not supported; re-save with safe_serialization=True)' : '';
    throw new Error(`${dir}: no ${ADAPTER_WEIGHTS_FILE}${hint}`);
  }
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(readFileSync(cfgFile, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`${cfgFile}: not valid JSON (${(e as Error).message})`);
  }
  const { rank, alpha, listed, dropout } = parseAdapterConfig(json, cfgFile);

  const tensors = readSafetensors(wFile);
  const pairs = new Map<string, { layer: number; module: LinearModule; A?: HostTensor; B?: HostTensor }>();
  for (const [name, t] of tensors) {
    const m = NAME_RE.exec(name);
    const module = m?.[3] as LinearModule | undefined;
    if (!m || !module || !(ALL_LINEAR_MODULES as readonly string[]).includes(module) || (m[2] === 'self_attn') !== ATTENTION_MODULES.has(module)) {
      throw new Error(`${wFile}: tensor "${name}" is not a LoRA factor of a supported linear layer (expected base_model.model.model.layers.<i>.<self_attn|mlp>.<module>.lora_<A|B>.weight)`);
    }
    const layer = Number(m[1]);
    const key = `${layer}.${module}`;
    if (!pairs.has(key)) pairs.set(key, { layer, module });
    const entry = pairs.get(key)!;
    if (m[4] === 'A') entry.A = t; else entry.B = t;
  }
  if (pairs.size === 0) throw new Error(`${wFile}: no LoRA tensors`);

  const weights: LoraWeights[] = [];
  const present = new Set<LinearModule>();
  let maxLayer = -1;
  for (const { layer, module, A, B } of pairs.values()) {
    const aName = loraTensorName(layer, module, 'A'), bName = loraTensorName(layer, module, 'B');
    if (!A) throw new Error(`${wFile}: missing tensor "${aName}" (its lora_B is present)`);
    if (!B) throw new Error(`${wFile}: missing tensor "${bName}" (its lora_A is present)`);
    if (A.shape.length !== 2 || A.shape[0] !== rank) throw new Error(`${wFile}: "${aName}" has shape ${JSON.stringify(A.shape)}, expected [r=${rank}, in_features]`);
    if (B.shape.length !== 2 || B.shape[1] !== rank) throw new Error(`${wFile}: "${bName}" has shape ${JSON.stringify(B.shape)}, expected [out_features, r=${rank}]`);
    if (model) {
      const [out, inp] = linearShape(model, module);
      if (layer >= model.numHiddenLayers) throw new Error(`${wFile}: "${aName}" is for layer ${layer}, the model has ${model.numHiddenLayers} layers`);
      if (A.shape[1] !== inp) throw new Error(`${wFile}: "${aName}" has shape ${JSON.stringify(A.shape)}, the model needs [${rank}, ${inp}]`);
      if (B.shape[0] !== out) throw new Error(`${wFile}: "${bName}" has shape ${JSON.stringify(B.shape)}, the model needs [${out}, ${rank}]`);
    }
    present.add(module);
    maxLayer = Math.max(maxLayer, layer);
    weights.push({ layer, module, A, B });
  }
  if (listed) {
    for (const m of present) if (!listed.includes(m)) throw new Error(`${wFile}: has ${m} factors but ${cfgFile} target_modules does not list ${m}`);
  }
  const targetModules = ALL_LINEAR_MODULES.filter((m) => (listed ?? [...present]).includes(m));
  // Unless the adapter is restricted to some layers, every layer has every target module.
  if (isEmpty(json.layers_to_transform)) {
    const layers = model ? model.numHiddenLayers : maxLayer + 1;
    for (let layer = 0; layer < layers; layer++) {
      for (const module of targetModules) {
        if (!pairs.has(`${layer}.${module}`)) throw new Error(`${wFile}: missing tensor "${loraTensorName(layer, module, 'A')}" (target module ${module}, layer ${layer})`);
      }
    }
  }
  const order = (m: LinearModule): number => ALL_LINEAR_MODULES.indexOf(m);
  weights.sort((a, b) => a.layer - b.layer || order(a.module) - order(b.module));
  const base = json.base_model_name_or_path;
  return {
    config: { rank, alpha, targetModules },
    baseModelNameOrPath: typeof base === 'string' ? base : null,
    loraDropout: dropout,
    weights,
  };
}

/** adapter_config.json as PEFT 0.21.2's save_pretrained writes it for a plain LoRA adapter. */
export function peftAdapterConfigJson(config: LoraConfig, baseModelPath: string): Record<string, unknown> {
  return {
    alora_invocation_tokens: null,
    alpha_pattern: {},
    arrow_config: null,
    auto_mapping: null,
    base_model_name_or_path: baseModelPath,
    bias: 'none',
    corda_config: null,
    ensure_weight_tying: false,
    eva_config: null,
    exclude_modules: null,
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    kasa_config: null,
    layer_replication: null,
    layers_pattern: null,
    layers_to_transform: null,
    loftq_config: {},
    lora_alpha: config.alpha,
    lora_bias: false,
    lora_dropout: 0.0,
    lora_ga_config: null,
    megatron_config: null,
    megatron_core: 'megatron.core',
    modules_to_save: null,
    monteclora_config: null,
    peft_type: 'LORA',
    peft_version: PEFT_FORMAT_VERSION,
    qalora_group_size: 16,
    r: config.rank,
    rank_pattern: {},
    revision: null,
    target_modules: [...config.targetModules],
    target_parameters: null,
    task_type: 'CAUSAL_LM',
    trainable_token_indices: null,
    use_bdlora: null,
    use_dora: false,
    use_qalora: false,
    use_rslora: false,
    velora_config: null,
  };
}

/**
 * Writes `weights` as a PEFT adapter folder (created if needed). Every layer that has factors
 * must have one for every target module, with A [rank, in] and B [out, rank]; the weights file
 * is written before the config, each atomically, so a folder with a config is complete.
 */
export function writePeftAdapter(dir: string, config: LoraConfig, baseModelPath: string, weights: readonly LoraWeights[]): void {
  if (!Number.isInteger(config.rank) || config.rank < 1) throw new Error(`writePeftAdapter: rank must be a positive integer, got ${config.rank}`);
  if (config.targetModules.length === 0) throw new Error('writePeftAdapter: targetModules is empty');
  const tensors = new Map<string, HostTensor>();
  const layers = new Set<number>();
  for (const w of weights) {
    if (!config.targetModules.includes(w.module)) throw new Error(`writePeftAdapter: layer ${w.layer} ${w.module} is not in targetModules ${JSON.stringify(config.targetModules)}`);
    const [aR, aIn] = w.A.shape, [bOut, bR] = w.B.shape;
    if (w.A.shape.length !== 2 || w.B.shape.length !== 2 || aR !== config.rank || bR !== config.rank) {
      throw new Error(`writePeftAdapter: layer ${w.layer} ${w.module}: A ${JSON.stringify(w.A.shape)} and B ${JSON.stringify(w.B.shape)} must be [${config.rank}, in] and [out, ${config.rank}]`);
    }
    if (w.A.data.length !== aR * aIn || w.B.data.length !== bOut * bR) throw new Error(`writePeftAdapter: layer ${w.layer} ${w.module}: data length does not match the shape`);
    const aName = loraTensorName(w.layer, w.module, 'A');
    if (tensors.has(aName)) throw new Error(`writePeftAdapter: layer ${w.layer} ${w.module} appears twice`);
    tensors.set(aName, w.A);
    tensors.set(loraTensorName(w.layer, w.module, 'B'), w.B);
    layers.add(w.layer);
  }
  for (const layer of layers) {
    for (const module of config.targetModules) {
      if (!tensors.has(loraTensorName(layer, module, 'A'))) throw new Error(`writePeftAdapter: layer ${layer} has no ${module} factors`);
    }
  }
  mkdirSync(dir, { recursive: true });
  writeSafetensors(join(dir, ADAPTER_WEIGHTS_FILE), tensors, { format: 'pt' });
  const cfgFile = join(dir, ADAPTER_CONFIG_FILE);
  const tmp = `${cfgFile}.tmp-${process.pid}-${Date.now()}`;
  writeFileSync(tmp, JSON.stringify(peftAdapterConfigJson(config, baseModelPath), null, 2) + '\n');
  renameSync(tmp, cfgFile);
}

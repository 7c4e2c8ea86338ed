// Hugging Face config.json and generation_config.json <-> ModelConfig (types.ts).
//
// Supported: Llama (model_type "llama"), Qwen2 ("qwen2": q/k/v biases, always on in transformers'
// Qwen2Attention) and Qwen3 ("qwen3": per-head RMSNorm on q and k, explicit head_dim). Missing
// keys take the defaults of transformers 5's LlamaConfig / Qwen2Config / Qwen3Config. Anything
// the embedded model would compute differently (other activations, rope scaling, sliding-window
// layers, biases on o_proj or the MLP, quantisation) is refused with an Error naming the field.

import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Architecture, ModelConfig } from '../types.ts';

interface Defaults {
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numHiddenLayers: number;
  numAttentionHeads: number;
  maxPositionEmbeddings: number;
  bosTokenId: number | null;
  eosTokenId: number | null;
  /** Qwen3Config's head_dim default is 128, not hidden / heads. */
  headDim: number | null;
}

// transformers 5.24 configuration_{llama,qwen2,qwen3}.py.
const DEFAULTS: Record<Architecture, Defaults> = {
  llama: { vocabSize: 32000, hiddenSize: 4096, intermediateSize: 11008, numHiddenLayers: 32, numAttentionHeads: 32, maxPositionEmbeddings: 2048, bosTokenId: 1, eosTokenId: 2, headDim: null },
  qwen2: { vocabSize: 151936, hiddenSize: 4096, intermediateSize: 22016, numHiddenLayers: 32, numAttentionHeads: 32, maxPositionEmbeddings: 32768, bosTokenId: null, eosTokenId: null, headDim: null },
  qwen3: { vocabSize: 151936, hiddenSize: 4096, intermediateSize: 22016, numHiddenLayers: 32, numAttentionHeads: 32, maxPositionEmbeddings: 32768, bosTokenId: null, eosTokenId: null, headDim: 128 },
};

const ARCHITECTURE_CLASS: Record<Architecture, string> = { llama: 'LlamaForCausalLM', qwen2: 'Qwen2ForCausalLM', qwen3: 'Qwen3ForCausalLM' };

function fail(field: string, message: string): never {
  throw new Error(`config.json: ${field}: ${message}`);
}

function int(json: Record<string, unknown>, key: string, dflt: number | null, min = 1): number {
  const v = json[key] ?? dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) fail(key, `expected an integer >= ${min}, got ${JSON.stringify(v)}`);
  return v;
}

function num(json: Record<string, unknown>, key: string, dflt: number): number {
  const v = json[key] ?? dflt;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) fail(key, `expected a positive number, got ${JSON.stringify(v)}`);
  return v;
}

function tokenIds(v: unknown, key: string): number[] {
  if (v === null || v === undefined) return [];
  const list = Array.isArray(v) ? v : [v];
  for (const id of list) if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) fail(key, `expected a token id or a list of them, got ${JSON.stringify(v)}`);
  return [...new Set(list as number[])];
}

function detectArchitecture(json: Record<string, unknown>): Architecture {
  const modelType = json.model_type;
  const classes = Array.isArray(json.architectures) ? (json.architectures as unknown[]) : [];
  if (modelType === 'llama' || modelType === 'qwen2' || modelType === 'qwen3') return modelType;
  if (modelType === undefined) {
    for (const [arch, cls] of Object.entries(ARCHITECTURE_CLASS)) if (classes.includes(cls)) return arch as Architecture;
    fail('model_type', `missing, and architectures ${JSON.stringify(json.architectures)} names no supported model (LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM)`);
  }
  fail('model_type', `"${String(modelType)}" is not supported (supported: llama, qwen2, qwen3)`);
}

/** The rope base frequency, from transformers 5's rope_parameters or the older rope_theta / rope_scaling keys. */
function parseRope(json: Record<string, unknown>): number {
  const params = json.rope_parameters as Record<string, unknown> | null | undefined;
  const scaling = json.rope_scaling as Record<string, unknown> | null | undefined;
  for (const [key, p] of [['rope_parameters', params], ['rope_scaling', scaling]] as const) {
    if (p === null || p === undefined) continue;
    if (typeof p !== 'object') fail(key, `expected an object or null, got ${JSON.stringify(p)}`);
    const type = p.rope_type ?? p.type ?? 'default';
    if (type !== 'default') fail(`${key}.rope_type`, `"${String(type)}" rope scaling is not supported (only the default RoPE)`);
  }
  const theta = (params?.rope_theta as number | undefined) ?? json.rope_theta ?? 10000;
  if (typeof theta !== 'number' || !(theta > 0)) fail('rope_theta', `expected a positive number, got ${JSON.stringify(theta)}`);
  const partial = params?.partial_rotary_factor ?? json.partial_rotary_factor;
  if (partial !== undefined && partial !== null && partial !== 1) fail('partial_rotary_factor', `${JSON.stringify(partial)} is not supported (only 1)`);
  return theta;
}

/** Parses a config.json object; throws an Error naming the field for anything unsupported. */
export function parseHfConfig(raw: unknown): ModelConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('config.json: expected a JSON object');
  const json = raw as Record<string, unknown>;
  const architecture = detectArchitecture(json);
  const d = DEFAULTS[architecture];

  const act = json.hidden_act ?? 'silu';
  if (act !== 'silu') fail('hidden_act', `"${String(act)}" is not supported (only silu, i.e. SwiGLU)`);
  if (json.quantization_config !== undefined && json.quantization_config !== null) fail('quantization_config', 'quantised checkpoints are not supported (float weights only)');
  if (json.mlp_bias === true) fail('mlp_bias', 'biases on the MLP are not supported');
  if (architecture !== 'qwen2' && json.attention_bias === true) {
    fail('attention_bias', `true is not supported for ${architecture} (it also puts a bias on o_proj)`);
  }
  if (architecture !== 'llama') {
    // transformers drops the window unless use_sliding_window is set, so only then do the
    // layers listed (or, without layer_types, those from max_window_layers on) slide.
    const layerTypes = json.layer_types as unknown[] | undefined;
    const sliding = json.use_sliding_window === true && (Array.isArray(layerTypes)
      ? layerTypes.some((t) => t === 'sliding_attention')
      : int(json, 'max_window_layers', 28, 0) < int(json, 'num_hidden_layers', d.numHiddenLayers));
    if (sliding) fail('use_sliding_window', 'sliding-window attention layers are not supported');
  }

  const hiddenSize = int(json, 'hidden_size', d.hiddenSize);
  const numAttentionHeads = int(json, 'num_attention_heads', d.numAttentionHeads);
  const numKeyValueHeads = int(json, 'num_key_value_heads', numAttentionHeads);
  if (numAttentionHeads % numKeyValueHeads !== 0) {
    fail('num_key_value_heads', `${numKeyValueHeads} does not divide num_attention_heads ${numAttentionHeads}`);
  }
  const explicitHeadDim = json.head_dim ?? d.headDim;
  let headDim: number;
  if (explicitHeadDim === null || explicitHeadDim === undefined) {
    if (hiddenSize % numAttentionHeads !== 0) fail('hidden_size', `${hiddenSize} is not a multiple of num_attention_heads ${numAttentionHeads}`);
    headDim = hiddenSize / numAttentionHeads;
  } else {
    headDim = int({ head_dim: explicitHeadDim }, 'head_dim', null);
  }
  if (headDim % 2 !== 0) fail('head_dim', `${headDim} must be even for RoPE`);

  const bos = json.bos_token_id === undefined ? d.bosTokenId : json.bos_token_id;
  if (bos !== null && (typeof bos !== 'number' || !Number.isInteger(bos) || bos < 0)) fail('bos_token_id', `expected a token id or null, got ${JSON.stringify(bos)}`);

  return {
    architecture,
    vocabSize: int(json, 'vocab_size', d.vocabSize),
    hiddenSize,
    intermediateSize: int(json, 'intermediate_size', d.intermediateSize),
    numHiddenLayers: int(json, 'num_hidden_layers', d.numHiddenLayers),
    numAttentionHeads,
    numKeyValueHeads,
    headDim,
    rmsNormEps: num(json, 'rms_norm_eps', 1e-6),
    ropeTheta: parseRope(json),
    maxPositionEmbeddings: int(json, 'max_position_embeddings', d.maxPositionEmbeddings),
    tieWordEmbeddings: (json.tie_word_embeddings ?? false) === true,
    attentionBias: architecture === 'qwen2',
    qkNorm: architecture === 'qwen3',
    bosTokenId: bos as number | null,
    eosTokenIds: tokenIds(json.eos_token_id === undefined ? d.eosTokenId : json.eos_token_id, 'eos_token_id'),
  };
}

/**
 * A config.json that transformers (5.x, and 4.x through the legacy rope_theta key) loads back to
 * the same model. Written with the transformers 5 key set; eos_token_id is a number when there is
 * exactly one id, as transformers writes it.
 */
export function toHfConfig(cfg: ModelConfig): Record<string, unknown> {
  if (cfg.attentionBias !== (cfg.architecture === 'qwen2')) {
    throw new Error(`toHfConfig: attentionBias ${cfg.attentionBias} cannot be expressed for ${cfg.architecture} (Qwen2 always has q/k/v biases, Llama/Qwen3 have none here)`);
  }
  if (cfg.qkNorm !== (cfg.architecture === 'qwen3')) {
    throw new Error(`toHfConfig: qkNorm ${cfg.qkNorm} cannot be expressed for ${cfg.architecture} (only Qwen3 has q/k norms)`);
  }
  const eos = cfg.eosTokenIds.length === 0 ? null : cfg.eosTokenIds.length === 1 ? cfg.eosTokenIds[0] : [...cfg.eosTokenIds];
  const out: Record<string, unknown> = {
    architectures: [ARCHITECTURE_CLASS[cfg.architecture]],
    model_type: cfg.architecture,
    vocab_size: cfg.vocabSize,
    hidden_size: cfg.hiddenSize,
    intermediate_size: cfg.intermediateSize,
    num_hidden_layers: cfg.numHiddenLayers,
    num_attention_heads: cfg.numAttentionHeads,
    num_key_value_heads: cfg.numKeyValueHeads,
    head_dim: cfg.headDim,
    hidden_act: 'silu',
    max_position_embeddings: cfg.maxPositionEmbeddings,
    rms_norm_eps: cfg.rmsNormEps,
    rope_parameters: { rope_theta: cfg.ropeTheta, rope_type: 'default' },
    rope_theta: cfg.ropeTheta,
    rope_scaling: null,
    tie_word_embeddings: cfg.tieWordEmbeddings,
    bos_token_id: cfg.bosTokenId,
    eos_token_id: eos,
    pad_token_id: null,
    attention_dropout: 0.0,
    initializer_range: 0.02,
    use_cache: true,
    dtype: 'float32',
  };
  if (cfg.architecture !== 'qwen2') out.attention_bias = false;
  if (cfg.architecture === 'llama') out.mlp_bias = false;
  if (cfg.architecture !== 'llama') {
    out.use_sliding_window = false;
    out.sliding_window = null;
    out.max_window_layers = cfg.numHiddenLayers;
    out.layer_types = new Array(cfg.numHiddenLayers).fill('full_attention');
  }
  return out;
}

/** Reads and parses dir/config.json. */
export function readHfConfig(dir: string): ModelConfig {
  const file = join(dir, 'config.json');
  if (!existsSync(file)) throw new Error(`${dir}: no config.json (not a Hugging Face model folder?)`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: not valid JSON (${(e as Error).message})`);
  }
  try {
    return parseHfConfig(json);
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message.replace(/^config\.json: /, '')}`);
  }
}

/** Writes dir/config.json (atomically). */
export function writeHfConfig(dir: string, cfg: ModelConfig): void {
  writeJsonAtomic(join(dir, 'config.json'), toHfConfig(cfg));
}

/** The parts of generation_config.json the engine uses. */
export interface GenerationConfig {
  bosTokenId: number | null;
  /** Token ids that end generation (transformers' generate stops on any of them). */
  eosTokenIds: number[];
  padTokenId: number | null;
  doSample?: boolean;
  temperature?: number;
  topP?: number;
  topK?: number;
  maxNewTokens?: number;
}

/** Reads dir/generation_config.json, or null when the folder has none. */
export function readGenerationConfig(dir: string): GenerationConfig | null {
  const file = join(dir, 'generation_config.json');
  if (!existsSync(file)) return null;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`${file}: not valid JSON (${(e as Error).message})`);
  }
  const optNum = (k: string): number | undefined => (typeof json[k] === 'number' ? (json[k] as number) : undefined);
  const optId = (k: string): number | null => (typeof json[k] === 'number' ? (json[k] as number) : null);
  const out: GenerationConfig = {
    bosTokenId: optId('bos_token_id'),
    eosTokenIds: tokenIds(json.eos_token_id, `${file}: eos_token_id`),
    padTokenId: optId('pad_token_id'),
  };
  if (typeof json.do_sample === 'boolean') out.doSample = json.do_sample;
  const t = optNum('temperature'), p = optNum('top_p'), k = optNum('top_k'), m = optNum('max_new_tokens');
  if (t !== undefined) out.temperature = t;
  if (p !== undefined) out.topP = p;
  if (k !== undefined) out.topK = k;
  if (m !== undefined) out.maxNewTokens = m;
  return out;
}

/** Writes dir/generation_config.json in transformers' key names (atomically). */
export function writeGenerationConfig(dir: string, gen: GenerationConfig): void {
  const eos = gen.eosTokenIds.length === 0 ? null : gen.eosTokenIds.length === 1 ? gen.eosTokenIds[0] : [...gen.eosTokenIds];
  const json: Record<string, unknown> = { bos_token_id: gen.bosTokenId, eos_token_id: eos, pad_token_id: gen.padTokenId };
  if (gen.doSample !== undefined) json.do_sample = gen.doSample;
  if (gen.temperature !== undefined) json.temperature = gen.temperature;
  if (gen.topP !== undefined) json.top_p = gen.topP;
  if (gen.topK !== undefined) json.top_k = gen.topK;
  if (gen.maxNewTokens !== undefined) json.max_new_tokens = gen.maxNewTokens;
  writeJsonAtomic(join(dir, 'generation_config.json'), json);
}

function writeJsonAtomic(file: string, json: unknown): void {
  const tmp = `${file}.tmp-${process.pid}-${Date.now()}`;
  writeFileSync(tmp, JSON.stringify(json, null, 2) + '\n');
  renameSync(tmp, file);
}

// The one builder of the tiny random decoders this project makes instead of loading: the toy
// tasks' (src/tasks/toy/toy-decoder.ts), the workflow task's (src/tasks/tiny-model.ts) and the
// demo's (src/tasks/arith-duo/model-config.ts). Each caller passes its shape; what every one of them shares
// (RMS norm epsilon, RoPE base, tied embeddings, head size = hidden / heads) and what the
// architecture implies (Qwen2: biases on q, k, v; Qwen3: no biases, RMS norms on q and k) is set
// here once, so the three stay the same family and differ only where their callers say.
import type { ModelConfig } from './types.ts';

export interface TinyDecoderShape {
  architecture: 'qwen2' | 'qwen3';
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  layers: number;
  /** Attention heads; hiddenSize / heads is the head size (even, for RoPE). */
  heads: number;
  kvHeads: number;
  /** Longest prompt + reply, in tokens (maxPositionEmbeddings). */
  context: number;
  bosTokenId: number | null;
  eosTokenIds: number[];
}

export function tinyDecoderConfig(s: TinyDecoderShape): ModelConfig {
  return {
    architecture: s.architecture,
    vocabSize: s.vocabSize,
    hiddenSize: s.hiddenSize,
    intermediateSize: s.intermediateSize,
    numHiddenLayers: s.layers,
    numAttentionHeads: s.heads,
    numKeyValueHeads: s.kvHeads,
    headDim: s.hiddenSize / s.heads,
    rmsNormEps: 1e-6,
    ropeTheta: 10000,
    maxPositionEmbeddings: s.context,
    tieWordEmbeddings: true,
    attentionBias: s.architecture === 'qwen2',
    qkNorm: s.architecture === 'qwen3',
    bosTokenId: s.bosTokenId,
    eosTokenIds: s.eosTokenIds,
  };
}

// The demo's model: a tiny Qwen2-shaped decoder trained from scratch (../shared/docs/demo-notes.md:
// hidden 128, 2 layers, 4 heads, about 0.4M parameters; hidden 64 was too small).
import type { ModelConfig } from '../engine/types.ts';
import type { CharTokenizer } from '../tokenizer/index.ts';

export function demoModelConfig(tokenizer: CharTokenizer): ModelConfig {
  return {
    architecture: 'qwen2',
    vocabSize: tokenizer.vocabSize,
    hiddenSize: 128,
    intermediateSize: 384,
    numHiddenLayers: 2,
    numAttentionHeads: 4,
    numKeyValueHeads: 4,
    headDim: 32,
    rmsNormEps: 1e-6,
    ropeTheta: 10000,
    // The longest Solver sequence is about 40 tokens.
    maxPositionEmbeddings: 128,
    tieWordEmbeddings: true,
    attentionBias: true,
    qkNorm: false,
    bosTokenId: null,
    eosTokenIds: tokenizer.eosTokenIds,
  };
}

/** Parameters of a Qwen2 decoder with this config (tied embeddings counted once). */
export function parameterCount(c: ModelConfig): number {
  const kv = c.numKeyValueHeads * c.headDim;
  const q = c.numAttentionHeads * c.headDim;
  const attention = c.hiddenSize * q + 2 * c.hiddenSize * kv + q * c.hiddenSize + (c.attentionBias ? q + 2 * kv : 0);
  const mlp = 3 * c.hiddenSize * c.intermediateSize;
  const norms = 2 * c.hiddenSize;
  const embeddings = c.vocabSize * c.hiddenSize * (c.tieWordEmbeddings ? 1 : 2);
  return c.numHiddenLayers * (attention + mlp + norms) + embeddings + c.hiddenSize;
}

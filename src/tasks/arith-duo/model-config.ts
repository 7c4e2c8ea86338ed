// The demo's model: a tiny Qwen2-shaped decoder (src/engine/tiny-decoder.ts) trained from scratch:
// hidden 128, 2 layers, 4 heads, about 0.4M parameters (hidden 64 was too small).
import { tinyDecoderConfig } from '../../engine/index.ts';
import type { ModelConfig } from '../../engine/types.ts';
import type { CharTokenizer } from '../../tokenizer/index.ts';

export function demoModelConfig(tokenizer: CharTokenizer): ModelConfig {
  return tinyDecoderConfig({
    architecture: 'qwen2',
    vocabSize: tokenizer.vocabSize,
    hiddenSize: 128,
    intermediateSize: 384,
    layers: 2,
    heads: 4,
    kvHeads: 4,
    // The longest Solver sequence is about 40 tokens.
    context: 128,
    bosTokenId: null,
    eosTokenIds: tokenizer.eosTokenIds,
  });
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

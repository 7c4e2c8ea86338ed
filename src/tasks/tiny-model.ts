// A tiny random Qwen3-shaped decoder (src/engine/tiny-decoder.ts) sized to a tokenizer: the model a
// workflow task builds when the configuration names none (model.path = ""), and what
// scripts/make-tiny-model.ts saves as a Hugging Face folder. It cannot solve GSM8K; it exists so that the whole path (real data, real
// workflow, real verifier or sandbox, the trainer) runs end to end on 2 CPU cores.
import { createEngine, tinyDecoderConfig } from '../engine/index.ts';
import type { Engine, ModelConfig } from '../engine/types.ts';
import { CharTokenizer, DEFAULT_ALPHABET } from '../tokenizer/index.ts';
import type { Tokenizer } from '../tokenizer/types.ts';

/**
 * The character tokenizer of tasks that name no model folder ('char'): printable ASCII, newline and
 * tab (benchmark code such as MBPP's reference solutions indents with tabs, which the default
 * alphabet would turn into <unk>). 105 ids.
 */
export function taskCharTokenizer(): CharTokenizer {
  return new CharTokenizer(DEFAULT_ALPHABET + '\t');
}

export interface TinyModelShape {
  /** Hidden size (a multiple of 4: 4 heads). */
  hiddenSize: number;
  layers: number;
  /** Longest prompt + reply, in tokens; longer ones stop with 'context_full'. */
  contextLength: number;
}

export const DEFAULT_TINY_SHAPE: TinyModelShape = { hiddenSize: 64, layers: 2, contextLength: 8192 };

export function tinyModelConfig(tokenizer: Tokenizer, shape: TinyModelShape = DEFAULT_TINY_SHAPE): ModelConfig {
  return tinyDecoderConfig({
    architecture: 'qwen3',
    vocabSize: tokenizer.vocabSize,
    hiddenSize: shape.hiddenSize,
    intermediateSize: 2 * shape.hiddenSize,
    layers: shape.layers,
    heads: 4,
    kvHeads: 2,
    context: shape.contextLength,
    bosTokenId: null,
    eosTokenIds: [...tokenizer.eosTokenIds],
  });
}

export function tinyEngine(tokenizer: Tokenizer, shape: TinyModelShape, seed: number): Engine {
  return createEngine(tinyModelConfig(tokenizer, shape), { seed, decode: (ids: number[]) => tokenizer.decode(ids) });
}

// The model the toy tasks build when the configuration names none: a tiny random Qwen3-shaped
// decoder over the task's token ids (hidden `hiddenSize`, default 256, 2 layers, 64 positions, BOS
// = token 0): wide enough that LoRA alone can make its next-token distribution peaked.
import { createEngine, tinyDecoderConfig } from '../../engine/index.ts';
import type { Engine } from '../../engine/types.ts';
import { intOption, optionError, type Options } from '../options.ts';

export function toyDecoder(vocabSize: number, hiddenSize: number, seed: number): Engine {
  const config = tinyDecoderConfig({
    architecture: 'qwen3', vocabSize, hiddenSize, intermediateSize: 2 * hiddenSize, layers: 2, heads: 4, kvHeads: 2,
    context: 64, bosTokenId: 0, eosTokenIds: [],
  });
  return createEngine(config, { seed });
}

/** The toy tasks' `hiddenSize` option (default 256): a multiple of 4, one slice per head. */
export function hiddenSizeOption(options: Options): number {
  const hiddenSize = intOption(options, 'hiddenSize', 256, 4);
  if (hiddenSize % 4 !== 0) throw optionError('hiddenSize', hiddenSize, 'a positive multiple of 4');
  return hiddenSize;
}

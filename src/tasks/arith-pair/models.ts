// The study's two models, both Qwen2-shaped decoders built here: the students' base is the MARFT
// demo's model (src/tasks/arith-duo/model-config.ts: hidden 128, 2 layers), the teacher a larger one
// (hidden 160, 3 layers). Both read the study's phrase vocabulary.
import type { ModelConfig } from '../../engine/types.ts';
import { demoModelConfig } from '../arith-duo/model-config.ts';
import { demoTokenizer } from '../arith-duo/vocab.ts';
import type { PhraseTokenizer } from './phrase-tokenizer.ts';

/** Contexts stay under ~150 tokens; a program's error text can be longer. */
const MAX_POSITIONS = 2048;

export function studentModelConfig(tokenizer: PhraseTokenizer): ModelConfig {
  return { ...demoModelConfig(demoTokenizer()), vocabSize: tokenizer.vocabSize, eosTokenIds: tokenizer.eosTokenIds, maxPositionEmbeddings: MAX_POSITIONS };
}

export function teacherModelConfig(tokenizer: PhraseTokenizer): ModelConfig {
  return { ...studentModelConfig(tokenizer), hiddenSize: 160, intermediateSize: 480, numHiddenLayers: 3, numAttentionHeads: 5, numKeyValueHeads: 5, headDim: 32 };
}

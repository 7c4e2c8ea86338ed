// A Hugging Face model folder of one agent: the base with the agent's adapter merged (./merge-lora.ts),
// as transformers, vLLM or marft's own engines load it:
//   model.safetensors        every weight, float32
//   config.json              the base's, its dtype set to float32
//   generation_config.json   the base's (or its bos and eos ids)
//   tokenizer files          the base folder's (tokenizer.json, tokenizer_config.json, chat template, ...),
//                            or the task's character tokenizer when the base has none (a base the task built)
//   marft_export.json        where it came from: checkpoint, step, agent, adapter, rank, alpha, merged weights
// The folder is written beside its destination and renamed into place, so it exists whole or not at all.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CharTokenizer } from '../tokenizer/index.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import { mergeAdapterIntoBase, readHfConfig, saveHfWeights, writeGenerationConfig } from './merge-lora.ts';

/** The files of a Hugging Face folder's tokenizer (and chat template), copied when present. */
const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'added_tokens.json', 'chat_template.jinja', 'chat_template.json', 'vocab.json', 'merges.txt', 'tokenizer.model'];

export interface ExportSource {
  baseDir: string;
  adapterDir: string;
  /** The task's tokenizer, saved when the base folder has no tokenizer files and it is marft's character tokenizer. */
  tokenizer: Tokenizer | null;
  provenance: { checkpoint: string; step: number; agent: string; adapter: string };
}

export interface ExportedFolder {
  dir: string;
  merged: string[];
  /** How the tokenizer got there: copied from the base, written from the task's, or none (token ids only). */
  tokenizer: 'copied' | 'written' | 'none';
}

export function writeMergedFolder(out: string, src: ExportSource): ExportedFolder {
  const { tensors, adapter, merged } = mergeAdapterIntoBase(src.baseDir, src.adapterDir);
  const tmp = join(dirname(out), `.${basename(out)}.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    saveHfWeights(tmp, tensors);
    const config = JSON.parse(readFileSync(join(src.baseDir, 'config.json'), 'utf8')) as Record<string, unknown>;
    for (const key of ['torch_dtype', 'dtype']) if (key in config) config[key] = 'float32';
    if (!('torch_dtype' in config) && !('dtype' in config)) config.dtype = 'float32';
    writeFileSync(join(tmp, 'config.json'), JSON.stringify(config, null, 2) + '\n');
    if (existsSync(join(src.baseDir, 'generation_config.json'))) copyFileSync(join(src.baseDir, 'generation_config.json'), join(tmp, 'generation_config.json'));
    else {
      const model = readHfConfig(src.baseDir);
      writeGenerationConfig(tmp, { bosTokenId: model.bosTokenId, eosTokenIds: model.eosTokenIds, padTokenId: null });
    }
    let tokenizer: ExportedFolder['tokenizer'] = 'none';
    for (const file of TOKENIZER_FILES) {
      if (!existsSync(join(src.baseDir, file))) continue;
      copyFileSync(join(src.baseDir, file), join(tmp, file));
      tokenizer = 'copied';
    }
    if (tokenizer === 'none' && src.tokenizer instanceof CharTokenizer) {
      src.tokenizer.save(tmp);
      tokenizer = 'written';
    }
    writeFileSync(join(tmp, 'marft_export.json'), JSON.stringify({
      format: 'marft-export', ...src.provenance, base: src.baseDir, rank: adapter.config.rank, alpha: adapter.config.alpha, merged,
    }, null, 2) + '\n');
    renameSync(tmp, out);
    return { dir: out, merged, tokenizer };
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

// Writes a tiny random Qwen3-shaped model folder (config.json + model.safetensors + the tasks'
// character tokenizer's (taskCharTokenizer) tokenizer.json / tokenizer_config.json) for end-to-end runs of the real-data tasks:
//
//   node --import tsx scripts/make-tiny-model.ts [--out runs/tiny-model] [--hidden-size 64] [--layers 2] [--context 8192] [--seed 0]
//
// The folder loads with `model.path` in a configuration (and `task.options.tokenizer` naming the same
// folder), with loadEngine / loadTokenizer, and with transformers. Random weights: it will not solve
// anything; it makes the data → workflow → verifier → trainer path run in seconds on a CPU.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_TINY_SHAPE, taskCharTokenizer, tinyEngine } from '../src/tasks/tiny-model.ts';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'runs/tiny-model' },
    'hidden-size': { type: 'string', default: String(DEFAULT_TINY_SHAPE.hiddenSize) },
    layers: { type: 'string', default: String(DEFAULT_TINY_SHAPE.layers) },
    context: { type: 'string', default: String(DEFAULT_TINY_SHAPE.contextLength) },
    seed: { type: 'string', default: '0' },
    help: { type: 'boolean', default: false },
  },
});

function positiveInt(flag: string, text: string, multipleOf = 1): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n % multipleOf !== 0) {
    console.error(`--${flag}: got ${JSON.stringify(text)}, expected a positive integer${multipleOf > 1 ? ` divisible by ${multipleOf}` : ''}`);
    process.exit(2);
  }
  return n;
}

if (values.help) {
  console.log('usage: node --import tsx scripts/make-tiny-model.ts [--out DIR] [--hidden-size N] [--layers N] [--context N] [--seed N]');
} else {
  const out = resolve(values.out!);
  const shape = { hiddenSize: positiveInt('hidden-size', values['hidden-size']!, 4), layers: positiveInt('layers', values.layers!), contextLength: positiveInt('context', values.context!) };
  const seed = Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0) {
    console.error(`--seed: got ${JSON.stringify(values.seed)}, expected an integer >= 0`);
    process.exit(2);
  }
  const tokenizer = taskCharTokenizer();
  const engine = tinyEngine(tokenizer, shape, seed);
  await engine.saveBase(out);
  tokenizer.save(out);
  await engine.dispose();
  console.log(JSON.stringify({ out, vocabSize: tokenizer.vocabSize, ...shape, seed }));
}

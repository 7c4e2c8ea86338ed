// `marft logprobs`: per-token log-probs of token sequences under a model (and optionally a PEFT
// adapter), one JSON line per input line; for checking the engine from outside (issue 2, item 9).
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, positiveNumberFlag, requireFlag, stringFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { checkInputFile, readInputLines } from '../input-lines.ts';
import { loadEngine, loadTorchEngine, type Engine, type Target } from '../../engine/index.ts';

const HELP = `usage: marft logprobs --model DIR [--adapter DIR] --input FILE.jsonl [--temperature T] [--engine embedded|torch]

Reads one JSON object per line, {"tokens": [id, ...]} with at least one token, and prints one line
{"logprobs": [...]} per input, where logprobs[i] = log p(tokens[i+1] | tokens[0..i]) (so one fewer
number than tokens). The model is a Hugging Face folder (config.json + model.safetensors, or sharded);
--adapter is a PEFT LoRA folder (adapter_config.json + adapter_model.safetensors).

  --model DIR        Llama / Qwen2 / Qwen3 checkpoint folder
  --adapter DIR      optional LoRA adapter over it
  --input FILE       JSON lines; '-' reads standard input
  --temperature T    log-probs of softmax(logits / T) (default 1; a finite number > 0)
  --engine E         embedded (default) or torch: the PyTorch worker in .venv-torch (docs/scaling.md)

Exit status: 0 when every line was printed; 2 for a usage or input mistake, and when the model
gives a log-prob that is not a finite number (NaN or infinite: weights that hold NaN or Inf, or a
temperature so small that logits / T overflows): it is named on stderr, and nothing is printed for
that line or after it.`;

interface Line {
  tokens: number[];
}

function parseLine(text: string, lineNo: number, vocab: number): Line {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch {
    throw new UserError(`input line ${lineNo}: not valid JSON`);
  }
  const tokens = (obj as { tokens?: unknown } | null)?.tokens;
  if (!Array.isArray(tokens) || tokens.length === 0) throw new UserError(`input line ${lineNo}: expected {"tokens": [ids...]} with at least one token`);
  for (const t of tokens) {
    if (!Number.isInteger(t) || (t as number) < 0 || (t as number) >= vocab) {
      throw new UserError(`input line ${lineNo}: token ${JSON.stringify(t)} is not an id in [0, ${vocab})`);
    }
  }
  return { tokens: tokens as number[] };
}

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const parsed = parseArgs(args, { string: ['model', 'adapter', 'input', 'temperature', 'engine'] });
  if (parsed.positionals.length > 0) throw new UserError(`unexpected argument '${parsed.positionals[0]}' (see --help)`);
  const model = requireFlag(parsed, 'model');
  const input = requireFlag(parsed, 'input');
  const adapter = stringFlag(parsed, 'adapter');
  const temperature = positiveNumberFlag(parsed, 'temperature', 1);
  const engineKind = stringFlag(parsed, 'engine') ?? 'embedded';
  if (engineKind !== 'embedded' && engineKind !== 'torch') throw new UserError(`--engine must be embedded or torch, got '${engineKind}'`);
  if (!existsSync(model)) throw new UserError(`--model ${model}: no such folder`);
  if (!statSync(model).isDirectory()) throw new UserError(`--model ${model}: is a file; a Hugging Face model folder is expected`);
  if (!existsSync(join(model, 'config.json'))) throw new UserError(`--model ${model}: no config.json (not a Hugging Face model folder)`);
  if (adapter !== undefined && !existsSync(join(adapter, 'adapter_config.json'))) throw new UserError(`--adapter ${adapter}: no adapter_config.json (not a PEFT adapter folder)`);
  await checkInputFile('--input', input);

  let engine;
  try {
    engine = engineKind === 'torch' ? await loadTorchEngine(model) : await loadEngine(model);
    if (adapter !== undefined) await engine.loadAdapter('adapter', adapter);
  } catch (e) {
    throw new UserError((e as Error).message);
  }
  const target = adapter !== undefined ? { kind: 'adapter' as const, name: 'adapter' } : { kind: 'base' as const };
  try {
    await printLogprobs(engine, target, input, temperature, adapter !== undefined);
  } finally {
    await engine.dispose(); // stops the torch engine's worker
  }
  return 0;
}

async function printLogprobs(engine: Engine, target: Target, input: string, temperature: number, withAdapter: boolean): Promise<void> {
  for await (const line of readInputLines(input)) {
    const { tokens } = parseLine(line.text, line.number, engine.info.vocabSize);
    if (tokens.length > engine.info.contextLength) {
      throw new UserError(`input line ${line.number}: ${tokens.length} tokens exceed the model's context of ${engine.info.contextLength}`);
    }
    const out = await engine.forward(target, [{ tokens, scoreFrom: 1 }], { temperature });
    const logprobs = Array.from(out.logprobs![0]!);
    // JSON would print NaN and ±Infinity as null, which reads as a valid answer: refuse instead.
    const bad = logprobs.findIndex((x) => !Number.isFinite(x));
    if (bad >= 0) {
      throw new UserError(
        `input line ${line.number}: the log-prob of tokens[${bad + 1}] is ${logprobs[bad]}, not a finite number: the model${withAdapter ? ' (or the adapter)' : ''} gives non-finite outputs (weights that hold NaN or Inf, or a --temperature too small)`,
      );
    }
    process.stdout.write(`${JSON.stringify({ logprobs })}\n`);
  }
}

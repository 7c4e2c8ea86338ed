// `marft export CHECKPOINT --agent NAME (--hf DIR | --gguf FILE)`: one agent as a standalone model, its
// adapter merged into the base (src/export/, docs/export.md).
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, stringFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { ConfigError } from '../../config/schema-dsl.ts';
import { checkpointProblem } from '../../runs/checkpoint.ts';
import { baseModelDir, findTrainedRun, trainedTask } from '../../run/trained-run.ts';
import { WorkflowTask } from '../../tasks/workflow-task.ts';
import { TaskOptionError } from '../../tasks/options.ts';
import { writeMergedFolder } from '../../export/hf-folder.ts';
import { defaultGgufPython, ggufPythonProblem, writeGguf } from '../../export/gguf-file.ts';


const HELP = `usage: marft export CHECKPOINT --agent NAME (--hf DIR | --gguf FILE) [--python PY]

Merges agent NAME's LoRA adapter into the base model (W' = W + (alpha/r)·B·A for every target module,
float32) and writes the result. CHECKPOINT is a RUN/checkpoints/step-N folder, or a run folder (its
latest checkpoint). See docs/export.md.

  --agent NAME   the agent (marft serve lists the agents; with shared parameters all share one adapter)
  --hf DIR       a Hugging Face folder (model.safetensors, config.json, generation_config.json, the
                 tokenizer files, marft_export.json) that transformers and marft's engines load; DIR must
                 not exist or be empty
  --gguf FILE    a float32 GGUF file for llama.cpp (through scripts/hf-to-gguf.py: Qwen3 models with
                 marft's character tokenizer, and Llama models with a BPE vocabulary, as SmolLM2);
                 FILE must not exist
  --python PY    the Python that runs the GGUF conversion (default: MARFT_GGUF_PYTHON, else
                 .venv-llamacpp/bin/python from bash scripts/setup.sh --llamacpp; it needs gguf and numpy)

Both --hf and --gguf may be given. Prints one JSON line {"agent", "adapter", "checkpoint", "step",
"merged", "hf", "gguf"}.`;

function checkOut(flag: string, path: string, folder: boolean): void {
  if (!existsSync(path)) return;
  if (folder && statSync(path).isDirectory() && readdirSync(path).length === 0) return;
  throw new UserError(`--${flag} ${path}: already exists${folder ? ' and is not an empty folder' : ''}; choose another path (nothing is overwritten)`);
}

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const parsed = parseArgs(args, { string: ['agent', 'hf', 'gguf', 'python'] });
  const [given, ...extra] = parsed.positionals;
  if (!given || extra.length > 0) throw new UserError('expected exactly one CHECKPOINT folder (see --help)');
  const agent = stringFlag(parsed, 'agent');
  if (!agent) throw new UserError('--agent NAME is required (the agent whose adapter is merged)');
  const hf = stringFlag(parsed, 'hf');
  const gguf = stringFlag(parsed, 'gguf');
  if (!hf && !gguf) throw new UserError('--hf DIR or --gguf FILE is required (what to write)');
  if (hf) checkOut('hf', hf, true);
  if (gguf) checkOut('gguf', gguf, false);
  const python = stringFlag(parsed, 'python') ?? defaultGgufPython();
  if (gguf) {
    const problem = ggufPythonProblem(python);
    if (problem) throw new UserError(`--gguf: ${problem}`);
  }
  try {
    const found = await findTrainedRun(given);
    const problem = await checkpointProblem(found.checkpoint);
    if (problem) throw new UserError(`checkpoint ${found.checkpoint} is damaged: ${problem}`);
    const { bundle, policies } = await trainedTask(found);
    const adapter = policies[agent];
    if (!adapter) throw new UserError(`--agent ${agent}: not an agent of this run (agents: ${Object.keys(policies).join(', ')})`);
    const source = {
      baseDir: baseModelDir(found), adapterDir: join(found.checkpoint, 'adapters', adapter),
      tokenizer: bundle.task instanceof WorkflowTask ? bundle.task.tokenizer : null,
      provenance: { checkpoint: found.checkpoint, step: found.state.step, agent, adapter },
    };
    const scratch = hf ? null : mkdtempSync(join(tmpdir(), 'marft-export-'));
    try {
      const folder = writeMergedFolder(hf ? resolve(hf) : join(scratch!, 'model'), source);
      if (folder.tokenizer === 'none') console.error(`marft export: the base ${source.baseDir} has no tokenizer files and the task has no character tokenizer: the model takes token ids only`);
      if (gguf) writeGguf(folder.dir, resolve(gguf), python);
      console.log(JSON.stringify({ agent, adapter, checkpoint: found.checkpoint, step: found.state.step, merged: folder.merged.length, hf: hf ? folder.dir : null, gguf: gguf ? resolve(gguf) : null }));
    } finally {
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    }
    return 0;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof TaskOptionError) throw new UserError(err.message);
    if (err instanceof UserError) throw err;
    // The base or the adapter does not read (a file damaged or of another shape): the user's files, one line.
    if (err instanceof Error && err.constructor === Error) throw new UserError(err.message);
    throw err;
  }
}

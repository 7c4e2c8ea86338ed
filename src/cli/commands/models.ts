// `marft models import FILE.gguf OUT_DIR`: a GGUF file (llama.cpp's, Ollama's) of a Llama / Qwen2 /
// Qwen3 model as a Hugging Face model folder the engines load (docs/models.md). The conversion is
// scripts/gguf-to-hf.py in the Python environment that `bash scripts/setup.sh --models` makes
// (transformers' GGUF loader dequantises the weights); the folder is then loaded by marft's own engine
// and tokenizer, and a one-line summary printed.
import { spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync, readSync, closeSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, stringFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { loadEngine } from '../../engine/index.ts';
import { loadTokenizer } from '../../tokenizer/index.ts';


const repoRoot = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const script = join(repoRoot, 'scripts/gguf-to-hf.py');
/** The interpreter with torch, transformers and gguf: --python, else MARFT_MODELS_PYTHON, else the repository's .venv-models. */
export const defaultModelsPython = (): string => process.env.MARFT_MODELS_PYTHON || join(repoRoot, '.venv-models/bin/python');
export const SUPPORTED_ARCHITECTURES = ['llama', 'qwen2', 'qwen3'] as const;

const HELP = `usage: marft models import FILE.gguf OUT_DIR [--python PATH]

Writes OUT_DIR, a Hugging Face model folder (float32 model.safetensors, config.json,
generation_config.json, tokenizer.json, tokenizer_config.json, chat_template.jinja, LICENSE,
source.json, SHA256SUMS), from a GGUF file of a ${SUPPORTED_ARCHITECTURES.join(' / ')} model, quantised or not,
that transformers reads. Quantised weights are dequantised: the folder holds the quantised model's
values in float32. The folder is then loaded by marft's engine and tokenizer, and a summary printed:
architecture, layers, hidden size, vocabulary, parameters.

  --python PATH   Python with torch, transformers and gguf (default: MARFT_MODELS_PYTHON, else
                  .venv-models/bin/python, which bash scripts/setup.sh --models makes)

OUT_DIR must not exist (or be empty); it appears only once complete. Exit status 0 on success, 2 for
a missing or unreadable file, a file that is not GGUF, an architecture marft does not run, or a
missing Python environment (each said in one line).`;

/** The first bytes of every GGUF file (its magic number, "GGUF" in ASCII). */
function isGguf(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = new Uint8Array(4);
    return readSync(fd, head, 0, 4, 0) === 4 && String.fromCharCode(...head) === 'GGUF';
  } finally {
    closeSync(fd);
  }
}

interface Converted {
  out: string;
  architecture: string;
  layers: number;
  hidden: number;
  vocab: number;
  parameters: number;
  seconds: number;
}

/** Runs the conversion, relaying its progress lines; its one-line error becomes a UserError. */
function convert(python: string, file: string, out: string): Promise<Converted> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(python, [script, file, out], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TQDM_DISABLE: '1', TRANSFORMERS_VERBOSITY: 'error', HF_HUB_OFFLINE: '1', PYTHONUNBUFFERED: '1' },
    });
    let stdout = '';
    let pending = '';
    let error = '';
    const other: string[] = [];
    const onLine = (line: string): void => {
      if (line.startsWith('[gguf-to-hf] ')) console.error(`[models import] ${line.slice('[gguf-to-hf] '.length)}`);
      else if (line.startsWith('gguf-to-hf: ')) error = line.slice('gguf-to-hf: '.length);
      else if (line.trim() !== '') other.push(line);
    };
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      pending += d;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      lines.forEach(onLine);
    });
    child.on('error', (e) => reject(new UserError(`cannot run ${python}: ${e.message}`)));
    child.on('close', (code) => {
      if (pending) onLine(pending);
      if (code === 0) {
        const last = stdout.trim().split('\n').at(-1) ?? '';
        try {
          resolvePromise(JSON.parse(last) as Converted);
        } catch {
          reject(new Error(`scripts/gguf-to-hf.py printed no summary: ${stdout}`));
        }
      } else if (error) {
        reject(new UserError(error));
      } else {
        // Not one of the script's own errors (a crash of Python or of a library): its last words.
        reject(new UserError(`the conversion stopped (exit code ${code}): ${other.slice(-1)[0] ?? 'no message'}`));
      }
    });
  });
}

function parameterCount(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : String(n);
}

async function importModel(args: string[]): Promise<number> {
  const parsed = parseArgs(args, { string: ['python'] });
  const [file, out, ...extra] = parsed.positionals;
  if (file === undefined || out === undefined) throw new UserError('usage: marft models import FILE.gguf OUT_DIR [--python PATH]');
  if (extra.length > 0) throw new UserError(`unexpected argument '${extra[0]}' (see --help)`);
  if (!existsSync(file)) throw new UserError(`${file}: no such file`);
  if (statSync(file).isDirectory()) throw new UserError(`${file}: is a folder; a GGUF file is expected`);
  if (!isGguf(file)) throw new UserError(`${file}: not a GGUF file (it does not start with the GGUF magic bytes)`);
  if (existsSync(out) && (!statSync(out).isDirectory() || readdirSync(out).length > 0)) {
    throw new UserError(`${out}: already exists; remove it or choose another folder`);
  }
  const python = stringFlag(parsed, 'python') ?? defaultModelsPython();
  if (!existsSync(python)) {
    throw new UserError(`no ${python}: bash scripts/setup.sh --models makes the Python environment (torch, transformers, gguf) the import runs in`);
  }

  const converted = await convert(python, file, out);
  // The folder must serve marft as it is: the engine loads it, the tokenizer reads it, the model scores.
  let line: string;
  try {
    const tokenizer = loadTokenizer(out);
    const engine = await loadEngine(out);
    try {
      if (engine.info.vocabSize !== converted.vocab) throw new Error(`the engine's vocabulary is ${engine.info.vocabSize}, config.json's ${converted.vocab}`);
      let probe: number[];
      try {
        probe = tokenizer.encodeChat([{ role: 'user', content: 'Hello.' }], { addGenerationPrompt: true });
      } catch {
        probe = tokenizer.encode('Hello, world.'); // a folder without a chat template
      }
      const scored = await engine.score({ kind: 'base' }, [{ tokens: probe.length > 1 ? probe : [0, 0], scoreFrom: 1 }]);
      if (!scored[0]!.every(Number.isFinite)) throw new Error('the model gives log-probs that are not finite');
      const tokenizerConfig = join(out, 'tokenizer_config.json');
      const chat = existsSync(join(out, 'chat_template.jinja'))
        || (existsSync(tokenizerConfig) && 'chat_template' in (JSON.parse(readFileSync(tokenizerConfig, 'utf8')) as object));
      line = `${out}: ${converted.architecture}, ${converted.layers} layers, hidden ${converted.hidden}, vocabulary ${converted.vocab}, `
        + `${parameterCount(converted.parameters)} parameters (float32), context ${engine.info.contextLength}, `
        + `${chat ? 'chat template' : 'no chat template'}; written in ${converted.seconds} s`;
    } finally {
      await engine.dispose();
    }
  } catch (e) {
    throw new UserError(`${out}: written, but marft cannot use it (the folder is kept): ${(e as Error).message}`);
  }
  console.log(line);
  return 0;
}

export async function run(args: string[]): Promise<number> {
  if (args.length === 0 || args[0] === '--help' || args[0] === '-h' || args.includes('--help')) {
    console.log(HELP);
    return args.length === 0 ? 2 : 0;
  }
  const [sub, ...rest] = args;
  if (sub === 'import') return importModel(rest);
  throw new UserError(`unknown subcommand '${sub}' (subcommands: import)`);
}

// `marft` command dispatcher. The commands are listed below with their one-line summaries (what
// `marft --help` prints without loading any of them); each lives in ./commands/<name>.ts and exports
// `run(args: string[]): Promise<number>` (the exit code), loaded only when it is the one asked for.
import { UserError } from './errors.ts';
import { ConfigError } from '../config/schema-dsl.ts';
import { didYouMean } from '../core/did-you-mean.ts';
import { packageVersion } from '../core/code-version.ts';
import { isOutOfMemory, outOfMemoryLine } from '../runs/memory-errors.ts';

interface Command {
  run(args: string[]): Promise<number>;
}

interface CommandEntry {
  summary: string;
  load(): Promise<Command>;
}

const COMMANDS: Record<string, CommandEntry> = {
  dashboard: {
    summary: 'a local web page of runs\' curves and sampled episodes, live while they train (RUN_DIR... [--port N])',
    load: () => import('./commands/dashboard.ts'),
  },
  demo: {
    summary: 'train a Planner → Solver team with MARFT from scratch and show the held-out gain ([--run-dir DIR] [--seed N] [--quick]); `demo mas-opd`: the MAS-OPD study',
    load: () => import('./commands/demo.ts'),
  },
  eval: {
    summary: 'score a checkpoint, or the untrained system, on held-out problems: mean over decoding seeds, pass@k (CONFIG --checkpoint DIR [--base] | CONFIG --base) [--output FILE]',
    load: () => import('./commands/eval.ts'),
  },
  experiment: {
    summary: 'rerun a table: train every row × seed of an experiment file, evaluate on every column, write mean ± std (FILE [--out DIR])',
    load: () => import('./commands/experiment.ts'),
  },
  export: {
    summary: 'write one trained agent as a model, its adapter merged into the base (CHECKPOINT --agent NAME --hf DIR | --gguf FILE)',
    load: () => import('./commands/export.ts'),
  },
  logprobs: {
    summary: 'print per-token log-probs of token sequences (--model DIR [--adapter DIR] --input FILE.jsonl)',
    load: () => import('./commands/logprobs.ts'),
  },
  models: {
    summary: 'import a GGUF model file as a model folder (import FILE.gguf OUT_DIR)',
    load: () => import('./commands/models.ts'),
  },
  serve: {
    summary: 'serve a trained run\'s agents and base as an OpenAI-compatible server (RUN_OR_CHECKPOINT [--port N] [--team])',
    load: () => import('./commands/serve.ts'),
  },
  show: {
    summary: "print a run's sampled episodes: each agent's turns, text and per-token advantages (RUN [--step N] [--episode E] [--agent NAME])",
    load: () => import('./commands/show.ts'),
  },
  train: {
    summary: 'train a multi-agent system with MARFT, a baseline or MAS-OPD (CONFIG --run-dir DIR, or --resume DIR)',
    load: () => import('./commands/train.ts'),
  },
  verify: {
    summary: 'judge programs (code) or maths answers (math) from a JSONL file',
    load: () => import('./commands/verify.ts'),
  },
};

/** The names `marft` dispatches to, sorted. */
export function commandNames(): string[] {
  return Object.keys(COMMANDS).sort();
}

/** The version of package.json (src/core/code-version.ts reads it). */
export function marftVersion(): string {
  return packageVersion();
}

function printHelp(): void {
  const lines = ['usage: marft <command> [options]', '       marft --version', '', 'commands:'];
  for (const name of commandNames()) lines.push(`  ${name.padEnd(10)} ${COMMANDS[name]!.summary}`);
  lines.push('', 'Run `marft <command> --help` for the options of one command.');
  console.log(lines.join('\n'));
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    printHelp();
    return name ? 0 : 1;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    console.log(marftVersion());
    return 0;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name]! : null;
  if (!entry) {
    const hint = didYouMean(name, commandNames(), (n) => `'${n}'`);
    console.error(`marft: unknown command '${name}'${hint ? `; ${hint}` : '.'} Commands: ${commandNames().join(', ')}`);
    return 2;
  }
  const cmd = await entry.load();
  try {
    return await cmd.run(rest);
  } catch (err) {
    // A user's mistake is reported in one line; anything else is a bug and keeps its stack.
    if (err instanceof UserError || err instanceof ConfigError) {
      // One line even when the message came with several (an engine's error passed on); a syntax
      // error's code frame (ConfigError.frame) follows it, as editors and compilers show one.
      console.error(`marft ${name}: ${err.message.replace(/\s*\n\s*/g, ' ')}`);
      if (err instanceof ConfigError && err.frame) console.error(err.frame);
      return 2;
    }
    // Memory the machine does not have is not a bug either (a training step's is already one
    // line, a MemoryExhaustedError, a UserError; this is the rest: evaluations, marft eval, serving).
    if (isOutOfMemory(err)) {
      console.error(`marft ${name}: ${outOfMemoryLine(err as Error)}`);
      return 2;
    }
    throw err;
  }
}

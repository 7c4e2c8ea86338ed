// One-step arithmetic word problems in GSM8K's layout ({"question", "answer": "... #### N"}), for
// training a small real model where its base has signal (issue: SmolLM2-135M-Instruct solves 1-2% of
// GSM8K, too few for a policy gradient to find). Deterministic: the same seed writes the same files.
//
//   node --import tsx scripts/make-word-problems.ts --out examples/real/data [--seed 7] [--train 600] [--test 200]
//
// Each problem is one of four templates (addition, subtraction, multiplication, a two-step sum), with
// small numbers; train and test never share a question.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Rng } from '../src/core/rng.ts';

const NAMES = ['Anna', 'Ben', 'Carla', 'David', 'Emma', 'Farid', 'Grace', 'Hugo', 'Ines', 'Jonas', 'Kira', 'Leo', 'Maya', 'Noah', 'Olga', 'Pablo'];
const ITEMS = ['apples', 'pencils', 'marbles', 'stickers', 'cookies', 'books', 'shells', 'coins', 'cards', 'flowers'];

interface WordProblem {
  question: string;
  answer: string;
}

function makeProblem(rng: Rng): WordProblem {
  const name = rng.pick(NAMES);
  const item = rng.pick(ITEMS);
  const kind = rng.int(0, 3);
  if (kind === 0) {
    const a = rng.int(2, 20);
    const b = rng.int(2, 20);
    return {
      question: `${name} has ${a} ${item}. ${name} gets ${b} more ${item}. How many ${item} does ${name} have now?`,
      answer: `${name} has ${a} + ${b} = ${a + b} ${item}.\n#### ${a + b}`,
    };
  }
  if (kind === 1) {
    const b = rng.int(2, 15);
    const a = b + rng.int(1, 15);
    return {
      question: `${name} has ${a} ${item} and gives ${b} of them to a friend. How many ${item} does ${name} have left?`,
      answer: `${name} has ${a} - ${b} = ${a - b} ${item} left.\n#### ${a - b}`,
    };
  }
  if (kind === 2) {
    const a = rng.int(2, 9);
    const b = rng.int(2, 9);
    return {
      question: `${name} has ${a} bags with ${b} ${item} in each bag. How many ${item} does ${name} have in total?`,
      answer: `${name} has ${a} * ${b} = ${a * b} ${item}.\n#### ${a * b}`,
    };
  }
  const a = rng.int(2, 12);
  const b = rng.int(2, 12);
  const c = rng.int(2, 12);
  return {
    question: `${name} picks ${a} ${item} on Monday, ${b} on Tuesday and ${c} on Wednesday. How many ${item} does ${name} pick in all?`,
    answer: `${name} picks ${a} + ${b} + ${c} = ${a + b + c} ${item}.\n#### ${a + b + c}`,
  };
}

/** `train` and `test` problems with distinct questions, drawn from `seed`. */
export function makeWordProblems(seed: number, train: number, test: number): { train: WordProblem[]; test: WordProblem[] } {
  const rng = new Rng(seed);
  const seen = new Set<string>();
  const all: WordProblem[] = [];
  for (let tries = 0; all.length < train + test; tries++) {
    if (tries > 100 * (train + test)) throw new Error(`only ${all.length} distinct problems after ${tries} draws; ask for fewer`);
    const p = makeProblem(rng);
    if (seen.has(p.question)) continue;
    seen.add(p.question);
    all.push(p);
  }
  return { train: all.slice(0, train), test: all.slice(train) };
}

const USAGE = 'usage: node --import tsx scripts/make-word-problems.ts --out DIR [--seed 7] [--train 600] [--test 200]';

function main(argv: string[]): void {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { out: { type: 'string' }, seed: { type: 'string', default: '7' }, train: { type: 'string', default: '600' }, test: { type: 'string', default: '200' } },
    }));
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  const out = values.out;
  if (!out) {
    console.error(USAGE);
    process.exit(2);
  }
  const count = (flag: string): number => {
    const v = Number(values[flag]);
    if (!Number.isInteger(v) || v < 0) {
      console.error(`--${flag}: expected a whole number, got ${values[flag]}`);
      process.exit(2);
    }
    return v;
  };
  const sets = makeWordProblems(count('seed'), count('train'), count('test'));
  mkdirSync(out, { recursive: true });
  for (const [split, problems] of Object.entries(sets)) {
    const file = join(out, `word-problems-${split}.jsonl`);
    writeFileSync(file, problems.map((p) => JSON.stringify(p)).join('\n') + '\n');
    console.log(`wrote ${problems.length} problems to ${file}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));

// `marft verify code|math --input FILE.jsonl`: judge programs or maths answers from outside.
//
// code: each line {"id", "program", "timeout_s"?, and one of "tests": [{"stdin","stdout"}],
//   "assert": "<code run after the program>" (or an array of scripts, one test each, with an
//   optional "setup"), "call": {"fn", "cases": [{"args": [...], "expected": ...}]}}
//   -> {"id", "passed", "total", "results": [{"status", "stderr"?}]}
// math: each line {"id", "gold", "pred", "benchmark"?, "problem"?} -> the same line plus "equal":
//   true|false, or "equal": null and "error": "timeout" when judging it ran over the per-line limit
//   (--timeout; a nested or huge answer can take arbitrarily long, and one such line must not hold
//   up the file). "benchmark" (else --benchmark) picks a benchmark's own scorer
//   (src/verify/math/benchmarks/); without one, marft's comparison.
// Output lines keep the input order. A malformed line is reported on stderr with its line number
// and skipped; the rest are still judged. Exit status: 0 when every line was judged, 1 when some
// were malformed (or, for math, left undecided), 2 for a usage error.
import { createWriteStream, existsSync, openSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Writable } from 'node:stream';
import { parseArgs, requireFlag, stringFlag, numberFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { checkInputFile, readInputLines } from '../input-lines.ts';
import { SlotLimiter } from '../../sandbox/index.ts';
import { verifyCode, parsePyJson, type CodeTests, type PyJson } from '../../verify/code/index.ts';
import { TimedMathJudge, type JudgeScoring, type TimedVerdict } from '../../verify/math/timed-judge.ts';
import { BENCHMARK_SCORERS, BENCHMARK_NAMES, type BenchmarkProblemInfo } from '../../verify/math/benchmarks/index.ts';

/** Default time limit for judging one maths line: comparisons take well under a millisecond to a few hundred. */
export const MATH_LINE_TIMEOUT_S = 10;

const HELP = `usage: marft verify code --input FILE.jsonl [--output FILE] [--concurrency N] [--timeout SECONDS]
       marft verify math --input FILE.jsonl [--output FILE] [--timeout SECONDS] [--benchmark NAME]

code: each input line is {"id", "program", "timeout_s"?, and one of
        "tests": [{"stdin", "stdout"}]                 stdin/stdout, LiveCodeBench comparison
        "assert": "<code run after the program>"      e.g. HumanEval test + "check(fn)", MBPP asserts
        "assert": ["<script>", ...], "setup"?: "<code>"  one test per script, after setup (dense)
        "call": {"fn", "cases": [{"args": [...], "expected": ...}]}   return values compared as JSON}
      and gives {"id", "passed", "total", "results": [{"status", "stderr"?}]} per line, in input order.
      status: passed | wrong_answer | runtime_error | timeout | memory | output_limit | killed
math: each input line is {"id", "gold", "pred"} and gives the same line plus "equal": true|false,
      or "equal": null, "error": "timeout" when judging the line ran over its time limit.
      Optional fields: "benchmark": NAME (wins over --benchmark; null: marft's own comparison) and
      "problem": {"error", "answer_type", "unit"} (OlympiadBench's per-problem tolerance and type).
      With a benchmark, "pred" is read as a model's response by that benchmark's extraction rule
      (boxed-only ones find nothing in a bare answer) and judged by its authors' equivalence:
${BENCHMARK_NAMES.map((n) => `        ${n.padEnd(14)}${BENCHMARK_SCORERS[n]!.describe}`).join('\n')}

options:
  --input FILE        JSONL input (required)
  --output FILE       write results here instead of stdout
  --concurrency N     programs run at once (default: number of cores)       [code]
  --timeout SECONDS   code: per-test wall-clock limit when a line has no timeout_s (default 30)
                      math: time limit for judging one line (default ${MATH_LINE_TIMEOUT_S})
  --benchmark NAME    math: score every line with this benchmark's scorer (one of
                      ${BENCHMARK_NAMES.join(', ')}); default: marft's own comparison

Malformed lines are reported on stderr (file:line: what is wrong) and skipped; a maths line over
its limit is reported there too, and the lines after it are still judged. Exit status 0 when every
line was judged, 1 when some lines were malformed or undecided, 2 for a usage error.`;

function isObject(v: PyJson): v is { [key: string]: PyJson } {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Writes results in input order although they finish out of order. */
class OrderedWriter {
  private next = 0;
  private readonly pending = new Map<number, string | null>();
  constructor(private readonly out: Writable) {}
  /** `text` null: slot `index` produced no output (malformed line). */
  put(index: number, text: string | null): void {
    this.pending.set(index, text);
    while (this.pending.has(this.next)) {
      const t = this.pending.get(this.next);
      this.pending.delete(this.next);
      if (t !== null && t !== undefined) this.out.write(`${t}\n`);
      this.next++;
    }
  }
}

interface CodeItem {
  id: PyJson;
  program: string;
  timeoutMs: number;
  tests: CodeTests;
}

/** Validates one code line; throws an Error whose message says what is wrong. */
export function parseCodeLine(text: string, defaultTimeoutS: number): CodeItem {
  let v: PyJson;
  try {
    v = parsePyJson(text);
  } catch (err) {
    throw new Error(`not valid JSON (${(err as Error).message})`);
  }
  if (!isObject(v)) throw new Error('expected a JSON object');
  if (!('id' in v)) throw new Error('missing "id"');
  if (typeof v.program !== 'string') throw new Error('"program" must be a string');
  let timeoutS = defaultTimeoutS;
  if ('timeout_s' in v && v.timeout_s !== null) {
    if (typeof v.timeout_s !== 'number' || !(v.timeout_s > 0) || v.timeout_s > 3600) throw new Error('"timeout_s" must be a number of seconds in (0, 3600]');
    timeoutS = v.timeout_s;
  }
  const kinds = ['tests', 'assert', 'call'].filter((k) => k in v);
  if (kinds.length !== 1) throw new Error(`needs exactly one of "tests", "assert", "call" (found ${kinds.length ? kinds.map((k) => `"${k}"`).join(', ') : 'none'})`);
  let tests: CodeTests;
  if (kinds[0] === 'tests') {
    if (!Array.isArray(v.tests)) throw new Error('"tests" must be an array of {"stdin", "stdout"}');
    tests = {
      kind: 'stdio',
      tests: v.tests.map((t, i) => {
        if (!isObject(t) || typeof t.stdout !== 'string' || ('stdin' in t && typeof t.stdin !== 'string')) throw new Error(`"tests"[${i}] must be {"stdin": string, "stdout": string}`);
        return { stdin: typeof t.stdin === 'string' ? t.stdin : '', stdout: t.stdout };
      }),
    };
  } else if (kinds[0] === 'assert') {
    const a = v.assert;
    if ('setup' in v && typeof v.setup !== 'string') throw new Error('"setup" must be a string of Python code');
    if (typeof a === 'string' && !('setup' in v)) tests = { kind: 'assert', code: a };
    else if (typeof a === 'string' || (Array.isArray(a) && a.every((x) => typeof x === 'string'))) {
      tests = { kind: 'asserts', tests: typeof a === 'string' ? [a] : (a as string[]) };
      if (typeof v.setup === 'string') tests.setup = v.setup;
    } else throw new Error('"assert" must be a string of Python code or an array of them');
  } else {
    const call = v.call;
    if (!isObject(call) || typeof call.fn !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(call.fn) || !Array.isArray(call.cases)) {
      throw new Error('"call" must be {"fn": "<python identifier>", "cases": [{"args": [...], "expected": ...}]}');
    }
    tests = {
      kind: 'call',
      fn: call.fn,
      cases: call.cases.map((c, i) => {
        if (!isObject(c) || !Array.isArray(c.args) || !('expected' in c)) throw new Error(`"call.cases"[${i}] must be {"args": [...], "expected": ...}`);
        return { args: c.args, expected: c.expected! };
      }),
    };
  }
  return { id: v.id!, program: v.program, timeoutMs: Math.round(timeoutS * 1000), tests };
}

function stringifyId(id: PyJson): string {
  return typeof id === 'bigint' ? id.toString() : JSON.stringify(id);
}

class Progress {
  private readonly started = performance.now();
  private lastPrint = performance.now();
  done = 0;
  constructor(private readonly label: string) {}
  tick(): void {
    this.done++;
    const now = performance.now();
    if (now - this.lastPrint >= 5000) {
      this.lastPrint = now;
      process.stderr.write(`${this.label}: ${this.done} lines judged (${(this.done / ((now - this.started) / 1000)).toFixed(1)}/s)\n`);
    }
  }
  finish(malformed: number): void {
    const s = (performance.now() - this.started) / 1000;
    if (s >= 5 || malformed > 0) process.stderr.write(`${this.label}: ${this.done} lines judged in ${s.toFixed(1)}s${malformed ? `, ${malformed} malformed line(s) skipped` : ''}\n`);
  }
}

async function verifyCodeFile(input: string, out: Writable, concurrency: number, defaultTimeoutS: number): Promise<number> {
  const limiter = new SlotLimiter(concurrency);
  const writer = new OrderedWriter(out);
  const progress = new Progress('marft verify code');
  const inFlight = new Set<Promise<void>>();
  let malformed = 0;
  let index = 0;
  for await (const line of readInputLines(input)) {
    if (readerGone) break;
    const slot = index++;
    let item: CodeItem;
    try {
      item = parseCodeLine(line.text, defaultTimeoutS);
    } catch (err) {
      malformed++;
      process.stderr.write(`${input}:${line.number}: ${(err as Error).message}\n`);
      writer.put(slot, null);
      continue;
    }
    const job = (async () => {
      let result: string;
      try {
        const verdict = await verifyCode({ program: item.program, tests: item.tests, timeoutMs: item.timeoutMs, limiter });
        result = `{"id":${stringifyId(item.id)},"passed":${verdict.passed},"total":${verdict.total},"results":${JSON.stringify(verdict.results)}}`;
      } catch (err) {
        // A failure of the machinery (not of the program): report it on this line, keep going.
        result = `{"id":${stringifyId(item.id)},"passed":0,"total":0,"results":[],"error":${JSON.stringify(String((err as Error).message ?? err))}}`;
        process.stderr.write(`${input}:${line.number}: could not be judged: ${(err as Error).message}\n`);
      }
      writer.put(slot, result);
      progress.tick();
    })();
    inFlight.add(job);
    void job.finally(() => inFlight.delete(job));
    // Keep enough lines in flight to fill the sandbox slots without reading the whole file into memory.
    while (inFlight.size >= concurrency * 4) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  progress.finish(malformed);
  return malformed > 0 ? 1 : 0;
}

/** Sandboxed processes run at once, at most. */
const MAX_CONCURRENCY = 1024;

/** Set when stdout's reader went away (EPIPE): nothing more is read or judged. */
let readerGone = false;

async function verifyMathFile(input: string, out: Writable, lineTimeoutS: number, benchmark: string | undefined): Promise<number> {
  const progress = new Progress('marft verify math');
  const judge = new TimedMathJudge(lineTimeoutS * 1000);
  try {
    return await judgeMathLines(input, out, judge, lineTimeoutS, benchmark, progress);
  } finally {
    await judge.close();
  }
}

function unknownBenchmark(name: unknown): string {
  return `unknown benchmark ${JSON.stringify(name)} (known: ${BENCHMARK_NAMES.join(', ')})`;
}

/** A line's scorer: its own "benchmark" (null: none) over the flag's, and its "problem" facts. Throws an Error saying what is wrong. */
export function mathLineScoring(o: Record<string, unknown>, flagBenchmark: string | undefined): JudgeScoring {
  const scoring: JudgeScoring = {};
  const benchmark = 'benchmark' in o ? o.benchmark : flagBenchmark;
  if (benchmark !== null && benchmark !== undefined) {
    if (typeof benchmark !== 'string' || !Object.hasOwn(BENCHMARK_SCORERS, benchmark)) throw new Error(unknownBenchmark(benchmark));
    scoring.benchmark = benchmark;
  }
  if ('problem' in o && o.problem !== null) {
    const p = o.problem as Record<string, unknown>;
    if (typeof p !== 'object' || Array.isArray(p)) throw new Error('"problem" must be an object {"error", "answer_type", "unit"}');
    const problem: BenchmarkProblemInfo = {};
    if (p.error !== undefined && p.error !== null) {
      if (typeof p.error !== 'string' && typeof p.error !== 'number') throw new Error('"problem.error" must be a number or a string such as "1e-2" or "1e34,1e-3"');
      problem.error = p.error;
    }
    for (const [key, field] of [['answer_type', 'answerType'], ['unit', 'unit']] as const) {
      const v = p[key];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string') throw new Error(`"problem.${key}" must be a string`);
      problem[field] = v;
    }
    scoring.problem = problem;
  }
  return scoring;
}

async function judgeMathLines(input: string, out: Writable, judge: TimedMathJudge, lineTimeoutS: number, benchmark: string | undefined, progress: Progress): Promise<number> {
  let malformed = 0;
  let undecided = 0;
  for await (const line of readInputLines(input)) {
    if (readerGone) break;
    let v: unknown;
    try {
      v = JSON.parse(line.text);
    } catch (err) {
      malformed++;
      process.stderr.write(`${input}:${line.number}: not valid JSON (${(err as Error).message})\n`);
      continue;
    }
    const o = v as Record<string, unknown>;
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !('id' in o) || typeof o.gold !== 'string' || typeof o.pred !== 'string') {
      malformed++;
      process.stderr.write(`${input}:${line.number}: expected {"id", "gold": string, "pred": string}\n`);
      continue;
    }
    let scoring: JudgeScoring;
    try {
      scoring = mathLineScoring(o, benchmark);
    } catch (err) {
      malformed++;
      process.stderr.write(`${input}:${line.number}: ${(err as Error).message}\n`);
      continue;
    }
    let verdict: TimedVerdict;
    try {
      verdict = await judge.judge(o.gold, o.pred, scoring);
    } catch (err) {
      throw new UserError(`${input}:${line.number}: ${(err as Error).message}`);
    }
    if (verdict.equal === null) {
      undecided++;
      const why = verdict.error === 'timeout' ? `not judged within the ${lineTimeoutS} s limit (--timeout)` : verdict.error;
      process.stderr.write(`${input}:${line.number}: ${why}; written with "equal": null\n`);
    }
    out.write(`${JSON.stringify({ ...o, ...verdict })}\n`);
    progress.tick();
  }
  progress.finish(malformed);
  if (undecided > 0) process.stderr.write(`marft verify math: ${undecided} line(s) undecided\n`);
  return malformed > 0 || undecided > 0 ? 1 : 0;
}

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const args = parseArgs(argv, { string: ['input', 'output', 'concurrency', 'timeout', 'benchmark'] });
  const what = args.positionals[0];
  if (what !== 'code' && what !== 'math') throw new UserError(`say what to verify: 'marft verify code ...' or 'marft verify math ...' (see --help)`);
  if (args.positionals.length > 1) throw new UserError(`unexpected argument '${args.positionals[1]}'`);
  const input = requireFlag(args, 'input');
  if (input !== '-' && !existsSync(input)) throw new UserError(`input file not found: ${input}`);
  await checkInputFile('--input', input);
  const concurrency = numberFlag(args, 'concurrency', 0);
  // Bounded: every slot is a process, and 4 lines per slot are held in memory.
  if (stringFlag(args, 'concurrency') !== undefined && (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY)) {
    throw new UserError(`--concurrency must be an integer in [1, ${MAX_CONCURRENCY}], got '${stringFlag(args, 'concurrency')}'`);
  }
  const benchmark = stringFlag(args, 'benchmark');
  if (benchmark !== undefined && what !== 'math') throw new UserError(`--benchmark applies to 'marft verify math' only`);
  if (benchmark !== undefined && !Object.hasOwn(BENCHMARK_SCORERS, benchmark)) throw new UserError(`--benchmark: ${unknownBenchmark(benchmark)}`);
  const timeoutS = numberFlag(args, 'timeout', what === 'code' ? 30 : MATH_LINE_TIMEOUT_S);
  // The same range as a line's timeout_s.
  if (!(timeoutS > 0) || timeoutS > 3600) throw new UserError(`--timeout must be a number of seconds in (0, 3600], got '${stringFlag(args, 'timeout')}'`);

  const outputPath = stringFlag(args, 'output');
  let out: Writable = process.stdout;
  if (outputPath) {
    let fd: number;
    try {
      fd = openSync(outputPath, 'w');
    } catch (err) {
      throw new UserError(`cannot write --output ${outputPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    out = createWriteStream('', { fd });
  } else {
    // A reader that went away (`| head`): read no further, let the runs in flight finish and
    // clean up, then end quietly instead of with a stack trace.
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      readerGone = true;
    });
  }
  const code = what === 'code' ? await verifyCodeFile(input, out, concurrency || availableParallelism(), timeoutS) : await verifyMathFile(input, out, timeoutS, benchmark);
  if (outputPath) await new Promise<void>((resolve, reject) => (out as ReturnType<typeof createWriteStream>).end((err?: Error | null) => (err ? reject(err) : resolve())));
  return code;
}

// Loaders for the coding benchmarks in data/ (HumanEval, MBPP, APPS selected150) and for
// the published JSONL layouts of DeepCoder, LiveCodeBench and CodeContests (issue 3 item 3). Each
// problem's golden tests come out in one of the three kinds src/verify/code judges.
import { inflateSync } from 'node:zlib';
import { parsePyJson, type CodeTests, type PyJson } from '../../verify/code/index.ts';
import { jsonField, loadJsonl, optStr, recordId, str, describe, type Row } from './jsonl.ts';
import { tryParsePythonLiteral } from './python-literal.ts';
import { readPickledString } from './pickle-string.ts';
import { RecordError, type CodeProblem, type LoadResult } from './types.ts';

type StdioTest = { stdin: string; stdout: string };
type CallCase = { args: PyJson[]; expected: PyJson };

function asText(v: unknown, what: string): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return (v as string[]).join('\n');
  throw new RecordError(`${what} must be a string, got ${describe(v)}`);
}

/** Parameters of `def name(...)` in a starter code (self removed; `required` = without defaults), or null. */
export function functionParameters(code: string, name?: string): { name: string; params: string[]; required: number } | null {
  const re = name ? new RegExp(`def\\s+(${name})\\s*\\(([^)]*)\\)`) : /def\s+(\w+)\s*\(([^)]*)\)/;
  const m = re.exec(code);
  if (!m) return null;
  const raw = m[2]!
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '' && p !== 'self' && !p.startsWith('*'));
  return { name: m[1]!, params: raw.map((p) => p.split(/[:=]/)[0]!.trim()), required: raw.filter((p) => !p.includes('=')).length };
}

/** HumanEval: {task_id, prompt, entry_point, canonical_solution, test}; the test defines check(candidate). */
export function humanEvalRow(row: Row): CodeProblem {
  const prompt = str(row, 'prompt');
  const entryPoint = str(row, 'entry_point');
  return {
    domain: 'code',
    id: str(row, 'task_id'),
    dataset: 'humaneval',
    statement: prompt,
    starterCode: prompt,
    entryPoint,
    referenceSolution: prompt + str(row, 'canonical_solution'),
    tests: { kind: 'assert', code: `${str(row, 'test')}\n\ncheck(${entryPoint})\n` },
    meta: {},
  };
}

/**
 * MBPP: {task_id, text, code, test_setup_code, test_list, challenge_test_list}. This copy stores the
 * lists as Python-literal strings ("['assert f(1) == 2', ...]"); JSON arrays are accepted too.
 */
export function mbppRow(row: Row, line: number): CodeProblem {
  const list = (key: string): string[] => {
    const v = row[key];
    if (v === undefined || v === null || v === '') return [];
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
    if (typeof v === 'string') {
      const parsed = tryParsePythonLiteral(v);
      if (parsed && Array.isArray(parsed.value) && parsed.value.every((x) => typeof x === 'string')) return parsed.value as string[];
    }
    throw new RecordError(`field "${key}" must be a list of assert strings`);
  };
  const tests = list('test_list');
  if (tests.length === 0) throw new RecordError('field "test_list" is empty');
  const setup = optStr(row, 'test_setup_code') ?? '';
  const fn = /assert\s+(?:not\s+)?\(?\s*(?:set\()?\s*(?:math\.isclose\()?\s*(\w+)\s*\(/.exec(tests[0]!)?.[1];
  const p: CodeProblem = {
    domain: 'code',
    id: `mbpp/${recordId(row, ['task_id'], 'mbpp', line)}`,
    dataset: 'mbpp',
    statement: `${str(row, 'text')}\nYour code should pass these tests:\n${tests.join('\n')}`,
    referenceSolution: str(row, 'code').replace(/\r\n/g, '\n'),
    tests: { kind: 'assert', code: `${setup}\n${tests.join('\n')}\n` },
    meta: { challengeTests: list('challenge_test_list') },
  };
  if (fn) p.entryPoint = fn;
  return p;
}

/**
 * APPS, MapCoder's selected150: {id, name, description, difficulty, starter_code, sample_io,
 * test_list: [{input, output: [value]}]}. With a starter code the tests are call-based: the input
 * holds one argument per line, each a Python literal or else a bare string; the expected value is
 * output[0]. Without one they are stdin/stdout and output[0] is the expected text.
 */
export function appsSelectedRow(row: Row, line: number): CodeProblem {
  const tests = jsonField(row, 'test_list');
  if (!Array.isArray(tests) || tests.length === 0) throw new RecordError('field "test_list" must be a non-empty list');
  const starter = optStr(row, 'starter_code');
  const id = `apps/${recordId(row, ['id', 'name'], 'apps', line)}`;
  const base = { domain: 'code' as const, id, dataset: 'apps', statement: str(row, 'description'), meta: { difficulty: row['difficulty'] } };
  const expectedOf = (t: Record<string, unknown>, k: number): unknown => {
    const out = t['output'];
    if (!Array.isArray(out) || out.length !== 1) throw new RecordError(`test ${k}: "output" must be a one-element list`);
    return out[0];
  };
  if (!starter) {
    const stdio: StdioTest[] = tests.map((t: Record<string, unknown>, k) => ({ stdin: asText(t['input'], `test ${k} input`), stdout: asText(expectedOf(t, k), `test ${k} output`) }));
    return { ...base, tests: { kind: 'stdio', tests: stdio } };
  }
  const sig = functionParameters(starter);
  if (!sig) throw new RecordError('starter_code has no "def name(...)"');
  const cases: CallCase[] = tests.map((t: Record<string, unknown>, k) => {
    const input = asText(t['input'], `test ${k} input`);
    return { args: appsArguments(input, sig.params.length, sig.required), expected: expectedOf(t, k) as PyJson };
  });
  return { ...base, starterCode: starter, entryPoint: sig.name, tests: { kind: 'call', fn: sig.name, cases } };
}

/**
 * APPS call arguments: one per line, each a Python literal or else the bare line as a string. Fewer
 * lines than parameters leave the defaulted ones out; more lines than parameters mean the first
 * argument is a multi-line string (the extra lines join it).
 */
export function appsArguments(input: string, paramCount: number, requiredCount = paramCount): PyJson[] {
  const lit = (s: string): PyJson => tryParsePythonLiteral(s)?.value ?? s;
  const lines = input.split('\n');
  if (paramCount <= 1) {
    const whole = tryParsePythonLiteral(input);
    if (whole) return [whole.value];
    return [lines.length === 1 ? lit(input) : input];
  }
  if (lines.length < requiredCount) throw new RecordError(`call input has ${lines.length} lines for ${requiredCount} required parameters`);
  if (lines.length <= paramCount) return lines.map(lit);
  const extra = lines.length - paramCount;
  return [lines.slice(0, extra + 1).join('\n'), ...lines.slice(extra + 1).map(lit)];
}

/** LiveCodeBench/DeepCoder-lcb test: {input, output, testtype: "stdin" | "functional"}; functional inputs are JSON, one argument per line. */
function lcbTests(tests: unknown, fnName: string | undefined, where: string): CodeTests {
  if (!Array.isArray(tests) || tests.length === 0) throw new RecordError(`${where} must be a non-empty list`);
  const types = new Set(tests.map((t: Record<string, unknown>) => t['testtype'] ?? 'stdin'));
  if (types.size !== 1) throw new RecordError(`${where} mixes test types ${[...types].join(', ')}`);
  if (types.has('functional')) {
    if (!fnName) throw new RecordError('functional tests need metadata.func_name');
    const cases = tests.map((t: Record<string, unknown>, k): CallCase => {
      try {
        const args = asText(t['input'], `test ${k} input`)
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => parsePyJson(l));
        return { args, expected: parsePyJson(asText(t['output'], `test ${k} output`)) };
      } catch (e) {
        if (e instanceof RecordError) throw e;
        throw new RecordError(`${where} test ${k}: ${(e as Error).message}`);
      }
    });
    return { kind: 'call', fn: fnName, cases };
  }
  if (!types.has('stdin')) throw new RecordError(`${where}: unknown testtype ${[...types][0]}`);
  return { kind: 'stdio', tests: tests.map((t: Record<string, unknown>, k) => ({ stdin: asText(t['input'], `test ${k} input`), stdout: asText(t['output'], `test ${k} output`) })) };
}

/**
 * LiveCodeBench code_generation_lite: {question_id, question_title, question_content, platform,
 * contest_id, contest_date, starter_code, difficulty, public_test_cases, private_test_cases, metadata}.
 * Test lists are JSON strings; private_test_cases may be base64(zlib(pickle(json string))).
 */
export function liveCodeBenchRow(row: Row, line: number): CodeProblem {
  const metadata = row['metadata'] === undefined || row['metadata'] === '' ? {} : (jsonField(row, 'metadata') as Record<string, unknown>);
  const fnName = typeof metadata['func_name'] === 'string' ? metadata['func_name'] : undefined;
  const publicTests = jsonField(row, 'public_test_cases') as unknown[];
  let privateTests: unknown[] = [];
  const rawPrivate = row['private_test_cases'];
  if (typeof rawPrivate === 'string' && rawPrivate !== '') {
    if (rawPrivate.trimStart().startsWith('[')) privateTests = jsonField(row, 'private_test_cases') as unknown[];
    else {
      try {
        const compressed = Uint8Array.from(atob(rawPrivate.trim()), (c) => c.charCodeAt(0));
        const inflated = inflateSync(compressed);
        privateTests = JSON.parse(readPickledString(new Uint8Array(inflated.buffer, inflated.byteOffset, inflated.byteLength))) as unknown[];
      } catch (e) {
        throw new RecordError(`field "private_test_cases" is neither JSON nor base64-zlib-pickle: ${(e as Error).message}`);
      }
    }
  } else if (Array.isArray(rawPrivate)) privateTests = rawPrivate;
  const p: CodeProblem = {
    domain: 'code',
    id: `livecodebench/${recordId(row, ['question_id'], 'livecodebench', line)}`,
    dataset: 'livecodebench',
    statement: str(row, 'question_content'),
    tests: lcbTests([...(Array.isArray(publicTests) ? publicTests : []), ...privateTests], fnName, 'test cases'),
    meta: { title: row['question_title'], platform: row['platform'], contestDate: row['contest_date'], difficulty: row['difficulty'], publicTestCount: Array.isArray(publicTests) ? publicTests.length : 0 },
  };
  const starter = optStr(row, 'starter_code');
  if (starter) p.starterCode = starter;
  if (fnName) p.entryPoint = fnName;
  return p;
}

/**
 * DeepCoder-Preview: {problem, tests (JSON string), starter_code?, metadata?}. The tests follow the
 * subset's source: lcbv5 and codeforces as LiveCodeBench ({input, output, testtype}); primeintellect
 * [{type: "stdin_stdout" | "function_call", input, output, fn_name?}]; taco {inputs, outputs, fn_name?}.
 */
export function deepCoderRow(row: Row, line: number): CodeProblem {
  const tests = jsonField(row, 'tests');
  const metadata = row['metadata'] === undefined || row['metadata'] === '' || row['metadata'] === null ? {} : (jsonField(row, 'metadata') as Record<string, unknown>);
  let codeTests: CodeTests;
  let fnName: string | undefined = typeof metadata['func_name'] === 'string' ? metadata['func_name'] : undefined;
  if (Array.isArray(tests) && tests.length > 0 && typeof tests[0] === 'object' && tests[0] !== null && 'type' in tests[0]) {
    // primeintellect
    const kinds = new Set(tests.map((t: Record<string, unknown>) => t['type']));
    if (kinds.size !== 1) throw new RecordError(`tests mix types ${[...kinds].join(', ')}`);
    if (kinds.has('function_call')) {
      fnName = String((tests[0] as Record<string, unknown>)['fn_name'] ?? fnName ?? '');
      if (!fnName) throw new RecordError('function_call tests need fn_name');
      codeTests = {
        kind: 'call',
        fn: fnName,
        cases: tests.map((t: Record<string, unknown>, k) => {
          const out = t['output'];
          if (!Array.isArray(t['input']) || !Array.isArray(out) || out.length !== 1) throw new RecordError(`test ${k}: function_call input must be an argument list and output a one-element list`);
          return { args: t['input'] as PyJson[], expected: out[0] as PyJson };
        }),
      };
    } else if (kinds.has('stdin_stdout')) {
      codeTests = { kind: 'stdio', tests: tests.map((t: Record<string, unknown>, k) => ({ stdin: asText(t['input'], `test ${k} input`), stdout: asText(t['output'], `test ${k} output`) })) };
    } else throw new RecordError(`unknown test type ${[...kinds][0]}`);
  } else if (tests !== null && typeof tests === 'object' && !Array.isArray(tests) && 'inputs' in tests) {
    // taco
    const t = tests as Record<string, unknown>;
    const inputs = t['inputs'];
    const outputs = t['outputs'];
    if (!Array.isArray(inputs) || !Array.isArray(outputs) || inputs.length !== outputs.length || inputs.length === 0) throw new RecordError('taco tests need equal-length non-empty "inputs" and "outputs"');
    if (typeof t['fn_name'] === 'string' && t['fn_name'] !== '') {
      fnName = t['fn_name'];
      codeTests = {
        kind: 'call',
        fn: fnName,
        cases: inputs.map((args, k) => {
          if (!Array.isArray(args)) throw new RecordError(`test ${k}: call input must be an argument list`);
          const out = outputs[k];
          return { args: args as PyJson[], expected: (Array.isArray(out) && out.length === 1 ? out[0] : out) as PyJson };
        }),
      };
    } else {
      codeTests = { kind: 'stdio', tests: inputs.map((inp, k) => ({ stdin: asText(inp, `test ${k} input`), stdout: asText(outputs[k], `test ${k} output`) })) };
    }
  } else {
    codeTests = lcbTests(tests, fnName, 'field "tests"');
  }
  const p: CodeProblem = { domain: 'code', id: `deepcoder/${recordId(row, ['id', 'problem_id'], 'deepcoder', line)}`, dataset: 'deepcoder', statement: str(row, 'problem'), tests: codeTests, meta: {} };
  const starter = optStr(row, 'starter_code');
  if (starter) p.starterCode = starter;
  if (fnName) p.entryPoint = fnName;
  return p;
}

/** CodeContests language ids (deepmind/code_contests): 1 Python 2, 2 C++, 3 Python 3, 4 Java. */
const CODECONTESTS_PYTHON3 = 3;

/**
 * CodeContests: {name, description, public_tests, private_tests, generated_tests: {input: [..],
 * output: [..]}, solutions: {language: [..], solution: [..]}, difficulty, source, time_limit,
 * memory_limit_bytes, cf_*}. Golden tests: public + private (+ generated when asked).
 */
export function codeContestsRow(row: Row, line: number, withGenerated = false): CodeProblem {
  const group = (key: string): StdioTest[] => {
    const g = row[key];
    if (g === undefined || g === null) return [];
    if (typeof g !== 'object' || Array.isArray(g)) throw new RecordError(`field "${key}" must be an object {input, output}`);
    const { input, output } = g as { input?: unknown; output?: unknown };
    if (!Array.isArray(input) || !Array.isArray(output) || input.length !== output.length) throw new RecordError(`field "${key}" needs equal-length "input" and "output" lists`);
    return input.map((inp, k) => ({ stdin: asText(inp, `${key} input ${k}`), stdout: asText(output[k], `${key} output ${k}`) }));
  };
  const tests = [...group('public_tests'), ...group('private_tests'), ...(withGenerated ? group('generated_tests') : [])];
  if (tests.length === 0) throw new RecordError('no tests in public_tests/private_tests');
  const p: CodeProblem = {
    domain: 'code',
    id: `codecontests/${recordId(row, ['name'], 'codecontests', line)}`,
    dataset: 'codecontests',
    statement: str(row, 'description'),
    tests: { kind: 'stdio', tests },
    meta: { difficulty: row['difficulty'], source: row['source'], timeLimit: row['time_limit'], memoryLimitBytes: row['memory_limit_bytes'], publicTestCount: group('public_tests').length },
  };
  const sols = row['solutions'] as { language?: unknown; solution?: unknown } | undefined;
  if (sols && Array.isArray(sols.language) && Array.isArray(sols.solution)) {
    const k = sols.language.findIndex((l) => l === CODECONTESTS_PYTHON3 || l === 'PYTHON3');
    if (k >= 0 && typeof sols.solution[k] === 'string') p.referenceSolution = sols.solution[k] as string;
  }
  return p;
}

export const loadHumanEval = (file: string): LoadResult<CodeProblem> => loadJsonl(file, humanEvalRow);
export const loadMbpp = (file: string): LoadResult<CodeProblem> => loadJsonl(file, mbppRow);
export const loadAppsSelected = (file: string): LoadResult<CodeProblem> => loadJsonl(file, appsSelectedRow);
export const loadLiveCodeBench = (file: string): LoadResult<CodeProblem> => loadJsonl(file, liveCodeBenchRow);
export const loadDeepCoder = (file: string): LoadResult<CodeProblem> => loadJsonl(file, deepCoderRow);
export const loadCodeContests = (file: string, withGenerated = false): LoadResult<CodeProblem> => loadJsonl(file, (r, l) => codeContestsRow(r, l, withGenerated));

// Dataset loaders: every file of the repository's data/ (unchanged since it was copied, per
// data/PROVENANCE.md's checksums), MARFT_DATA_DIR, the published layouts (fixtures under
// test/fixtures/datasets), malformed-line errors, and deterministic splits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DATASETS, DATA_DIR_ENV, bundledDataDir, convertJsonlText, dataDir, deepscalerRow, loadCodeContests, loadDataset, loadDeepCoder, loadDeepScaler, loadLiveCodeBench, loadPolaris,
  parsePythonLiteral, seededSample, seededShuffle, splitProblems, type CodeProblem, type MathProblem, type Problem,
} from '../../src/env/datasets/index.ts';
import { verifyCode } from '../../src/verify/code/index.ts';

const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/datasets/${name}`, import.meta.url));
const math = (name: string): MathProblem[] => loadDataset(name).problems as MathProblem[];
const code = (name: string): CodeProblem[] => loadDataset(name).problems as CodeProblem[];

test('every bundled benchmark file loads completely, without errors', () => {
  const counts: Record<string, number> = {};
  for (const [name, entry] of Object.entries(DATASETS)) {
    if (!entry.bundledFile) continue;
    const r = loadDataset(name);
    assert.deepEqual(r.errors, [], name);
    counts[name] = r.problems.length;
    assert.equal(new Set(r.problems.map((p) => p.id)).size, r.problems.length, `${name}: ids are unique`);
  }
  assert.deepEqual(counts, {
    gsm8k: 1319, 'gsm8k-train': 7473, 'gsm8k-socratic': 1319, math500: 500, aime2024: 30, aime2025: 30, 'aime2024-qwen': 30,
    amc23: 40, olympiadbench: 675, humaneval: 164, mbpp: 974, apps: 150,
  });
});

test('maths fields: GSM8K #### answers, MATH-500, AIME (both layouts), AMC floats, OlympiadBench lists', () => {
  const g = math('gsm8k')[0]!;
  assert.equal(g.answer, '18');
  assert.ok(g.question.startsWith('Janet’s ducks lay 16 eggs'));
  assert.ok(g.solution!.endsWith('#### 18'));
  assert.ok(math('gsm8k').every((p) => /^-?\d+(\.\d+)?$/.test(p.answer)), 'GSM8K answers are plain numbers');
  const m = math('math500')[0]!;
  assert.deepEqual([m.id, m.answer, m.meta['subject'], m.meta['level']], ['test/precalculus/807.json', '\\left( 3, \\frac{\\pi}{2} \\right)', 'Precalculus', 2]);
  assert.deepEqual([math('aime2024')[0]!.id, math('aime2024')[0]!.answer], ['2024-I-1', '204']);
  assert.deepEqual([math('aime2025')[0]!.id, math('aime2025')[0]!.answer], ['2025-I-1', '70']);
  assert.deepEqual([math('aime2024-qwen')[0]!.answer], ['204']);
  assert.deepEqual(math('amc23').slice(0, 2).map((p) => p.answer), ['27', '36']);
  const ob = math('olympiadbench');
  assert.equal(ob.find((p) => p.id === 'olympiadbench/1610')!.answer, '\\frac{1}{2 n+2}');
  const multi = ob.filter((p) => p.meta['is_multiple_answer'] === true);
  assert.equal(multi.length, 94);
  assert.ok(multi.some((p) => p.answer === '69, 84'), 'items "$69$,$84$" are joined without dollars');
});

test('code fields: HumanEval asserts, MBPP asserts, APPS stdin/stdout and call-based', () => {
  const he = code('humaneval')[0]!;
  assert.equal(he.id, 'HumanEval/0');
  assert.equal(he.entryPoint, 'has_close_elements');
  assert.equal(he.tests.kind, 'assert');
  assert.ok(he.tests.kind === 'assert' && he.tests.code.trimEnd().endsWith('check(has_close_elements)'));
  const mb = code('mbpp')[0]!;
  assert.equal(mb.id, 'mbpp/1');
  assert.equal(mb.entryPoint, 'min_cost');
  assert.ok(mb.tests.kind === 'assert' && mb.tests.code.includes('assert min_cost([[1, 2, 3], [4, 8, 2], [1, 5, 3]], 2, 2) == 8'));
  const apps = code('apps');
  const kinds = apps.map((p) => p.tests.kind);
  assert.equal(kinds.filter((k) => k === 'stdio').length, 52);
  assert.equal(kinds.filter((k) => k === 'call').length, 98);
  const testCount = apps.reduce((n, p) => n + (p.tests.kind === 'stdio' ? p.tests.tests.length : p.tests.kind === 'call' ? p.tests.cases.length : 1), 0);
  assert.equal(testCount, 1842);
  assert.equal(apps.filter((p) => p.id.startsWith('apps/1613')).length, 2, 'the repeated id 1613 is kept twice, made unique');
});

test('APPS call arguments: literals, bare strings and multi-line strings reach the function as intended', async () => {
  const apps = code('apps');
  const solutions: Record<string, string> = {
    elevator: 'def elevator(left, right, call):\n    return "left" if abs(call - left) < abs(call - right) else "right"\n',
    name_in_str: 'def name_in_str(str, name):\n    it = iter(str.lower())\n    return all(c in it for c in name.lower())\n',
    solution: 'def solution(string, markers):\n    out = []\n    for line in string.split("\\n"):\n        for m in markers:\n            line = line.split(m)[0]\n        out.append(line.rstrip())\n    return "\\n".join(out)\n',
  };
  const ids: Record<string, string> = { elevator: 'apps/3045', name_in_str: 'apps/3387', solution: 'apps/1613' };
  for (const [fn, program] of Object.entries(solutions)) {
    const p = apps.find((x) => x.id === ids[fn])!;
    assert.equal(p.entryPoint, fn);
    const v = await verifyCode({ program, tests: p.tests, timeoutMs: 10_000 });
    assert.equal(v.passed, v.total, `${p.id} ${fn}: ${JSON.stringify(v.results.filter((r) => r.status !== 'passed').slice(0, 2))}`);
    assert.ok(v.total >= 10);
  }
});

test('published maths layouts: DeepScaleR and Polaris, with malformed lines reported by number', () => {
  const ds = loadDeepScaler(fixture('deepscaler.jsonl'));
  assert.deepEqual(ds.problems.map((p) => [p.id, p.answer]), [['deepscaler/1', '55'], ['deepscaler/2', '\\sqrt{2}'], ['deepscaler/5', '\\frac{3}{4}']]);
  assert.equal(ds.errors.length, 2);
  assert.equal(ds.errors[0]!.line, 3);
  assert.match(ds.errors[0]!.message, /^invalid JSON: /);
  assert.deepEqual(ds.errors[1], { file: fixture('deepscaler.jsonl'), line: 4, message: 'missing field "answer"' });
  const pol = loadPolaris(fixture('polaris.jsonl'));
  assert.deepEqual(pol.problems.map((p) => [p.answer, p.meta['difficulty']]), [['4', '8/8'], ['1024', '7/8']]);
  assert.deepEqual(pol.errors.map((e) => [e.line, e.message]), [[3, 'expected a JSON object, got an array'], [4, 'field "problem" is empty']]);
});

async function allPass(p: CodeProblem, program: string): Promise<number> {
  const v = await verifyCode({ program, tests: p.tests, timeoutMs: 10_000 });
  assert.equal(v.passed, v.total, `${p.id}: ${JSON.stringify(v.results)}`);
  return v.total;
}

test('published code layouts: DeepCoder (lcbv5, primeintellect, taco), LiveCodeBench, CodeContests', async () => {
  const lcb5 = loadDeepCoder(fixture('deepcoder-lcbv5.jsonl'));
  assert.deepEqual(lcb5.errors.map((e) => [e.line, e.message]), [[3, 'field "tests" mixes test types stdin, functional']]);
  assert.deepEqual(lcb5.problems.map((p) => p.tests.kind), ['stdio', 'call']);
  assert.equal(await allPass(lcb5.problems[0]!, 'n = int(input())\nprint(n * n)\n'), 2);
  assert.equal(await allPass(lcb5.problems[1]!, 'from typing import List\nclass Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n                return [seen[target - x], i]\n            seen[x] = i\n'), 2);

  const pi = loadDeepCoder(fixture('deepcoder-primeintellect.jsonl'));
  assert.deepEqual(pi.errors, []);
  assert.equal(await allPass(pi.problems[0]!, 'print(sum(map(int, input().split())))\n'), 2);
  assert.equal(pi.problems[1]!.entryPoint, 'bigger');
  assert.equal(await allPass(pi.problems[1]!, 'def bigger(a, b):\n    return max(a, b)\n'), 2);

  const taco = loadDeepCoder(fixture('deepcoder-taco.jsonl'));
  assert.deepEqual(taco.errors.map((e) => [e.line, e.message]), [[3, 'taco tests need equal-length non-empty "inputs" and "outputs"']]);
  assert.equal(await allPass(taco.problems[0]!, 'print(input()[::-1])\n'), 2);
  assert.equal(await allPass(taco.problems[1]!, 'def count_vowels(w):\n    return sum(c in "aeiou" for c in w)\n'), 2);

  const lcb = loadLiveCodeBench(fixture('livecodebench.jsonl'));
  assert.equal(lcb.errors.length, 1);
  assert.equal(lcb.errors[0]!.line, 3);
  assert.match(lcb.errors[0]!.message, /^field "private_test_cases" is neither JSON nor base64-zlib-pickle/);
  assert.deepEqual(lcb.problems.map((p) => [p.id, p.meta['publicTestCount']]), [['livecodebench/abc999_a', 1], ['livecodebench/9001', 1]]);
  assert.equal(await allPass(lcb.problems[0]!, 'print(2 * int(input()))\n'), 3);
  // The third case's integers exceed 2^53: they must travel exactly.
  assert.equal(await allPass(lcb.problems[1]!, 'class Solution:\n    def maxPairSum(self, nums):\n        a = sorted(nums)\n        return a[-1] + a[-2]\n'), 3);

  const cc = loadCodeContests(fixture('codecontests.jsonl'));
  assert.deepEqual(cc.errors.map((e) => [e.line, e.message]), [[2, 'field "public_tests" needs equal-length "input" and "output" lists']]);
  const sum = cc.problems[0]!;
  assert.equal(sum.id, 'codecontests/1000_A. Sum Pair');
  assert.equal(sum.referenceSolution, 'a, b = map(int, input().split())\nprint(a + b)\n');
  assert.equal(await allPass(sum, sum.referenceSolution!), 3);
  assert.equal(loadCodeContests(fixture('codecontests.jsonl'), true).problems[0]!.tests.kind === 'stdio' && (loadCodeContests(fixture('codecontests.jsonl'), true).problems[0]!.tests as { tests: unknown[] }).tests.length, 4);
});

test('a malformed line never hides the others, and names file, line and problem', () => {
  const text = ['{"problem": "a", "answer": "1"}', '', '{"problem": "b", "answer": 2}', '{"problem": "c", "answer": null}', '{"problem": "d", "answer": "4"'].join('\n');
  const r = convertJsonlText(text, 'mem.jsonl', deepscalerRow);
  assert.deepEqual(r.problems.map((p) => p.answer), ['1', '2']);
  assert.deepEqual(r.errors.map((e) => [e.file, e.line, e.message.slice(0, 38)]), [
    ['mem.jsonl', 4, 'field "answer" must be a non-empty str'],
    ['mem.jsonl', 5, "invalid JSON: Expected ',' or '}' afte"],
  ]);
});

test('python literals: quotes, tuples, None/True, big integers, escapes', () => {
  assert.deepEqual(parsePythonLiteral("['a', \"b\", (1, 2.5), None, True, {'k': -3}]"), ['a', 'b', [1, 2.5], null, true, { k: -3 }]);
  assert.equal(parsePythonLiteral('12345678901234567890'), 12345678901234567890n);
  assert.equal(parsePythonLiteral("'it\\'s\\n'"), "it's\n");
  assert.throws(() => parsePythonLiteral('hello world'), /expected a number/);
});

test('splits are seeded, stable across runs and independent of input order', () => {
  const problems: Problem[] = math('math500');
  const a = splitProblems(problems, { seed: 7, testFraction: 0.2 });
  const b = splitProblems([...problems].reverse(), { seed: 7, testFraction: 0.2 });
  assert.equal(a.train.length + a.test.length, 500);
  assert.equal(a.test.length, 99);
  assert.deepEqual(new Set(a.test.map((p) => p.id)), new Set(b.test.map((p) => p.id)));
  assert.equal(a.test[0]!.id, 'test/intermediate_algebra/1994.json');
  const c = splitProblems(problems, { seed: 8, testFraction: 0.2 });
  assert.notDeepEqual(c.test.map((p) => p.id), a.test.map((p) => p.id));
  assert.deepEqual(seededSample(problems, 3, 1).map((p) => p.id), seededShuffle([...problems].reverse(), 1).slice(0, 3).map((p) => p.id));
  assert.deepEqual(seededSample(problems, 3, 1).map((p) => p.id), ['test/prealgebra/954.json', 'test/algebra/2430.json', 'test/algebra/2036.json']);
});

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.jsonl')).sort();
}

test('the benchmark files live inside the repository and match the checksums of data/PROVENANCE.md', () => {
  const dir = bundledDataDir();
  assert.equal(dir, join(repoRoot, 'data'));
  const provenance = readFileSync(join(dir, 'PROVENANCE.md'), 'utf8');
  const listed = new Map([...provenance.matchAll(/^\| ([\w./-]+\.jsonl) \| ([0-9a-f]{64}) \|$/gm)].map((m) => [m[1]!, m[2]!]));
  const present = filesUnder(dir);
  assert.deepEqual([...listed.keys()].sort(), present, 'every data file has a checksum row, and every row a file');
  for (const file of present) {
    const sha = createHash('sha256').update(new Uint8Array(readFileSync(join(dir, file)))).digest('hex');
    assert.equal(sha, listed.get(file), `${file} differs from the copy data/PROVENANCE.md describes`);
  }
  const bundled = Object.values(DATASETS).flatMap((e) => (e.bundledFile ? [e.bundledFile] : []));
  assert.deepEqual([...new Set(bundled)].sort(), present, 'every data file is a registered dataset');
});

test('MARFT_DATA_DIR (or a dataDir option) replaces data/ for the bundled datasets, and a missing file names it', () => {
  assert.equal(dataDir({}), bundledDataDir());
  assert.equal(dataDir({ [DATA_DIR_ENV]: '' }), bundledDataDir(), 'an empty value means unset');
  const dir = mkdtempSync(join(tmpdir(), 'marft-data-'));
  const saved = process.env[DATA_DIR_ENV];
  try {
    assert.equal(dataDir({ [DATA_DIR_ENV]: dir }), dir);
    mkdirSync(join(dir, 'gsm8k'));
    writeFileSync(join(dir, 'gsm8k', 'test.jsonl'), `${JSON.stringify({ question: 'What is 2+2?', answer: 'Add.\n#### 4' })}\n`);
    const viaOption = loadDataset('gsm8k', { dataDir: dir });
    assert.deepEqual(viaOption.problems.map((p) => [p.id, (p as MathProblem).answer]), [['gsm8k/1', '4']]);
    process.env[DATA_DIR_ENV] = dir;
    assert.equal(loadDataset('gsm8k').problems.length, 1, 'the variable is read at load time');
    assert.throws(() => loadDataset('math500'), (err: Error) => err.message === `dataset file not found: ${join(dir, 'math500', 'test.jsonl')} (MARFT_DATA_DIR is set to ${JSON.stringify(dir)})`);
    const own = fixture('deepscaler.jsonl');
    assert.ok(loadDataset('deepscaler', { file: own }).problems.length > 0, 'an explicit file ignores the folder');
  } finally {
    if (saved === undefined) delete process.env[DATA_DIR_ENV];
    else process.env[DATA_DIR_ENV] = saved;
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(loadDataset('gsm8k').problems.length, 1319);
  assert.throws(() => loadDataset('polaris'), /dataset "polaris" has no bundled copy: pass the path of a file in its layout/);
});

// marft export: an agent's adapter merged into the base (test/serve/tiny-run.ts's run: two agents whose
// adapters differ from the base).
//   - --hf: the folder loads in marft's embedded engine and in transformers (.venv-oracle), and both
//     decode greedily the tokens the embedded engine decodes with the base plus the agent's adapter
//     (4 prompts × 16 tokens; transformers with PEFT on the unmerged adapter too), log-probs within 1e-4;
//     the merged weights are W + (alpha/r)·B·A; the tokenizer and chat template come along;
//   - --gguf: needs a Python with the gguf package; without one the command says so in one line. With one
//     (.venv-models or .venv-llamacpp, or MARFT_GGUF_PYTHON) the GGUF's tensors read back as the merged
//     folder's, and transformers' GGUF loader (.venv-models, which CI makes) decodes the same greedy
//     tokens from it; with llama.cpp built (.venv-llamacpp) its server and its Python bindings do too.
//     Each skips otherwise, naming what it needs;
//   - mistakes are one line: an unknown agent, an existing output, a missing flag.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEngine, type Engine, type SampleParams } from '../../src/engine/index.ts';
import { readSafetensors } from '../../src/engine/hf/safetensors.ts';
import { readPeftAdapter } from '../../src/engine/hf/peft.ts';
import { freePort } from '../../src/engine/vllm/server.ts';
import { loadTokenizer } from '../../src/tokenizer/index.ts';
import { assertUserError, runCli } from '../cli/spawn-cli.ts';
import { maxAbsDiff, oracleBatch, readJson, repoRoot, skipWithoutVenv } from '../engine/oracle-helpers.ts';
import { defaultGgufPython, ggufPythonProblem } from '../../src/export/gguf-file.ts';
import { makeTinyRun, type TinyRun } from '../serve/tiny-run.ts';

let dir = '';
let run: TinyRun;
let exported = '';
let withAdapter: Engine;
let prompts: number[][] = [];

const greedy: SampleParams = { temperature: 0, topP: 1, topK: 0, maxNewTokens: 16, stopTokenIds: [], stopStrings: [], seed: 0 };

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'marft-export-'));
  run = await makeTinyRun(dir, { hiddenSize: 64, seed: 8 });
  withAdapter = await loadEngine(run.modelDir);
  await withAdapter.loadAdapter('planner', join(run.checkpoint, 'adapters', run.policies.planner!));
  const tok = loadTokenizer(run.modelDir);
  prompts = [
    tok.encodeChat([{ role: 'user', content: 'How many legs do 3 spiders have?' }], { addGenerationPrompt: true }),
    tok.encode('Plan: 1. add'),
    tok.encode('x = 4; y ='),
    tok.encodeChat([{ role: 'system', content: 'You are the Planner.' }, { role: 'user', content: 'Split 10 sweets among 2.' }], { addGenerationPrompt: true }),
  ];
  exported = join(dir, 'planner-hf');
  const r = await runCli({ args: ['export', run.runDir, '--agent', 'planner', '--hf', exported] });
  assert.equal(r.status, 0, r.stderr);
  const line = JSON.parse(r.stdout.trim());
  assert.deepEqual({ ...line, checkpoint: undefined }, { agent: 'planner', adapter: 'policy-planner', checkpoint: undefined, step: 1, merged: 14, hf: exported, gguf: null });
});

after(async () => {
  await withAdapter?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the exported folder holds W + (alpha/r)·B·A, the base\'s other weights, its configuration and tokenizer', () => {
  for (const file of ['model.safetensors', 'config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'marft_export.json']) assert.ok(existsSync(join(exported, file)), file);
  const base = readSafetensors(join(run.modelDir, 'model.safetensors'));
  const merged = readSafetensors(join(exported, 'model.safetensors'));
  assert.deepEqual([...merged.keys()].sort(), [...base.keys()].sort());
  const adapter = readPeftAdapter(join(run.checkpoint, 'adapters', 'policy-planner'));
  const scale = adapter.config.alpha / adapter.config.rank;
  const w = adapter.weights.find((x) => x.layer === 1 && x.module === 'o_proj')!;
  const name = 'model.layers.1.self_attn.o_proj.weight';
  const [out, inF] = base.get(name)!.shape as [number, number];
  const r = adapter.config.rank;
  let worst = 0;
  for (const [o, i] of [[0, 0], [3, 7], [out - 1, inF - 1]] as const) {
    let delta = 0;
    for (let k = 0; k < r; k++) delta += w.B.data[o * r + k]! * w.A.data[k * inF + i]!;
    worst = Math.max(worst, Math.abs(merged.get(name)!.data[o * inF + i]! - (base.get(name)!.data[o * inF + i]! + scale * delta)));
  }
  assert.ok(worst < 1e-6, `merged weight off by ${worst}`);
  assert.deepEqual(merged.get('model.norm.weight')!.data, base.get('model.norm.weight')!.data);
  assert.notDeepEqual(merged.get(name)!.data, base.get(name)!.data);
  const provenance = JSON.parse(readFileSync(join(exported, 'marft_export.json'), 'utf8'));
  assert.equal(provenance.agent, 'planner');
  assert.equal(provenance.merged.length, 14);
  const tok = loadTokenizer(exported);
  assert.deepEqual(tok.encodeChat([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true }), loadTokenizer(run.modelDir).encodeChat([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true }));
});

test('marft\'s embedded engine on the exported folder decodes the base-plus-adapter\'s greedy tokens', async () => {
  const expected = await withAdapter.sample({ kind: 'adapter', name: 'planner' }, prompts, greedy);
  const base = await withAdapter.sample({ kind: 'base' }, prompts, greedy);
  assert.notDeepEqual(expected.map((r) => r.tokens), base.map((r) => r.tokens), 'the adapter changes the greedy tokens');
  const merged = await loadEngine(exported);
  try {
    const got = await merged.sample({ kind: 'base' }, prompts, greedy);
    assert.deepEqual(got.map((r) => r.tokens), expected.map((r) => r.tokens));
    const diff = maxAbsDiff(got.map((r) => r.logprobs), expected.map((r) => r.logprobs));
    assert.ok(diff < 1e-4, `log-probs differ by ${diff}`);
    console.log(`export (embedded): ${prompts.length} prompts × 16 greedy tokens equal; log-probs within ${diff.toExponential(2)}`);
  } finally {
    await merged.dispose();
  }
});

test('transformers on the exported folder decodes the same greedy tokens (and PEFT on the unmerged adapter)', { skip: skipWithoutVenv, timeout: 300_000 }, async () => {
  const expected = await withAdapter.sample({ kind: 'adapter', name: 'planner' }, prompts, greedy);
  const sequences = prompts.map((p, b) => [...p, ...expected[b]!.tokens]);
  const [mergedGen, peftGen, mergedLp] = oracleBatch([
    { cmd: 'generate', model: exported, input: prompts, 'max-new': 16 },
    { cmd: 'generate', model: run.modelDir, adapter: join(run.checkpoint, 'adapters', 'policy-planner'), input: prompts, 'max-new': 16 },
    { cmd: 'logprobs', model: exported, input: sequences },
  ]);
  assert.deepEqual(readJson<{ tokens: number[][] }>(mergedGen!).tokens, expected.map((r) => r.tokens));
  assert.deepEqual(readJson<{ tokens: number[][] }>(peftGen!).tokens, expected.map((r) => r.tokens));
  const scored = await withAdapter.score({ kind: 'adapter', name: 'planner' }, sequences.map((tokens) => ({ tokens, scoreFrom: 1 })));
  const diff = maxAbsDiff(readJson<{ logprobs: number[][] }>(mergedLp!).logprobs, scored);
  assert.ok(diff < 1e-4, `transformers' log-probs differ by ${diff}`);
  console.log(`export (transformers): ${prompts.length} prompts × 16 greedy tokens equal; log-probs within ${diff.toExponential(2)}`);
});

test('export mistakes are one line each', async () => {
  assertUserError(await runCli({ args: ['export', run.runDir, '--agent', 'critic', '--hf', join(dir, 'x')] }), /--agent critic: not an agent of this run \(agents: planner, solver\)$/, 'unknown agent');
  assertUserError(await runCli({ args: ['export', run.runDir, '--agent', 'planner', '--hf', exported] }), /--hf .*planner-hf: already exists and is not an empty folder; choose another path/, 'existing folder');
  assertUserError(await runCli({ args: ['export', run.runDir, '--agent', 'planner'] }), /--hf DIR or --gguf FILE is required/, 'no output');
  assertUserError(await runCli({ args: ['export', run.runDir, '--hf', join(dir, 'y')] }), /--agent NAME is required/, 'no agent');
  assertUserError(await runCli({ args: ['export', join(dir, 'nowhere'), '--agent', 'planner', '--hf', join(dir, 'z')] }), /nowhere: no such folder$/, 'no run');
  assertUserError(await runCli({ args: ['export', run.runDir, '--agent', 'planner', '--gguf', join(dir, 'p.gguf'), '--python', join(dir, 'no-python')] }), /--gguf: .*no-python does not exist: writing GGUF needs a Python with the gguf package; bash scripts\/setup\.sh --models/, 'no GGUF Python');
  assert.ok(!existsSync(join(dir, 'x')) && !existsSync(join(dir, 'p.gguf')), 'nothing was written');
});

// The GGUF file, read back with the gguf package's reader: every tensor of the merged folder, unchanged.
// Only where a Python with gguf exists (.venv-llamacpp, or MARFT_GGUF_PYTHON naming one).
const ggufPython = defaultGgufPython();
const skipGguf = ggufPythonProblem(ggufPython) ?? false;

test('--gguf writes the merged weights into a float32 GGUF that the gguf package reads back unchanged', { skip: skipGguf, timeout: 120_000 }, async () => {
  const gguf = join(dir, 'planner-check.gguf');
  const r = await runCli({ args: ['export', run.runDir, '--agent', 'planner', '--gguf', gguf] });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).gguf, gguf);
  const merged = readSafetensors(join(exported, 'model.safetensors'));
  const names: [string, string][] = [['model.layers.1.self_attn.o_proj.weight', 'blk.1.attn_output.weight'], ['model.layers.0.mlp.down_proj.weight', 'blk.0.ffn_down.weight'], ['model.layers.1.mlp.gate_proj.weight', 'blk.1.ffn_gate.weight']];
  const code = 'import sys, json, numpy as np, gguf\nr = gguf.GGUFReader(sys.argv[1])\nprint(json.dumps({t.name: np.asarray(t.data, dtype=np.float64).ravel().tolist() for t in r.tensors if t.name in sys.argv[2:]}))';
  const read = spawnSync(ggufPython, ['-c', code, gguf, ...names.map(([, g]) => g)], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(read.status, 0, read.stderr);
  const tensors = JSON.parse(read.stdout) as Record<string, number[]>;
  for (const [hf, g] of names) assert.deepEqual(tensors[g], [...merged.get(hf)!.data], g);
});

/** Exports the planner to DIR/NAME as GGUF (with `extra` flags), and the embedded engine's greedy tokens a reader of it must decode. */
async function exportedGguf(name: string, extra: string[] = []): Promise<{ gguf: string; expected: number[][] }> {
  const gguf = join(dir, name);
  const r = await runCli({ args: ['export', run.runDir, '--agent', 'planner', '--gguf', gguf, ...extra] });
  assert.equal(r.status, 0, r.stderr);
  const expected = await withAdapter.sample({ kind: 'adapter', name: 'planner' }, prompts, greedy);
  return { gguf, expected: expected.map((x) => x.tokens) };
}

// transformers' own GGUF loader (gguf_file=..., as for SmolLM2's file in scripts/gguf-to-hf.py) on the
// exported GGUF: a reader written apart from marft's writer. Where .venv-models exists (setup.sh --models
// or --smollm2; CI makes it).
const modelsPython = join(repoRoot, '.venv-models/bin/python');
const skipTransformersGguf = existsSync(modelsPython) ? false : `no ${modelsPython}: bash scripts/setup.sh --models makes it`;

test('transformers\' GGUF loader on the exported GGUF decodes the same greedy tokens', { skip: skipTransformersGguf, timeout: 300_000 }, async () => {
  const { gguf, expected } = await exportedGguf('planner-transformers.gguf', ['--python', modelsPython]);
  const code = [
    'import sys, json, os, torch',
    'from transformers import AutoModelForCausalLM',
    // transformers' table of GGUF keys reads no head size for qwen3 (real Qwen3 models have 128, its
    // default); this model's heads are 16 wide, written as qwen3.attention.key_length as llama.cpp reads it.
    'from transformers.integrations.ggml import GGUF_CONFIG_MAPPING',
    "GGUF_CONFIG_MAPPING['qwen3'].setdefault('attention.key_length', 'head_dim')",
    'path = sys.argv[1]',
    'spec = json.loads(sys.argv[2])',
    'model = AutoModelForCausalLM.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path), dtype=torch.float32)',
    'model.eval()',
    'out = []',
    'with torch.no_grad():',
    '    for p in spec["prompts"]:',
    '        ids = torch.tensor([p])',
    '        for _ in range(spec["n"]):',
    '            nxt = int(model(ids).logits[0, -1].argmax())',
    '            ids = torch.cat([ids, torch.tensor([[nxt]])], dim=1)',
    '        out.append(ids[0, len(p):].tolist())',
    'print(json.dumps(out))',
  ].join('\n');
  const read = spawnSync(modelsPython, ['-c', code, gguf, JSON.stringify({ prompts, n: greedy.maxNewTokens })], { encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(read.status, 0, read.stderr);
  const got = JSON.parse(read.stdout.trim().split('\n').pop()!) as number[][];
  assert.deepEqual(got, expected);
});

// llama.cpp's own server on the exported GGUF: only where .venv-llamacpp was built (bash scripts/setup.sh
// --llamacpp, about 13 minutes of compiling; CI does not build it).
const llamaServer = join(repoRoot, '.venv-llamacpp/bin/llama-server');
const skipLlama = existsSync(llamaServer) ? false : `no ${llamaServer}: bash scripts/setup.sh --llamacpp builds llama.cpp for this check`;

test('llama.cpp\'s server on the exported GGUF decodes the same greedy tokens', { skip: skipLlama, timeout: 300_000 }, async () => {
  const { gguf, expected } = await exportedGguf('planner.gguf');
  const port = await freePort();
  // float32 KV cache, no flash attention: llama.cpp's defaults move its log-probs away (test/engine/openai-llamacpp.test.ts).
  const child = spawn(llamaServer, ['-m', gguf, '--alias', 'planner', '--host', '127.0.0.1', '--port', String(port), '-c', '2048', '-t', '1', '-np', '1', '--cache-type-k', 'f32', '--cache-type-v', 'f32', '-fa', 'off'], { stdio: 'ignore' });
  try {
    const { OpenAiSamplingEngine } = await import('../../src/engine/index.ts');
    let engine;
    for (let tries = 0; ; tries++) {
      try {
        engine = await OpenAiSamplingEngine.open({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'planner', modelDir: exported });
        break;
      } catch (err) {
        if (tries > 240) throw err;
        await new Promise((res) => setTimeout(res, 250));
      }
    }
    const got = await engine.sample({ kind: 'base' }, prompts, greedy);
    assert.deepEqual(got.map((x) => x.tokens), expected);
  } finally {
    child.kill('SIGTERM');
  }
});

// llama.cpp through llama-cpp-python's bindings (the same llama.cpp, built by bash scripts/setup.sh
// --llamacpp before llama-server is): where .venv-llamacpp's Python imports llama_cpp.
const llamaPython = join(repoRoot, '.venv-llamacpp/bin/python');
const skipBindings = existsSync(llamaPython) && spawnSync(llamaPython, ['-c', 'import llama_cpp'], { encoding: 'utf8' }).status === 0
  ? false
  : `no llama_cpp in ${llamaPython}: bash scripts/setup.sh --llamacpp builds it for this check`;

test("llama.cpp (llama-cpp-python) on the exported GGUF decodes the same greedy tokens", { skip: skipBindings, timeout: 300_000 }, async () => {
  const { gguf, expected } = await exportedGguf('planner-bindings.gguf');
  // Greedy decoding of each prompt's token ids, stopping at the same count (and at an end-of-sequence token).
  const code = [
    'import sys, json, llama_cpp',
    'spec = json.loads(sys.argv[2])',
    "llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=2048, n_threads=1, verbose=False, type_k=0, type_v=0, flash_attn=False)",
    'out = []',
    'for p in spec["prompts"]:',
    '    llm.reset()',
    '    toks = []',
    '    for t in llm.generate(p, top_k=1, top_p=1.0, temp=0.0, reset=True):',
    '        toks.append(t)',
    '        if t in spec["stop"] or len(toks) >= spec["n"]: break',
    '    out.append(toks)',
    'print(json.dumps(out))',
  ].join('\n');
  const spec = { prompts, n: greedy.maxNewTokens, stop: greedy.stopTokenIds };
  const run2 = spawnSync(llamaPython, ['-c', code, gguf, JSON.stringify(spec)], { encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(run2.status, 0, run2.stderr);
  const got = JSON.parse(run2.stdout.trim().split('\n').pop()!) as number[][];
  assert.deepEqual(got, expected);
});

test('the merged folder also comes from a checkpoint folder given directly (the solver)', async () => {
  const out = join(dir, 'solver-hf');
  mkdirSync(out);
  const r = await runCli({ args: ['export', run.checkpoint, '--agent', 'solver', '--hf', out] });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).adapter, 'policy-solver');
  const solver = await loadEngine(out);
  try {
    await withAdapter.loadAdapter('solver', join(run.checkpoint, 'adapters', 'policy-solver'));
    const expected = await withAdapter.sample({ kind: 'adapter', name: 'solver' }, prompts.slice(0, 2), greedy);
    const got = await solver.sample({ kind: 'base' }, prompts.slice(0, 2), greedy);
    assert.deepEqual(got.map((x) => x.tokens), expected.map((x) => x.tokens));
  } finally {
    await solver.dispose();
  }
});

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { readHfConfig } from './config.ts';
import { readSafetensors, readSafetensorsMetadata, readSafetensorsHeader, writeSafetensors, loadHfWeights, type HostTensor } from './safetensors.ts';
import { runPython, skipWithoutVenv as noPython, tempDir, withTempDir } from '../../../test/python-oracle.ts';

const python = (script: string, ...args: string[]): string => runPython(['-c', script, ...args]);
const withTmp = (fn: (dir: string) => void): void => withTempDir('st', fn);

// Python writes tensors whose values are exactly representable in each dtype (k/8 - 2 for
// fp16/bf16), plus the same values exported as JSON (float64) for comparison.
const WRITE_PY = `
import json, sys, torch
from safetensors.torch import save_file
out = sys.argv[1]
torch.manual_seed(0)
ref = {}
def t(shape, dtype):
    x = (torch.randint(0, 32, shape).double() / 8 - 2)
    return x.to(dtype)
tensors = {
    "w.f32": torch.randn(3, 5, dtype=torch.float32),
    "w.f16": t((4, 3), torch.float16),
    "w.bf16": t((2, 7), torch.bfloat16),
    "w.f64": torch.randn(6, dtype=torch.float64),
    "scalar": torch.tensor(3.5, dtype=torch.float32),
    "empty": torch.zeros(0, 4, dtype=torch.float32),
}
tensors["w.f16"][0, 0] = 6.0e-8   # a subnormal half
tensors["w.f16"][0, 1] = -65504.0 # the largest half
save_file(tensors, out + "/mixed.safetensors", metadata={"format": "pt", "note": "hello"})
save_file({"ints": torch.arange(4, dtype=torch.int32)}, out + "/ints.safetensors")
json.dump({k: {"shape": list(v.shape), "values": v.double().flatten().tolist()} for k, v in tensors.items()}, open(out + "/ref.json", "w"))
`;

// The tensors of the byte-identity test, written by Python in the shared fixture too.
const BYTES_CASE: Record<string, HostTensor> = {
  'model.layers.0.mlp.up_proj.weight': { shape: [3, 2], data: Float32Array.from([0.5, -1, 2, 3.25, 1e-3, -7]) },
  'lm_head.weight': { shape: [2, 3], data: Float32Array.from([1, 2, 3, 4, 5, 6]) },
  'model.norm.weight': { shape: [3], data: Float32Array.from([1.5, 1, 0.25]) },
};

const SHARDED_PY = `
import sys, json, torch
from safetensors.torch import save_file
from transformers import LlamaConfig, LlamaForCausalLM
d = sys.argv[1]
ts = json.loads(sys.argv[2])
save_file({k: torch.tensor(v["data"], dtype=torch.float32).reshape(v["shape"]) for k, v in ts.items()}, d + "/theirs.safetensors", metadata={"format": "pt"})
torch.manual_seed(1)
cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False)
m = LlamaForCausalLM(cfg).to(torch.bfloat16)
m.save_pretrained(d + "/sharded", max_shard_size="20KB")
m.float().save_pretrained(d + "/single")
sd = m.state_dict()
json.dump({k: v.double().flatten().tolist()[:5] + [float(v.double().sum())] for k, v in sd.items()}, open(d + "/ref-sharded.json", "w"))
`;

// One Python run (torch starts slowly) writes every fixture the Python-backed tests read.
let shared = '';
before(() => {
  shared = tempDir('st-shared');
  if (noPython) return;
  python(WRITE_PY + SHARDED_PY, shared, JSON.stringify(Object.fromEntries(Object.entries(BYTES_CASE).map(([k, v]) => [k, { shape: v.shape, data: [...v.data] }]))));
});
after(() => rmSync(shared, { recursive: true, force: true }));

test('reads F32/F16/BF16/F64, scalars, empty tensors and metadata written by Python safetensors', { skip: noPython }, () => {
  {
    const dir = shared;
    const ref = JSON.parse(readFileSync(join(dir, 'ref.json'), 'utf8')) as Record<string, { shape: number[]; values: number[] }>;
    const got = readSafetensors(join(dir, 'mixed.safetensors'));
    assert.deepEqual([...got.keys()].sort(), Object.keys(ref).sort());
    for (const [name, r] of Object.entries(ref)) {
      const t = got.get(name)!;
      assert.deepEqual(t.shape, r.shape, name);
      assert.ok(t.data instanceof Float32Array);
      assert.equal(t.data.length, r.values.length, name);
      // Every source value is representable in float32 except F64's, which must round to nearest.
      r.values.forEach((v, i) => assert.equal(t.data[i], Math.fround(v), `${name}[${i}]`));
    }
    assert.equal(got.get('w.f16')!.data[0], Math.fround(5.960464477539063e-8));
    assert.equal(got.get('w.f16')!.data[1], -65504);
    assert.deepEqual(readSafetensorsMetadata(join(dir, 'mixed.safetensors')), { format: 'pt', note: 'hello' });
    const only = readSafetensors(join(dir, 'mixed.safetensors'), (n) => n === 'w.bf16');
    assert.deepEqual([...only.keys()], ['w.bf16']);
    assert.throws(() => readSafetensors(join(dir, 'ints.safetensors')), (e: Error) =>
      e.message.includes('ints.safetensors') && e.message.includes('"ints"') && e.message.includes('dtype I32'));
  }
});

test('truncated and malformed files give errors naming the file (and tensor)', () => {
  withTmp((dir) => {
    const f = join(dir, 'a.safetensors');
    writeSafetensors(f, { x: { shape: [4, 4], data: new Float32Array(16).fill(1) }, y: { shape: [2], data: new Float32Array([1, 2]) } });
    const size = readFileSync(f).length;
    truncateSync(f, size - 4);
    assert.throws(() => readSafetensors(f), (e: Error) => e.message.startsWith(f) && /truncated: tensor "y"/.test(e.message));
    truncateSync(f, 12);
    assert.throws(() => readSafetensors(f), (e: Error) => e.message.startsWith(f) && /truncated/.test(e.message));
    truncateSync(f, 3);
    assert.throws(() => readSafetensors(f), /truncated header length/);
    writeFileSync(f, concat([Uint8Array.from([5, 0, 0, 0, 0, 0, 0, 0]), new TextEncoder().encode('{oops')]));
    assert.throws(() => readSafetensors(f), /header is not valid JSON/);
    const bad = new TextEncoder().encode(JSON.stringify({ z: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }));
    const len = new Uint8Array(8); new DataView(len.buffer).setBigUint64(0, BigInt(bad.length), true);
    writeFileSync(f, concat([len, bad, new Uint8Array(8)]));
    assert.throws(() => readSafetensors(f), /tensor "z" \(F32 \[3\]\) needs 12 bytes, its offsets span 8/);
  });
});

test('writeSafetensors: round trip, 8-byte padded header, atomic (no temp files left), shape checks', () => {
  withTmp((dir) => {
    const f = join(dir, 'w.safetensors');
    const tensors = new Map<string, HostTensor>([
      ['b', { shape: [2, 3], data: Float32Array.from([1, 2, 3, 4, 5, -6.25]) }],
      ['a', { shape: [], data: Float32Array.from([7]) }],
      ['c', { shape: [1], data: new Float32Array(10).subarray(3, 4).fill(9) }],
    ]);
    writeSafetensors(f, tensors, { format: 'pt' });
    const bytes = new Uint8Array(readFileSync(f));
    const headerLen = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    assert.equal(headerLen % 8, 0);
    const h = readSafetensorsHeader(f);
    assert.deepEqual([...h.tensors.keys()], ['a', 'b', 'c']);
    assert.deepEqual(h.tensors.get('b'), { dtype: 'F32', shape: [2, 3], begin: 4, end: 28 });
    const back = readSafetensors(f);
    for (const [k, t] of tensors) { assert.deepEqual(back.get(k)!.shape, t.shape); assert.deepEqual([...back.get(k)!.data], [...t.data]); }
    assert.deepEqual(readdirSync(dir), ['w.safetensors']);
    assert.throws(() => writeSafetensors(f, { x: { shape: [2, 2], data: new Float32Array(3) } }), /shape \[2,2\] \(4 elements\) but 3 values/);
  });
});

test('a file written here is byte-identical to Python safetensors\' save_file of the same tensors', { skip: noPython }, () => {
  withTmp((dir) => {
    writeSafetensors(join(dir, 'ours.safetensors'), BYTES_CASE, { format: 'pt' });
    assert.deepEqual(new Uint8Array(readFileSync(join(dir, 'ours.safetensors'))), new Uint8Array(readFileSync(join(shared, 'theirs.safetensors'))), 'bytes differ from the reference implementation');
  });
});

test('loadHfWeights reads a sharded save_pretrained checkpoint (index weight_map) and a single-file one', { skip: noPython }, () => {
  withTmp((dir) => {
    for (const sub of ['sharded', 'single']) {
      mkdirSync(join(dir, sub));
      for (const f of readdirSync(join(shared, sub))) writeFileSync(join(dir, sub, f), new Uint8Array(readFileSync(join(shared, sub, f))));
    }
    writeFileSync(join(dir, 'ref.json'), new Uint8Array(readFileSync(join(shared, 'ref-sharded.json'))));
    assert.ok(existsSync(join(dir, 'sharded', 'model.safetensors.index.json')));
    assert.ok(readdirSync(join(dir, 'sharded')).filter((f) => f.endsWith('.safetensors')).length > 2);
    const ref = JSON.parse(readFileSync(join(dir, 'ref.json'), 'utf8')) as Record<string, number[]>;
    for (const sub of ['sharded', 'single']) {
      const w = loadHfWeights(join(dir, sub));
      assert.deepEqual([...w.keys()].sort(), Object.keys(ref).sort(), sub);
      for (const [k, r] of Object.entries(ref)) {
        const d = w.get(k)!.data;
        for (let i = 0; i < 5 && i < d.length; i++) assert.equal(d[i], r[i], `${sub} ${k}[${i}]`);
        let s = 0; for (const x of d) s += x;
        assert.ok(Math.abs(s - r[r.length - 1]) < 1e-6 * Math.max(1, Math.abs(s)) + 1e-9, `${sub} ${k} sum`);
      }
    }
    assert.deepEqual(w2shape(loadHfWeights(join(dir, 'sharded'), (n) => n.endsWith('norm.weight'))), ['model.layers.0.input_layernorm.weight:32', 'model.layers.0.post_attention_layernorm.weight:32', 'model.layers.1.input_layernorm.weight:32', 'model.layers.1.post_attention_layernorm.weight:32', 'model.norm.weight:32']);
    const idx = join(dir, 'sharded', 'model.safetensors.index.json');
    const index = JSON.parse(readFileSync(idx, 'utf8'));
    index.weight_map['model.extra.weight'] = Object.values(index.weight_map)[0];
    writeFileSync(idx, JSON.stringify(index));
    assert.throws(() => loadHfWeights(join(dir, 'sharded')), /tensor "model.extra.weight" is mapped to .* but that shard does not contain it/);
    assert.throws(() => loadHfWeights(dir), /no model.safetensors or model.safetensors.index.json/);
  });
});

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

function w2shape(w: Map<string, HostTensor>): string[] {
  return [...w.entries()].map(([k, t]) => `${k}:${t.shape.join('x')}`).sort();
}

test('oracle/make_tiny_checkpoints.py: every architecture and variant loads here with every weight perturbed', { skip: noPython }, () => {
  withTmp((dir) => {
    runPython(['oracle/make_tiny_checkpoints.py', dir, '--seed', '3']);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { checkpoints: { name: string; arch: string; tied: boolean }[] };
    assert.deepEqual(manifest.checkpoints.map((c) => c.name), ['llama-untied', 'llama-tied', 'qwen2-untied', 'qwen2-tied', 'qwen3-untied', 'qwen3-tied']);
    for (const c of manifest.checkpoints) {
      const folder = join(dir, c.name);
      const cfg = readHfConfig(folder);
      assert.equal(cfg.architecture, c.arch);
      assert.equal(cfg.tieWordEmbeddings, c.tied);
      assert.deepEqual([cfg.vocabSize, cfg.hiddenSize, cfg.intermediateSize, cfg.numHiddenLayers, cfg.numAttentionHeads, cfg.numKeyValueHeads], [128, 64, 128, 2, 4, 2]);
      assert.equal(cfg.headDim, c.arch === 'qwen3' ? 32 : 16);
      const w = loadHfWeights(folder);
      const perLayer = ['input_layernorm.weight', 'post_attention_layernorm.weight', 'self_attn.q_proj.weight', 'self_attn.k_proj.weight', 'self_attn.v_proj.weight', 'self_attn.o_proj.weight', 'mlp.gate_proj.weight', 'mlp.up_proj.weight', 'mlp.down_proj.weight'];
      if (c.arch === 'qwen2') perLayer.push('self_attn.q_proj.bias', 'self_attn.k_proj.bias', 'self_attn.v_proj.bias');
      if (c.arch === 'qwen3') perLayer.push('self_attn.q_norm.weight', 'self_attn.k_norm.weight');
      const expected = ['model.embed_tokens.weight', 'model.norm.weight', ...(c.tied ? [] : ['lm_head.weight']), ...[0, 1].flatMap((l) => perLayer.map((p) => `model.layers.${l}.${p}`))];
      assert.deepEqual([...w.keys()].sort(), expected.sort(), c.name);
      for (const [name, t] of w) {
        const distinct = new Set(t.data).size;
        assert.ok(distinct > t.data.length / 2, `${c.name} ${name} is not perturbed`);
        if (name.endsWith('norm.weight')) assert.ok(t.data.every((x) => Math.abs(x - 1) < 0.6) && t.data.some((x) => x !== 1), `${c.name} ${name}`);
        if (name.endsWith('.bias')) assert.ok(t.data.every((x) => x !== 0), `${c.name} ${name}`);
      }
    }
  });
});

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync, mkdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { LinearModule, LoraConfig, ModelConfig } from '../types.ts';
import { ALL_LINEAR_MODULES } from '../types.ts';
import { readPeftAdapter, writePeftAdapter, loraTensorName, peftAdapterConfigJson, type LoraWeights } from './peft.ts';
import { linearShape } from './linear-shape.ts';
import { readHfConfig } from './config.ts';
import { writeSafetensors, readSafetensors } from './safetensors.ts';
import { Rng } from '../embedded/sampling.ts';
import { runPython, skipWithoutVenv as noPython, tempDir, withTempDir } from '../../../test/python-oracle.ts';

/** The last line Python prints (PEFT and transformers may print warnings before it). */
function python(script: string, ...args: string[]): string {
  return runPython(['-c', script, ...args]).trim().split('\n').pop() ?? '';
}

const withTmp = (fn: (dir: string) => void): void => withTempDir('peft', fn);

const MODEL: ModelConfig = {
  architecture: 'qwen2', vocabSize: 64, hiddenSize: 32, intermediateSize: 48, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 8, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 128, tieWordEmbeddings: false,
  attentionBias: true, qkNorm: false, bosTokenId: null, eosTokenIds: [1],
};

function randomWeights(model: ModelConfig, lora: LoraConfig, seed: number): LoraWeights[] {
  const rng = new Rng(seed);
  const t = (shape: number[]) => ({ shape, data: Float32Array.from({ length: shape[0] * shape[1] }, () => Math.fround(0.1 * rng.normal())) });
  const out: LoraWeights[] = [];
  for (let layer = 0; layer < model.numHiddenLayers; layer++) {
    for (const module of lora.targetModules) {
      const [o, i] = linearShape(model, module);
      out.push({ layer, module, A: t([lora.rank, i]), B: t([o, lora.rank]) });
    }
  }
  return out;
}

// Writes a tiny Qwen2 base and two PEFT adapters (all linear layers; a subset) with non-zero B
// (init_lora_weights=False), and dumps their LoRA factors as JSON.
const PEFT_WRITE_PY = `
import sys, json, torch
from transformers import Qwen2Config, AutoModelForCausalLM
from peft import LoraConfig, get_peft_model
d = sys.argv[1]
torch.manual_seed(0)
base = AutoModelForCausalLM.from_config(Qwen2Config(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128, eos_token_id=1))
base.save_pretrained(d + "/base")
dump = {}
for name, targets, r, alpha in [("all", ["q_proj","k_proj","v_proj","o_proj","gate_proj","up_proj","down_proj"], 4, 16), ("some", ["v_proj","q_proj","down_proj"], 2, 3)]:
    m = AutoModelForCausalLM.from_pretrained(d + "/base")
    pm = get_peft_model(m, LoraConfig(r=r, lora_alpha=alpha, target_modules=targets, lora_dropout=0.0, task_type="CAUSAL_LM", init_lora_weights=False))
    pm.save_pretrained(d + "/" + name)
    dump[name] = {k.replace(".default", ""): [list(v.shape), v.flatten().tolist()] for k, v in pm.state_dict().items() if "lora_" in k}
json.dump(dump, open(d + "/dump.json", "w"))
print("ok")
`;

// Loads an adapter written by marft with PeftModel.from_pretrained and reports every LoRA factor,
// the scaling, and how far the adapter moves the logits.
const PEFT_LOAD_PY = `
import sys, json, torch
from transformers import AutoModelForCausalLM
from peft import PeftModel
d = sys.argv[1]
base = AutoModelForCausalLM.from_pretrained(d + "/base")
ids = torch.tensor([[3, 9, 27, 5, 11]])
with torch.no_grad(): base_logits = base(ids).logits
pm = PeftModel.from_pretrained(base, d + "/ours")
with torch.no_grad(): lora_logits = pm(ids).logits
params = {k.replace(".default", ""): v.flatten().tolist() for k, v in pm.named_parameters() if "lora_" in k}
q = pm.base_model.model.model.layers[0].self_attn.q_proj
print(json.dumps({"params": params, "scaling": q.scaling["default"], "delta": float((lora_logits - base_logits).abs().max())}))
`;

// One Python run writes the base and PEFT's adapters for all the tests below (torch starts slowly).
let shared = '';
before(() => {
  shared = tempDir('peft');
  if (!noPython) python(PEFT_WRITE_PY, shared);
});
after(() => rmSync(shared, { recursive: true, force: true }));

test('a LoRA adapter written by PEFT (non-zero B, all or some modules) reads here with the right shapes and values', { skip: noPython }, () => {
  {
    const dir = shared;
    const dump = JSON.parse(readFileSync(join(dir, 'dump.json'), 'utf8')) as Record<string, Record<string, [number[], number[]]>>;
    const model = readHfConfig(join(dir, 'base'));
    for (const [name, rank, alpha, modules] of [['all', 4, 16, ALL_LINEAR_MODULES], ['some', 2, 3, ['q_proj', 'v_proj', 'down_proj']]] as const) {
      const ad = readPeftAdapter(join(dir, name), model);
      assert.deepEqual(ad.config, { rank, alpha, targetModules: [...modules] });
      assert.equal(ad.baseModelNameOrPath, join(dir, 'base'));
      assert.equal(ad.weights.length, 2 * modules.length);
      assert.deepEqual(ad.weights.map((w) => `${w.layer}.${w.module}`), [0, 1].flatMap((l) => modules.map((m) => `${l}.${m}`)));
      const ref = dump[name];
      assert.equal(Object.keys(ref).length, 2 * ad.weights.length);
      for (const w of ad.weights) {
        const [out, inp] = linearShape(model, w.module);
        assert.deepEqual(w.A.shape, [rank, inp]);
        assert.deepEqual(w.B.shape, [out, rank]);
        for (const [f, t] of [['A', w.A], ['B', w.B]] as const) {
          const [shape, values] = ref[loraTensorName(w.layer, w.module, f)];
          assert.deepEqual(t.shape, shape);
          assert.deepEqual([...t.data], values.map(Math.fround));
        }
        assert.ok(w.B.data.some((x) => x !== 0), 'B is non-zero');
      }
    }
  }
});

test('an adapter written here loads in PEFT (PeftModel.from_pretrained): every factor equal, scaling alpha / r, logits change', { skip: noPython }, () => {
  {
    const dir = shared;
    const model = readHfConfig(join(dir, 'base'));
    const lora: LoraConfig = { rank: 3, alpha: 6, targetModules: [...ALL_LINEAR_MODULES] };
    const weights = randomWeights(model, lora, 5);
    writePeftAdapter(join(dir, 'ours'), lora, join(dir, 'base'), weights);
    const got = JSON.parse(python(PEFT_LOAD_PY, dir)) as { params: Record<string, number[]>; scaling: number; delta: number };
    assert.equal(got.scaling, 2);
    assert.ok(got.delta > 1e-3, `the adapter must change the logits (max |Δ| = ${got.delta})`);
    assert.equal(Object.keys(got.params).length, 2 * weights.length, 'PEFT has exactly our factors');
    for (const w of weights) {
      assert.deepEqual(got.params[loraTensorName(w.layer, w.module, 'A')], [...w.A.data], `${w.layer} ${w.module} A`);
      assert.deepEqual(got.params[loraTensorName(w.layer, w.module, 'B')], [...w.B.data], `${w.layer} ${w.module} B`);
    }
    // Read back here: the same values.
    const back = readPeftAdapter(join(dir, 'ours'), model);
    assert.deepEqual(back.config, lora);
    back.weights.forEach((w, i) => { assert.deepEqual(w.A, weights[i].A); assert.deepEqual(w.B, weights[i].B); });
  }
});

test('adapter_config.json written here has exactly the keys PEFT 0.21.2 writes', { skip: noPython }, () => {
  {
    const theirs = JSON.parse(readFileSync(join(shared, 'all', 'adapter_config.json'), 'utf8'));
    // The oracle adapters were initialised with init_lora_weights=False (random B); the rest is PEFT's defaults.
    theirs.init_lora_weights = true;
    const ours = peftAdapterConfigJson({ rank: 4, alpha: 16, targetModules: [...ALL_LINEAR_MODULES] }, theirs.base_model_name_or_path);
    assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort());
    assert.deepEqual({ ...ours, target_modules: [...ours.target_modules as string[]].sort() }, { ...theirs, target_modules: [...theirs.target_modules].sort() });
  }
});

test('unsupported adapters and broken folders are refused with a clear error', () => {
  withTmp((dir) => {
    const lora: LoraConfig = { rank: 2, alpha: 4, targetModules: ['q_proj', 'v_proj'] };
    const good = join(dir, 'good');
    writePeftAdapter(good, lora, 'base', randomWeights(MODEL, lora, 1));
    assert.equal(readPeftAdapter(good, MODEL).weights.length, 4);
    const cfg = JSON.parse(readFileSync(join(good, 'adapter_config.json'), 'utf8'));
    const variant = (name: string, patch: Record<string, unknown>): string => {
      const d = join(dir, name);
      mkdirSync(d);
      writeFileSync(join(d, 'adapter_config.json'), JSON.stringify({ ...cfg, ...patch }));
      writeFileSync(join(d, 'adapter_model.safetensors'), new Uint8Array(readFileSync(join(good, 'adapter_model.safetensors'))));
      return d;
    };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ peft_type: 'IA3' }, /peft_type: "IA3" is not supported \(only LORA/],
      [{ use_rslora: true }, /use_rslora/],
      [{ use_dora: true }, /use_dora: DoRA adapters are not supported/],
      [{ bias: 'all' }, /bias: "all" is not supported/],
      [{ modules_to_save: ['lm_head'] }, /modules_to_save/],
      [{ rank_pattern: { q_proj: 8 } }, /rank_pattern/],
      [{ target_modules: ['q_proj', 'v_proj', 'lm_head'] }, /target_modules: "lm_head" is not supported/],
      [{ target_modules: ['q_proj'] }, /has v_proj factors but .* target_modules does not list v_proj/],
      [{ target_modules: ['q_proj', 'v_proj', 'k_proj'] }, /missing tensor "base_model\.model\.model\.layers\.0\.self_attn\.k_proj\.lora_A\.weight"/],
      [{ r: 3 }, /has shape \[2,32\], expected \[r=3, in_features\]/],
    ];
    cases.forEach(([patch, re], i) => assert.throws(() => readPeftAdapter(variant(`v${i}`, patch)), re, JSON.stringify(patch)));
    // A regex / "all-linear" target_modules string: the modules present decide.
    assert.deepEqual(readPeftAdapter(variant('regex', { target_modules: 'all-linear' })).config.targetModules, ['q_proj', 'v_proj']);
    // Shapes that do not fit the model, a layer beyond it, a lone factor, a foreign tensor.
    assert.throws(() => readPeftAdapter(good, { ...MODEL, hiddenSize: 40 }), /the model needs \[2, 40\]/);
    assert.throws(() => readPeftAdapter(good, { ...MODEL, numHiddenLayers: 3 }), /missing tensor .*layers\.2\.self_attn\.q_proj/);
    const t = readSafetensors(join(good, 'adapter_model.safetensors'));
    t.delete(loraTensorName(1, 'v_proj', 'B'));
    writeSafetensors(join(variant('lone', {}), 'adapter_model.safetensors'), t);
    assert.throws(() => readPeftAdapter(join(dir, 'lone')), /missing tensor "base_model\.model\.model\.layers\.1\.self_attn\.v_proj\.lora_B\.weight" \(its lora_A is present\)/);
    t.set('base_model.model.lm_head.lora_A.weight', { shape: [2, 32], data: new Float32Array(64) });
    writeSafetensors(join(variant('foreign', {}), 'adapter_model.safetensors'), t);
    assert.throws(() => readPeftAdapter(join(dir, 'foreign')), /tensor "base_model\.model\.lm_head\.lora_A\.weight" is not a LoRA factor/);
    unlinkSync(join(dir, 'foreign', 'adapter_model.safetensors'));
    assert.throws(() => readPeftAdapter(join(dir, 'foreign')), /no adapter_model\.safetensors/);
    assert.throws(() => readPeftAdapter(join(dir, 'nothing-here')), /no adapter_config\.json/);
    // Writing checks shapes and completeness.
    const w = randomWeights(MODEL, lora, 2);
    assert.throws(() => writePeftAdapter(join(dir, 'x'), { ...lora, rank: 3 }, 'b', w), /must be \[3, in\] and \[out, 3\]/);
    assert.throws(() => writePeftAdapter(join(dir, 'x'), lora, 'b', w.slice(1)), /layer 0 has no q_proj factors/);
    assert.throws(() => writePeftAdapter(join(dir, 'x'), { ...lora, targetModules: ['q_proj'] as LinearModule[] }, 'b', w), /v_proj is not in targetModules/);
  });
});

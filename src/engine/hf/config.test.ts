import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelConfig } from '../types.ts';
import { parseHfConfig, toHfConfig, readHfConfig, writeHfConfig, readGenerationConfig, writeGenerationConfig } from './config.ts';
import { runPython, skipWithoutVenv as noPython, withTempDir } from '../../../test/python-oracle.ts';

const withTmp = (fn: (dir: string) => void): void => withTempDir('cfg', fn);

const QWEN3: ModelConfig = {
  architecture: 'qwen3', vocabSize: 128, hiddenSize: 64, intermediateSize: 128, numHiddenLayers: 2, numAttentionHeads: 4,
  numKeyValueHeads: 2, headDim: 32, rmsNormEps: 1e-6, ropeTheta: 1000000, maxPositionEmbeddings: 512, tieWordEmbeddings: true,
  attentionBias: false, qkNorm: true, bosTokenId: null, eosTokenIds: [1, 2],
};
const QWEN2: ModelConfig = { ...QWEN3, architecture: 'qwen2', headDim: 16, attentionBias: true, qkNorm: false, tieWordEmbeddings: false, eosTokenIds: [5], rmsNormEps: 1e-5 };
const LLAMA: ModelConfig = { ...QWEN3, architecture: 'llama', headDim: 16, qkNorm: false, ropeTheta: 500000, bosTokenId: 0, eosTokenIds: [], numKeyValueHeads: 4 };

test('defaults follow transformers: Llama (bos 1, eos 2, head_dim = hidden / heads, kv = heads), Qwen3 head_dim 128, Qwen2 biases', () => {
  const llama = parseHfConfig({ model_type: 'llama', hidden_size: 64, num_attention_heads: 4 });
  assert.deepEqual(llama, {
    architecture: 'llama', vocabSize: 32000, hiddenSize: 64, intermediateSize: 11008, numHiddenLayers: 32, numAttentionHeads: 4,
    numKeyValueHeads: 4, headDim: 16, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 2048, tieWordEmbeddings: false,
    attentionBias: false, qkNorm: false, bosTokenId: 1, eosTokenIds: [2],
  });
  const q3 = parseHfConfig({ architectures: ['Qwen3ForCausalLM'], hidden_size: 64, num_attention_heads: 4 });
  assert.equal(q3.architecture, 'qwen3');
  assert.equal(q3.headDim, 128);
  assert.equal(q3.qkNorm, true);
  assert.deepEqual(q3.eosTokenIds, []);
  const q2 = parseHfConfig({ model_type: 'qwen2', eos_token_id: [7, 8, 7], rope_theta: 1e6, rope_scaling: null, use_sliding_window: false, sliding_window: 32768, max_window_layers: 21 });
  assert.equal(q2.attentionBias, true);
  assert.deepEqual(q2.eosTokenIds, [7, 8]);
  assert.equal(q2.ropeTheta, 1e6);
  assert.equal(parseHfConfig({ model_type: 'qwen2', rope_parameters: { rope_type: 'default', rope_theta: 5e5 } }).ropeTheta, 5e5);
});

test('unsupported models and fields are refused with an Error naming the field', () => {
  const cases: [unknown, RegExp][] = [
    [{ model_type: 'gemma' }, /model_type: "gemma" is not supported/],
    [{ architectures: ['GPT2LMHeadModel'] }, /model_type: missing/],
    [{ model_type: 'llama', hidden_act: 'gelu' }, /hidden_act: "gelu"/],
    [{ model_type: 'llama', rope_scaling: { rope_type: 'llama3', factor: 8 } }, /rope_scaling\.rope_type: "llama3" rope scaling is not supported/],
    [{ model_type: 'qwen2', rope_scaling: { type: 'yarn', factor: 4 } }, /rope_scaling\.rope_type: "yarn"/],
    [{ model_type: 'qwen3', rope_parameters: { rope_type: 'linear', rope_theta: 1e4, factor: 2 } }, /rope_parameters\.rope_type: "linear"/],
    [{ model_type: 'llama', attention_bias: true }, /attention_bias/],
    [{ model_type: 'llama', mlp_bias: true }, /mlp_bias/],
    [{ model_type: 'qwen2', use_sliding_window: true, max_window_layers: 1, num_hidden_layers: 2 }, /use_sliding_window/],
    [{ model_type: 'qwen2', num_attention_heads: 6, num_key_value_heads: 4, hidden_size: 48 }, /num_key_value_heads: 4 does not divide/],
    [{ model_type: 'llama', vocab_size: 0 }, /vocab_size: expected an integer >= 1/],
    [{ model_type: 'llama', eos_token_id: 'x' }, /eos_token_id/],
    [{ model_type: 'llama', quantization_config: { quant_method: 'gptq' } }, /quantization_config/],
    [[], /expected a JSON object/],
  ];
  for (const [json, re] of cases) assert.throws(() => parseHfConfig(json), re, JSON.stringify(json));
  // A sliding window that transformers ignores (use_sliding_window false) is fine.
  assert.doesNotThrow(() => parseHfConfig({ model_type: 'qwen2', use_sliding_window: false, layer_types: ['sliding_attention'] }));
});

test('parseHfConfig(toHfConfig(cfg)) is the identity', () => {
  for (const cfg of [QWEN3, QWEN2, LLAMA]) assert.deepEqual(parseHfConfig(JSON.parse(JSON.stringify(toHfConfig(cfg)))), cfg);
  assert.throws(() => toHfConfig({ ...LLAMA, attentionBias: true }), /attentionBias true cannot be expressed for llama/);
});

test('config.json written here loads in transformers (AutoConfig + AutoModelForCausalLM) as the same model; its own configs parse here', { skip: noPython }, () => {
  withTmp((dir) => {
    const cfgs = { qwen3: QWEN3, qwen2: QWEN2, llama: LLAMA };
    for (const [name, cfg] of Object.entries(cfgs)) { mkdirSync(join(dir, name)); writeHfConfig(join(dir, name), cfg); }
    const stdout = runPython(['-c', `
import sys, json, warnings, torch
from transformers import AutoConfig, AutoModelForCausalLM, LlamaConfig, Qwen2Config, Qwen3Config
d = sys.argv[1]
out = {}
for name in ["qwen3", "qwen2", "llama"]:
    c = AutoConfig.from_pretrained(d + "/" + name)
    m = AutoModelForCausalLM.from_config(c)
    sd = m.state_dict()
    out[name] = {
        "class": type(m).__name__, "head_dim": m.model.layers[0].self_attn.head_dim,
        "rope_theta": c.rope_parameters["rope_theta"], "eos": c.eos_token_id, "bos": c.bos_token_id,
        "tied": m.lm_head.weight.data_ptr() == m.model.embed_tokens.weight.data_ptr(),
        "shapes": {k: list(v.shape) for k, v in sd.items() if ".layers.1." not in k},
        "eps": c.rms_norm_eps, "max_pos": c.max_position_embeddings,
    }
# configs written by transformers itself, for parseHfConfig
Qwen3Config(vocab_size=96, hidden_size=48, intermediate_size=80, num_hidden_layers=3, num_attention_heads=6, num_key_value_heads=3, head_dim=24, eos_token_id=[4, 9], tie_word_embeddings=True).save_pretrained(d + "/hf-qwen3")
Qwen2Config(vocab_size=96, hidden_size=48, intermediate_size=80, num_hidden_layers=3, num_attention_heads=6, num_key_value_heads=2, rope_theta=1e6, eos_token_id=3).save_pretrained(d + "/hf-qwen2")
LlamaConfig(vocab_size=96, hidden_size=48, intermediate_size=80, num_hidden_layers=3, num_attention_heads=6, num_key_value_heads=6, rms_norm_eps=1e-5, max_position_embeddings=64).save_pretrained(d + "/hf-llama")
print(json.dumps(out))
`, dir]);
    const got = JSON.parse(stdout.trim().split('\n').pop()!);
    for (const [name, cfg] of Object.entries(cfgs)) {
      const g = got[name];
      assert.equal(g.class, { qwen3: 'Qwen3ForCausalLM', qwen2: 'Qwen2ForCausalLM', llama: 'LlamaForCausalLM' }[name]);
      assert.equal(g.head_dim, cfg.headDim);
      assert.equal(g.rope_theta, cfg.ropeTheta);
      assert.equal(g.eps, cfg.rmsNormEps);
      assert.equal(g.max_pos, cfg.maxPositionEmbeddings);
      assert.equal(g.tied, cfg.tieWordEmbeddings, `${name} tie`);
      assert.deepEqual(g.eos === null ? [] : [g.eos].flat(), cfg.eosTokenIds);
      assert.equal(g.bos, cfg.bosTokenId);
      const s = g.shapes as Record<string, number[]>;
      const q = cfg.numAttentionHeads * cfg.headDim, kv = cfg.numKeyValueHeads * cfg.headDim;
      assert.deepEqual(s['model.layers.0.self_attn.q_proj.weight'], [q, cfg.hiddenSize]);
      assert.deepEqual(s['model.layers.0.self_attn.k_proj.weight'], [kv, cfg.hiddenSize]);
      assert.deepEqual(s['model.layers.0.self_attn.o_proj.weight'], [cfg.hiddenSize, q]);
      assert.deepEqual(s['model.layers.0.mlp.down_proj.weight'], [cfg.hiddenSize, cfg.intermediateSize]);
      assert.equal('model.layers.0.self_attn.q_proj.bias' in s, cfg.attentionBias);
      assert.equal('model.layers.0.self_attn.o_proj.bias' in s, false);
      assert.equal('model.layers.0.self_attn.q_norm.weight' in s, cfg.qkNorm);
      if (cfg.qkNorm) assert.deepEqual(s['model.layers.0.self_attn.q_norm.weight'], [cfg.headDim]);
    }
    const hq3 = readHfConfig(join(dir, 'hf-qwen3'));
    assert.deepEqual(hq3, { architecture: 'qwen3', vocabSize: 96, hiddenSize: 48, intermediateSize: 80, numHiddenLayers: 3, numAttentionHeads: 6, numKeyValueHeads: 3, headDim: 24, rmsNormEps: 1e-6, ropeTheta: 10000, maxPositionEmbeddings: 32768, tieWordEmbeddings: true, attentionBias: false, qkNorm: true, bosTokenId: null, eosTokenIds: [4, 9] });
    const hq2 = readHfConfig(join(dir, 'hf-qwen2'));
    assert.equal(hq2.ropeTheta, 1e6);
    assert.equal(hq2.headDim, 8);
    assert.deepEqual(hq2.eosTokenIds, [3]);
    assert.equal(hq2.attentionBias, true);
    const hl = readHfConfig(join(dir, 'hf-llama'));
    assert.deepEqual([hl.headDim, hl.rmsNormEps, hl.maxPositionEmbeddings, hl.bosTokenId, hl.numKeyValueHeads], [8, 1e-5, 64, 1, 6]);
  });
});

test('generation_config.json: round trip, number-or-list eos, absent file is null, bad JSON names the file', () => {
  withTmp((dir) => {
    assert.equal(readGenerationConfig(dir), null);
    writeGenerationConfig(dir, { bosTokenId: 1, eosTokenIds: [151645, 151643], padTokenId: 151643, doSample: true, temperature: 0.7, topP: 0.8, topK: 20 });
    const raw = JSON.parse(readFileSync(join(dir, 'generation_config.json'), 'utf8'));
    assert.deepEqual(raw.eos_token_id, [151645, 151643]);
    assert.equal(raw.top_k, 20);
    assert.deepEqual(readGenerationConfig(dir), { bosTokenId: 1, eosTokenIds: [151645, 151643], padTokenId: 151643, doSample: true, temperature: 0.7, topP: 0.8, topK: 20 });
    writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ eos_token_id: 2, max_new_tokens: 64, transformers_version: '5.24.0' }));
    assert.deepEqual(readGenerationConfig(dir), { bosTokenId: null, eosTokenIds: [2], padTokenId: null, maxNewTokens: 64 });
    writeFileSync(join(dir, 'generation_config.json'), '{');
    assert.throws(() => readGenerationConfig(dir), /generation_config\.json: not valid JSON/);
    assert.throws(() => readHfConfig(dir), /no config\.json/);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'mistral' }));
    assert.throws(() => readHfConfig(dir), (e: Error) => e.message.startsWith(join(dir, 'config.json')) && /model_type: "mistral"/.test(e.message));
  });
});

// End to end with the embedded engine: a Trio and a Coder–Tester pair sampled through
// engineSampler on a tiny random model. The trajectory must be exactly what the engine saw and
// drew: re-scoring promptTokens ++ actionTokens with engine.forward gives back the behaviour
// log-probs, and the same seed gives the same episodes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, type Engine, type LoraConfig, type ModelConfig } from '../../src/engine/index.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';
import { actionSequence, checkEpisode, coderTester, engineSampler, rollout, sequentialPipeline, type Episode, type Workflow } from '../../src/workflow/index.ts';
import { FakeEnv, PARAMS } from './fake-env.ts';

const tok = new CharTokenizer();

function tinyConfig(): ModelConfig {
  return {
    architecture: 'qwen2',
    vocabSize: tok.vocabSize,
    hiddenSize: 32,
    intermediateSize: 64,
    numHiddenLayers: 2,
    numAttentionHeads: 4,
    numKeyValueHeads: 2,
    headDim: 8,
    rmsNormEps: 1e-6,
    ropeTheta: 10000,
    maxPositionEmbeddings: 4096,
    tieWordEmbeddings: true,
    attentionBias: true,
    qkNorm: false,
    bosTokenId: null,
    eosTokenIds: tok.eosTokenIds,
  };
}

async function run(engine: Engine, wf: Workflow, seed: number): Promise<Episode[]> {
  const envs = ['a', 'b', 'c'].map((id) => new FakeEnv(id, `Problem ${id}: what is 1+1?`, (s) => ({ teamReward: 1, done: s.t === 1 })));
  return rollout(wf, envs, { sampler: engineSampler(engine), tokenizer: tok, params: { ...PARAMS, maxNewTokens: 12, seed } });
}

async function assertRescored(engine: Engine, episodes: Episode[]): Promise<number> {
  let checked = 0;
  for (const ep of episodes) {
    checkEpisode(ep);
    for (const a of ep.actions) {
      const target = a.policy === 'base' ? ({ kind: 'base' } as const) : ({ kind: 'adapter', name: a.policy } as const);
      const out = await engine.forward(target, [actionSequence(a)], { temperature: 1 });
      const logprobs = out.logprobs![0]!;
      assert.equal(logprobs.length, a.actionTokens.length);
      a.behaviourLogprobs.forEach((lp, k) => assert.ok(Math.abs(lp - logprobs[k]!) < 1e-4, `${ep.problemId} ${a.agent} token ${k}: ${lp} vs ${logprobs[k]}`));
      assert.equal(a.text, tok.decode(a.stopReason === 'stop_token' ? a.actionTokens.slice(0, -1) : a.actionTokens));
      checked += a.actionTokens.length;
    }
  }
  return checked;
}

test('engine rollout: behaviour log-probs equal the engine re-scoring the recorded tokens; reproducible from the seed', async () => {
  const engine = createEngine(tinyConfig(), { seed: 7, decode: (ids: number[]) => tok.decode(ids) });
  const lora: LoraConfig = { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'] };
  for (const [k, name] of ['planner', 'solver', 'verifier', 'coder'].entries()) await engine.createAdapter(name, lora, 100 + k);

  const trio = sequentialPipeline({ domain: 'math', size: 'trio' });
  const first = await run(engine, trio, 5);
  assert.ok((await assertRescored(engine, first)) > 50);
  const again = await run(engine, trio, 5);
  assert.deepEqual(again.map((e) => e.actions.map((a) => a.actionTokens)), first.map((e) => e.actions.map((a) => a.actionTokens)));

  const pair = coderTester({ policies: ['coder', 'base'] });
  const episodes = await run(engine, pair, 9);
  assert.deepEqual(episodes.map((e) => e.steps.length), [2, 2, 2]);
  assert.ok((await assertRescored(engine, episodes)) > 50);
  await engine.dispose();
});

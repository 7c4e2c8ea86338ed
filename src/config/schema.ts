// The training configuration: every setting of spec section 4 is a key, with the App. B defaults.
// docs/config.md is generated from this file (src/config/docs.ts); test/config checks it is current.
import { ALL_LINEAR_MODULES, ENGINE_KINDS, SERVED_ENGINE_KINDS } from '../engine/types.ts';
import { ACTION_NORMALISATIONS, ALGORITHMS, GROUP_KEYS, GROUP_SCALES, LOG_TARGETS, ROLE_LINE_RULES, SCHEDULE_KINDS, TEAM_REWARD_SOURCES, TEAM_SHARES, TURN_WEIGHTINGS, VALUE_LOSS_KINDS } from './choices.ts';
import { EVAL_PROTOCOL_NAMES, EVAL_PROTOCOLS } from './eval-protocols.ts';
import { bool, int, num, numbers, obj, oneOf, record, someOf, str, type Bound, type Infer } from './schema-dsl.ts';

/** Episodes of one step (or of one evaluation seed), which are held in memory together. */
const MAX_EPISODES = 65_536;

// Upper bounds of the integer settings: generous for real runs, but they refuse values that cannot
// fit in memory or finish (a batch of 10⁹ problems used to crash the runtime natively).
const BOUND = {
  seed: { max: 4_294_967_295, why: 'seeds are 32-bit, so a larger one would repeat a smaller one' },
  rank: { max: 16_384, why: 'no model is that wide, and a rank above the width adds nothing' },
  width: { max: 65_536, why: "the head's weights grow with the product of neighbouring widths" },
  steps: { max: 1_000_000, why: 'a run of more steps cannot finish' },
  passes: { max: 1_000, why: 'each pass costs a forward and a backward over the whole batch' },
  minibatches: { max: MAX_EPISODES, why: `a minibatch holds at least one episode, and a step at most ${MAX_EPISODES}` },
  episodes: { max: MAX_EPISODES, why: 'the episodes of one step are held in memory together' },
  tokens: { max: 1_048_576, why: "no model's context is longer" },
  microBatch: { max: 1_048_576, why: "a micro-batch's activations are held in memory together" },
  topK: { max: 1_048_576, why: 'no vocabulary is larger' },
  checkpoints: { max: 1_000, why: 'each checkpoint keeps a copy of the trained weights on disk' },
  evalSeeds: { max: 1_000, why: 'each seed decodes every held-out problem once more' },
  evalProblems: { max: MAX_EPISODES, why: 'the episodes of one evaluation seed are held in memory together' },
  processes: { max: 1_024, why: 'no machine holds more devices' },
  threads: { max: 4_096, why: 'no machine has more cores' },
} satisfies Record<string, Bound>;

export { ALGORITHMS, type AlgorithmName } from './choices.ts';

const optimiser = (who: string, schedule: 'cosine' | 'constant', finalRatio: number, lr = 5e-6) =>
  obj(`AdamW and learning-rate schedule of the ${who}`, {
    lr: num('peak learning rate', lr, { min: 0 }),
    weightDecay: num('decoupled weight decay', 0.01, { min: 0 }),
    beta1: num('Adam β1', 0.9, { min: 0, max: 1 }),
    beta2: num('Adam β2', 0.999, { min: 0, max: 1 }),
    eps: num('Adam ε', 1e-8, { min: 0 }),
    maxGradNorm: num('clip the global gradient norm to this value (0 = off)', 1.0, { min: 0 }),
    schedule: oneOf('learning-rate schedule after warmup', SCHEDULE_KINDS, schedule),
    warmupRatio: num('warmup proportion of the optimiser steps (linear ramp)', 0.001, { min: 0, max: 1 }),
    finalRatio: num('cosine only: final / initial learning rate', finalRatio, { min: 0, max: 1 }),
  });

export const configSchema = obj('a MARFT training run', {
  seed: int('run seed: every step derives its sampling seed from (seed, step)', 0, 0, BOUND.seed),
  algorithm: oneOf(
    'marft-action: action-level MARFT (predecessor-conditioned PPO, centralised critic); marft-token: token-level MARFT; ippo: independent policy and critic per agent; marft-outcome: trajectory-level variant (outcome reward at the episode end); grpo: group-relative advantages over rollout.rolloutsPerPrompt episodes per problem, per role, no critic; magrpo: joint samples, return-to-go minus the group mean, REINFORCE, no critic; mas-opd: on-policy distillation from the teacher model, one adapter per role, settings in opd (docs/algorithms.md; MAS-OPD: docs/mas-opd.md)',
    ALGORITHMS,
    'marft-action',
  ),
  task: obj('what the agents are trained on', {
    name: str('a registered task: workflow (a dataset + a Flex-MG workflow + its environment, docs/tasks.md), coordination-game or bandit (docs/training.md)', 'coordination-game'),
    options: record("the task's own options (its docs list them)"),
  }),
  model: obj('the engine and its model', {
    engine: oneOf('embedded: the TypeScript engine on a Hugging Face checkpoint; torch: the PyTorch worker engine (docs/scaling.md) on the same checkpoints; tabular: a lookup-table policy for sanity checks of the RL maths; served models, for `marft eval CONFIG --base` only (they sample, never train; docs/scaling.md, “Served models from a configuration”): openai, an OpenAI-compatible server already running at model.url; vllm, a vLLM server that marft starts on model.path (interpreter: sampler.python)', [...ENGINE_KINDS, ...SERVED_ENGINE_KINDS], 'embedded'),
    path: str('Hugging Face model folder ("" = the task builds or names its own model; the torch engine then loads the copy saved in RUN/base); with model.engine openai, the served model’s folder for its tokenizer and config.json (vocabulary, eos ids)', ''),
    url: str('model.engine openai only: the server’s OpenAI API root, e.g. http://127.0.0.1:8000/v1', ''),
    servedModel: str('model.engine openai only: the name the server serves the model under ("" = the one model its /v1/models lists; a server listing several is refused until one is named)', ''),
    precision: oneOf('weight precision (the paper: bf16, with the torch engine; the embedded engine computes in fp32 on the CPU)', ['fp32', 'bf16'] as const, 'fp32'),
    device: oneOf('torch engine only: auto (CUDA when available), cpu or cuda', ['auto', 'cpu', 'cuda'] as const, 'auto'),
    processes: int('torch engine only: worker processes (devices) on this machine; more than 1 shards the base with FSDP2', 1, 1, BOUND.processes),
    threads: int("torch engine only: torch's CPU threads per worker process (0 = torch's default)", 0, 0, BOUND.threads),
    nodes: int('torch engine only: machines the students’ engine spans (model.processes on each); node 0 is this machine, the others are started by hand (docs/scaling.md, “Several machines”)', 1, 1, BOUND.processes),
    rendezvous: str('torch engine, model.nodes > 1 only: HOST:PORT of this machine, where the other nodes meet (torchrun’s static rendezvous)', ''),
    maxSequences: int('embedded engine only: sequences one sampling call decodes at once (0 = all of them); a finished sequence’s slot goes to the next waiting one (continuous batching). Bounds sampling’s key/value memory on a real model; what is sampled does not change, since every request draws from its own generator (docs/performance.md, “Continuous batching”)', 0, 0, BOUND.episodes),
  }, (o) => {
    if (o.maxSequences > 0 && o.engine !== 'embedded') return `maxSequences: the embedded engine's option (model.engine is ${o.engine}); leave it at 0`;
    if (o.nodes > 1 && o.engine !== 'torch') return `nodes: ${o.nodes} machines need model.engine torch (got ${o.engine})`;
    if (o.nodes > 1 && !/^[^\s:]+:\d+$/.test(o.rendezvous)) return `rendezvous: model.nodes ${o.nodes} needs HOST:PORT of this machine, where the other nodes meet (got ${JSON.stringify(o.rendezvous)})`;
    return null;
  }),
  sampler: obj('where training episodes are sampled (docs/scaling.md, "Sampling on vLLM during training")', {
    engine: oneOf('trainer: the engine of model.engine samples; vllm: a vLLM server that marft starts on model.path (or RUN/base) with LoRA enabled samples, and every adapter version is loaded into it and checked after each optimiser step (the trainer engine still scores and trains)', ['trainer', 'vllm'] as const, 'trainer'),
    python: str('vllm only: Python interpreter with vLLM ("" = MARFT_VLLM_PYTHON, else .venv-vllm/bin/python of this repository, made by scripts/setup.sh --vllm)', ''),
    tolerance: num('vllm only: largest |Δ log-prob| between the training engine and vLLM on the fixed check batch after each adapter load; beyond it the run stops (float32 on both sides measures about 1e-6; raise it for a bf16 server)', 1e-3, { min: 0 }),
    maxLoras: int('vllm only: adapters in one vLLM batch (--max-loras): the policies plus versions still draining', 4, 1, BOUND.processes),
  }),
  teacher: obj('mas-opd only: the frozen teacher that scores the students’ responses (docs/mas-opd.md)', {
    path: str('Hugging Face model folder of the teacher, with tokenizer files; its tokenizer must be the students’ (a mismatch is refused); with teacher.engine openai, the served model’s folder (tokenizer and config.json)', ''),
    engine: oneOf('engine that opens the teacher, as model.engine (the torch engine takes model.device, processes, threads and precision; tabular: a lookup table over the students’ vocabulary, for sanity checks, path unused); served teachers score through prompt log-probs: vllm, a vLLM server that marft starts on teacher.path (interpreter: sampler.python; bfloat16 with model.precision bf16); openai, an OpenAI-compatible server already running at teacher.url. A served teacher is probed with one scoring at the start, and a server that cannot score a given sequence (llama.cpp’s) is refused before any step', [...ENGINE_KINDS, ...SERVED_ENGINE_KINDS], 'embedded'),
    url: str('teacher.engine openai only: the server’s OpenAI API root, e.g. http://127.0.0.1:8000/v1', ''),
    servedModel: str('teacher.engine openai only: the name the server serves the teacher under ("" = the one model its /v1/models lists; a server listing several is refused until one is named)', ''),
  }),
  opd: obj('mas-opd only: the method’s settings (the rest come from policy, actor.optim, rollout and train; docs/mas-opd.md)', {
    lambda: num('λ of RAS: A = A_OPD + λ·A_role (the paper: 0.1; 0 turns RAS off and skips the contrasting teacher pass)', 0.1, { min: 0 }),
    pac: bool('PAC: verdicts of the training-time verifier on the previous turn in the teacher’s context (rules for the `reasoner-tooluser` and `coder-tester` pairs; other workflows train without them, with a notice)', true),
    roleLine: oneOf('which part of a student’s first system message the role condition replaces in the teacher’s context: role-sentences, its leading sentences that name a role (“You are the Reasoner. You work with a Tool-User, who …”), so that nothing of the student’s own role stays beside the condition; first-sentence, first-line, or the whole system-message', ROLE_LINE_RULES, 'role-sentences'),
    roleConditions: str('JSON file of role conditions and κ ({"conditions": {"<Role>": ["<paragraph 1>", "<paragraph 2>"]}, "contrast": {"<Role>": "<Role>"}}; roles it names replace the built-in ones; "" = the built-in table)', ''),
    contrast: record('κ overrides after the file: {"<Role>": "<contrasting role>"} (the role whose condition scores the second RAS pass)'),
    minibatchSize: int('episodes per minibatch: each step makes ceil(rollout.batchSize / minibatchSize) updates, one optimiser step per role each (the paper: 64 of 128)', 64, 1, BOUND.episodes),
    turnWeighting: oneOf('Eq. 13’s weights of a role’s turns: trajectory, the mean over the role’s turns within each trajectory, then over the trajectories where it acted (the paper: long trajectories do not dominate); pooled, one mean over the role’s turns of the whole minibatch (a 4-turn episode weighs 4× a 1-turn one; the step before issue 19)', TURN_WEIGHTINGS, 'trajectory'),
  }, (o) => {
    // A record is free-form; κ maps role names to role names, so a wrong value is refused at load time.
    const bad = Object.entries(o.contrast).find(([, v]) => typeof v !== 'string' || v === '');
    return bad ? `contrast.${bad[0]}: got ${JSON.stringify(bad[1])}, expected a role name` : null;
  }),
  policy: obj('the agents’ policies', {
    parameterSharing: bool('true: one policy adapter for all agents (2 adapters with the critic); false: one per agent (n + 1)', true),
    loraRank: int('LoRA rank', 32, 1, BOUND.rank),
    loraAlpha: num('LoRA alpha', 16, { min: 0, minExclusive: true }),
    targetModules: someOf('linear layers LoRA wraps (default: all)', ALL_LINEAR_MODULES, [...ALL_LINEAR_MODULES]),
  }),
  critic: obj('the centralised critic (IPPO: one per agent)', {
    kind: oneOf('lora-critic: a LoRA critic adapter + linear value head (the paper); mlp: frozen base + MLP head (the reference code)', ['lora-critic', 'mlp'] as const, 'lora-critic'),
    mlpHidden: numbers('hidden sizes of the MLP head (reference code [1024, 512]; MAS-OPD runs [64])', [1024, 512], { min: 1, integer: true, bound: BOUND.width }),
    loraRank: int('rank of the critic adapter', 32, 1, BOUND.rank),
    loraAlpha: num('alpha of the critic adapter', 16, { min: 0, minExclusive: true }),
    headInit: oneOf('how the value head\'s last layer starts: zero, weight and bias 0, so every value starts at 0 and no agent\'s advantage carries a random head\'s bias at step 0 (chosen by measurement: docs/training.md, "The critic\'s defaults"); torch, as torch.nn.Linear initialises it (the reference code, and this project before that measurement)', ['torch', 'zero'] as const, 'zero'),
    warmupSteps: int('steps at the start that train only the critic (the actor is frozen)', 0, 0, BOUND.steps),
    valueLoss: oneOf('value regression loss', VALUE_LOSS_KINDS, 'mse'),
    huberDelta: num('Huber δ', 1.0, { min: 0, minExclusive: true }),
    valueClip: num('clip of the new values around the old ones in the value loss (0 = off)', 0.2, { min: 0 }),
    epochs: int('critic passes over each batch', 1, 1, BOUND.passes),
    minibatches: int('critic minibatches per pass (one AdamW step each; App. B: 1)', 1, 1, BOUND.minibatches),
    optim: optimiser('critic', 'constant', 1.0),
  }),
  actor: obj('the PPO update of the policies', {
    clipLow: num('PPO clip ε below 1', 0.2, { min: 0, max: 1 }),
    clipHigh: num('PPO clip ε above 1', 0.2, { min: 0 }),
    klCoef: num('coefficient of the KL penalty against the frozen base (0 = off, no reference pass)', 0.1, { min: 0 }),
    klEstimator: oneOf('KL estimator', ['k3'] as const, 'k3'),
    recomputeLogprobs: bool('recompute the old (proximal) log-probs with a forward pass instead of using the sampler’s', true),
    decoupled: bool('decoupled loss: weight each unit by min(π_prox / π_behaviour, behaviourCap)', true),
    behaviourCap: num('cap of the importance weights to the sampler: the decoupled weight min(π_prox / π_behaviour, cap), and with sampler.engine vllm the policy-gradient objective’s weight min(π_old / π_vLLM, cap) (docs/algorithms.md, “Sampler mismatch”)', 5, { min: 1 }),
    actionNormalisation: oneOf('action log-prob: sum of token log-probs, or divided by the token count or the word count', ACTION_NORMALISATIONS, 'sum'),
    agentByAgent: bool('update one agent per interval, cycling in execution order (the others’ actions are not trained on)', false),
    agentInterval: int('steps per agent when agentByAgent is on', 1, 1, BOUND.steps),
    epochs: int('PPO epochs over each batch', 1, 1, BOUND.passes),
    minibatches: int('PPO minibatches per epoch', 1, 1, BOUND.minibatches),
    optim: optimiser('actor', 'cosine', 0.05),
  }),
  advantage: obj('credit assignment', {
    gamma: num('γ: discount between environment steps (token level: γ_a)', 0.99, { min: 0, max: 1 }),
    lambda: num('GAE λ', 0.95, { min: 0, max: 1 }),
    gammaAgent: num('discount between agents inside a step (1 = none across an agent boundary, as the paper; the reference code uses γ)', 1.0, { min: 0, max: 1 }),
    gammaToken: num('token level only: γ_w between the tokens of one action', 1.0, { min: 0, max: 1 }),
    normaliseRewards: bool('divide the credited rewards by the running standard deviation of the credit chains’ returns over the run (never shifted, so a zero reward stays zero)', true),
    normaliseAdvantages: bool('whiten the advantages over the units being updated in the step', true),
    whitenBy: oneOf('with normaliseAdvantages: batch whitens all the units being updated together (App. B); position whitens the units of each agent position in the step (0 = acts first) apart, whose advantages differ in scale at λ < 1 (a MARFT chain of n agents discounts the late rewards by λ^(n−i) for agent i)', ['batch', 'position'] as const, 'batch'),
    dropFlatGroups: bool('at-grpo only: leave the candidates of groups whose rewards are all equal (zero range, advantage 0) out of the policy update (cure always leaves such groups out, as its authors do)', false),
    groupBy: oneOf('grpo only: role compares a response with the same role’s responses to the same problem over every turn (MAS+GRPO as the MAS-OPD paper defines it); role-turn only with those of the same turn (AT-GRPO’s turn-wise grouping; at-grpo and cure always group so)', GROUP_KEYS, 'role'),
    groupScale: oneOf('grpo and at-grpo only: std divides r − group mean by the group’s standard deviation (GRPO); none only subtracts the mean (the “no std” variant of Dr. GRPO)', GROUP_SCALES, 'std'),
    jointActions: oneOf('magrpo only: aligned pairs the i-th samples of every agent of a problem into G joint samples (the G episodes); cross scores every combination (G^n joint samples, Task.jointRewards, single-turn tasks that offer it) and credits each agent’s sample with the mean over its joint samples of return − the mean over all of them', ['aligned', 'cross'] as const, 'aligned'),
    baseline: oneOf('critic: GAE reads the critic’s values; batch-mean: every old value is replaced by the batch’s mean value (an ablation that keeps the budget but drops the critic’s state dependence); exact: the task’s exact values under the current policies (toy tasks that offer them, relay-game: a perfect critic, for experiments; the critic still trains and is measured against them)', ['critic', 'batch-mean', 'exact'] as const, 'critic'),
  }),
  reward: obj('how the rewards the environment reports become the rewards the credit chain reads (src/train/rewards.ts, src/train/batch.ts; docs/training.md, “How rewards reach the chain”): reward = teamWeight·team + localWeight·local, placed where the algorithm says', {
    team: oneOf('which team reward each turn receives: outcome: the episode’s final outcome, at every turn (spec section 3, MAS-OPD App. D.4); turn: each turn’s own result as the environment reports it. The trees (at-grpo; magrpo with rollout.jointTree best or all) rank and credit a copy by its own turn whatever this says: a copy that does not continue has no outcome', TEAM_REWARD_SOURCES, 'outcome'),
    share: oneOf('where every action receives the team reward (ippo, grpo, at-grpo): broadcast: each action all of its turn’s team reward; split: an equal share of it among the turn’s actions (refused for the others: joint chains, marft-* and magrpo, take a turn’s team reward once)', TEAM_SHARES, 'broadcast'),
    teamWeight: num('α in reward = α·team + localWeight·local (AT-GRPO and MAS-OPD App. D.4: 1; 0 leaves the team reward out)', 1, { min: 0 }),
    localWeight: num('weight of the role-local rewards (Reasoner, Tool-User, Coder, Tester: spec section 3, the role weights in task.options.rewardWeights; the RL baselines’ α·team + local: 1; 0 = the team reward alone). Tasks without role-local rewards are unaffected', 1, { min: 0 }),
  }),
  rollout: obj('sampling of training episodes', {
    batchSize: int('problems per training step', 256, 1, BOUND.episodes),
    rolloutsPerPrompt: int(`episodes sampled per problem (and batchSize × rolloutsPerPrompt ≤ ${MAX_EPISODES})`, 1, 1, BOUND.episodes),
    temperature: num('sampling temperature', 1.0, { min: 0 }),
    topP: num('nucleus sampling (1 = off)', 1.0, { min: 0, max: 1, minExclusive: true }),
    topK: int('top-k sampling (0 = off)', 0, 0, BOUND.topK),
    maxNewTokens: int('per-agent generation cap (maths Duo 12,288, Trio 8,192, Quad 6,144; coding 13,824 / 9,216 / 6,912)', 12288, 1, BOUND.tokens),
    maxPromptTokens: int('input cap (maths 1,024; coding 4,096)', 1024, 1, BOUND.tokens),
    jointTree: oneOf('magrpo only, on multi-turn tasks that can copy their state (the workflow task): independent: G = rolloutsPerPrompt independent episodes per problem (the MAS-OPD paper’s “G complete joint trajectories”; joint samples at later turns have different histories); best: one tree of joint samples per problem, G joint samples (whole turns, every agent acting) from copies of each node’s state, the node’s G forming a group and the best by its turn’s joint reward continuing (G per turn); all: every joint sample continues as its own node (the authors’ code: G + G² + … + G^T per problem). Single-turn tasks sample G independent episodes whatever it says (docs/algorithms.md, MAGRPO)', ['independent', 'best', 'all'] as const, 'independent'),
  }, (r) =>
    r.batchSize * r.rolloutsPerPrompt > MAX_EPISODES
      ? `batchSize × rolloutsPerPrompt = ${r.batchSize} × ${r.rolloutsPerPrompt} episodes per step, expected at most ${MAX_EPISODES} (the episodes of one step are held in memory together)`
      : null,
  ),
  train: obj('the loop', {
    steps: int('training steps (rollout + update)', 100, 1, BOUND.steps),
    microBatchTokens: int('cap on the tokens of one forward/backward micro-batch', 32768, 1, BOUND.microBatch),
    checkpointEvery: int('write a checkpoint every N steps (and at the end)', 10, 1, BOUND.steps),
    keepCheckpoints: int('checkpoints kept on disk (older ones are deleted)', 2, 1, BOUND.checkpoints),
    evalEvery: int('also score held-out problems every N steps (eval_score in metrics.jsonl; 0 = never between). A run scores them before its first step and after its last (RUN/evaluations.json, eval_before and eval_after in marft train’s final line) unless marft train is given --no-eval', 0, 0, BOUND.steps),
  }),
  eval: obj('held-out evaluation (spec section 7)', {
    protocol: oneOf(`a paper's evaluation protocol (docs/training.md, "Evaluation protocols"); it supplies the eval keys left out and refuses a decoding key written otherwise: ${Object.entries(EVAL_PROTOCOLS).map(([n, p]) => `${n}: ${p.description}`).join('; ')}; custom: the eval keys as written`, EVAL_PROTOCOL_NAMES, 'custom'),
    temperature: num('sampling temperature', 0.6, { min: 0 }),
    topP: num('nucleus sampling (1 = off)', 1.0, { min: 0, max: 1, minExclusive: true }),
    topK: int('top-k (0 = off)', 0, 0, BOUND.topK),
    seeds: int('decode every problem once per seed (n of pass@k); the score is the mean of the per-seed averages', 5, 1, BOUND.evalSeeds),
    problems: int('held-out problems scored (0 = all the task offers)', 0, 0, BOUND.evalProblems),
  }),
  log: obj('where a training run reports besides RUN/metrics.jsonl (docs/training.md, “Watching a run”); these keys may change when a run resumes', {
    to: someOf('console: progress on stderr (on a terminal a bar with the elapsed time, the time left and tokens/s; elsewhere a plain line, see log.every); tensorboard: TensorBoard event files in RUN/tensorboard/ (W&B: wandb sync --sync-tensorboard RUN/tensorboard); csv: RUN/metrics.csv, metrics.jsonl as a table', LOG_TARGETS, ['console']),
    every: int('console off a terminal: a plain line every N steps (0 = by time only); the first and the last step always print one', 10, 0, BOUND.steps),
    everySeconds: num('console off a terminal: a plain line once this many seconds have passed since the last one (0 = by steps only)', 60, { min: 0 }),
    samplesEvery: int('write RUN/samples/step-N.jsonl (each agent’s turns, tokens, log-probs, rewards and per-token advantages or teacher gaps; docs/dashboard.md) every N steps and at the last step (0 = never)', 10, 0, BOUND.steps),
    samplesEpisodes: int('episodes per samples file (the first ones of the step’s batch)', 4, 1, BOUND.episodes),
  }),
});

export type MarftConfig = Infer<typeof configSchema>;

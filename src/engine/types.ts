// The narrow engine interface (docs/architecture.md: the only engine code the controller imports).
//
// This file and src/engine/index.ts are all that code above the engine imports. Everything a
// step needs travels in the request, so the same interface can later be served by a PyTorch
// worker over a socket. Engines hold no algorithm code: every loss is computed in TypeScript
// from the per-token log-probs and values returned here, and its gradient with respect to
// those per-token quantities is handed back through `backward`.
//
// Shape conventions: one Float32Array per sequence; `logprobs[b][k]` and `values[b][k]` are
// aligned with the scored tokens of sequence b (see ScoreRequest).

export type Architecture = 'llama' | 'qwen2' | 'qwen3';

/**
 * The engines a configuration's `model.engine` can name (opened by src/engine/open.ts): the TypeScript
 * engine, the PyTorch worker engine, and the lookup-table engine for sanity checks of the RL maths.
 */
export const ENGINE_KINDS = ['embedded', 'torch', 'tabular'] as const;
export type EngineKind = (typeof ENGINE_KINDS)[number];

/**
 * Served models a configuration can name besides (`model.engine` for `marft eval --base` only,
 * `teacher.engine`), opened by src/engine/open.ts's openSamplingEngine: they sample and score but do
 * not train. openai: an OpenAI-compatible server already running; vllm: a vLLM server marft starts.
 */
export const SERVED_ENGINE_KINDS = ['openai', 'vllm'] as const;
export type ServedEngineKind = (typeof SERVED_ENGINE_KINDS)[number];

/** A decoder's hyper-parameters, read from (and written back to) a Hugging Face config.json. */
export interface ModelConfig {
  architecture: Architecture;
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numHiddenLayers: number;
  numAttentionHeads: number;
  numKeyValueHeads: number;
  /** Per-head width; hiddenSize / numAttentionHeads unless the config sets head_dim (Qwen3). */
  headDim: number;
  rmsNormEps: number;
  ropeTheta: number;
  maxPositionEmbeddings: number;
  tieWordEmbeddings: boolean;
  /** Biases on q/k/v projections (Qwen2). */
  attentionBias: boolean;
  /** Per-head RMSNorm on q and k before RoPE (Qwen3). */
  qkNorm: boolean;
  bosTokenId: number | null;
  eosTokenIds: number[];
}

/** The linear layers LoRA may wrap, named as PEFT's target_modules name them. */
export type LinearModule = 'q_proj' | 'k_proj' | 'v_proj' | 'o_proj' | 'gate_proj' | 'up_proj' | 'down_proj';
export const ALL_LINEAR_MODULES: readonly LinearModule[] = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];

export interface LoraConfig {
  rank: number;
  alpha: number;
  /** Default: all linear layers of attention and MLP. */
  targetModules: LinearModule[];
}

/**
 * A centralised critic (spec section 4): either its own LoRA adapter over the base plus a linear
 * head hidden→1 (the paper), or the frozen base plus a trainable MLP head hidden→h1→…→1 (the
 * reference code uses [1024, 512]; MAS-OPD's MARFT runs use [64]). `zeroLastLayer`: the head's last
 * layer starts at weight and bias 0 (every value 0); otherwise as torch.nn.Linear initialises it.
 */
export type ValueHeadSpec =
  | { kind: 'lora-critic'; lora: LoraConfig; zeroLastLayer?: boolean }
  | { kind: 'mlp'; hidden: number[]; zeroLastLayer?: boolean };

/** What a forward pass runs through: the frozen base, a policy adapter, or a critic. */
export type Target =
  | { kind: 'base' }
  | { kind: 'adapter'; name: string }
  | { kind: 'critic'; name: string };

/** What an optimiser step updates: an adapter, a critic (adapter and head), or the base itself. */
export type Trainable = { kind: 'adapter'; name: string } | { kind: 'critic'; name: string } | { kind: 'base' };

export interface SampleParams {
  /** 0 means greedy decoding. */
  temperature: number;
  /** 1 = off. */
  topP: number;
  /** 0 = off. */
  topK: number;
  maxNewTokens: number;
  stopTokenIds: number[];
  /** Checked on the decoded text of the generated tokens; needs the engine's decoder. */
  stopStrings: string[];
  /** Same seed, same prompts, same params → the same tokens. */
  seed: number;
}

export type StopReason = 'stop_token' | 'stop_string' | 'max_tokens' | 'context_full';

/** Token ids → text: the engine option `decode` that stop strings are checked with. */
export type Decode = (ids: number[]) => string;

export interface SampleResult {
  /** Generated tokens, including the stop token when one ended the sequence. */
  tokens: number[];
  /** log-prob of each generated token under the distribution it was drawn from (after temperature, top-k, top-p). */
  logprobs: number[];
  stopReason: StopReason;
}

/**
 * A sequence to score. logprobs[k] = log p(tokens[scoreFrom + k] | tokens[0 .. scoreFrom + k - 1]),
 * k = 0 .. tokens.length - scoreFrom - 1; values[k] is the critic's value at the same position,
 * i.e. of the state tokens[0 .. scoreFrom + k - 1] (so values[0] is the value of the prompt).
 */
export interface ScoreRequest {
  tokens: number[];
  /** >= 1. */
  scoreFrom: number;
}

export interface ForwardOptions {
  /** Log-probs are of softmax(logits / temperature), as in sampling; 0 or 1 means unscaled. */
  temperature?: number;
  /** Keep activations so that `backward` can run on this pass. */
  retainGraph?: boolean;
}

export interface ForwardOutput {
  /** For base and adapter targets. */
  logprobs?: Float32Array[];
  /** For critic targets. */
  values?: Float32Array[];
  /** Present when retainGraph was set; consumed by exactly one backward call. */
  handle?: GraphHandle;
}

export interface GraphHandle {
  readonly id: number;
}

/** dL/dlogprob and dL/dvalue per scored token, shaped like the forward output. */
export interface BackwardGrads {
  dLogprobs?: Float32Array[];
  dValues?: Float32Array[];
}

export interface OptimParams {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** Clip the global gradient norm of this trainable to this value; 0 = no clipping. */
  maxGradNorm: number;
}

export interface OptimResult {
  /** Global L2 norm of the gradient before clipping. */
  gradNorm: number;
}

/** What callers need to know of a model: enough to build prompts and check requests, whatever serves it. */
export interface ModelInfo {
  vocabSize: number;
  /** Longest sequence (prompt + generated tokens) the model takes. */
  contextLength: number;
  bosTokenId: number | null;
  /** Token ids that end a generation. */
  eosTokenIds: number[];
}

/** The model's own distribution, or a policy adapter over it: what sampling and scoring run through. */
export type PolicyTarget = Extract<Target, { kind: 'base' } | { kind: 'adapter' }>;

export interface ScoreOptions {
  /** Log-probs are of softmax(logits / temperature); 0 or 1 means unscaled. */
  temperature?: number;
}

/**
 * What a caller that only samples and scores needs (prompt-only baselines, evaluation, a teacher):
 * served by every engine, including one that only reaches a model over HTTP (src/engine/openai/).
 */
export interface SamplingEngine {
  readonly info: ModelInfo;
  sample(target: PolicyTarget, prompts: number[][], params: SampleParams): Promise<SampleResult[]>;
  /** Per-token log-probs of the given tokens, as ForwardOutput.logprobs (no graph is kept). */
  score(target: PolicyTarget, batch: ScoreRequest[], options?: ScoreOptions): Promise<Float32Array[]>;
  dispose(): Promise<void>;
}

/** An engine that also trains: adapters, critics, forward with a retained graph, backward, AdamW, state files. */
export interface TrainingEngine extends SamplingEngine {
  createAdapter(name: string, lora: LoraConfig, seed: number): Promise<void>;
  /** PEFT format: adapter_config.json + adapter_model.safetensors. */
  loadAdapter(name: string, dir: string): Promise<void>;
  saveAdapter(name: string, dir: string): Promise<void>;
  deleteAdapter(name: string): Promise<void>;
  listAdapters(): Promise<string[]>;

  createCritic(name: string, spec: ValueHeadSpec, seed: number): Promise<void>;
  loadCritic(name: string, dir: string): Promise<void>;
  saveCritic(name: string, dir: string): Promise<void>;

  /** Full-parameter training of the base (small models trained from scratch). */
  setBaseTrainable(trainable: boolean): Promise<void>;
  /** Hugging Face model folder (config.json, model.safetensors, generation_config.json). */
  saveBase(dir: string): Promise<void>;

  forward(target: Target, batch: ScoreRequest[], options?: ForwardOptions): Promise<ForwardOutput>;
  /** Accumulates gradients into the trainable parameters behind the handle's target. */
  backward(handle: GraphHandle, grads: BackwardGrads): Promise<void>;
  /** Applies AdamW to the accumulated gradients, then zeroes them. */
  optimStep(trainable: Trainable, params: OptimParams): Promise<OptimResult>;
  zeroGrad(trainable: Trainable): Promise<void>;
  /** Optimiser moments and step count, so a resumed run continues exactly. */
  saveOptimizerState(trainable: Trainable, file: string): Promise<void>;
  loadOptimizerState(trainable: Trainable, file: string): Promise<void>;
}

/** The trainer's engine (every training engine). Every method may be served remotely, hence async. */
export type Engine = TrainingEngine;

/** ModelInfo of a decoder's configuration. */
export function modelInfo(config: ModelConfig): ModelInfo {
  return { vocabSize: config.vocabSize, contextLength: config.maxPositionEmbeddings, bosTokenId: config.bosTokenId, eosTokenIds: [...config.eosTokenIds] };
}

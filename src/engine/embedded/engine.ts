// EmbeddedEngine: the Engine interface (src/engine/types.ts) over the in-process float32 model.
// Base checkpoints are read and written in engine-io.ts, adapter and critic folders in
// ../hf/trainable-folders.ts; this file holds the tensor work.
import type {
  BackwardGrads, Engine, ForwardOptions, ForwardOutput, GraphHandle, LoraConfig, ModelConfig, OptimParams, OptimResult,
  ModelInfo, PolicyTarget, SampleParams, SampleResult, ScoreOptions, ScoreRequest, Target, Trainable, ValueHeadSpec, Decode,
} from '../types.ts';
import { modelInfo } from '../types.ts';
import { DecoderModel, type HiddenPass } from './model.ts';
import type { BaseWeights } from './weights.ts';
import { namedParams, outputMatrix } from './weights.ts';
import { loraParams, type LoraAdapter } from './lora.ts';
import { criticParams, type Critic } from './critic.ts';
import { createCritic, createLora } from '../trainables.ts';
import { valueHeadBackward, valueHeadForward, type ValueHeadPass } from './value-head.ts';
import { gatherRows, joinByCounts, lmHeadBackward, lmHeadForward, packScoreRequests, releaseLmHeadPass, scatterAddRows, splitByCounts, type LmHeadPass, type PackedBatch } from './scoring.ts';
import { effectiveTemperature } from './kernels/log-softmax.ts';
import { adamwStep, newAdamState } from './adamw.ts';
import { readAdamState, writeAdamState, type AdamState } from '../hf/optimizer-state-file.ts';
import { generate, type GenerateOptions } from './generate.ts';
import { param, type Param } from './param.ts';
import { sharedFloats } from '../shareable-arrays.ts';
import { saveBaseDir } from './engine-io.ts';
import { loadAdapterDir, loadCriticDir, saveAdapterDir, saveCriticDir } from '../hf/trainable-folders.ts';

/** The sampler's options (generate.ts: sharePrefill, maxSequences, the latter config key model.maxSequences) and a decoder for stop strings. */
export interface EmbeddedEngineOptions extends GenerateOptions {
  /** Token ids → text, for stop strings. */
  decode?: Decode;
}

interface Graph {
  target: Target;
  packed: PackedBatch;
  pass: HiddenPass;
  temperature: number;
  lm: LmHeadPass | null;
  value: ValueHeadPass | null;
  sel: Float32Array;
}

export class EmbeddedEngine implements Engine {
  readonly model: DecoderModel;
  protected adapters = new Registry<LoraAdapter>('adapter');
  protected critics = new Registry<Critic>('critic');
  private baseTrainable = false;
  private graphs = new Map<number, Graph>();
  private nextGraphId = 1;
  private optim = new Map<string, AdamState>();

  readonly info: ModelInfo;

  constructor(readonly config: ModelConfig, weights: BaseWeights, protected options: EmbeddedEngineOptions = {}) {
    this.model = new DecoderModel(config, weights);
    this.info = modelInfo(config);
  }

  /** The sampler's options in force (what sample() passes to generate). */
  get generateOptions(): Readonly<EmbeddedEngineOptions> {
    return this.options;
  }

  /** Sets sampler options (sharePrefill, maxSequences) on an engine already built, e.g. by a task; the options not named stay. */
  withGenerateOptions(options: GenerateOptions): void {
    this.options = { ...this.options, ...options };
  }

  // ---- adapters and critics -------------------------------------------------------------

  async createAdapter(name: string, lora: LoraConfig, seed: number): Promise<void> {
    this.putAdapter(name, createLora(this.config, lora, seed, param));
  }

  /** Registers an adapter (replacing one of the same name and its optimiser state). */
  putAdapter(name: string, adapter: LoraAdapter): void {
    this.adapters.put(name, adapter);
    this.optim.delete(`adapter:${name}`);
  }

  getAdapter(name: string): LoraAdapter {
    return this.adapters.get(name);
  }

  async loadAdapter(name: string, dir: string): Promise<void> {
    this.putAdapter(name, loadAdapterDir(this.config, dir, param));
  }

  async saveAdapter(name: string, dir: string): Promise<void> {
    saveAdapterDir(this.getAdapter(name), dir);
  }

  async deleteAdapter(name: string): Promise<void> {
    this.adapters.delete(name);
    this.optim.delete(`adapter:${name}`);
  }

  async listAdapters(): Promise<string[]> {
    return this.adapters.names();
  }

  async createCritic(name: string, spec: ValueHeadSpec, seed: number): Promise<void> {
    this.putCritic(name, createCritic(this.config, spec, seed, param));
  }

  putCritic(name: string, critic: Critic): void {
    this.critics.put(name, critic);
    this.optim.delete(`critic:${name}`);
  }

  getCritic(name: string): Critic {
    return this.critics.get(name);
  }

  async loadCritic(name: string, dir: string): Promise<void> {
    this.putCritic(name, loadCriticDir(this.config, dir, param));
  }

  async saveCritic(name: string, dir: string): Promise<void> {
    saveCriticDir(this.getCritic(name), dir);
  }

  async setBaseTrainable(trainable: boolean): Promise<void> {
    this.baseTrainable = trainable;
    if (!trainable) for (const [, p] of namedParams(this.model.weights)) p.grad = null;
  }

  async saveBase(dir: string): Promise<void> {
    saveBaseDir(this.config, this.model.weights, dir);
  }

  // ---- sampling and scoring -------------------------------------------------------------

  private adapterOf(target: Target): LoraAdapter | null {
    if (target.kind === 'base') return null;
    if (target.kind === 'adapter') return this.getAdapter(target.name);
    return this.getCritic(target.name).lora;
  }

  async score(target: PolicyTarget, batch: ScoreRequest[], options: ScoreOptions = {}): Promise<Float32Array[]> {
    return (await this.forward(target, batch, { temperature: options.temperature })).logprobs!;
  }

  async sample(target: Target, prompts: number[][], params: SampleParams): Promise<SampleResult[]> {
    if (target.kind === 'critic') throw new Error('cannot sample from a critic target');
    return generate(this.model, this.adapterOf(target), prompts, params, this.options.decode, this.options);
  }

  async forward(target: Target, batch: ScoreRequest[], options: ForwardOptions = {}): Promise<ForwardOutput> {
    const adapter = this.adapterOf(target);
    const H = this.config.hiddenSize;
    const packed = packScoreRequests(batch, this.config.vocabSize);
    const retain = options.retainGraph === true;
    // An MLP critic trains its head only: the base's activations are not needed for its backward.
    const frozenBase = target.kind === 'critic' && this.getCritic(target.name).lora === null;
    const pass = this.model.forward(packed.tokens, packed.seqs, adapter, null, retain && !frozenBase);
    const M = packed.rows.length;
    // When every forwarded row is scored, in order (each request scored from its second token), the
    // scored rows are the hidden state itself: no gather here, no scatter in the backward.
    const sel = allRowsInOrder(packed) ? pass.hidden : gatherRows(pass.hidden, packed.rows, H);
    const temperature = effectiveTemperature(options.temperature);
    let lm: LmHeadPass | null = null, value: ValueHeadPass | null = null;
    const out: ForwardOutput = {};
    if (target.kind === 'critic') {
      value = valueHeadForward(this.getCritic(target.name).head, sel, M);
      out.values = splitByCounts(value.values, packed.counts);
    } else {
      lm = lmHeadForward(sel, M, H, outputMatrix(this.model.weights), packed.targets, temperature);
      out.logprobs = splitByCounts(lm.logprobs, packed.counts);
      if (!retain) releaseLmHeadPass(lm);
    }
    if (retain) {
      const id = this.nextGraphId++;
      this.graphs.set(id, { target, packed, pass, temperature, lm, value, sel });
      out.handle = { id };
    }
    return out;
  }

  async backward(handle: GraphHandle, grads: BackwardGrads): Promise<void> {
    const g = this.graphs.get(handle.id);
    if (!g) throw new Error(`graph ${handle.id} is unknown or was already consumed by a backward`);
    this.graphs.delete(handle.id);
    const H = this.config.hiddenSize, M = g.packed.rows.length, N = g.packed.tokens.length;
    let dSel: Float32Array | null;
    let trainBase = false, trainLora = false;
    if (g.target.kind === 'critic') {
      const critic = this.getCritic(g.target.name);
      const dv = joinByCounts(grads.dValues, g.packed.counts, 'dValues');
      trainLora = critic.lora !== null;
      dSel = valueHeadBackward(critic.head, g.value!, dv, M, trainLora);
    } else {
      if (g.target.kind === 'base' && !this.baseTrainable) throw new Error('the base is frozen: call setBaseTrainable(true) before a backward through the base');
      trainBase = g.target.kind === 'base';
      trainLora = g.target.kind === 'adapter';
      const dlp = joinByCounts(grads.dLogprobs, g.packed.counts, 'dLogprobs');
      dSel = lmHeadBackward(g.lm!, M, H, outputMatrix(this.model.weights), g.packed.targets, g.temperature, dlp, trainBase);
    }
    if (!dSel || !(trainBase || trainLora)) return;
    let dHidden = dSel;
    if (g.sel !== g.pass.hidden) { // the forward gathered the scored rows
      dHidden = sharedFloats(N * H);
      scatterAddRows(dSel, g.packed.rows, H, dHidden);
    }
    this.model.backward(g.pass, dHidden, trainBase, trainLora);
  }

  /** Drops a retained graph that will not get a backward: its activations go back to the buffer pool. */
  releaseGraph(handle: GraphHandle): void {
    const g = this.graphs.get(handle.id);
    if (!g) return;
    this.graphs.delete(handle.id);
    if (g.lm) releaseLmHeadPass(g.lm);
    this.model.releasePass(g.pass);
  }

  // ---- optimisation ---------------------------------------------------------------------

  private trainableParams(t: Trainable): { key: string; params: Param[] } {
    if (t.kind === 'adapter') return { key: `adapter:${t.name}`, params: loraParams(this.getAdapter(t.name)) };
    if (t.kind === 'critic') return { key: `critic:${t.name}`, params: criticParams(this.getCritic(t.name)) };
    if (!this.baseTrainable) throw new Error('the base is frozen: call setBaseTrainable(true) first');
    return { key: 'base', params: namedParams(this.model.weights).map(([, p]) => p) };
  }

  async optimStep(trainable: Trainable, params: OptimParams): Promise<OptimResult> {
    const { key, params: ps } = this.trainableParams(trainable);
    let state = this.optim.get(key);
    if (!state) { state = newAdamState(ps); this.optim.set(key, state); }
    const gradNorm = adamwStep(ps, state, params);
    for (const p of ps) p.grad?.fill(0);
    return { gradNorm };
  }

  async zeroGrad(trainable: Trainable): Promise<void> {
    for (const p of this.trainableParams(trainable).params) p.grad?.fill(0);
  }

  async saveOptimizerState(trainable: Trainable, file: string): Promise<void> {
    const { key, params } = this.trainableParams(trainable);
    writeAdamState(file, this.optim.get(key) ?? newAdamState(params), key);
  }

  async loadOptimizerState(trainable: Trainable, file: string): Promise<void> {
    const { key, params } = this.trainableParams(trainable);
    this.optim.set(key, readAdamState(file, params.map((p) => p.data.length)));
  }

  async dispose(): Promise<void> {
    this.graphs.clear();
    this.adapters.clear();
    this.critics.clear();
    this.optim.clear();
  }
}

/** Whether the scored rows are 0, 1, …, N − 1: every packed row, in order. */
function allRowsInOrder(packed: PackedBatch): boolean {
  const rows = packed.rows;
  if (rows.length !== packed.tokens.length) return false;
  for (let i = 0; i < rows.length; i++) if (rows[i] !== i) return false;
  return true;
}

/** Named objects of one kind (adapters, critics), with the errors a caller sees for bad names. */
class Registry<T> {
  private readonly items = new Map<string, T>();
  constructor(private readonly kind: string) {}

  /** Adds or replaces. */
  put(name: string, item: T): void {
    if (!name) throw new Error(`${this.kind} name must not be empty`);
    this.items.set(name, item);
  }

  get(name: string): T {
    const item = this.items.get(name);
    if (item === undefined) throw new Error(`no ${this.kind} named '${name}' (have: ${this.names().join(', ') || 'none'})`);
    return item;
  }

  /** Removes an existing item (an unknown name is the same error as get's). */
  delete(name: string): void {
    this.get(name);
    this.items.delete(name);
  }

  names(): string[] {
    return [...this.items.keys()];
  }

  clear(): void {
    this.items.clear();
  }
}

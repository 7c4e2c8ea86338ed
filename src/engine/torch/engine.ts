// TorchEngine: the Engine interface (src/engine/types.ts) served by the PyTorch worker
// (engines/torch/marft_torch) — transformers models, FSDP2 across processes, float32 on the CPU.
//
// What is computed where: tensors and their arithmetic live in the worker; file formats stay here and
// use the engine-level readers and writers (../hf/: PEFT adapters, critic folders, optimiser state)
// that the embedded engine uses too, so the two engines' files are the same bytes; new adapters and
// critics are initialised here with the engine-level seeded initialisers (../trainables.ts), so the
// same seed gives the same starting weights in either engine. Adapters and critics pass through
// this side as plain host tensors (hostTensor). listAdapters answers from the names kept here (every
// put and delete goes through this side).
import type {
  BackwardGrads, Engine, ForwardOptions, ForwardOutput, GraphHandle, LinearModule, LoraConfig, ModelConfig, OptimParams,
  ModelInfo, OptimResult, PolicyTarget, SampleParams, SampleResult, ScoreOptions, ScoreRequest, Target, Trainable, ValueHeadSpec,
  Decode,
} from '../types.ts';
import { modelInfo } from '../types.ts';
import { readHfConfig } from '../hf/config.ts';
import { createCritic, createLora, hostTensor, type Critic, type LoraAdapter } from '../trainables.ts';
import { loadAdapterDir, loadCriticDir, saveAdapterDir, saveCriticDir } from '../hf/trainable-folders.ts';
import { readAdamState, writeAdamState } from '../hf/optimizer-state-file.ts';
import { sampleCutAtStopStrings } from '../stop-strings.ts';
import { bytesF32, f32Bytes } from './framing.ts';
import { WorkerProcess, type WorkerLaunch } from './worker-process.ts';

export interface TorchEngineOptions extends WorkerLaunch {
  /** Token ids → text, for stop strings (applied here: the worker has no tokenizer). */
  decode?: Decode;
  /**
   * How long dispose waits for the worker group to exit after its answer to the shutdown before it
   * kills the group (default 30,000 ms). Several machines: torchrun on this node waits for the others'
   * exit before it exits itself.
   */
  shutdownTimeoutMs?: number;
}

/** What the worker reports when it has loaded the model. */
export interface TorchWorkerInfo {
  worldSize: number;
  device: string;
  dtype: string;
  torch: string;
  transformers: string;
  sharded: boolean;
  /** Scored positions per log-softmax chunk (WorkerLaunch.logitsChunkRows, or the worker's choice). */
  logitsChunkRows: number;
}

interface AdapterMsg {
  rank: number;
  alpha: number;
  targetModules: LinearModule[];
  factors: { layer: number; module: LinearModule; A: Uint8Array; B: Uint8Array }[];
}

interface CriticMsg {
  spec: ValueHeadSpec;
  adapter: AdapterMsg | null;
  head: { shape: [number, number]; W: Uint8Array; b: Uint8Array }[];
}

export class TorchEngine implements Engine {
  private adapters = new Set<string>();
  private critics = new Set<string>();
  readonly info: ModelInfo;

  private constructor(readonly config: ModelConfig, private readonly worker: WorkerProcess, readonly workerInfo: TorchWorkerInfo, private readonly options: TorchEngineOptions) {
    this.info = modelInfo(config);
  }

  /** Starts the worker group on a Hugging Face model folder and waits until every rank has loaded it. */
  static async load(modelDir: string, options: TorchEngineOptions = {}): Promise<TorchEngine> {
    const config = readHfConfig(modelDir);
    const { worker, info } = await WorkerProcess.start(modelDir, options);
    return new TorchEngine(config, worker, info as TorchWorkerInfo, options);
  }

  /** Process id of the worker (torchrun's, with several processes), for diagnostics and tests. */
  get workerPid(): number {
    return this.worker.pid;
  }

  /** Runs a worker command (for tests and diagnostics: echo, info). */
  async command(cmd: string, args: Record<string, unknown> = {}): Promise<unknown> {
    return this.worker.call(cmd, args);
  }

  // ---- adapters and critics -------------------------------------------------------------

  async createAdapter(name: string, lora: LoraConfig, seed: number): Promise<void> {
    await this.putAdapter(name, createLora(this.config, lora, seed, hostTensor));
  }

  async loadAdapter(name: string, dir: string): Promise<void> {
    await this.putAdapter(name, loadAdapterDir(this.config, dir, hostTensor));
  }

  async saveAdapter(name: string, dir: string): Promise<void> {
    const msg = await this.command('getAdapter', { name }) as AdapterMsg;
    saveAdapterDir(adapterFromMsg(msg), dir);
  }

  async deleteAdapter(name: string): Promise<void> {
    await this.command('deleteAdapter', { name });
    this.adapters.delete(name);
  }

  async listAdapters(): Promise<string[]> {
    return [...this.adapters];
  }

  async createCritic(name: string, spec: ValueHeadSpec, seed: number): Promise<void> {
    await this.putCritic(name, createCritic(this.config, spec, seed, hostTensor));
  }

  async loadCritic(name: string, dir: string): Promise<void> {
    await this.putCritic(name, loadCriticDir(this.config, dir, hostTensor));
  }

  async saveCritic(name: string, dir: string): Promise<void> {
    const msg = await this.command('getCritic', { name }) as CriticMsg;
    const critic: Critic = {
      spec: msg.spec,
      lora: msg.adapter ? adapterFromMsg(msg.adapter) : null,
      head: { layers: msg.head.map((l) => ({ W: hostTensor([...l.shape], bytesF32(l.W)), b: hostTensor([l.shape[0]], bytesF32(l.b)) })) },
    };
    saveCriticDir(critic, dir);
  }

  private async putAdapter(name: string, a: LoraAdapter): Promise<void> {
    if (!name) throw new Error('adapter name must not be empty');
    await this.command('putAdapter', { name, adapter: adapterToMsg(a) });
    this.adapters.add(name);
  }

  private async putCritic(name: string, c: Critic): Promise<void> {
    if (!name) throw new Error('critic name must not be empty');
    const head = c.head.layers.map((l) => ({ shape: l.W.shape, W: f32Bytes(l.W.data), b: f32Bytes(l.b.data) }));
    await this.command('putCritic', { name, spec: c.spec, head, adapter: c.lora ? adapterToMsg(c.lora) : null });
    this.critics.add(name);
  }

  // ---- the base -------------------------------------------------------------------------

  async setBaseTrainable(trainable: boolean): Promise<void> {
    await this.command('setBaseTrainable', { trainable });
  }

  /** config.json, generation_config.json and model.safetensors, by transformers' save_pretrained. */
  async saveBase(dir: string): Promise<void> {
    await this.command('saveBase', { dir });
  }

  // ---- sampling and scoring -------------------------------------------------------------

  async score(target: PolicyTarget, batch: ScoreRequest[], options: ScoreOptions = {}): Promise<Float32Array[]> {
    return (await this.forward(target, batch, { temperature: options.temperature })).logprobs!;
  }

  async sample(target: Target, prompts: number[][], params: SampleParams): Promise<SampleResult[]> {
    // The worker has no tokenizer: it gets the parameters without stop strings.
    return sampleCutAtStopStrings(params, this.options.decode, async ({ stopStrings: _, ...ids }) =>
      await this.command('sample', { target, prompts, params: ids }) as SampleResult[]);
  }

  async forward(target: Target, batch: ScoreRequest[], options: ForwardOptions = {}): Promise<ForwardOutput> {
    const reply = await this.command('forward', {
      target, batch: batch.map((r) => ({ tokens: r.tokens, scoreFrom: r.scoreFrom })),
      temperature: options.temperature ?? null, retainGraph: options.retainGraph === true,
    }) as { logprobs?: Uint8Array[]; values?: Uint8Array[]; handle?: number };
    const out: ForwardOutput = {};
    if (reply.logprobs) out.logprobs = reply.logprobs.map((b) => bytesF32(b, 'logprobs'));
    if (reply.values) out.values = reply.values.map((b) => bytesF32(b, 'values'));
    if (reply.handle !== undefined) out.handle = { id: reply.handle };
    return out;
  }

  async backward(handle: GraphHandle, grads: BackwardGrads): Promise<void> {
    await this.command('backward', {
      handle: handle.id,
      dLogprobs: grads.dLogprobs ? grads.dLogprobs.map(f32Bytes) : null,
      dValues: grads.dValues ? grads.dValues.map(f32Bytes) : null,
    });
  }

  /** Drops a retained graph that will not get a backward. */
  async releaseGraph(handle: GraphHandle): Promise<void> {
    await this.command('releaseGraph', { handle: handle.id });
  }

  // ---- optimisation ---------------------------------------------------------------------

  async optimStep(trainable: Trainable, params: OptimParams): Promise<OptimResult> {
    return await this.command('optimStep', { trainable, params }) as OptimResult;
  }

  async zeroGrad(trainable: Trainable): Promise<void> {
    await this.command('zeroGrad', { trainable });
  }

  /** The engines' shared file format (../hf/optimizer-state-file.ts), so either engine can resume from it. */
  async saveOptimizerState(trainable: Trainable, file: string): Promise<void> {
    const s = await this.command('getOptimState', { trainable }) as { label: string; step: number; m: Uint8Array[]; v: Uint8Array[] };
    writeAdamState(file, { step: s.step, m: s.m.map((b) => bytesF32(b)), v: s.v.map((b) => bytesF32(b)) }, s.label);
  }

  async loadOptimizerState(trainable: Trainable, file: string): Promise<void> {
    const sizes = await this.command('paramSizes', { trainable }) as number[];
    const s = readAdamState(file, sizes);
    await this.command('putOptimState', { trainable, step: s.step, m: s.m.map(f32Bytes), v: s.v.map(f32Bytes) });
  }

  async dispose(): Promise<void> {
    await this.worker.close(this.options.shutdownTimeoutMs);
    this.adapters.clear();
    this.critics.clear();
  }
}

function adapterToMsg(a: LoraAdapter): AdapterMsg {
  const factors: AdapterMsg['factors'] = [];
  a.layers.forEach((layer, i) => {
    // Insertion order: the adapter's parameter order, which optimiser state files follow.
    for (const [module, f] of Object.entries(layer) as [LinearModule, { A: { data: Float32Array }; B: { data: Float32Array } }][]) {
      factors.push({ layer: i, module, A: f32Bytes(f.A.data), B: f32Bytes(f.B.data) });
    }
  });
  return { rank: a.config.rank, alpha: a.config.alpha, targetModules: [...a.config.targetModules], factors };
}

function adapterFromMsg(m: AdapterMsg): LoraAdapter {
  const layers: LoraAdapter['layers'] = [];
  for (const f of m.factors) {
    while (layers.length <= f.layer) layers.push({});
    const A = bytesF32(f.A, 'lora_A'), B = bytesF32(f.B, 'lora_B');
    layers[f.layer]![f.module] = { A: hostTensor([m.rank, A.length / m.rank], A), B: hostTensor([B.length / m.rank, m.rank], B) };
  }
  return { config: { rank: m.rank, alpha: m.alpha, targetModules: [...m.targetModules] }, scale: m.alpha / m.rank, layers };
}

// Training on one engine, sampling on vLLM: a TrainingEngine whose forward, backward, optimiser
// steps, scoring and files are the training engine's (embedded or torch), and whose sample() goes to
// a vLLM server over HTTP (token ids in and out, the sampled tokens' processed log-probs, through
// src/engine/openai/). After every change of a policy adapter's weights (created, loaded, an optimiser
// step) the adapter is written in PEFT format to a versioned folder, loaded into the server as
// `<name>-v<N>`, checked against the training engine on a fixed batch (./consistency.ts: the run
// stops in one line beyond the tolerance), and only then sampled from; the previous version is
// unloaded once no request uses it (./adapter-versions.ts). Stop strings are applied after the fact
// (../stop-strings.ts, with the `decode` option): the server works on token ids and is asked for
// maxNewTokens tokens, which are then cut where the training engine would have stopped.
//
// The sampler/trainer mismatch that remains (numerics, a bf16 server, kernels) is what the trainer's
// behaviour importance weights correct: the log-probs returned by sample() are the behaviour policy's
// (docs/scaling.md, "Sampling on vLLM during training").
//
// This engine builds on the openai engine (../openai/engine.ts: a vLLM server is an OpenAI-compatible
// one), the one served engine that imports another; it imports nothing else from an engine's folder.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  BackwardGrads, ForwardOptions, ForwardOutput, GraphHandle, LoraConfig, ModelInfo, OptimParams, OptimResult,
  Decode, SampleParams, SampleResult, ScoreOptions, ScoreRequest, Target, Trainable, TrainingEngine, ValueHeadSpec,
} from '../types.ts';
import { OpenAiSamplingEngine } from '../openai/engine.ts';
import { sampleCutAtStopStrings } from '../stop-strings.ts';
import { AdapterVersions, servedAdapterName } from './adapter-versions.ts';
import { checkServedAdapter, consistencyBatch } from './consistency.ts';
import { BASE_SERVED_NAME, VllmServer, type VllmServerOptions } from './server.ts';

export interface VllmSamplerOptions {
  /** A running server (left running at dispose; its base must be the training engine's) ... */
  server?: VllmServer;
  /** ... or how to start one, stopped at dispose. */
  start?: VllmServerOptions;
  /** Largest |Δ log-prob| the consistency check accepts (float32 on both sides measures about 1e-6). */
  tolerance: number;
  /** The configuration key of the tolerance, named in the check's error. */
  toleranceKey?: string;
  /** The check's fixed batch; default consistencyBatch(vocabSize). */
  checkBatch?: ScoreRequest[];
  /** Where adapter versions are written for the server to read; default a temporary folder, removed at dispose. */
  workDir?: string;
  /** Token ids → text, for stop strings (cut here after sampling: the server has no tokenizer). */
  decode?: Decode;
}

/** One consistency check: what was loaded and how far it was from the training engine. */
export interface VersionCheck {
  adapter: string;
  version: number;
  served: string;
  maxDifference: number;
}

export class VllmSampledEngine implements TrainingEngine {
  readonly versions: AdapterVersions;
  /** Every check run so far, in order. */
  readonly checks: VersionCheck[] = [];
  private readonly batch: ScoreRequest[];

  private constructor(
    private readonly trainer: TrainingEngine,
    readonly server: VllmServer,
    private readonly ownsServer: boolean,
    private readonly sampler: OpenAiSamplingEngine,
    // The served-name table the sampling engine reads on every call: the versions loaded now.
    private readonly servedNames: Record<string, string>,
    private readonly workDir: string,
    private readonly ownsWorkDir: boolean,
    private readonly options: VllmSamplerOptions,
  ) {
    this.batch = options.checkBatch ?? consistencyBatch(trainer.info.vocabSize);
    this.versions = new AdapterVersions(async (served) => {
      await this.server.unloadAdapter(served);
      delete this.servedNames[served];
      await rm(this.versionDir(served), { recursive: true, force: true });
    });
  }

  /** Wraps `trainer`; adapters it already holds are published before this returns. */
  static async open(trainer: TrainingEngine, o: VllmSamplerOptions): Promise<VllmSampledEngine> {
    if (!o.server && !o.start) throw new Error('the vLLM sampler needs a running server or the options to start one');
    const server = o.server ?? (await VllmServer.start(o.start!));
    const servedNames: Record<string, string> = {};
    try {
      const sampler = await OpenAiSamplingEngine.open({ baseUrl: server.baseUrl, model: BASE_SERVED_NAME, info: trainer.info, adapters: servedNames });
      const workDir = o.workDir ?? (await mkdtemp(join(tmpdir(), 'marft-vllm-adapters-')));
      const engine = new VllmSampledEngine(trainer, server, !o.server, sampler, servedNames, workDir, !o.workDir, o);
      for (const name of await trainer.listAdapters()) await engine.publish(name);
      return engine;
    } catch (err) {
      if (!o.server) await server.stop();
      throw err;
    }
  }

  get info(): ModelInfo { return this.trainer.info; }

  private versionDir(served: string): string {
    return join(this.workDir, served);
  }

  /** Writes the adapter's current weights, loads them as the next version, checks them, then serves them. */
  private async publish(name: string): Promise<void> {
    const version = this.versions.nextVersion(name);
    const served = servedAdapterName(name, version);
    const dir = this.versionDir(served);
    await this.trainer.saveAdapter(name, dir);
    await this.server.loadAdapter(served, dir);
    this.servedNames[served] = served;
    let maxDifference: number;
    try {
      maxDifference = await checkServedAdapter({
        trainer: this.trainer, sampler: this.sampler, adapter: name, version, served, batch: this.batch,
        tolerance: this.options.tolerance, toleranceKey: this.options.toleranceKey ?? 'tolerance',
      });
    } catch (err) {
      // The version that failed is never sampled from; the previous one stays served for diagnosis.
      await this.server.unloadAdapter(served).catch(() => {});
      delete this.servedNames[served];
      throw err;
    }
    this.checks.push({ adapter: name, version, served, maxDifference });
    await this.versions.publish(name, version);
  }

  async sample(target: Target, prompts: number[][], params: SampleParams): Promise<SampleResult[]> {
    if (target.kind === 'critic') throw new Error(`sample: critic '${target.name}' is not a policy`);
    return sampleCutAtStopStrings(params, this.options.decode, (ids) => this.sampleServed(target, prompts, ids));
  }

  /** Samples on the server from the base or the adapter's current version (held until the reply is in). */
  private async sampleServed(target: Target & { kind: 'base' | 'adapter' }, prompts: number[][], params: SampleParams): Promise<SampleResult[]> {
    if (target.kind === 'base') return this.sampler.sample(target, prompts, params);
    const served = this.versions.acquire(target.name);
    try {
      return await this.sampler.sample({ kind: 'adapter', name: served }, prompts, params);
    } finally {
      await this.versions.release(served);
    }
  }

  score(target: Target & { kind: 'base' | 'adapter' }, batch: ScoreRequest[], options?: ScoreOptions): Promise<Float32Array[]> {
    return this.trainer.score(target, batch, options);
  }

  async createAdapter(name: string, lora: LoraConfig, seed: number): Promise<void> {
    await this.trainer.createAdapter(name, lora, seed);
    await this.publish(name);
  }

  async loadAdapter(name: string, dir: string): Promise<void> {
    await this.trainer.loadAdapter(name, dir);
    await this.publish(name);
  }

  saveAdapter(name: string, dir: string): Promise<void> { return this.trainer.saveAdapter(name, dir); }

  async deleteAdapter(name: string): Promise<void> {
    await this.trainer.deleteAdapter(name);
    await this.versions.remove(name);
  }

  listAdapters(): Promise<string[]> { return this.trainer.listAdapters(); }
  createCritic(name: string, spec: ValueHeadSpec, seed: number): Promise<void> { return this.trainer.createCritic(name, spec, seed); }
  loadCritic(name: string, dir: string): Promise<void> { return this.trainer.loadCritic(name, dir); }
  saveCritic(name: string, dir: string): Promise<void> { return this.trainer.saveCritic(name, dir); }

  async setBaseTrainable(trainable: boolean): Promise<void> {
    // The server's base weights are fixed for its lifetime; only adapters are republished.
    if (trainable) throw new Error('the vLLM sampler serves a frozen base: full-parameter training of the base is not supported (train LoRA adapters)');
    await this.trainer.setBaseTrainable(false);
  }

  saveBase(dir: string): Promise<void> { return this.trainer.saveBase(dir); }
  forward(target: Target, batch: ScoreRequest[], options?: ForwardOptions): Promise<ForwardOutput> { return this.trainer.forward(target, batch, options); }
  backward(handle: GraphHandle, grads: BackwardGrads): Promise<void> { return this.trainer.backward(handle, grads); }

  async optimStep(trainable: Trainable, params: OptimParams): Promise<OptimResult> {
    const result = await this.trainer.optimStep(trainable, params);
    if (trainable.kind === 'adapter') await this.publish(trainable.name);
    return result;
  }

  zeroGrad(trainable: Trainable): Promise<void> { return this.trainer.zeroGrad(trainable); }
  saveOptimizerState(trainable: Trainable, file: string): Promise<void> { return this.trainer.saveOptimizerState(trainable, file); }
  loadOptimizerState(trainable: Trainable, file: string): Promise<void> { return this.trainer.loadOptimizerState(trainable, file); }

  async dispose(): Promise<void> {
    try {
      if (this.ownsServer) await this.server.stop();
      else for (const served of this.versions.served()) await this.server.unloadAdapter(served).catch(() => {});
    } finally {
      if (this.ownsWorkDir) await rm(this.workDir, { recursive: true, force: true });
      await this.trainer.dispose();
    }
  }
}

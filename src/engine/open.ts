// The one place that turns "which engine, on which model" into an open engine. The run setup, the
// CLI commands and anything else that starts from a configuration call openEngine (an engine that
// trains) or openSamplingEngine (one that only samples and scores: any of those, or a served model),
// so adding an engine kind means adding one branch here (and one choice in the configuration's schema).
import type { Engine, SamplingEngine } from './types.ts';
export { ENGINE_KINDS, SERVED_ENGINE_KINDS, type EngineKind, type ServedEngineKind } from './types.ts';
import { EmbeddedEngine, type EmbeddedEngineOptions } from './embedded/engine.ts';
import { loadBaseDir } from './embedded/engine-io.ts';
import { TorchEngine, type TorchEngineOptions } from './torch/engine.ts';
import { TabularEngine } from './tabular/engine.ts';
import { VllmSampledEngine, type VllmSamplerOptions } from './vllm/engine.ts';
import { BASE_SERVED_NAME, VllmServer, type VllmServerOptions } from './vllm/server.ts';
import { OpenAiSamplingEngine } from './openai/engine.ts';
export { ServedModelChoiceError } from './openai/engine.ts';

export type EngineSpec =
  /** The TypeScript engine over a Hugging Face model folder. */
  | { kind: 'embedded'; modelDir: string; options?: EmbeddedEngineOptions }
  /** The PyTorch worker engine over a Hugging Face model folder (docs/scaling.md). */
  | { kind: 'torch'; modelDir: string; options?: TorchEngineOptions }
  /** The lookup-table engine (no model: a table per adapter over `vocabSize` tokens). */
  | { kind: 'tabular'; vocabSize: number }
  /**
   * Training on `trainer`, sampling on a vLLM server started on the trainer's model folder
   * (src/engine/vllm/; docs/scaling.md): `server` is how to start it, `check` the consistency check.
   */
  | { kind: 'vllm'; trainer: Extract<EngineSpec, { kind: 'embedded' | 'torch' }>; server: Omit<VllmServerOptions, 'modelDir'>; check: Pick<VllmSamplerOptions, 'tolerance' | 'toleranceKey' | 'checkBatch'> };

export async function openEngine(spec: EngineSpec): Promise<Engine> {
  switch (spec.kind) {
    case 'embedded': {
      const { config, weights } = loadBaseDir(spec.modelDir);
      return new EmbeddedEngine(config, weights, spec.options ?? {});
    }
    case 'torch':
      return TorchEngine.load(spec.modelDir, spec.options ?? {});
    case 'tabular':
      return new TabularEngine(spec.vocabSize);
    case 'vllm': {
      const trainer = await openEngine(spec.trainer);
      try {
        // The trainer's decoder cuts the server's samples at stop strings, as the trainer would have.
        return await VllmSampledEngine.open(trainer, { ...spec.check, decode: spec.trainer.options?.decode, start: { ...spec.server, modelDir: spec.trainer.modelDir } });
      } catch (err) {
        await trainer.dispose();
        throw err;
      }
    }
  }
}

/** What only samples and scores: any training engine, or a served model (src/engine/openai/). */
export type SamplingEngineSpec =
  | EngineSpec
  /**
   * An OpenAI-compatible server already running at `baseUrl` (its API root, e.g.
   * http://127.0.0.1:8000/v1); `model` is the name it serves the model under ("" = the one model it
   * lists), `modelDir` the local Hugging Face folder that gives what the API does not report
   * (vocabulary size, bos and eos ids).
   */
  | { kind: 'openai'; baseUrl: string; model: string; modelDir: string; apiKey?: string }
  /** A vLLM server that marft starts on `modelDir` (stopped at dispose), reached as an OpenAI-compatible server. */
  | { kind: 'vllm-serve'; modelDir: string; server: Omit<VllmServerOptions, 'modelDir' | 'maxLoraRank' | 'maxLoras'> };

export async function openSamplingEngine(spec: SamplingEngineSpec): Promise<SamplingEngine> {
  switch (spec.kind) {
    case 'openai':
      return OpenAiSamplingEngine.open({ baseUrl: spec.baseUrl, model: spec.model, modelDir: spec.modelDir, ...(spec.apiKey ? { apiKey: spec.apiKey } : {}) });
    case 'vllm-serve': {
      // The base only: no adapter is ever loaded into this server, so LoRA support stays off.
      const server = await VllmServer.start({ ...spec.server, modelDir: spec.modelDir, maxLoraRank: null });
      try {
        const served = await OpenAiSamplingEngine.open({ baseUrl: server.baseUrl, model: BASE_SERVED_NAME, modelDir: spec.modelDir });
        return {
          info: served.info,
          sample: (target, prompts, params) => served.sample(target, prompts, params),
          score: (target, batch, options) => served.score(target, batch, options),
          dispose: async () => {
            await served.dispose();
            await server.stop();
          },
        };
      } catch (err) {
        await server.stop();
        throw err;
      }
    }
    default:
      return openEngine(spec);
  }
}

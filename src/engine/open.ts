// The one place that turns "which engine, on which model" into an open engine. The run setup, the
// CLI commands and anything else that starts from a configuration call openEngine, so adding an
// engine kind means adding one branch here (and one choice in the configuration's schema).
import type { Engine } from './types.ts';
export { ENGINE_KINDS, type EngineKind } from './types.ts';
import { EmbeddedEngine, type EmbeddedEngineOptions } from './embedded/engine.ts';
import { loadBaseDir } from './embedded/engine-io.ts';
import { TorchEngine, type TorchEngineOptions } from './torch/engine.ts';
import { TabularEngine } from './tabular/engine.ts';
import { VllmSampledEngine, type VllmSamplerOptions } from './vllm/engine.ts';
import type { VllmServerOptions } from './vllm/server.ts';

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

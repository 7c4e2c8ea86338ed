// Public entry of the engine layer: everything above the engine imports from here and types.ts only.
import type { Engine, ModelConfig } from './types.ts';
import { EmbeddedEngine, type EmbeddedEngineOptions } from './embedded/engine.ts';
import { loadBaseDir } from './embedded/engine-io.ts';
import { randomWeights } from './embedded/weights.ts';

export type * from './types.ts';
export { ALL_LINEAR_MODULES } from './types.ts';
export type { EmbeddedEngineOptions } from './embedded/engine.ts';

/** The embedded engine over a Hugging Face model folder (config.json + safetensors). */
export async function loadEngine(modelDir: string, opts: EmbeddedEngineOptions = {}): Promise<Engine> {
  const { config, weights } = loadBaseDir(modelDir);
  return new EmbeddedEngine(config, weights, opts);
}

/** The embedded engine over freshly initialised weights (normal std 0.02, norms 1, biases 0), reproducible from `seed`. */
export function createEngine(config: ModelConfig, opts: EmbeddedEngineOptions & { seed: number }): Engine {
  return new EmbeddedEngine(config, randomWeights(config, opts.seed), opts);
}

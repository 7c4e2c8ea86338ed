// Public entry of the engine layer: everything above the engine imports engine code from here, open.ts
// and types.ts only (test/engine/engine-boundary.test.ts checks it).
import type { Engine, ModelConfig } from './types.ts';
import { EmbeddedEngine, type EmbeddedEngineOptions } from './embedded/engine.ts';
import { randomWeights } from './embedded/weights.ts';
import type { TorchEngineOptions } from './torch/engine.ts';
import { openEngine } from './open.ts';

export type * from './types.ts';
export { ALL_LINEAR_MODULES } from './types.ts';
export { NonFiniteStateError, firstNonFinite } from './non-finite.ts';
export { tinyDecoderConfig, type TinyDecoderShape } from './tiny-decoder.ts';
export { EmbeddedEngine } from './embedded/engine.ts';
export type { EmbeddedEngineOptions } from './embedded/engine.ts';
export type { TorchEngineOptions } from './torch/engine.ts';
export { openEngine, openSamplingEngine, ServedModelChoiceError, ENGINE_KINDS, SERVED_ENGINE_KINDS, type EngineKind, type ServedEngineKind, type EngineSpec, type SamplingEngineSpec } from './open.ts';
export { OpenAiSamplingEngine, type OpenAiEngineOptions } from './openai/engine.ts';
/** The run stops with this when the vLLM sampler and the training engine disagree (src/engine/vllm/consistency.ts). */
export { SamplerMismatchError } from './vllm/consistency.ts';
/** The interpreter a vLLM server is started with when the configuration names none: $MARFT_VLLM_PYTHON or .venv-vllm. */
export { defaultVllmPython } from './vllm/server.ts';

/** The embedded engine over a Hugging Face model folder (config.json + safetensors). */
export async function loadEngine(modelDir: string, opts: EmbeddedEngineOptions = {}): Promise<Engine> {
  return openEngine({ kind: 'embedded', modelDir, options: opts });
}

/** The embedded engine over freshly initialised weights (normal std 0.02, norms 1, biases 0), reproducible from `seed`. */
export function createEngine(config: ModelConfig, opts: EmbeddedEngineOptions & { seed: number }): Engine {
  return new EmbeddedEngine(config, randomWeights(config, opts.seed), opts);
}

/**
 * The PyTorch engine over a Hugging Face model folder: a worker process per device (torchrun and FSDP2
 * when `nprocPerNode` > 1), see docs/scaling.md. Call dispose() to stop it.
 */
export async function loadTorchEngine(modelDir: string, opts: TorchEngineOptions = {}): Promise<Engine> {
  return openEngine({ kind: 'torch', modelDir, options: opts });
}

// What marft serve and marft export need of the engine's file and sampling code (src/serve/, src/export/).
export { cutAtStopString } from './stop-strings.ts';
export { loadHfWeights, saveHfWeights, type HostTensor } from './hf/safetensors.ts';
export { readPeftAdapter, type PeftAdapter } from './hf/peft.ts';
export { readHfConfig, writeGenerationConfig } from './hf/config.ts';

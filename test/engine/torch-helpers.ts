// Shared by the torch engine's tests (test/engine/torch-*.test.ts): whether its Python environment is
// there, and the engine's options for this 2-core machine.
import { existsSync } from 'node:fs';
import { defaultTorchPython } from '../../src/engine/torch/worker-process.ts';
import type { TorchEngineOptions } from '../../src/engine/index.ts';

const python = process.env.MARFT_TORCH_PYTHON ?? defaultTorchPython;

/** A skip reason when the torch engine's venv is missing (CI always has it: scripts/setup.sh makes it). */
export const skipWithoutTorch: string | false = existsSync(python) ? false : `no ${python}: run scripts/setup.sh to build the torch engine's venv`;

/** One torch thread per worker process: other test files and engineers share the two cores. */
export const torchTestOptions: TorchEngineOptions = { threads: 1, device: 'cpu' };

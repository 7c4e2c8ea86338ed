// What VllmServer.start puts in the server's environment, without vLLM: a stand-in module
// vllm.entrypoints.openai.api_server (on PYTHONPATH) prints the variables and exits, and start()'s
// error carries the server's last output. VLLM_HTTP_TIMEOUT_KEEP_ALIVE must be long: with vLLM's 5 s,
// a request after a training step longer than that failed on a closed pooled connection
// (test/engine/smollm2-vllm.test.ts, docs/real-models.md); a caller's own value wins.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { VllmServer } from '../../src/engine/vllm/server.ts';
import { defaultTorchPython } from '../../src/engine/torch/worker-process.ts';
import { tempDir } from './oracle-helpers.ts';

const python = process.env.MARFT_TORCH_PYTHON ?? defaultTorchPython;
const skip = !existsSync(python) ? `no ${python}: run scripts/setup.sh` : false;

function standIn(): string {
  const root = tempDir('vllm-env');
  const pkg = join(root, 'vllm/entrypoints/openai');
  mkdirSync(pkg, { recursive: true });
  for (const dir of ['vllm', 'vllm/entrypoints', 'vllm/entrypoints/openai']) writeFileSync(join(root, dir, '__init__.py'), '');
  writeFileSync(join(pkg, 'api_server.py'), 'import os, sys\nprint("keep-alive", os.environ.get("VLLM_HTTP_TIMEOUT_KEEP_ALIVE"), "lora", os.environ.get("VLLM_ALLOW_RUNTIME_LORA_UPDATING"), flush=True)\nsys.exit(3)\n');
  return root;
}

test('VllmServer.start: the server keeps idle connections open for an hour (vLLM\'s default is 5 s), unless told otherwise', { skip }, async () => {
  const root = standIn();
  const start = (env: Record<string, string>) => VllmServer.start({ python, modelDir: root, maxLoraRank: 8, env: { PYTHONPATH: root, ...env }, startTimeoutMs: 30_000 });
  await assert.rejects(start({}), /exited with code 3 while starting: keep-alive 3600 lora True$/);
  await assert.rejects(start({ VLLM_HTTP_TIMEOUT_KEEP_ALIVE: '60' }), /keep-alive 60 lora True$/);
});

// Several machines from a configuration, as docs/scaling.md ("Several machines") tells a user to run
// it, on this one machine: node 1 started by hand with torchrun, then `marft train` with model.nodes 2
// and model.rendezvous; one training step of examples/gsm8k-duo.yaml on a tiny model folder (node 1
// needs the base before marft starts). And the configuration refusals, which need no torch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.ts';
import { defaultTorchPython, repoRoot, torchPackageDir } from '../../src/engine/torch/worker-process.ts';
import { freePort } from '../../src/engine/vllm/server.ts';
import { runCli } from '../cli/spawn-cli.ts';
import { tempDir } from './oracle-helpers.ts';
import { skipWithoutTorch } from './torch-helpers.ts';

const skip = skipWithoutTorch || (process.env.MARFT_LONG_TESTS === '0' ? 'long test (MARFT_LONG_TESTS=0)' : false);
const example = join(repoRoot, 'examples/gsm8k-duo.yaml');

test('model.nodes > 1 needs model.engine torch and model.rendezvous HOST:PORT (one line each)', async () => {
  await assert.rejects(loadConfig(example, ['model.nodes=2']), /model: nodes: 2 machines need model\.engine torch \(got embedded\)$/);
  await assert.rejects(loadConfig(example, ['model.engine=torch', 'model.nodes=2']), /model: rendezvous: model\.nodes 2 needs HOST:PORT/);
  await assert.rejects(loadConfig(example, ['model.engine=torch', 'model.nodes=2', 'model.rendezvous=nohostport']), /model: rendezvous:/);
  const ok = await loadConfig(example, ['model.engine=torch', 'model.nodes=2', 'model.rendezvous=10.0.0.1:29500']);
  assert.deepEqual([ok.model.nodes, ok.model.rendezvous], [2, '10.0.0.1:29500']);
});

test('marft train with model.nodes 2: the other node started by hand first, one training step across both, then both end', { skip, timeout: 300_000 }, async () => {
  const dir = tempDir('torch-nodes-cli');
  const python = process.env.MARFT_TORCH_PYTHON ?? defaultTorchPython;
  try {
    const model = join(dir, 'model');
    execFileSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts/make-tiny-model.ts'), '--out', model, '--hidden-size', '32', '--seed', '3'], { cwd: repoRoot });
    const port = await freePort();
    const other = spawn(python, ['-m', 'torch.distributed.run', '--nnodes', '2', '--node-rank', '1', '--nproc-per-node', '1',
      '--rdzv-backend', 'static', '--rdzv-endpoint', `127.0.0.1:${port}`, '-m', 'marft_torch', '--model', model, '--device', 'cpu', '--threads', '1'],
    { env: { ...process.env, PYTHONPATH: torchPackageDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let otherLog = '';
    other.stdout!.on('data', (d) => (otherLog += d));
    other.stderr!.on('data', (d) => (otherLog += d));
    const exited = new Promise<number | null>((resolve) => other.on('exit', (code) => resolve(code)));
    try {
      const runDir = join(dir, 'run');
      const r = await runCli({
        cwd: repoRoot,
        args: ['train', example, '--run-dir', runDir, '--no-progress', ...['model.engine=torch', 'model.nodes=2', `model.rendezvous=127.0.0.1:${port}`,
          'model.threads=1', 'model.device=cpu', `model.path=${model}`, `task.options.tokenizer=${model}`, 'train.steps=1'].flatMap((s) => ['--set', s])],
      });
      assert.equal(r.status, 0, `exit ${r.status}\n${r.stderr}\nnode 1: ${otherLog.slice(-1500)}`);
      const metrics = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.equal(metrics.length, 1);
      assert.ok(Number.isFinite(metrics[0]!['policy_loss'] as number));
      const code = await Promise.race([exited, new Promise<string>((res) => setTimeout(() => res('still running'), 30_000).unref())]);
      assert.equal(code, 0, `node 1 after marft ended: ${code}\n${otherLog.slice(-1500)}`);
    } finally {
      other.kill('SIGKILL');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

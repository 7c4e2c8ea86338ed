// One MAS-OPD step through `marft train` (examples/mas-opd-tiny.yaml, budgets cut to one step) on the
// embedded engine and on the torch engine, the teacher on the same engine kind as the students in each
// run: the same students' base (the workflow task builds it from the seed and saves it to RUN/base,
// which the torch worker loads), the same teacher folder (written here by scripts/make-tiny-model.ts),
// and the saved role adapters agree within 1e-4. Greedy rollouts make the batch the same on both
// engines (their samplers draw different tokens from the same seed: docs/scaling.md); Adam's ε is
// raised to 1e-3 for the reason in test/engine/torch-train.test.ts (a first Adam step is
// lr·g/(|g| + ε), which turns float32 rounding of a near-zero gradient into an lr-sized difference).
// The two minibatches of the step (opd.minibatchSize 1) make the second one importance-weighted, so
// both the recomputed student log-probs and the teacher's scores enter the comparison.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../cli/spawn-cli.ts';
import { repoRoot, tempDir } from './oracle-helpers.ts';
import { skipWithoutTorch } from './torch-helpers.ts';
import { adapterDiff } from './adapter-diff.ts';

// About 20 s on 2 shared cores (the two torch workers' start-up, students and teacher, is most of it).
const skip = skipWithoutTorch;
const ROLES = ['opd-reasoner', 'opd-tool-user'];

let dir = '';
let teacherDir = '';
before(() => {
  dir = tempDir('torch-opd-step');
  teacherDir = join(dir, 'teacher');
  execFileSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts/make-tiny-model.ts'), '--out', teacherDir, '--hidden-size', '32', '--seed', '1'], { cwd: repoRoot });
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function opdStep(engine: 'embedded' | 'torch'): Promise<{ runDir: string; metrics: Record<string, unknown> }> {
  const runDir = join(dir, engine);
  const settings = [
    `teacher.path=${teacherDir}`, `model.engine=${engine}`, `teacher.engine=${engine}`, 'model.threads=1',
    'train.steps=1', 'rollout.temperature=0', 'actor.optim.eps=1e-3',
  ].flatMap((s) => ['--set', s]);
  const r = await runCli({ args: ['train', join(repoRoot, 'examples/mas-opd-tiny.yaml'), '--run-dir', runDir, ...settings, '--no-progress'], cwd: repoRoot });
  assert.equal(r.status, 0, `${engine}: exit ${r.status}\n${r.stderr}`);
  const lines = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n');
  assert.equal(lines.length, 1);
  return { runDir, metrics: JSON.parse(lines[0]!) as Record<string, unknown> };
}


test('one MAS-OPD step (examples/mas-opd-tiny.yaml) with students and teacher on the torch engine gives the embedded engine\'s role adapters within 1e-4', { skip, timeout: 300_000 }, async () => {
  const embedded = await opdStep('embedded');
  const torch = await opdStep('torch');
  // The same batch: the same responses per role, the same rewards, the teacher's and students' scores equal up to float32 rounding.
  for (const key of ['responses_reasoner', 'responses_tool_user', 'score_mean', 'turns_mean']) assert.equal(torch.metrics[key], embedded.metrics[key], key);
  for (const key of ['teacher_logprob_reasoner', 'teacher_logprob_tool_user', 'student_logprob_reasoner', 'student_logprob_tool_user', 'a_opd_reasoner', 'a_opd_tool_user', 'policy_loss', 'grad_norm_actor', 'importance_weight_mean']) {
    const a = embedded.metrics[key] as number, b = torch.metrics[key] as number;
    assert.ok(Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) <= 1e-4, `${key}: embedded ${a}, torch ${b}`);
  }
  assert.notEqual(torch.metrics['importance_weight_mean'], 1, 'the second minibatch is importance-weighted');
  const adapters = (runDir: string) => join(runDir, 'checkpoints', 'step-000001', 'adapters');
  assert.deepEqual(readdirSync(adapters(torch.runDir)).sort(), ROLES);
  for (const role of ROLES) {
    const { diff, moved } = adapterDiff(join(adapters(embedded.runDir), role), join(adapters(torch.runDir), role));
    assert.ok(moved, `${role}: the adapter was not updated`);
    assert.ok(diff <= 1e-4, `${role}: max |embedded − torch| = ${diff}`);
  }
});

// MAS-OPD through `marft train` (algorithm: mas-opd) on examples/mas-opd-tiny.yaml: tiny students the
// workflow task builds, a tiny teacher folder written here by scripts/make-tiny-model.ts. The one
// training pipeline gives it the maths of MAS-OPD's former step of its own (a frozen copy in
// ./reference/: the same role adapters within 1e-6 after every step, first and later minibatches, and
// the same per-role metrics), an exact resume from a checkpoint, the divergence guard, and the CLI's
// run folder (config.json, lock released); a teacher with another tokenizer is refused in one line
// before any step.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.ts';
import type { MarftConfig } from '../../src/config/schema.ts';
import { opdSettingsOf } from '../../src/opd/config-settings.ts';
import { distillationOf } from '../../src/opd/distillable-task.ts';
import { trainOpd } from './reference/opd-train.ts';
import { adapterDiff } from '../engine/adapter-diff.ts';
import { readStepSamples, sampleSteps } from '../../src/runs/samples.ts';
import { train } from '../../src/run/train.ts';
import { planFor } from '../../src/algorithms/check.ts';
import type { StepMetrics } from '../../src/runs/metrics-log.ts';
import { DivergenceError } from '../../src/runs/run-errors.ts';
import { buildRun } from '../../src/run/setup.ts';
import { openTeacher } from '../../src/run/teacher.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(repo, 'bin/marft.mjs');
let dir = '';
let teacherDir = '';

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'marft-opd-train-'));
  teacherDir = join(dir, 'teacher');
  execFileSync(process.execPath, ['--import', 'tsx', join(repo, 'scripts/make-tiny-model.ts'), '--out', teacherDir, '--hidden-size', '32', '--seed', '1'], { cwd: repo });
});
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The tiny run, with Eq. 13's turns pooled over the minibatch (opd.turnWeighting: pooled): the frozen
 * reference step in ./reference/ weighs a role's turns so, and the equality below compares that
 * behaviour; the per-trajectory default is checked by hand in test/opd/advantages.test.ts.
 */
async function tinyConfig(sets: string[] = []): Promise<MarftConfig> {
  return loadConfig(join(repo, 'examples/mas-opd-tiny.yaml'), [`teacher.path=${teacherDir}`, 'opd.turnWeighting=pooled', ...sets]);
}

/** A fresh run: the task, its students' model (saved to RUN/base) and the teacher. */
async function open(config: MarftConfig, runDir: string) {
  const { bundle, engine } = await buildRun(config, runDir);
  const teacher = (await openTeacher(config, bundle.task))!;
  return { task: bundle.task, engine, teacher, dispose: async () => (await engine.dispose(), await teacher.dispose()) };
}

const TIMINGS = ['step_time_s', 'rollout_time_s', 'tokens_per_s'];
const ROLES = ['opd-reasoner', 'opd-tool-user'];
const untimed = (ms: StepMetrics[]) => ms.map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => !TIMINGS.includes(k))));

test('the pipeline runs MAS-OPD\'s maths: the reference step\'s adapters within 1e-6 after every step (two minibatches each), its per-role metrics, checkpoints that resume exactly', { timeout: 300_000 }, async () => {
  const config = await tinyConfig();
  const runDir = join(dir, 'full');
  const full = await open(config, runDir);
  const plan = planFor(config, full.task);
  assert.deepEqual(plan.policies, { reasoner: 'opd-reasoner', tool_user: 'opd-tool-user' });
  const saveAfter = (engine: { saveAdapter(name: string, dir: string): Promise<void> }, root: string) => async (step: number) => {
    for (const name of ROLES) await engine.saveAdapter(name, join(root, `step-${step}`, name));
  };
  const pipelineSaved = join(dir, 'pipeline-adapters');
  const afterPipelineStep = saveAfter(full.engine, pipelineSaved);
  const result = await train({ config, engine: full.engine, task: full.task, runDir, progress: false, teacher: full.teacher, onStep: (m) => afterPipelineStep(Number(m.step)) });
  await full.dispose();
  assert.equal(result.metrics.length, 2);
  for (const m of result.metrics) {
    for (const key of ['a_opd_reasoner', 'a_role_tool_user', 'a_role_first_reasoner', 'teacher_logprob_reasoner', 'policy_loss', 'grad_norm_actor', 'importance_weight_mean', 'score_mean']) assert.ok(Number.isFinite(m[key] as number), `${key}: ${m[key]}`);
    assert.equal(m.responses_reasoner, m.responses_tool_user);
    assert.notEqual(m.importance_weight_mean, 1, 'the second minibatch (opd.minibatchSize 1) is importance-weighted');
    assert.equal(m.importance_capped_fraction, 0, 'no ratio reaches actor.behaviourCap, so the cap changes nothing here');
  }
  // Samples (log.samplesEvery 10: the first step and the last): MAS-OPD's per-token teacher gaps and advantages, every action's role.
  const samples = await readStepSamples(runDir, 0);
  assert.ok(samples.length > 0);
  for (const a of samples.flatMap((e) => e.actions).filter((x) => x.tokens.length > 0)) {
    assert.equal(a.teacherGap!.length, a.tokens.length);
    assert.equal(a.advantages!.length, a.tokens.length);
    assert.ok(a.messages && a.messages.length > 0, 'the chat messages the agent saw');
    assert.ok(['Reasoner', 'Tool-User'].includes(a.role), a.role);
  }
  assert.deepEqual(await sampleSteps(runDir), [0, 1]);
  // The checkpoint: both role adapters with their optimiser state, and the trainer's state.
  const cp = result.checkpoint;
  assert.deepEqual(readdirSync(join(cp, 'adapters')).sort(), ['opd-reasoner', 'opd-tool-user']);
  assert.deepEqual(readdirSync(join(cp, 'optim')).sort(), ['adapter-opd-reasoner', 'adapter-opd-tool-user']);
  const state = JSON.parse(readFileSync(join(cp, 'state.json'), 'utf8'));
  assert.deepEqual([state.step, state.critics, state.config.algorithm], [2, [], 'mas-opd']);
  assert.ok(state.trainer);

  // The reference step (MAS-OPD's own loop before the pipeline) on the same students' base, teacher, task and settings.
  const direct = await open(config, join(dir, 'direct'));
  const source = distillationOf(direct.task)!;
  const referenceSaved = join(dir, 'reference-adapters');
  const afterReferenceStep = saveAfter(direct.engine, referenceSaved);
  const reference = await trainOpd({ student: direct.engine, teacher: direct.teacher, tokenizer: source.tokenizer, task: source, settings: opdSettingsOf(config), seed: config.seed, onStep: (m) => afterReferenceStep(Number(m.step) - 1) });
  await direct.dispose();
  for (const step of [0, 1]) {
    for (const name of ROLES) {
      const { diff, moved } = adapterDiff(join(pipelineSaved, `step-${step}`, name), join(referenceSaved, `step-${step}`, name));
      assert.ok(moved, `${name} moved at step ${step}`);
      assert.ok(diff <= 1e-6, `${name} after step ${step}: max |Δ| ${diff}`);
    }
  }
  // The per-role metrics are the same numbers (names shared with every algorithm's are checked above;
  // a_role_first_<role>, A_role at a response's first token, came after the reference).
  const PER_ROLE = /^(a_opd_|a_role_(?!first_)|teacher_logprob_|student_logprob_|responses_|pac_)|^(score_mean|turns_mean)$/;
  const perRole = (ms: StepMetrics[]) => ms.map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => PER_ROLE.test(k))));
  assert.deepEqual(perRole(result.metrics), perRole(reference.metrics));
  result.metrics.forEach((m, i) => assert.ok(Math.abs((m.grad_norm_actor as number) - (reference.metrics[i]!.grad_norm as number)) <= 1e-5 * Math.max(1, reference.metrics[i]!.grad_norm as number), `grad norm at step ${i}`));

  // Stopped after step 1 (as a kill after that checkpoint leaves it), resumed with fresh objects.
  const splitDir = join(dir, 'split');
  const first = await open(config, splitDir);
  await train({ config, engine: first.engine, task: first.task, runDir: splitDir, progress: false, teacher: first.teacher, stopAtStep: 1 });
  await first.dispose();
  const second = await open(config, splitDir);
  const resumed = await train({ config, engine: second.engine, task: second.task, runDir: splitDir, progress: false, teacher: second.teacher });
  await second.dispose();
  assert.equal(resumed.resumedFrom, 1);
  assert.deepEqual(untimed(resumed.metrics), untimed(result.metrics));
});

test('a diverging MAS-OPD run stops with one line naming the step; nothing non-finite is checkpointed', { timeout: 300_000 }, async () => {
  const config = await tinyConfig(['actor.optim.lr=1e10', 'actor.optim.eps=0', 'train.steps=3']);
  const runDir = join(dir, 'diverge');
  const run = await open(config, runDir);
  await assert.rejects(train({ config, engine: run.engine, task: run.task, runDir, progress: false, teacher: run.teacher }), (err: Error) => {
    assert.ok(err instanceof DivergenceError, String(err));
    assert.match(err.message, /^step \d+: .*not finite/);
    assert.equal(err.message.split('\n').length, 1);
    return true;
  });
  await run.dispose();
  assert.ok(!existsSync(join(runDir, 'checkpoints')) || readdirSync(join(runDir, 'checkpoints')).filter((d) => d.startsWith('step-')).length === 0);
});

test('a teacher whose tokenizer differs, or no teacher, is refused in one line before anything is trained', { timeout: 120_000 }, async () => {
  const other = join(dir, 'other-teacher');
  execFileSync(process.execPath, ['--import', 'tsx', join(repo, 'scripts/make-tiny-model.ts'), '--out', other, '--hidden-size', '32', '--seed', '2'], { cwd: repo });
  new CharTokenizer('abc').save(other);
  const config = await tinyConfig([`teacher.path=${other}`]);
  const { bundle, engine } = await buildRun(config, join(dir, 'mismatch'));
  await assert.rejects(openTeacher(config, bundle.task), (e: Error) => e.name === 'ConfigError' && /^teacher: its tokenizer differs from the students' \(vocabulary sizes differ/.test(e.message) && !e.message.includes('\n'));
  await assert.rejects(openTeacher(await tinyConfig(['teacher.path=']), bundle.task), /^ConfigError: teacher\.path: algorithm mas-opd needs/);
  // train() itself refuses a mas-opd run without a teacher, before it takes the run folder.
  await assert.rejects(train({ config, engine, task: bundle.task, runDir: join(dir, 'no-teacher'), progress: false }), /^ConfigError: teacher\.path: /);
  assert.ok(!existsSync(join(dir, 'no-teacher')));
  await engine.dispose();
});

test('marft train examples/mas-opd-tiny.yaml: config.json, metrics.jsonl, checkpoints, the lock released; --resume of a finished run adds nothing', { timeout: 300_000 }, async () => {
  const runDir = join(dir, 'cli');
  const r = spawnSync(process.execPath, [cli, 'train', join(repo, 'examples/mas-opd-tiny.yaml'), '--run-dir', runDir, '--set', `teacher.path=${teacherDir}`, '--no-progress'], { cwd: repo, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
  assert.deepEqual([out.steps, out.resumedFrom], [2, null]);
  assert.equal(JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8')).algorithm, 'mas-opd');
  assert.equal(readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').length, 2);
  assert.ok(!existsSync(join(runDir, '.lock')), 'the lock is released');
  const again = spawnSync(process.execPath, [cli, 'train', '--resume', runDir, '--no-progress'], { cwd: repo, encoding: 'utf8' });
  assert.equal(again.status, 0, again.stderr);
  assert.deepEqual([JSON.parse(again.stdout.trim().split('\n').pop()!).resumedFrom], [2]);
  assert.equal(readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').length, 2);
});

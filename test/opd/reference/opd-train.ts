// A frozen copy of the MAS-OPD step as it was before MAS-OPD joined the training pipeline (src/opd/ at
// commit eed69ee): the differential oracle of test/opd/pipeline-equality.test.ts, which checks that the
// pipeline (src/train/loop.ts with the mas-opd plan) gives the same adapters. Not used by src/.
// The MAS-OPD training loop: one student adapter per role (all over one base), a frozen teacher
// that only scores. Per step: roll out the workflow with the current students (keeping each
// action's chat messages and behaviour log-probs), then opdUpdate (./opd-step.ts). The sampling
// seed of step s is derived from (seed, s) alone. Metrics go to RUN/metrics.jsonl when a run
// directory is given, and the final adapters to RUN/adapters/<adapter>/ (PEFT format).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine, SamplingEngine } from '../../../src/engine/types.ts';
import { MetricsLog, type StepMetrics } from '../../../src/runs/metrics-log.ts';
import { deriveSeed } from '../../../src/core/rng.ts';
import type { Tokenizer } from '../../../src/tokenizer/types.ts';
import { engineSampler, rollout, withPolicies, type Episode, type TaskEnv, type Workflow } from '../../../src/workflow/index.ts';
import { opdUpdate, type OpdStepContext } from './opd-step.ts';
import type { Attributor } from '../../../src/opd/pac.ts';
import { DEFAULT_ROLE_CONDITIONS, type RoleConditionTable } from '../../../src/opd/role-conditions.ts';
import type { OpdSettings } from '../../../src/opd/settings.ts';
import { assertSameTokenizer } from '../../../src/opd/tokenizer-match.ts';
import { TurnRecordingEnv } from '../../../src/opd/turn-recording-env.ts';

/** What MAS-OPD trains on: a workflow, fresh training environments per step, and the PAC rules. */
export interface OpdTask {
  workflow: Workflow;
  /** `count` fresh single-use environments for step `step` (drawn reproducibly from `seed`). */
  trainEnvs(count: number, seed: number): TaskEnv[];
  /** PAC: the verdict of a finished turn from the episode (whose info holds the recorded `turns`). */
  attribute: Attributor | null;
}

export interface OpdTrainOptions {
  student: Engine;
  /** Scores only (src/run/teacher.ts: any engine, or a served model). */
  teacher: SamplingEngine;
  tokenizer: Tokenizer;
  /** The teacher's tokenizer when it has its own (checked against the students'); default: the students'. */
  teacherTokenizer?: Tokenizer;
  task: OpdTask;
  settings: OpdSettings;
  seed: number;
  conditions?: RoleConditionTable;
  runDir?: string;
  onStep?: (metrics: StepMetrics) => void | Promise<void>;
}

export interface OpdTrainResult {
  /** Adapter of each role. */
  adapters: Record<string, string>;
  /** The workflow with every agent acting through its role's adapter. */
  workflow: Workflow;
  metrics: StepMetrics[];
}

/** Adapter name of a role's student policy. */
export function roleAdapter(role: string): string {
  return `opd-${role.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
}

/** The workflow with one adapter per role type (agents of one role share it). */
export function studentWorkflow(workflow: Workflow): { workflow: Workflow; adapters: Record<string, string> } {
  const adapters: Record<string, string> = {};
  for (const a of workflow.agents) adapters[a.role] = roleAdapter(a.role);
  return { workflow: withPolicies(workflow, Object.fromEntries(workflow.agents.map((a) => [a.name, adapters[a.role]!]))), adapters };
}

/** Rolls the workflow out on envs wrapped for PAC, keeping messages (what opdUpdate needs). */
export async function opdRollout(engine: Engine, tokenizer: Tokenizer, workflow: Workflow, envs: TaskEnv[], settings: OpdSettings, seed: number): Promise<Episode[]> {
  return rollout(workflow, envs.map((e) => new TurnRecordingEnv(e)), {
    sampler: engineSampler(engine),
    tokenizer,
    keepMessages: true,
    // MAS-OPD has no critic: the centralised critic's input is not rendered.
    criticView: false,
    params: { temperature: settings.temperature, topP: settings.topP, topK: settings.topK, maxNewTokens: settings.maxNewTokens, stopTokenIds: [], stopStrings: [], seed },
  });
}

export async function trainOpd(o: OpdTrainOptions): Promise<OpdTrainResult> {
  assertSameTokenizer(o.tokenizer, o.teacherTokenizer ?? o.tokenizer, o.teacher.info.vocabSize);
  const { workflow, adapters } = studentWorkflow(o.task.workflow);
  const roles = Object.keys(adapters);
  for (const [i, role] of roles.entries()) {
    if (!(await o.student.listAdapters()).includes(adapters[role]!)) {
      await o.student.createAdapter(adapters[role]!, { rank: o.settings.lora.rank, alpha: o.settings.lora.alpha, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] }, deriveSeed(o.seed, 1, i));
    }
  }
  const ctx: OpdStepContext = {
    student: o.student,
    teacher: o.teacher,
    tokenizer: o.tokenizer,
    roleOf: new Map(workflow.agents.map((a) => [a.name, a.role])),
    conditions: o.conditions ?? DEFAULT_ROLE_CONDITIONS,
    attribute: o.task.attribute,
    settings: o.settings,
  };
  let log: MetricsLog | null = null;
  if (o.runDir) {
    await mkdir(o.runDir, { recursive: true });
    log = new MetricsLog(join(o.runDir, 'metrics.jsonl'));
  }
  const metrics: StepMetrics[] = [];
  for (let step = 0; step < o.settings.steps; step++) {
    const started = performance.now();
    const seed = deriveSeed(o.seed, step);
    const episodes = await opdRollout(o.student, o.tokenizer, workflow, o.task.trainEnvs(o.settings.batchSize, seed), o.settings, seed);
    const m: StepMetrics = { step: step + 1, ...(await opdUpdate(episodes, ctx, seed)) };
    m.score_mean = episodes.reduce((s, e) => s + e.outcome, 0) / Math.max(1, episodes.length);
    m.turns_mean = episodes.reduce((s, e) => s + e.steps.length, 0) / Math.max(1, episodes.length);
    m.step_time_s = (performance.now() - started) / 1000;
    metrics.push(m);
    await log?.append(m);
    await o.onStep?.(m);
  }
  if (o.runDir) for (const name of Object.values(adapters)) await o.student.saveAdapter(name, join(o.runDir, 'adapters', name));
  return { adapters, workflow, metrics };
}

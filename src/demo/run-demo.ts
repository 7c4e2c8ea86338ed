// The demo, top to bottom: build a tiny model and pretrain it on an imperfect teacher's
// transcripts; score the untrained Planner → Solver team on held-out problems; train both agents'
// adapters with MARFT (the project's trainer, src/train/loop.ts, on the Flex-MG workflow of
// ./duo-workflow.ts); score again. With `ablation`, two more teams get the same budget with only
// the Planner or only the Solver trained. Everything lands in the run directory:
//   model/                         the pretrained base (Hugging Face folder with its tokenizer)
//   teams/<team>/                  the trainer's run: metrics.jsonl, checkpoints/ (PEFT adapters, critic)
//   adapters/<team>/<agent>/       the trained adapters (PEFT)
//   reward-per-step.svg, .png      training reward per RL step, one line per team (src/plots/)
//   results.json                   the numbers of the final JSON line
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from '../engine/index.ts';
import type { Engine } from '../engine/types.ts';
import { parseConfig } from '../config/load.ts';
import type { MarftConfig } from '../config/schema.ts';
import { train } from '../run/train.ts';
import { ArithDuoTask, buildPretrainedEngine } from '../tasks/arith-duo/arith-task.ts';
import { DEFAULT_PRETRAIN } from '../tasks/arith-duo/pretrain.ts';
import { DUO_AGENT_NAMES, type DuoAgentName, MAX_SOLUTION_TOKENS } from '../tasks/arith-duo/duo-workflow.ts';
import { demoModelConfig, parameterCount } from '../tasks/arith-duo/model-config.ts';
import { type LineSeries, PALETTE, lineChartSvg } from '../plots/line-chart.ts';
import { svgToPng } from '../plots/png.ts';
import { resultsTable, round4 } from './report.ts';
import { type TeamScore, teamScore } from './team-score.ts';
import { demoTokenizer } from '../tasks/arith-duo/vocab.ts';

export interface DemoSettings {
  heldOut: number;
  pretrainSteps: number;
  rlSteps: number;
  problemsPerStep: number;
  rolloutsPerProblem: number;
  /** Every this many RL steps, greedy accuracy on the first `monitorProblems` held-out problems (monitoring only, never trained on). */
  monitorEvery: number;
  monitorProblems: number;
  /** Overrides of the training configuration's defaults (src/config/schema.ts), merged key by key. */
  trainer: Record<string, unknown>;
  /** Also train the Planner-only and Solver-only teams with the same budget. */
  ablation: boolean;
}

/** The trainer settings of the demo: App. B defaults except where a 0.4M model from scratch needs otherwise. */
const TRAINER_OVERRIDES = {
  algorithm: 'marft-action',
  // n + 1 adapters: one LoRA policy per agent and the centralised critic.
  policy: { parameterSharing: false, loraRank: 8, loraAlpha: 16 },
  // The paper's critic: a LoRA critic adapter with a linear value head. A frozen base + MLP head
  // (the reference code's) explained none of the returns' variance here (its input is the base's
  // last hidden state, which this tiny base never learned to make informative of success); four
  // minibatches per step give the critic four AdamW steps per RL step (App. B: one).
  // headInit torch: the head the demo's measured numbers (docs/demo.md) were taken with, before the
  // default became a zero head (docs/training.md, "The critic's defaults").
  critic: { kind: 'lora-critic', loraRank: 8, loraAlpha: 16, minibatches: 4, warmupSteps: 2, valueClip: 0, headInit: 'torch', optim: { lr: 1e-3 } },
  // LoRA on a tiny model takes far larger steps than App. B's 5e-6 for billions of parameters.
  actor: { klCoef: 0.1, optim: { lr: 1e-3, schedule: 'constant', warmupRatio: 0 } },
};

export const FULL_SETTINGS: DemoSettings = {
  heldOut: 1000,
  pretrainSteps: DEFAULT_PRETRAIN.steps,
  rlSteps: 40,
  problemsPerStep: 64,
  rolloutsPerProblem: 8,
  monitorEvery: 5,
  monitorProblems: 200,
  trainer: TRAINER_OVERRIDES,
  // Each ablation team costs as much RL time as the main one: opt in with --ablation.
  ablation: false,
};

/** For tests: the same pipeline with smaller budgets. */
export const QUICK_SETTINGS: DemoSettings = { ...FULL_SETTINGS, heldOut: 500, rlSteps: 20, problemsPerStep: 32, ablation: false };

export interface TeamResult {
  id: string;
  team: string;
  trainAgents: DuoAgentName[];
  /** The critic's explained variance at each agent's position, mean over the last RL steps (null: not measured). */
  criticExplainedVariance: Partial<Record<DuoAgentName, number | null>>;
  after: TeamScore;
  /** Mean team reward of each RL step's rollouts. */
  rewards: number[];
  /** Greedy accuracy on the monitored held-out problems: [step, accuracy]. */
  monitor: [number, number][];
  seconds: number;
}

export interface DemoResult {
  before: TeamScore;
  teams: TeamResult[];
  parameters: number;
  pretrainFinalLoss: number;
  seconds: { pretrain: number; total: number };
}

export interface DemoOptions {
  runDir: string;
  seed: number;
  settings: DemoSettings;
  log: (line: string) => void;
}

interface TeamSpec {
  id: string;
  team: string;
  trainAgents: DuoAgentName[];
  /** A CSS colour. */
  color: string;
  /** Trainer settings of this team on top of the demo's. */
  trainer?: Record<string, unknown>;
}

const TEAMS: TeamSpec[] = [
  { id: 'both', team: 'both agents (MARFT)', trainAgents: ['planner', 'solver'], color: PALETTE[0] },
  // The critic's contribution: the same budget, the critic still trained, but GAE reads the batch's mean value.
  { id: 'critic-mean', team: 'both, critic → batch mean', trainAgents: ['planner', 'solver'], color: PALETTE[3], trainer: { advantage: { baseline: 'batch-mean' } } },
  { id: 'planner-only', team: 'only Planner trained', trainAgents: ['planner'], color: PALETTE[1] },
  { id: 'solver-only', team: 'only Solver trained', trainAgents: ['solver'], color: PALETTE[2] },
];

const GREEDY = { temperature: 0, topP: 1, topK: 0, maxNewTokens: MAX_SOLUTION_TOKENS };

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b) ? merge(b as Record<string, unknown>, v as Record<string, unknown>) : v;
  }
  return out;
}

export function trainerConfig(settings: DemoSettings, seed: number, trainAgents: DuoAgentName[], team: Record<string, unknown> = {}): MarftConfig {
  return parseConfig(
    merge(
      merge({
        seed,
        task: { name: 'arith-duo', options: { heldOut: settings.heldOut, trainAgents } },
        rollout: { batchSize: settings.problemsPerStep, rolloutsPerPrompt: settings.rolloutsPerProblem, temperature: 1, maxNewTokens: MAX_SOLUTION_TOKENS, maxPromptTokens: 128 },
        train: { steps: settings.rlSteps, checkpointEvery: settings.rlSteps, keepCheckpoints: 1, evalEvery: settings.monitorEvery },
        eval: { temperature: 0, seeds: 1, problems: settings.monitorProblems },
      },
      settings.trainer),
      team,
    ),
  );
}

async function evaluateGreedy(engine: Engine, task: ArithDuoTask, policies: Record<string, string>): Promise<TeamScore> {
  return teamScore(await task.evaluate(engine, { seed: 0, sampling: GREEDY, problems: 0, policies }));
}

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const { runDir, seed, settings, log } = options;
  const t0 = performance.now();
  mkdirSync(runDir, { recursive: true });
  const tokenizer = demoTokenizer();
  const modelConfig = demoModelConfig(tokenizer);
  const parameters = parameterCount(modelConfig);
  const task = new ArithDuoTask({ heldOut: settings.heldOut, trainAgents: [...DUO_AGENT_NAMES], pretrainSteps: settings.pretrainSteps, roles: 'named' });
  log(`task: a o b o c over digits 1-9 with + - *; ${task.split.train.length} training problems, ${task.split.heldOut.length} held-out problems never trained on`);
  log(
    `model: Qwen2-shaped decoder from scratch, hidden ${modelConfig.hiddenSize}, ${modelConfig.numHiddenLayers} layers, ${modelConfig.numAttentionHeads} heads, ` +
      `vocabulary ${modelConfig.vocabSize}, ${(parameters / 1e6).toFixed(2)}M parameters`,
  );

  log(`pretraining on the noisy teacher's transcripts: ${settings.pretrainSteps} steps`);
  const every = Math.max(1, Math.round(settings.pretrainSteps / 10));
  const pre = await buildPretrainedEngine(task, seed, settings.pretrainSteps, (p) => {
    if (p.step % every === 0 || p.step === p.steps) log(`  pretrain step ${p.step}/${p.steps}  loss ${p.loss.toFixed(4)}  ${Math.round(p.tokensPerSecond)} tokens/s`);
  });
  const modelDir = join(runDir, 'model');
  let before: TeamScore;
  try {
    await pre.engine.saveBase(modelDir);
    tokenizer.save(modelDir);
    log(`  saved the pretrained model to ${modelDir} (${pre.seconds.toFixed(0)} s)`);
    before = await evaluateGreedy(pre.engine, task, {});
  } finally {
    await pre.engine.dispose();
  }
  log(`untrained team, greedy, ${before.problems} held-out problems: accuracy ${before.score.toFixed(3)}, right plans ${before.rightPlanRate.toFixed(3)}, Solver follows the plan ${before.followRate.toFixed(3)}`);

  const teams: TeamResult[] = [];
  for (const spec of settings.ablation ? TEAMS : TEAMS.slice(0, 1)) teams.push(await trainTeam(spec, modelDir, seed, settings, runDir, log));

  const series: LineSeries[] = teams.flatMap((t) => {
    const color = TEAMS.find((s) => s.team === t.team)!.color;
    const name = settings.ablation ? `${t.team}: ` : '';
    return [
      { label: `${name}team reward of the rollouts (T = 1)`, points: t.rewards.map((v, i): [number, number] => [i + 1, v]), color },
      { label: `${name}held-out accuracy (greedy, ${settings.monitorProblems} problems)`, points: t.monitor, color, dashed: true },
    ];
  });
  const svg = await lineChartSvg({ title: 'MARFT demo: reward per RL step', xLabel: 'RL step', yLabel: 'reward / accuracy', series, yDomain: [0, 1], width: 760, height: 400 });
  writeFileSync(join(runDir, 'reward-per-step.svg'), svg);
  const plotFile = join(runDir, 'reward-per-step.png');
  writeFileSync(plotFile, svgToPng(svg));

  const result: DemoResult = { before, teams, parameters, pretrainFinalLoss: pre.finalLoss, seconds: { pretrain: pre.seconds, total: (performance.now() - t0) / 1000 } };
  writeFileSync(join(runDir, 'results.json'), JSON.stringify({ ...finalJson(result), before_detail: before, teams: teams.map(({ team, after, seconds }) => ({ team, after, seconds })) }, null, 2) + '\n');
  log('');
  log(`held-out accuracy, greedy decoding, ${before.problems} problems never trained on:`);
  log(resultsTable([{ system: 'untrained team (pretrained base)', score: before }, ...teams.map((t) => ({ system: t.team, score: t.after }))]));
  log('');
  log(`reward per step: ${plotFile}`);
  return result;
}

async function trainTeam(spec: TeamSpec, modelDir: string, seed: number, settings: DemoSettings, runDir: string, log: (line: string) => void): Promise<TeamResult> {
  const started = performance.now();
  const config = trainerConfig(settings, seed, spec.trainAgents, spec.trainer);
  const task = new ArithDuoTask({ heldOut: settings.heldOut, trainAgents: spec.trainAgents, pretrainSteps: settings.pretrainSteps, roles: 'named' });
  // Every team starts from the same saved base, in an engine of its own.
  const engine = await loadEngine(modelDir);
  try {
    log(`MARFT, ${spec.team}: ${settings.rlSteps} steps × ${settings.problemsPerStep} problems × ${settings.rolloutsPerProblem} rollouts at temperature 1`);
    const rewards: number[] = [];
    const explained: Partial<Record<DuoAgentName, (number | null)[]>> = {};
    // Step 0 of the monitoring line: the untrained team on the same problems.
    const start = teamScore(await task.evaluate(engine, { seed: 0, sampling: GREEDY, problems: settings.monitorProblems, policies: {} }));
    const monitor: [number, number][] = [[0, start.score]];
    const result = await train({
      config,
      engine,
      task,
      runDir: join(runDir, 'teams', spec.id),
      progress: false,
      // The demo scores the team itself (greedy, on every held-out problem, before and after).
      evaluateBeforeAfter: false,
      onStep: (m) => {
        const reward = Number(m.score_mean);
        rewards.push(reward);
        // An agent's position in the step is its place in the Duo (a frozen agent still acts first or second).
        spec.trainAgents.forEach((agent) => (explained[agent] ??= []).push(m[`explained_variance/pos${DUO_AGENT_NAMES.indexOf(agent)}`] as number | null));
        const n = rewards.length;
        const monitored = typeof m.eval_score === 'number' ? m.eval_score : null;
        if (monitored !== null) monitor.push([n, monitored]);
        if (n === 1 || n % 5 === 0 || n === settings.rlSteps) {
          const held = monitored !== null ? `  held-out greedy ${monitored.toFixed(3)}` : '';
          const ev = spec.trainAgents.map((agent) => m[`explained_variance/pos${DUO_AGENT_NAMES.indexOf(agent)}`]).map((v) => (typeof v === 'number' ? v.toFixed(2) : '-')).join('/');
          log(`  step ${String(n).padStart(3)}/${settings.rlSteps}  rollout reward ${reward.toFixed(3)}${held}  value loss ${Number(m.value_loss).toFixed(4)}  critic EV ${ev}  ${Number(m.step_time_s).toFixed(1)} s/step`);
        }
      },
    });
    for (const agent of spec.trainAgents) await engine.saveAdapter(result.plan.policies[agent]!, join(runDir, 'adapters', spec.id, agent));
    const after = await evaluateGreedy(engine, task, result.plan.policies);
    log(`  ${spec.team}: held-out accuracy ${after.score.toFixed(3)}, right plans ${after.rightPlanRate.toFixed(3)}, Solver follows the plan ${after.followRate.toFixed(3)}`);
    const criticExplainedVariance = Object.fromEntries(spec.trainAgents.map((agent) => [agent, lastMean(explained[agent] ?? [], EV_WINDOW)]));
    return { id: spec.id, team: spec.team, trainAgents: spec.trainAgents, criticExplainedVariance, after, rewards, monitor, seconds: (performance.now() - started) / 1000 };
  } finally {
    await engine.dispose();
  }
}

/** Steps over which the critic's explained variance is averaged for the report (one step's value is noisy). */
const EV_WINDOW = 10;

/** Mean of the last `n` finite entries (null when there are none). */
function lastMean(xs: (number | null)[], n: number): number | null {
  const tail = xs.slice(-n).filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return tail.length ? tail.reduce((s, x) => s + x, 0) / tail.length : null;
}

/** The final JSON line: held-out accuracy before and after, and the ablations when they ran. */
export function finalJson(r: DemoResult): Record<string, unknown> {
  const main = r.teams[0]!;
  const out: Record<string, unknown> = {
    before: round4(r.before.score),
    after: round4(main.after.score),
    improvement: round4(main.after.score - r.before.score),
    heldOutProblems: r.before.problems,
    rightPlansBefore: round4(r.before.rightPlanRate),
    rightPlansAfter: round4(main.after.rightPlanRate),
  };
  out.criticExplainedVariance = Object.fromEntries(Object.entries(main.criticExplainedVariance).map(([a, v]) => [a, v === null || v === undefined ? null : round4(v)]));
  const ablationKey: Record<string, string> = { 'critic-mean': 'criticBatchMean', 'planner-only': 'plannerOnly', 'solver-only': 'solverOnly' };
  for (const t of r.teams.slice(1)) out[ablationKey[t.id] ?? t.id] = round4(t.after.score);
  Object.assign(out, { rlSteps: main.rewards.length, parameters: r.parameters, seconds: Math.round(r.seconds.total) });
  return out;
}

// The Flex-MG runtime: runs a workflow on many environments at once and records Episodes.
//
// Lock-step rounds over every episode in flight. In one round each episode contributes the
// requests of its next topological level of D (or of its orchestrator); all of them go to the
// sampler in one call per distinct sampling-parameter set (normally exactly one call). When an
// episode has run every level of a step, its environment step runs (all such steps concurrently,
// since environments may execute programs), its rewards are recorded as the environment reported
// them (the step's team reward, each action's role-local reward: no weighting, no placement, which
// are the trainer's, src/train/batch.ts) and the termination rule is checked. Finished episodes
// free their slot for the next environment (maxInFlight).
import type { SampleParams, SampleResult } from '../engine/types.ts';
import type { ChatMessage, Tokenizer } from '../tokenizer/types.ts';
import type { ActionRecord, Episode, StepRecord } from './trajectory.ts';
import type { Agent } from './agent.ts';
import type { StepOutcome, TaskEnv } from './env-api.ts';
import { predecessors, topologicalLevels, type Edge } from './graph.ts';
import type { ActionSampler, SampleRequest } from './sampler.ts';
import type { TurnRecord, Workflow } from './workflow.ts';
import { WorkflowError } from './errors.ts';
import { jointStateMessages, speakerLabels } from './joint-state.ts';
import { EpisodeState, type StepPlan } from './episode-state.ts';

export interface RolloutOptions {
  sampler: ActionSampler;
  tokenizer: Tokenizer;
  /**
   * Sampling parameters; agents' sampleParams override them. The tokenizer's eos ids are added to
   * stopTokenIds. The seed of round r is params.seed + r, so rounds draw different samples while
   * the whole rollout stays reproducible.
   */
  params: SampleParams;
  /** Episodes run concurrently (default: all environments at once). */
  maxInFlight?: number;
  /** Prompts longer than this (in tokens) are an error naming the agent and problem (default: no cap). */
  maxPromptTokens?: number;
  /**
   * Keep each action's observation as chat messages in episode.info.observations (aligned with
   * episode.actions), e.g. to build a teacher's context from the student's (MAS-OPD, spec section 5).
   */
  keepMessages?: boolean;
  /**
   * Record each action's centralised-critic input (ActionRecord.criticTokens, ./joint-state.ts):
   * default true. Off saves one chat rendering per action when no critic reads it.
   */
  criticView?: boolean;
}

/** Validates a workflow once, before any sampling (WorkflowError on the first problem found). */
export function validateWorkflow(workflow: Workflow): void {
  if (workflow.agents.length === 0) throw new WorkflowError(`workflow '${workflow.name}' has no agents`);
  if (!Number.isInteger(workflow.horizon) || workflow.horizon < 1) {
    throw new WorkflowError(`workflow '${workflow.name}': horizon must be a positive integer, got ${workflow.horizon}`);
  }
  if (workflow.router && workflow.orchestrator) throw new WorkflowError(`workflow '${workflow.name}': use a router or an orchestrator, not both`);
  const names = workflow.agents.map((a) => a.name);
  if (workflow.orchestrator && names.includes(workflow.orchestrator.agent.name)) {
    throw new WorkflowError(`workflow '${workflow.name}': orchestrator '${workflow.orchestrator.agent.name}' must not also be a workflow agent`);
  }
  topologicalLevels(names, workflow.graph);
}

interface Pending {
  run: EpisodeState;
  agent: Agent;
  isOrchestrator: boolean;
  messages: ChatMessage[];
  request: SampleRequest;
  params: SampleParams;
}

export async function rollout(workflow: Workflow, envs: readonly TaskEnv[], options: RolloutOptions): Promise<Episode[]> {
  return runEpisodes(workflow, envs.map((env, e) => new EpisodeState(env, e)), options);
}

/**
 * Runs episodes from the given states to their ends: fresh ones (new EpisodeState(env, e)), or
 * copies of one state (EpisodeState.copy(e)) that a branching sampler continues with different
 * actions. Episode e of the result comes from the state whose `episode` is e; the states are
 * advanced in place.
 */
export async function runEpisodes(workflow: Workflow, states: readonly EpisodeState[], options: RolloutOptions): Promise<Episode[]> {
  if (states.some((s, e) => s.episode !== e)) throw new WorkflowError('runEpisodes: state k must have episode index k');
  await drive(workflow, states, options);
  return states.map((s) => finishedEpisode(workflow, s, options));
}

/**
 * Advances the given states in place, round by round, until each has finished or `pause(state)`
 * holds after one of its rounds (a round: one sampling call for the agents of the state's next
 * level, or its orchestrator, then the environment step when that level ended the step). A paused
 * state stands where runEpisodes or advanceEpisodes can continue it, or copy() can branch it: this
 * is how a tree sampler (./tree-sampling.ts) takes one agent's candidate actions and then plays each
 * candidate's step to its end. Its states may have any episode indices.
 */
export async function advanceEpisodes(workflow: Workflow, states: readonly EpisodeState[], options: RolloutOptions, pause: (state: EpisodeState) => boolean): Promise<void> {
  await drive(workflow, states, options, pause);
}

/** The Episode of a finished state (its outcome from the environment's finalScore, the workflow's records). */
export function finishedEpisode(workflow: Workflow, run: EpisodeState, options: Pick<RolloutOptions, 'keepMessages'>): Episode {
  if (!run.done) throw new WorkflowError(`episode ${run.episode} (problem '${run.env.problemId}') has not finished`);
  const final = run.env.finalScore();
  const info: Record<string, unknown> = { ...final.info };
  if (workflow.router || workflow.orchestrator) {
    info.workflow = { graphs: run.graphs, orchestratorFallbacks: run.orchestratorFallbacks };
  }
  if (options.keepMessages) info.observations = run.observations;
  return { problemId: run.env.problemId, actions: run.actions, steps: run.steps, outcome: final.score, info };
}

async function drive(workflow: Workflow, states: readonly EpisodeState[], options: RolloutOptions, pause?: (state: EpisodeState) => boolean): Promise<void> {
  validateWorkflow(workflow);
  const envs = states.map((s) => s.env);
  if (states.some((s) => s.done)) throw new WorkflowError('runEpisodes: a finished episode cannot be continued');
  const maxInFlight = Math.max(1, options.maxInFlight ?? envs.length);
  const names = workflow.agents.map((a) => a.name);
  const agentByName = new Map(workflow.agents.map((a) => [a.name, a]));
  const defaultPlan = makePlan(names, workflow.graph);
  const speakerOf = speakerLabels(workflow.orchestrator ? [...workflow.agents, workflow.orchestrator.agent] : workflow.agents);
  const criticView = options.criticView ?? true;

  const beginStep = (run: EpisodeState): void => {
    run.level = 0;
    run.outputs = [];
    run.stepActionsFrom = run.actions.length;
    if (workflow.orchestrator) {
      run.orchestrating = true;
      run.plan = undefined;
    } else if (workflow.router) {
      run.plan = makePlan(names, workflow.router({ t: run.t, problem: run.env.firstMessage, history: run.history }));
      run.graphs.push(run.plan.edges);
    } else {
      run.plan = defaultPlan;
    }
  };

  let next = 0;
  let round = 0;
  const active: EpisodeState[] = [];
  const admit = () => {
    while (active.length < maxInFlight && next < envs.length) {
      const run = states[next]!;
      next++;
      // A fresh state starts its first step; a copy taken mid-episode continues where it stands.
      if (run.plan === undefined && !run.orchestrating) beginStep(run);
      active.push(run);
    }
  };
  admit();

  while (active.length > 0) {
    const pending: Pending[] = [];
    for (const run of active) {
      if (run.orchestrating) {
        const orch = workflow.orchestrator!;
        const messages = orch.observe({ t: run.t, problem: run.env.firstMessage, history: run.history, agents: workflow.agents });
        pending.push(makePending(run, orch.agent, true, messages));
      } else {
        for (const name of run.plan!.levels[run.level]!) {
          const agent = agentByName.get(name)!;
          const preds = run.plan!.preds.get(name)!;
          const messages = workflow.observe({
            agent,
            t: run.t,
            problem: run.env.firstMessage,
            visible: run.outputs.filter((o) => preds.has(o.agent)),
            history: run.history,
            position: run.outputs.length + run.plan!.levels[run.level]!.indexOf(name),
            agents: workflow.agents,
          });
          pending.push(makePending(run, agent, false, messages));
        }
      }
    }

    const results = await sampleInGroups(pending, options.sampler);
    round++;

    const recorded = pending.map((p, k) => {
      const result = results[k]!;
      const action: ActionRecord = {
        agent: p.agent.name,
        agentIndex: p.run.actions.length - p.run.stepActionsFrom,
        step: p.run.t,
        policy: p.agent.policy,
        promptTokens: p.request.prompt,
        actionTokens: result.tokens,
        behaviourLogprobs: result.logprobs,
        stopReason: result.stopReason,
        text: actionText(result, p.params.stopTokenIds, options.tokenizer),
      };
      p.run.actions.push(action);
      if (options.keepMessages) p.run.observations.push(p.messages);
      return action;
    });
    // Outputs are appended after the whole round, so agents of one level never see each other.
    pending.forEach((p, k) => {
      if (!p.isOrchestrator) p.run.outputs.push({ agent: p.agent.name, role: p.agent.role, text: recorded[k]!.text });
    });

    const stepEnded: EpisodeState[] = [];
    for (const run of active) {
      if (run.orchestrating) {
        run.orchestrating = false;
        const orch = workflow.orchestrator!;
        const edges = orch.parse(run.actions[run.actions.length - 1]!.text, workflow.agents);
        let plan: StepPlan | undefined;
        if (edges) {
          try {
            plan = makePlan(names, edges);
          } catch (e) {
            if (!(e instanceof WorkflowError)) throw e;
          }
        }
        if (!plan) {
          plan = defaultPlan;
          run.orchestratorFallbacks++;
        }
        run.plan = plan;
        run.graphs.push(plan.edges);
      } else if (++run.level === run.plan!.levels.length) {
        stepEnded.push(run);
      }
    }

    await Promise.all(stepEnded.map(async (run) => finishStep(run, await run.env.onStep({ t: run.t, outputs: run.outputs }))));

    for (let k = active.length - 1; k >= 0; k--) {
      const run = active[k]!;
      if (run.done || pause?.(run)) active.splice(k, 1);
    }
    admit();
  }

  function makePending(run: EpisodeState, agent: Agent, isOrchestrator: boolean, messages: ChatMessage[]): Pending {
    const prompt = options.tokenizer.encodeChat(messages, { addGenerationPrompt: true });
    if (options.maxPromptTokens !== undefined && prompt.length > options.maxPromptTokens) {
      throw new Error(
        `prompt of agent '${agent.name}' at step ${run.t} of problem '${run.env.problemId}' has ${prompt.length} tokens, over maxPromptTokens = ${options.maxPromptTokens}`,
      );
    }
    const base = { ...options.params, ...agent.sampleParams };
    const stopTokenIds = [...new Set([...base.stopTokenIds, ...options.tokenizer.eosTokenIds])];
    const params: SampleParams = { ...base, stopTokenIds, seed: base.seed + round };
    return {
      run,
      agent,
      isOrchestrator,
      messages,
      params,
      request: { policy: agent.policy, prompt, meta: { agent: agent.name, t: run.t, problemId: run.env.problemId, episode: run.episode } },
    };
  }

  function finishStep(run: EpisodeState, outcome: StepOutcome): void {
    const stepActions = run.actions.slice(run.stepActionsFrom);
    for (const a of stepActions) a.localReward = outcome.perAgentReward?.[a.agent] ?? 0;
    if (criticView) {
      // Chain order is execution order: levels, and declaration order inside a level.
      stepActions.forEach((a, k) => {
        const messages = jointStateMessages({
          problem: run.env.firstMessage,
          history: run.history,
          earlier: stepActions.slice(0, k).map((e) => ({ speaker: speakerOf(e.agent), text: e.text })),
          next: speakerOf(a.agent),
          speakerOf,
        });
        a.criticTokens = options.tokenizer.encodeChat(messages, { addGenerationPrompt: true });
      });
    }
    const turn: TurnRecord = { t: run.t, outputs: run.outputs };
    if (outcome.feedback !== undefined) turn.feedback = outcome.feedback;
    if (outcome.feedbackFor !== undefined) turn.feedbackFor = outcome.feedbackFor;
    const stopped = outcome.done || (workflow.stop?.({ t: run.t, outputs: run.outputs, history: run.history, env: run.env }) ?? false);
    const done = stopped || run.t + 1 >= workflow.horizon;
    const record: StepRecord = { t: run.t, teamReward: outcome.teamReward, done };
    if (outcome.feedback !== undefined) record.feedback = outcome.feedback;
    run.steps.push(record);
    run.history.push(turn);
    if (done) {
      run.done = true;
    } else {
      run.t++;
      beginStep(run);
    }
  }
}

function makePlan(names: readonly string[], edges: Edge[]): StepPlan {
  return { levels: topologicalLevels(names, edges), preds: predecessors(names, edges), edges };
}

/** The action text given to environments: the decoded tokens without the stop token that ended them. */
function actionText(result: SampleResult, stopTokenIds: number[], tokenizer: Tokenizer): string {
  const tokens = result.tokens;
  const last = tokens[tokens.length - 1];
  const body = result.stopReason === 'stop_token' && last !== undefined && stopTokenIds.includes(last) ? tokens.slice(0, -1) : tokens;
  return tokenizer.decode(body);
}

/** One sampler call per distinct parameter set (normally one), results back in request order. */
async function sampleInGroups(pending: Pending[], sampler: ActionSampler): Promise<SampleResult[]> {
  const groups = new Map<string, number[]>();
  pending.forEach((p, k) => {
    const key = JSON.stringify(p.params);
    const g = groups.get(key);
    if (g) g.push(k);
    else groups.set(key, [k]);
  });
  const results: SampleResult[] = new Array(pending.length);
  for (const indices of groups.values()) {
    const out = await sampler.sample(indices.map((k) => pending[k]!.request), pending[indices[0]!]!.params);
    if (out.length !== indices.length) throw new Error(`sampler returned ${out.length} results for ${indices.length} requests`);
    indices.forEach((k, m) => (results[k] = out[m]!));
  }
  return results;
}

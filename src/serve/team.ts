// The "team" model (marft serve --team): the run's whole workflow as one chat model. The request's last
// user message is the problem; the run's workflow and environment play it once with the trained
// agents (each agent's turns sampled through the server's batcher, so concurrent team requests share
// engine calls); the reply's message is the team's answer (the last turn of the workflow's answering
// role: the Reasoner of a Reasoner–Tool-User pair, the Coder of a Coder–Tester pair, else the last
// agent), and the transcript goes alongside in the reply's `marft` field. There is no reference
// answer, so nothing is scored.
//
// Sampling: temperature, top_p, top_k and max_tokens (a cap per turn; the workflow's own per-agent
// caps still apply) default to the run's evaluation settings (eval.temperature, eval.topP, eval.topK,
// rollout.maxNewTokens); seed as for the other models (given and temperature > 0: the team's turns
// are sampled in engine calls of their own, reproducibly).
import { randomInt } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { MarftConfig } from '../config/schema.ts';
import type { WorkflowTask } from '../tasks/workflow-task.ts';
import { defaultAnswerRole } from '../tasks/workflow-catalog.ts';
import type { Sampling } from '../train/task.ts';
import type { ActionRecord, Episode } from '../workflow/trajectory.ts';
import { ApiError, invalidParam, unsupportedParam } from './api-error.ts';
import { chatMessages } from './chat-completions.ts';
import { textPieces } from './choice-text.ts';
import { sendJson } from './http-io.ts';
import type { ServedModel } from './models.ts';
import { generationFields, type Body } from './request-fields.ts';
import type { ServeContext } from './sample-choices.ts';
import { SseStream } from './sse.ts';

/** One turn of the transcript in a team reply's `marft` field. */
export interface TeamTurn {
  agent: string;
  role: string;
  /** Environment step (turn) t. */
  step: number;
  /** The served model that acted (the agent's name, or "base"). */
  model: string;
  content: string;
  finish_reason: 'stop' | 'length';
  tokens: number;
}

export class TeamModel {
  private readonly roles: Map<string, string>;
  private readonly answerRole: string | undefined;

  constructor(private readonly task: WorkflowTask, private readonly policies: Record<string, string>, private readonly config: MarftConfig) {
    this.roles = new Map(task.workflow.agents.map((a) => [a.name, a.role]));
    this.answerRole = task.options.answerRole ?? defaultAnswerRole(task.options.workflow.name);
  }

  get workflowName(): string {
    return this.task.workflow.name;
  }

  /** The team's answer: the last turn of an agent of the answering role, else the last turn. */
  private answerOf(episode: Episode): ActionRecord | undefined {
    const answering = this.answerRole ? episode.actions.filter((a) => this.roles.get(a.agent) === this.answerRole) : [];
    return (answering.length > 0 ? answering : episode.actions).at(-1);
  }

  async chat(ctx: ServeContext, model: ServedModel, body: Body, res: ServerResponse): Promise<void> {
    const f = generationFields(body, ['max_completion_tokens', 'max_tokens'], ctx.info.vocabSize);
    if (f.n !== 1) throw unsupportedParam('n', 'the team model answers once per request (n = 1)');
    if (f.stop.length > 0 || f.stopTokenIds.length > 0) throw unsupportedParam('stop', 'the team\'s turns stop where the workflow stops them');
    if (body.logprobs === true) throw unsupportedParam('logprobs', 'the team model reports no log-probs (its turns are in the marft field)');
    const messages = chatMessages(body.messages);
    const question = messages.filter((m) => m.role === 'user').at(-1)?.content;
    if (question === undefined) throw invalidParam('messages', 'the team model needs a user message (the problem)');
    const sampling: Sampling = {
      temperature: body.temperature === undefined || body.temperature === null ? this.config.eval.temperature : f.temperature,
      topP: body.top_p === undefined || body.top_p === null ? this.config.eval.topP : f.topP,
      topK: body.top_k === undefined || body.top_k === null ? this.config.eval.topK : f.topK,
      maxNewTokens: f.maxTokens ?? this.config.rollout.maxNewTokens,
    };
    const seed = f.seed ?? randomInt(2 ** 31);
    const engine = ctx.batcher.asEngine(f.seed !== null && sampling.temperature > 0);
    let episode: Episode;
    try {
      [episode] = await this.task.answer(engine, [question], this.policies, sampling, seed) as [Episode];
    } catch (err) {
      const message = (err as Error).message;
      if (/context/.test(message)) throw new ApiError(400, `the workflow's prompt does not fit the model's context of ${ctx.info.contextLength} tokens: ${message}`, 'invalid_request_error', 'messages', 'context_length_exceeded');
      throw err;
    }
    const answer = this.answerOf(episode);
    const content = answer?.text ?? '';
    const finish = answer && (answer.stopReason === 'max_tokens' || answer.stopReason === 'context_full') ? 'length' : 'stop';
    const transcript: TeamTurn[] = episode.actions.map((a) => ({
      agent: a.agent, role: this.roles.get(a.agent) ?? '', step: a.step, model: a.policy === 'base' ? 'base' : a.agent,
      content: a.text, finish_reason: a.stopReason === 'max_tokens' || a.stopReason === 'context_full' ? 'length' : 'stop', tokens: a.actionTokens.length,
    }));
    const marft = {
      // The request's seed; null when it gave none (the server's seeds then, shared with other requests).
      workflow: this.task.workflow.name, seed: f.seed, answer_agent: answer?.agent ?? null, transcript,
      feedback: episode.steps.filter((s) => s.feedback !== undefined).map((s) => ({ step: s.t, feedback: s.feedback })),
    };
    const promptTokens = episode.actions.reduce((s, a) => s + a.promptTokens.length, 0);
    const completionTokens = episode.actions.reduce((s, a) => s + a.actionTokens.length, 0);
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
    const id = ctx.nextId('chatcmpl');
    const created = Math.floor(Date.now() / 1000);
    if (!f.stream) {
      sendJson(res, 200, { id, object: 'chat.completion', created, model: model.id, choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: finish }], usage, marft });
      return;
    }
    const stream = new SseStream(res);
    const chunk = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ id, object: 'chat.completion.chunk', created, model: model.id, choices: [choice], ...extra });
    stream.send(chunk({ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }));
    for (const piece of textPieces(answer?.actionTokens ?? [], ctx.tokenizer, content)) stream.send(chunk({ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }));
    stream.send(chunk({ index: 0, delta: {}, logprobs: null, finish_reason: finish }, { marft }));
    if (f.includeUsage) stream.send({ id, object: 'chat.completion.chunk', created, model: model.id, choices: [], usage });
    stream.done();
  }
}

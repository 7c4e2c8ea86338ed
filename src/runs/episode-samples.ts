// An Episode (src/workflow/trajectory.ts) as a line of the samples format (./samples.ts): what the
// agents said, turn by turn, in the shapes `marft show` and the dashboard read. The trainer's own
// per-token quantities (advantages, teacher gaps, ratios, critic values) belong to a training step;
// an episode alone has none of them, so they are null here and a caller that has them sets them.
import type { Tokenizer } from '../tokenizer/types.ts';
import type { ActionRecord, Episode } from '../workflow/trajectory.ts';
import { tokenPieces, type SampleAction, type SampleMessage, type SampleRecord, type SampleTurn } from './samples.ts';

export interface EpisodeView {
  /** Decodes an action's tokens into per-token text; absent: the tokens are shown as ids. */
  tokenizer?: Pick<Tokenizer, 'decode'> | undefined;
  /** Each agent's role; absent: the agent's name. */
  roles?: Readonly<Record<string, string>> | undefined;
  /** The problem as the agents read it; absent: "". */
  prompt?: string | undefined;
  /** The sampling group; absent: the episode's own (Episode.group), else null. */
  group?: string | null;
  /** A verdict per turn (null: none); absent: none. */
  verdict?: (turn: number) => string | null;
  /** Added to the episode's info. */
  info?: Record<string, unknown>;
}

/**
 * One piece per token that joins to the action's text: decoded by the tokenizer when there is one;
 * otherwise the ids as the toy tasks write their text ("3 1 4"), or, for any other text, the whole
 * text on the first token.
 */
export function actionPieces(a: Pick<ActionRecord, 'actionTokens' | 'text'>, tokenizer?: Pick<Tokenizer, 'decode'>): string[] {
  const tokens = a.actionTokens;
  if (tokenizer) return tokenPieces(tokenizer, tokens);
  if (a.text === tokens.join(' ')) return tokens.map((id, i) => (i === 0 ? String(id) : ` ${id}`));
  return tokens.map((_, i) => (i === 0 ? a.text : ''));
}

const CHAT_ROLES = new Set(['system', 'user', 'assistant']);

/** The chat messages of action i when the runtime kept them (episode.info.observations, keepMessages). */
function messagesOf(episode: Episode, i: number): SampleMessage[] | null {
  const observations = episode.info.observations;
  if (!Array.isArray(observations) || observations.length !== episode.actions.length) return null;
  const messages = observations[i];
  if (!Array.isArray(messages)) return null;
  return messages
    .filter((m): m is { role: string; content: string } => typeof m === 'object' && m !== null && CHAT_ROLES.has(m.role) && typeof m.content === 'string')
    .map((m) => ({ role: m.role as SampleMessage['role'], content: m.content }));
}

/** The samples record of one episode (every action of the executed path, every turn). */
export function episodeSample(episode: Episode, view: EpisodeView = {}): SampleRecord {
  const turns: SampleTurn[] = episode.steps.map((s) => ({ t: s.t, teamReward: s.teamReward, done: s.done, feedback: s.feedback ?? null, verdict: view.verdict?.(s.t) ?? null }));
  const actions: SampleAction[] = episode.actions.map((a, i) => ({
    agent: a.agent,
    role: view.roles?.[a.agent] ?? a.agent,
    t: a.step,
    policy: a.policy,
    messages: messagesOf(episode, i),
    text: a.text,
    tokens: [...a.actionTokens],
    pieces: actionPieces(a, view.tokenizer),
    logprobs: [...a.behaviourLogprobs],
    // The reward a step placed on it is the trainer's (src/train/samples.ts); an episode alone carries its raw local reward.
    reward: a.localReward ?? 0,
    value: null,
    advantages: null,
    teacherGap: null,
    ratio: null,
  }));
  // The observations are the actions' messages above; the rest of info is the environment's.
  const { observations: _observations, ...info } = episode.info;
  return {
    problem: episode.problemId,
    prompt: view.prompt ?? '',
    group: view.group !== undefined ? view.group : (episode.group ?? null),
    outcome: episode.outcome,
    turns,
    actions,
    info: { ...info, ...view.info },
  };
}

// The models a server lists (/v1/models) and answers for: "base" (the frozen base model, no adapter),
// one per trained agent under the agent's name (its adapter from the checkpoint; with shared parameters
// several agents name the same adapter), and, with --team, "team" (the whole workflow as one model:
// src/serve/team.ts).
import type { PolicyTarget } from '../engine/types.ts';

export const BASE_MODEL = 'base';
export const TEAM_MODEL = 'team';

export interface ServedModel {
  id: string;
  kind: 'base' | 'agent' | 'team';
  /** What samples for it (the team model samples through the agents'). */
  target: PolicyTarget;
  /** The agent's adapter in the checkpoint (agents only). */
  adapter?: string;
}

/** The model table of a checkpoint whose agents act with `policies` (agent → adapter), in the task's agent order. */
export function servedModels(policies: Readonly<Record<string, string>>, team: boolean): ServedModel[] {
  const models: ServedModel[] = [{ id: BASE_MODEL, kind: 'base', target: { kind: 'base' } }];
  for (const [agent, adapter] of Object.entries(policies)) {
    if (agent === BASE_MODEL || agent === TEAM_MODEL) throw new Error(`an agent is named '${agent}', the name of a served model of its own; rename the agent to serve this run`);
    models.push({ id: agent, kind: 'agent', target: adapter === BASE_MODEL ? { kind: 'base' } : { kind: 'adapter', name: adapter }, adapter });
  }
  if (team) models.push({ id: TEAM_MODEL, kind: 'team', target: { kind: 'base' } });
  return models;
}

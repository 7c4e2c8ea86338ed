// The sampler abstraction between the runtime and whatever produces actions (engine or script).
import type { PolicyTarget, SampleParams, SampleResult, SamplingEngine } from '../engine/types.ts';
import { BASE_POLICY } from './agent.ts';

export interface SampleRequest {
  /** Adapter name, or "base". */
  policy: string;
  /** Prompt token ids (the rendered observation, generation prompt included). */
  prompt: number[];
  /** Who asks (for scripted samplers and logs; engines ignore it). */
  meta?: { agent: string; t: number; problemId: string; episode: number };
}

export interface ActionSampler {
  /** One result per request, in request order. */
  sample(requests: SampleRequest[], params: SampleParams): Promise<SampleResult[]>;
}

export function policyTarget(policy: string): PolicyTarget {
  return policy === BASE_POLICY ? { kind: 'base' } : { kind: 'adapter', name: policy };
}

/** Groups requests by policy and calls engine.sample once per policy (in first-appearance order). */
export function engineSampler(engine: SamplingEngine): ActionSampler {
  return {
    async sample(requests, params) {
      const byPolicy = new Map<string, number[]>();
      requests.forEach((r, k) => {
        const group = byPolicy.get(r.policy);
        if (group) group.push(k);
        else byPolicy.set(r.policy, [k]);
      });
      const results: SampleResult[] = new Array(requests.length);
      for (const [policy, indices] of byPolicy) {
        const out = await engine.sample(policyTarget(policy), indices.map((k) => requests[k]!.prompt), params);
        if (out.length !== indices.length) throw new Error(`engine.sample returned ${out.length} results for ${indices.length} prompts`);
        indices.forEach((k, m) => (results[k] = out[m]!));
      }
      return results;
    },
  };
}

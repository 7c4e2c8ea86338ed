// Evaluation protocols (spec section 7) as named settings of the `eval` section: `eval.protocol`
// names the papers' decoding, and the protocol supplies the eval keys the configuration leaves out.
//   marft:   every item decoded once under each of 5 stochastic seeds at temperature 0.6 (no
//            nucleus or top-k truncation is named, so none is applied).
//   mas-opd: temperature 0.6, top-p 0.95, top-k 20; 5 decoding seeds.
//   custom:  nothing supplied; the eval keys as written (their schema defaults otherwise).
// A decoding key written with another value than the named protocol's is refused in one line: a
// row that says `protocol: mas-opd` and decodes at top-p 1 is not the paper's protocol, and mixing
// such rows into one table is what the name is there to prevent. eval.seeds (n, the largest k of
// pass@k) and eval.problems stay free: the protocol gives seeds its paper's 5 only as the default.
import { ConfigError } from './schema-dsl.ts';

export interface EvalProtocol {
  /** Fixed decoding: a configuration may not write another value. */
  decoding: { temperature: number; topP: number; topK: number };
  /** The default of eval.seeds under this protocol. */
  seeds: number;
  /** One line for docs and errors. */
  description: string;
}

export const EVAL_PROTOCOLS = {
  marft: { decoding: { temperature: 0.6, topP: 1, topK: 0 }, seeds: 5, description: 'MARFT: 5 decoding seeds at temperature 0.6, no top-p/top-k truncation' },
  'mas-opd': { decoding: { temperature: 0.6, topP: 0.95, topK: 20 }, seeds: 5, description: 'MAS-OPD: temperature 0.6, top-p 0.95, top-k 20, 5 decoding seeds' },
} as const satisfies Record<string, EvalProtocol>;

export type EvalProtocolName = keyof typeof EVAL_PROTOCOLS | 'custom';
export const EVAL_PROTOCOL_NAMES = ['custom', ...Object.keys(EVAL_PROTOCOLS)] as EvalProtocolName[];

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `raw` (a configuration before validation) with the named protocol's eval keys filled in where
 * absent; throws a ConfigError naming the key when a decoding key contradicts the protocol. Anything
 * malformed (eval not a mapping, an unknown protocol name) is left for the schema to report.
 */
export function applyEvalProtocol(raw: unknown): unknown {
  if (!isPlainObject(raw) || !isPlainObject(raw.eval)) return raw;
  const name = raw.eval.protocol;
  if (typeof name !== 'string' || !Object.hasOwn(EVAL_PROTOCOLS, name)) return raw;
  const protocol: EvalProtocol = EVAL_PROTOCOLS[name as keyof typeof EVAL_PROTOCOLS];
  const evalSection: Record<string, unknown> = { ...raw.eval };
  for (const [key, value] of Object.entries(protocol.decoding)) {
    const given = evalSection[key];
    if (given === undefined) evalSection[key] = value;
    else if (typeof given === 'number' && given !== value) {
      throw new ConfigError(`eval.${key}: got ${JSON.stringify(given)}, but eval.protocol ${name} decodes at ${key} ${value} (${protocol.description}); remove eval.${key}, or set eval.protocol: custom`);
    }
  }
  if (evalSection.seeds === undefined) evalSection.seeds = protocol.seeds;
  return { ...raw, eval: evalSection };
}

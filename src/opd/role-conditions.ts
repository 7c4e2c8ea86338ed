// Role conditions r_i of the role-conditioned teacher and the contrast map κ of RAS (spec section 5;
// MAS-OPD paper §3.1–3.2 and App. F.3). All of them live in this one table so they can be reviewed
// side by side: every condition has the same two-paragraph structure and about the same length.
//   P1: "You are the <Role> in a collaborative <domain> system, working together with a <Teammate>."
//       and the role's primary responsibility;
//   P2: what the role centres on, and which of the teammate's responsibilities it must not take over.
// Only the Coder's text survives in the paper; the others are written here in the same structure.
// Users replace them with a JSON file (opd.roleConditions, see loadRoleConditions).
import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/schema-dsl.ts';

export interface RoleCondition {
  /** The two paragraphs, in order. */
  paragraphs: [string, string];
}

export interface RoleConditionTable {
  /** By role name as the workflow's agents carry it (AgentOutput.role, e.g. "Tool-User"). */
  conditions: Record<string, RoleCondition>;
  /** κ: the contrasting role of each role, defined on role types (several agents of a role share it). */
  contrast: Record<string, string>;
}

export const DEFAULT_ROLE_CONDITIONS: RoleConditionTable = {
  conditions: {
    Coder: {
      paragraphs: [
        'You are the Coder in a collaborative code-generation system, working together with a Tester. Your primary responsibility is to write a complete, correct program that solves the given problem, reading from standard input and writing to standard output.',
        "Your role is centered on the solution itself: its algorithm, its edge cases and its exact output format, revised when the evidence shows a real fault in it. You should not take over the Tester's primary responsibility of designing test cases and declaring their expected outputs.",
      ],
    },
    Tester: {
      paragraphs: [
        'You are the Tester in a collaborative code-generation system, working together with a Coder. Your primary responsibility is to write a valid test case, an input and the exact output that a correct program prints for it, that checks the solution against the problem statement.',
        "Your role is centered on the specification: which inputs are legal, which cases are hard, and what the right output must be, revised when your declared output is wrong. You should not take over the Coder's primary responsibility of writing or fixing the program that solves the problem.",
      ],
    },
    Reasoner: {
      paragraphs: [
        'You are the Reasoner in a collaborative mathematical problem-solving system, working together with a Tool-User. Your primary responsibility is to solve the problem by careful step-by-step reasoning in words and to state the final answer after the marker ####.',
        "Your role is centered on the derivation: the steps, the order of operations and the final value, revised when the evidence shows an error in your reasoning. You should not take over the Tool-User's primary responsibility of writing and running a program that computes the answer.",
      ],
    },
    'Tool-User': {
      paragraphs: [
        'You are the Tool-User in a collaborative mathematical problem-solving system, working together with a Reasoner. Your primary responsibility is to write a short Python program that computes the answer to the problem and prints only that final answer.',
        "Your role is centered on the computation: a program that encodes the problem faithfully and prints the right value, revised when the evidence shows an error in it. You should not take over the Reasoner's primary responsibility of deriving the answer by reasoning in words.",
      ],
    },
    Planner: {
      paragraphs: [
        'You are the Planner in a collaborative problem-solving system, working together with a Solver. Your primary responsibility is to break the problem into a short, correct plan of steps that leads to its answer, without carrying the plan out yourself.',
        "Your role is centered on the plan: which steps are needed, in which order, and what each one must produce, revised when the plan is flawed. You should not take over the Solver's primary responsibility of carrying out the steps and stating the final answer.",
      ],
    },
    Solver: {
      paragraphs: [
        "You are the Solver in a collaborative problem-solving system, working together with a Planner. Your primary responsibility is to carry out the Planner's steps faithfully and exactly, and to state the final answer that those steps lead to.",
        "Your role is centered on execution: exact intermediate values, the arithmetic of every step and the final answer in the required format. You should not take over the Planner's primary responsibility of deciding which steps the solution needs and in which order.",
      ],
    },
    Verifier: {
      paragraphs: [
        "You are the Verifier in a collaborative problem-solving system, working together with a Solver. Your primary responsibility is to check the Solver's solution step by step and to say clearly whether it is correct, naming the first error you find.",
        "Your role is centered on checking: every step, every value and the final answer, judged against the problem rather than against the Solver's confidence. You should not take over the Solver's primary responsibility of producing the solution and its final answer.",
      ],
    },
    Reflector: {
      paragraphs: [
        "You are the Reflector in a collaborative problem-solving system, working together with a Verifier. Your primary responsibility is to turn the Verifier's findings into a corrected solution and to state the final answer that the corrected solution supports.",
        "Your role is centered on revision: keeping what was verified, repairing what was found wrong and stating the final answer clearly. You should not take over the Verifier's primary responsibility of checking the solution and locating its errors.",
      ],
    },
  },
  contrast: {
    Coder: 'Tester',
    Tester: 'Coder',
    Reasoner: 'Tool-User',
    'Tool-User': 'Reasoner',
    Planner: 'Solver',
    Solver: 'Planner',
    Verifier: 'Solver',
    Reflector: 'Verifier',
  },
};

/** The condition as it enters the teacher's context: the two paragraphs separated by a blank line. */
export function conditionText(table: RoleConditionTable, role: string): string {
  const c = table.conditions[role];
  if (!c) throw new ConfigError(`no role condition for role '${role}' (roles with one: ${Object.keys(table.conditions).join(', ')})`);
  return `${c.paragraphs[0]}\n\n${c.paragraphs[1]}`;
}

/** κ(role): the role whose condition scores the contrasting RAS pass. */
export function contrastRole(table: RoleConditionTable, role: string): string {
  const other = table.contrast[role];
  if (!other) throw new ConfigError(`no contrasting role κ(${role}) (set opd.roleConditions to a file with "contrast": {"${role}": "<role>"})`);
  if (!table.conditions[other]) throw new ConfigError(`κ(${role}) = '${other}' has no role condition`);
  return other;
}

/**
 * Reads a user's table: JSON {"conditions": {"<Role>": ["<paragraph 1>", "<paragraph 2>"]}, "contrast": {"<Role>": "<Role>"}}.
 * Roles it names replace the defaults; roles it leaves out keep them.
 */
export function loadRoleConditions(file: string, base: RoleConditionTable = DEFAULT_ROLE_CONDITIONS): RoleConditionTable {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(`opd.roleConditions: cannot read ${file} as JSON (${(e as Error).message.split('\n')[0]})`);
  }
  return mergeRoleConditions(raw, base, file);
}

export function mergeRoleConditions(raw: unknown, base: RoleConditionTable, source = 'role conditions'): RoleConditionTable {
  const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isRecord(raw)) throw new ConfigError(`${source}: expected an object with "conditions" and/or "contrast"`);
  for (const key of Object.keys(raw)) if (key !== 'conditions' && key !== 'contrast') throw new ConfigError(`${source}: unknown key '${key}' (conditions, contrast)`);
  const out: RoleConditionTable = { conditions: { ...base.conditions }, contrast: { ...base.contrast } };
  if (raw.conditions !== undefined) {
    if (!isRecord(raw.conditions)) throw new ConfigError(`${source}: "conditions" must map role names to two paragraphs`);
    for (const [role, paragraphs] of Object.entries(raw.conditions)) {
      if (!Array.isArray(paragraphs) || paragraphs.length !== 2 || !paragraphs.every((p) => typeof p === 'string' && p.trim() !== '')) {
        throw new ConfigError(`${source}: conditions.${role} must be a list of two non-empty paragraphs`);
      }
      out.conditions[role] = { paragraphs: [paragraphs[0] as string, paragraphs[1] as string] };
    }
  }
  if (raw.contrast !== undefined) {
    if (!isRecord(raw.contrast)) throw new ConfigError(`${source}: "contrast" must map role names to role names`);
    for (const [role, other] of Object.entries(raw.contrast)) {
      if (typeof other !== 'string') throw new ConfigError(`${source}: contrast.${role} must be a role name`);
      out.contrast[role] = other;
    }
  }
  return out;
}

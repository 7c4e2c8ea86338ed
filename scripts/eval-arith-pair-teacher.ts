// The arith-pair task's teacher playing every role of its system itself (the MAS-OPD paper's teacher
// row, beside the students it distils into): each agent's context is the student's with the role
// line replaced by the role's condition, without verdicts (src/opd/teacher-team.ts), scored on the
// configuration's held-out problems at its evaluation protocol with the same decoding seeds as
// `marft eval` scores the students (src/train/evaluate.ts).
//
//   node --import tsx scripts/eval-arith-pair-teacher.ts CONFIG [--set KEY=VALUE ...]
//
// CONFIG: an arith-pair configuration (e.g. examples/experiments/cpu-study/arith-pair.yaml); the
// teacher comes from its task.options.baseCache (pretrained there when absent). Prints one JSON line.
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/load.ts';
import type { MathProblem } from '../src/env/datasets/types.ts';
import { MathEnv } from '../src/env/math-env.ts';
import { distillationRollout } from '../src/opd/rollout.ts';
import { teacherTeam } from '../src/opd/teacher-team.ts';
import { arithPair } from '../src/tasks/arith-pair/arith-pair-task.ts';
import { cachedRunner } from '../src/tasks/arith-pair/cached-runner.ts';
import type { WorkflowTask } from '../src/tasks/workflow-task.ts';
import { evaluatePolicies } from '../src/train/evaluate.ts';
import type { Task } from '../src/train/task.ts';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { set: { type: 'string', multiple: true } } });
const [file, ...extra] = positionals;
if (!file || extra.length > 0) {
  console.error('usage: node --import tsx scripts/eval-arith-pair-teacher.ts CONFIG [--set KEY=VALUE ...]');
  process.exit(2);
}
const config = await loadConfig(file, values.set ?? []);
if (config.task.name !== 'arith-pair') {
  console.error(`${file}: task.name is '${config.task.name}'; this script scores the arith-pair task's teacher`);
  process.exit(2);
}
const started = performance.now();
const bundle = arithPair(config.task.options);
const task = bundle.task as WorkflowTask;
const teacher = await bundle.buildTeacher!(config.seed);
try {
  const source = task.distillation();
  const team = teacherTeam(source.workflow);
  const runProgram = cachedRunner();
  // The task's own environment settings: the team's answer is the (last) Reasoner's.
  const asTeam: Task = {
    agents: task.agents,
    rollout: async () => {
      throw new Error('the teacher is only evaluated here');
    },
    evaluate: async (engine, req) => {
      const problems = req.problems > 0 ? task.problems.heldOut.slice(0, req.problems) : task.problems.heldOut;
      return distillationRollout(engine, source.tokenizer, team, problems.map((p) => new MathEnv(p as MathProblem, { runProgram, answerRole: 'Reasoner' })), req.sampling, req.seed);
    },
  };
  const r = await evaluatePolicies(teacher, asTeam, config, {});
  console.log(JSON.stringify({ system: `teacher playing ${task.agents.join(', ')}`, score: r.score, perSeed: r.perSeed, passAtK: r.passAtK, problems: r.problems, protocol: config.eval.protocol, seconds: Math.round((performance.now() - started) / 1000) }));
} finally {
  await teacher.dispose();
}

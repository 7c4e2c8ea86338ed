// The task registry: a task registered with buildsTeacher is reported as building its own MAS-OPD
// teacher (what marft experiment's folder checks ask before any task is built); others are not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { registerTask, registeredTasks, taskBuildsTeacher, taskFactory } from '../../src/run/task-registry.ts';
import { bandit } from '../../src/tasks/toy/bandit.ts';

test('buildsTeacher: arith-pair yes, the others no; registerTask keeps the flag and refuses a taken name', () => {
  assert.equal(taskBuildsTeacher('arith-pair'), true);
  for (const name of registeredTasks().filter((n) => n !== 'arith-pair')) assert.equal(taskBuildsTeacher(name), false, name);
  assert.equal(taskBuildsTeacher('no-such-task'), false);
  registerTask('test-teacher-task', bandit, { buildsTeacher: true });
  registerTask('test-plain-task', bandit);
  assert.equal(taskBuildsTeacher('test-teacher-task'), true);
  assert.equal(taskBuildsTeacher('test-plain-task'), false);
  assert.equal(taskFactory('test-teacher-task'), bandit);
  assert.throws(() => registerTask('bandit', bandit), /task 'bandit' is already registered/);
});

// Registers every task of src/tasks with the trainer's registry (src/rl/task.ts): import this module
// once (the trainer's run setup and the CLI do) and configurations can name the tasks.
//
//   workflow   a dataset + a built-in Flex-MG workflow + the maths/code environment (workflow-task.ts)
import { registerTask } from '../rl/task.ts';
import { workflowTask } from './workflow-task.ts';

export { createWorkflowTask, parseWorkflowTaskOptions, problemSeed, taskTokenizer, workflowTask, WorkflowTask, WORKFLOW_TASK_OPTIONS, type WorkflowTaskDeps, type WorkflowTaskOptions } from './workflow-task.ts';
export { DATASET_ALIASES, loadProblemSets, problemStatement, stepProblems, type ProblemSets } from './problem-source.ts';
export { WORKFLOW_NAMES, buildWorkflow, type WorkflowName } from './workflow-catalog.ts';
export { DEFAULT_TINY_SHAPE, taskCharTokenizer, tinyEngine, tinyModelConfig, type TinyModelShape } from './tiny-model.ts';
export { TaskOptionError } from './options.ts';

registerTask('workflow', workflowTask);

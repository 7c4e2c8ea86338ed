// The workflow task's public entry: a dataset + a built-in Flex-MG workflow + the maths/code
// environment (workflow-task.ts), its problem sources, workflows and tiny model. Configurations name
// it 'workflow' through src/run/task-registry.ts.

export { createWorkflowTask, parseWorkflowTaskOptions, problemSeed, taskTokenizer, workflowTask, WorkflowTask, WORKFLOW_TASK_OPTIONS, type WorkflowTaskDeps, type WorkflowTaskOptions } from './workflow-task.ts';
export { DATASET_ALIASES, loadProblemSets, problemStatement, stepProblems, type ProblemSets } from './problem-source.ts';
export { WORKFLOW_NAMES, buildWorkflow, type WorkflowName } from './workflow-catalog.ts';
export { DEFAULT_TINY_SHAPE, taskCharTokenizer, tinyEngine, tinyModelConfig, type TinyModelShape } from './tiny-model.ts';
export { TaskOptionError } from './options.ts';

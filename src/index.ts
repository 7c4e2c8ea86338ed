// marft as a library: what `import { ... } from 'marft'` offers (docs/library.md). The package's
// "exports" map it to dist/index.js and dist/index.d.ts (built by scripts/build-dist.mjs); deeper
// modules are not part of the public surface and may move. The groups follow a run's path: a
// configuration, the task and engine it names, training and evaluation, the run folder's records.

// The command line, callable from code: `await runCli(['train', 'cfg.yaml', '--run-dir', 'runs/a'])` returns the exit code.
export { main as runCli, commandNames, marftVersion } from './cli/main.ts';

// Configurations: files, objects, the schema and its JSON Schema.
export { loadConfig, parseConfig } from './config/load.ts';
export { configSchema, type MarftConfig } from './config/schema.ts';
export { ConfigError, defaults, docRows, validate } from './config/schema-dsl.ts';
export { configJsonSchema } from './config/json-schema.ts';
export { applyOverrides, parseOverride } from './config/overrides.ts';
export { ALGORITHMS, LOG_TARGETS, type AlgorithmName, type LogTarget } from './config/choices.ts';

// From a configuration to a task and an engine; tasks of one's own.
export { buildEngine, buildRun, buildSamplingModel, buildTask, type RunObjects } from './run/setup.ts';
export { registerTask, registeredTasks } from './run/task-registry.ts';
export { openTeacher } from './run/teacher.ts';
export type { EvalRequest, RolloutRequest, Sampling, Task, TaskBundle, TaskContext, TaskFactory } from './train/task.ts';
export { createWorkflowTask, WorkflowTask, type WorkflowTaskDeps, type WorkflowTaskOptions } from './tasks/index.ts';

// Engines.
export { createEngine, loadEngine, loadTorchEngine, openEngine, openSamplingEngine, ALL_LINEAR_MODULES, ENGINE_KINDS, SERVED_ENGINE_KINDS } from './engine/index.ts';
export type { Engine, EngineSpec, LoraConfig, ModelConfig, ModelInfo, SampleParams, SampleResult, SamplingEngine, SamplingEngineSpec, TrainingEngine } from './engine/index.ts';
export { CharTokenizer, HfTokenizer, loadTokenizer, type ChatMessage, type Tokenizer } from './tokenizer/index.ts';

// Training and evaluation.
export { createTrainables, trainLoop, type LoopOptions, type TrainOptions, type TrainResult } from './train/loop.ts';
export { train } from './run/train.ts';
export { planFor } from './algorithms/check.ts';
export { basePolicies, evaluatePolicies, type EvalResult } from './train/evaluate.ts';
export type { Algorithm, AlgorithmPlan } from './train/types.ts';
export { ALGORITHM_REGISTRY } from './algorithms/index.ts';

// The run folder: metrics, checkpoints, held-out scores, trackers.
export { decodeMetrics, encodeMetrics, isTimingKey, MetricsLog, type StepMetrics } from './runs/metrics-log.ts';
export { latestCheckpoint, loadCheckpoint, readCheckpointState, saveCheckpoint, type CheckpointState } from './runs/checkpoint.ts';
export { readEvaluations, type EvaluationRecord, type RecordedEvaluation } from './runs/evaluation-record.ts';
export { allOf, ConsoleTracker, CsvTracker, openTrackers, TensorBoardTracker, type EvaluationPoint, type Tracker, type TrackerContext } from './runs/trackers/index.ts';

// Flex-MG workflows (agents, graphs, rollouts, the built-in pairs and pipelines), as one namespace.
export * as workflow from './workflow/index.ts';

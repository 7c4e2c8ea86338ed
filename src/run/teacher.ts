// The teacher of a MAS-OPD run (algorithm: mas-opd): opened from teacher.* through openSamplingEngine
// (src/engine/open.ts; it only scores, so a served model will do), and checked against the students'
// tokenizer before any step runs: the teacher force-decodes the students' token ids, so a teacher
// that reads them as other text is refused with src/opd/tokenizer-match.ts's one-line error. A torch
// teacher takes the students' device, threads, processes and precision (model.*): both models share
// the machine. A served teacher (teacher.engine vllm: a server marft starts on teacher.path; openai:
// one already running at teacher.url) is probed with one scoring of a short fixed sequence, so a
// server that cannot score a given sequence (llama.cpp's llama-server has no prompt log-probs) is
// refused in one line before any step rather than at the first step's scoring.
import { checkModelFolder } from './model-folder.ts';
import type { MarftConfig } from '../config/schema.ts';
import { ConfigError } from '../config/schema-dsl.ts';
import { defaultVllmPython, openSamplingEngine, ServedModelChoiceError, type SamplingEngineSpec } from '../engine/index.ts';
import type { SamplingEngine } from '../engine/types.ts';
import { localTorchOptions, weightDtype } from './setup.ts';
import { distillationOf } from '../opd/distillable-task.ts';
import { assertSameTokenizer } from '../opd/tokenizer-match.ts';
import type { Task, TaskBundle } from '../train/task.ts';
import { loadTokenizer } from '../tokenizer/index.ts';
import type { Tokenizer } from '../tokenizer/types.ts';

function teacherSpec(config: MarftConfig, vocabSize: number): SamplingEngineSpec {
  const { teacher, model } = config;
  // Exhaustive (no default): an engine kind added to model.engine must be given its teacher here.
  switch (teacher.engine) {
    case 'tabular':
      return { kind: 'tabular', vocabSize };
    case 'embedded':
      return { kind: 'embedded', modelDir: teacher.path };
    case 'torch':
      return {
        kind: 'torch', modelDir: teacher.path,
        options: localTorchOptions(model),
      };
    case 'vllm':
      return { kind: 'vllm-serve', modelDir: teacher.path, server: { python: config.sampler.python || defaultVllmPython(), dtype: weightDtype(model) } };
    case 'openai':
      return { kind: 'openai', baseUrl: teacher.url, model: teacher.servedModel, modelDir: teacher.path };
  }
}

/** Where an opening failure comes from, for its one line: the engine's environment or server (its messages name the server's URL), else the folder. */
function failureKey(config: MarftConfig): string {
  const { engine } = config.teacher;
  return engine === 'embedded' || engine === 'tabular' ? 'teacher.path' : `teacher.engine: ${engine}`;
}

function teacherTokenizer(path: string): Tokenizer {
  try {
    return loadTokenizer(path);
  } catch (err) {
    throw new ConfigError(`teacher.path: ${path}: cannot read its tokenizer (${(err as Error).message.split('\n')[0]}); the teacher's folder must hold the tokenizer files it was trained with`);
  }
}

/** The tokens a served teacher is probed with: three ids every vocabulary has, the last two scored. */
export const TEACHER_PROBE = { tokens: [1, 2, 3], scoreFrom: 1 } as const;

/** One scoring, as every step will ask of it: a server without prompt log-probs fails here, in one line. */
async function probeScoring(engine: SamplingEngine, config: MarftConfig): Promise<void> {
  try {
    const [row] = await engine.score({ kind: 'base' }, [{ tokens: [...TEACHER_PROBE.tokens], scoreFrom: TEACHER_PROBE.scoreFrom }]);
    if (!row || row.length !== TEACHER_PROBE.tokens.length - TEACHER_PROBE.scoreFrom || !row.every(Number.isFinite)) throw new Error(`scoring ${TEACHER_PROBE.tokens.length - TEACHER_PROBE.scoreFrom} tokens returned ${row ? `[${[...row].join(', ')}]` : 'nothing'}`);
  } catch (err) {
    throw new ConfigError(`${failureKey(config)}: cannot be the teacher, which scores the students' tokens: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** The run's teacher, or undefined when the algorithm needs none. Throws a one-line ConfigError for a missing or mismatched teacher. */
export async function openTeacher(config: MarftConfig, task: Task, buildTeacher?: TaskBundle['buildTeacher']): Promise<SamplingEngine | undefined> {
  if (config.algorithm !== 'mas-opd') return undefined;
  const source = distillationOf(task);
  if (!source) throw new ConfigError(`algorithm: mas-opd trains the roles of a Flex-MG workflow; task '${config.task.name}' has none (use task 'workflow')`);
  const { teacher } = config;
  if (teacher.engine === 'tabular') return openSamplingEngine(teacherSpec(config, source.tokenizer.vocabSize));
  const path = teacher.path;
  // A task that makes its models on the spot makes its teacher too (TaskBundle.buildTeacher), with the students' tokenizer.
  if (!path && teacher.engine === 'embedded' && buildTeacher) return buildTeacher(config.seed);
  if (!path) throw new ConfigError(`teacher.path: algorithm mas-opd needs the teacher's Hugging Face model folder${teacher.engine === 'openai' ? ' (with teacher.engine openai: the served model\'s folder, for its tokenizer and config.json)' : ''}`);
  checkModelFolder(path, 'teacher.path');
  if (teacher.engine === 'openai' && !teacher.url) throw new ConfigError('teacher.url: teacher.engine openai needs the server\'s OpenAI API root, e.g. http://127.0.0.1:8000/v1');
  const tokenizer = teacherTokenizer(path);
  // The ids first (no model is loaded for a teacher that cannot be used), then the model's embeddings.
  assertSameTokenizer(source.tokenizer, tokenizer);
  let engine: SamplingEngine;
  try {
    engine = await openSamplingEngine(teacherSpec(config, source.tokenizer.vocabSize));
  } catch (err) {
    if (err instanceof ServedModelChoiceError) throw new ConfigError(`teacher.servedModel: ${err.message}`);
    throw new ConfigError(`${failureKey(config)}: ${(err as Error).message.split('\n')[0]}`);
  }
  try {
    assertSameTokenizer(source.tokenizer, tokenizer, engine.info.vocabSize);
    if (teacher.engine === 'openai' || teacher.engine === 'vllm') await probeScoring(engine, config);
  } catch (err) {
    await engine.dispose();
    throw err;
  }
  return engine;
}

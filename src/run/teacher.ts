// The teacher of a MAS-OPD run (algorithm: mas-opd): opened from teacher.path with teacher.engine
// through openEngine, like the students' model, and checked against the students' tokenizer before
// any step runs: the teacher force-decodes the students' token ids, so a teacher that reads them as
// other text is refused with src/opd/tokenizer-match.ts's one-line error. A torch teacher takes the
// students' device, threads, processes and precision (model.*): both models share the machine.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { MarftConfig } from '../config/schema.ts';
import { ConfigError } from '../config/schema-dsl.ts';
import { openEngine, type EngineSpec } from '../engine/index.ts';
import type { Engine } from '../engine/types.ts';
import { distillationOf } from '../opd/distillable-task.ts';
import { assertSameTokenizer } from '../opd/tokenizer-match.ts';
import type { Task } from '../rl/task.ts';
import { loadTokenizer } from '../tokenizer/index.ts';
import type { Tokenizer } from '../tokenizer/types.ts';

function teacherSpec(config: MarftConfig, vocabSize: number): EngineSpec {
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
        options: { device: model.device, nprocPerNode: model.processes, threads: model.threads, dtype: model.precision === 'bf16' ? 'bfloat16' : 'float32' },
      };
  }
}

function teacherTokenizer(path: string): Tokenizer {
  try {
    return loadTokenizer(path);
  } catch (err) {
    throw new ConfigError(`teacher.path: ${path}: cannot read its tokenizer (${(err as Error).message.split('\n')[0]}); the teacher's folder must hold the tokenizer files it was trained with`);
  }
}

/** The run's teacher, or undefined when the algorithm needs none. Throws a one-line ConfigError for a missing or mismatched teacher. */
export async function openTeacher(config: MarftConfig, task: Task): Promise<Engine | undefined> {
  if (config.algorithm !== 'mas-opd') return undefined;
  const source = distillationOf(task);
  if (!source) throw new ConfigError(`algorithm: mas-opd trains the roles of a Flex-MG workflow; task '${config.task.name}' has none (use task 'workflow')`);
  if (config.teacher.engine === 'tabular') return openEngine(teacherSpec(config, source.tokenizer.vocabSize));
  const path = config.teacher.path;
  if (!path) throw new ConfigError('teacher.path: algorithm mas-opd needs the teacher\'s Hugging Face model folder');
  if (!existsSync(join(path, 'config.json'))) throw new ConfigError(`teacher.path: ${path} holds no config.json (a Hugging Face model folder is expected)`);
  const tokenizer = teacherTokenizer(path);
  // The ids first (no model is loaded for a teacher that cannot be used), then the model's embeddings.
  assertSameTokenizer(source.tokenizer, tokenizer);
  let engine: Engine;
  try {
    engine = await openEngine(teacherSpec(config, source.tokenizer.vocabSize));
  } catch (err) {
    throw new ConfigError(`teacher.${config.teacher.engine === 'torch' ? 'engine: torch' : 'path'}: ${(err as Error).message.split('\n')[0]}`);
  }
  try {
    assertSameTokenizer(source.tokenizer, tokenizer, engine.info.vocabSize);
  } catch (err) {
    await engine.dispose();
    throw err;
  }
  return engine;
}

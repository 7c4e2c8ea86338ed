// The teacher force-decodes the students' own token ids, so both must read ids the same way (the
// paper's teacher and students share Qwen3's tokenizer). A teacher whose vocabulary differs is
// refused with a one-line error rather than scoring a response it reads as other text.
import { ConfigError } from '../config/schema-dsl.ts';
import type { Tokenizer } from '../tokenizer/types.ts';

/** The first id the two tokenizers decode differently, or null when they agree on every id. */
export function firstTokenizerDifference(student: Tokenizer, teacher: Tokenizer): string | null {
  if (student.vocabSize !== teacher.vocabSize) return `vocabulary sizes differ (students ${student.vocabSize}, teacher ${teacher.vocabSize})`;
  for (let id = 0; id < student.vocabSize; id++) {
    let a: string, b: string;
    try {
      a = student.decode([id]);
    } catch {
      a = '\u0000<undecodable>';
    }
    try {
      b = teacher.decode([id]);
    } catch {
      b = '\u0000<undecodable>';
    }
    if (a !== b) return `token id ${id} is ${JSON.stringify(a)} for the students and ${JSON.stringify(b)} for the teacher`;
  }
  const eos = (t: Tokenizer) => [...t.eosTokenIds].sort((x, y) => x - y).join(',');
  if (eos(student) !== eos(teacher)) return `end-of-sequence ids differ (students ${eos(student)}, teacher ${eos(teacher)})`;
  return null;
}

export function assertSameTokenizer(student: Tokenizer, teacher: Tokenizer, teacherModelVocab?: number): void {
  const diff = firstTokenizerDifference(student, teacher);
  if (diff) throw new ConfigError(`teacher: its tokenizer differs from the students' (${diff}); MAS-OPD needs a teacher that shares the students' tokenizer`);
  if (teacherModelVocab !== undefined && teacherModelVocab < student.vocabSize) {
    throw new ConfigError(`teacher: its model has ${teacherModelVocab} embeddings, fewer than the students' ${student.vocabSize} token ids`);
  }
}

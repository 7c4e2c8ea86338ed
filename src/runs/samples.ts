// The samples format (version 1): what a run shows of its episodes, one JSON line per episode in
// RUN/samples/step-<S>.jsonl (S: the step number, as in metrics.jsonl's `step` field). `marft show`
// and `marft dashboard` read it; docs/dashboard.md describes every key. `marft eval --output FILE`
// writes one line per problem (src/train/eval-records.ts) that holds one samples line per decoding
// seed under `episodes`; the reader below reads such a file as the episodes it holds.
//
// Bounded: at most `limit` episodes per step, the first ones in the order given (the step's batch
// order), so which episodes are kept is deterministic and, with rolloutsPerPrompt > 1, whole groups
// of one problem are kept together.
//
// Written whole and atomically (src/runs/atomic-write.ts): a kill leaves no half-written step file.
// A file written some other way may still end in a cut line; the reader drops it. Numbers that JSON
// cannot hold (a log-prob of -Infinity, a NaN advantage) are written as the strings "NaN",
// "Infinity", "-Infinity" in the numeric fields and read back as numbers, as in metrics.jsonl.
import { mkdir, readFile, readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-write.ts';
import { writing } from './write-errors.ts';
import type { Tokenizer } from '../tokenizer/types.ts';

export const SAMPLES_FORMAT = 'marft-samples';
export const SAMPLES_VERSION = 1;
export const SAMPLES_DIR = 'samples';
/** A line of `marft eval --output` (src/train/eval-records.ts): its `episodes` are samples lines. */
export const EVAL_RECORDS_FORMAT = 'marft-eval';
export const EVAL_RECORDS_VERSION = 1;

/** One environment step (turn) of an episode. */
export interface SampleTurn {
  t: number;
  /** The team reward of this turn as the environment reported it. */
  teamReward: number;
  /** True when the episode ended after this turn. */
  done: boolean;
  /** The environment's feedback shown to the agents at the next turn. */
  feedback: string | null;
  /** A verdict on the turn: MAS-OPD's PAC verdict, a verifier's judgement. */
  verdict: string | null;
}

export interface SampleMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** One agent action: its observation, its generated tokens and what the trainer made of each. */
export interface SampleAction {
  agent: string;
  /** The agent's role as the workflow names it (e.g. "Planner"); the agent's name when it has none. */
  role: string;
  /** The turn this action belongs to (SampleTurn.t). */
  t: number;
  /** The adapter that acted ("base": the frozen base model). */
  policy: string;
  /** The chat messages the agent saw (null: the task renders no chat, e.g. raw token ids). */
  messages: SampleMessage[] | null;
  text: string;
  tokens: number[];
  /** The decoded text of each token (tokenPieces below); joined, they give `text`. */
  pieces: string[];
  /** Per token: log-prob under the policy it was sampled from. */
  logprobs: number[];
  /** The reward credited to this action. */
  reward: number;
  /** The critic's value before this action (null: no critic). */
  value: number | null;
  /** Per token advantage used by the update (null: not computed, e.g. a critic warm-up step). */
  advantages: number[] | null;
  /** Per token MAS-OPD teacher gap A_OPD (teacher − student log-prob); null outside MAS-OPD. */
  teacherGap: number[] | null;
  /** Per token importance ratio π_θ/π_old (or the decoupled weight) at the update; null when not measured. */
  ratio: number[] | null;
}

/** One line of a samples file. */
export interface SampleEpisode {
  format: typeof SAMPLES_FORMAT;
  version: typeof SAMPLES_VERSION;
  /** The training step (metrics.jsonl's `step`); for an evaluation, the checkpoint's step or null. */
  step: number | null;
  /** The episode's index in its step's batch (or in the evaluation). */
  episode: number;
  /** The problem's id in its dataset. */
  problem: string;
  /** The problem as the agents read it. */
  prompt: string;
  /** The sampling group (every episode drawn for one problem in one step); null when not grouped. */
  group: string | null;
  /** The episode's outcome (the score an evaluation averages, e.g. 1 when the final answer is right). */
  outcome: number;
  turns: SampleTurn[];
  /** Every agent action in execution order (turn by turn, then the agents' order). */
  actions: SampleAction[];
  /** Environment details (extracted answers, test results, ...). */
  info: Record<string, unknown>;
}

/** What the writer is given: an episode without the keys the writer stamps. */
export type SampleRecord = Omit<SampleEpisode, 'format' | 'version' | 'step' | 'episode'>;

/** A samples file that cannot be read as version 1 (shown as one line). */
export class SamplesFormatError extends Error {
  override name = 'SamplesFormatError';
}

export const samplesDir = (runDir: string): string => join(runDir, SAMPLES_DIR);
export const stepSamplesFile = (runDir: string, step: number): string => join(samplesDir(runDir), `step-${step}.jsonl`);

const NON_FINITE: Record<string, number> = { NaN: Number.NaN, Infinity: Number.POSITIVE_INFINITY, '-Infinity': Number.NEGATIVE_INFINITY };
const numberOut = (x: number): number | string => (Number.isFinite(x) ? x : String(x));

/** One line of a samples file (newline included). */
export function encodeSample(e: SampleEpisode): string {
  return `${JSON.stringify(sampleJson(e))}\n`;
}

/** The JSON value of a samples line (non-finite numbers as strings), e.g. to nest it in another record. */
export function sampleJson(e: SampleEpisode): Record<string, unknown> {
  return {
    format: e.format,
    version: e.version,
    step: e.step,
    episode: e.episode,
    problem: e.problem,
    prompt: e.prompt,
    group: e.group,
    outcome: numberOut(e.outcome),
    turns: e.turns.map((t) => ({ t: t.t, teamReward: numberOut(t.teamReward), done: t.done, feedback: t.feedback, verdict: t.verdict })),
    actions: e.actions.map((a) => ({
      agent: a.agent,
      role: a.role,
      t: a.t,
      policy: a.policy,
      messages: a.messages,
      text: a.text,
      tokens: a.tokens,
      pieces: a.pieces,
      logprobs: a.logprobs.map(numberOut),
      reward: numberOut(a.reward),
      value: a.value === null ? null : numberOut(a.value),
      advantages: a.advantages?.map(numberOut) ?? null,
      teacherGap: a.teacherGap?.map(numberOut) ?? null,
      ratio: a.ratio?.map(numberOut) ?? null,
    })),
    info: e.info,
  };
}

/** The episodes a step keeps: the first `limit` (see the header). */
export function boundSamples<T>(records: readonly T[], limit: number): T[] {
  if (!Number.isInteger(limit) || limit < 0) throw new Error(`samples: the number of episodes kept per step must be a whole number ≥ 0, got ${limit}`);
  return records.slice(0, limit);
}

/** The lines of a samples file for these records, numbered 0, 1, ... in the order given. */
export function sampleLines(step: number | null, records: readonly SampleRecord[]): string {
  return records.map((r, episode) => encodeSample({ format: SAMPLES_FORMAT, version: SAMPLES_VERSION, step, episode, ...r })).join('');
}

/**
 * Writes RUN/samples/step-<step>.jsonl with the first `limit` of `records` (replacing the file a
 * resumed run may have left for that step). Returns the file's path.
 */
export async function writeStepSamples(runDir: string, step: number, records: readonly SampleRecord[], limit: number): Promise<string> {
  if (!Number.isInteger(step) || step < 0) throw new Error(`samples: step must be a whole number ≥ 0, got ${step}`);
  await writing(samplesDir(runDir), () => mkdir(samplesDir(runDir), { recursive: true }));
  const file = stepSamplesFile(runDir, step);
  await writeFileAtomic(file, sampleLines(step, boundSamples(records, limit)));
  return file;
}

/** Writes an evaluation's samples to `file` (every record given; step: the checkpoint's, or null). */
export async function writeSamplesFile(file: string, step: number | null, records: readonly SampleRecord[]): Promise<void> {
  await writeFileAtomic(file, sampleLines(step, records));
}

/**
 * The decoded text of each token, so that the pieces joined give decode(ids). A token that ends
 * in the middle of a multi-byte character (byte-level BPE) gets "" and the token completing the
 * character gets all of it. Decodes a window of at most WINDOW tokens at a time (with the token
 * before it as context, so a tokenizer that drops the first token's leading space keeps it).
 */
export function tokenPieces(tokenizer: Pick<Tokenizer, 'decode'>, ids: readonly number[]): string[] {
  const WINDOW = 64;
  const pieces: string[] = [];
  let start = 0; // first token of the current window
  let emitted = 0; // characters of the window's text already given to pieces
  let contextLength = 0; // characters of the context token's own text
  const windowText = (end: number): string => {
    const from = Math.max(0, start - 1);
    return tokenizer.decode(ids.slice(from, end)).slice(contextLength);
  };
  for (let i = 0; i < ids.length; i++) {
    const text = windowText(i + 1);
    // An incomplete character decodes to U+FFFD at the end: held back until it completes (or ends).
    const stable = i === ids.length - 1 ? text : text.replace(/\uFFFD+$/, '');
    pieces.push(stable.length >= emitted ? stable.slice(emitted) : '');
    emitted = Math.max(emitted, stable.length);
    if (i + 1 - start >= WINDOW && stable.length === text.length) {
      start = i + 1;
      emitted = 0;
      contextLength = tokenizer.decode([ids[i]!]).length;
    }
  }
  return pieces;
}

// ---- reading ----

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

function numberIn(x: unknown, where: string): number {
  if (typeof x === 'number') return x;
  if (typeof x === 'string' && x in NON_FINITE) return NON_FINITE[x]!;
  throw new SamplesFormatError(`${where} is not a number`);
}

function numbersIn(x: unknown, where: string): number[] {
  if (!Array.isArray(x)) throw new SamplesFormatError(`${where} is not a list of numbers`);
  return x.map((v, i) => numberIn(v, `${where}[${i}]`));
}

const orNull = <T>(x: unknown, read: (x: unknown) => T): T | null => (x === null || x === undefined ? null : read(x));

function stringIn(x: unknown, where: string): string {
  if (typeof x !== 'string') throw new SamplesFormatError(`${where} is not a string`);
  return x;
}

function parseLine(line: string, where: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new SamplesFormatError(`${where}: not a JSON line`);
  }
}

/** Parses one line; `where` names it in errors ("FILE:LINE"). */
export function decodeSample(line: string, where: string): SampleEpisode {
  return decodeSampleJson(parseLine(line, where), where);
}

/**
 * The episodes of one line: a samples line's one, or every samples line an evaluation record
 * (EVAL_RECORDS_FORMAT) holds under `episodes`.
 */
export function decodeSamplesLine(line: string, where: string): SampleEpisode[] {
  const raw = parseLine(line, where);
  if (!isObject(raw) || raw.format !== EVAL_RECORDS_FORMAT) return [decodeSampleJson(raw, where)];
  if (typeof raw.version !== 'number' || !Number.isInteger(raw.version) || raw.version < 1) throw new SamplesFormatError(`${where}: evaluation record version ${JSON.stringify(raw.version)} is not a format version`);
  if (raw.version > EVAL_RECORDS_VERSION)
    throw new SamplesFormatError(`${where}: evaluation record format version ${raw.version} is newer than this marft reads (up to ${EVAL_RECORDS_VERSION}); update marft to read it`);
  if (!Array.isArray(raw.episodes)) throw new SamplesFormatError(`${where}: episodes is not a list`);
  return raw.episodes.map((e, j) => decodeSampleJson(e, `${where}: episodes[${j}]`));
}

/** A samples line's JSON value (sampleJson's inverse); `where` names it in errors. */
export function decodeSampleJson(raw: unknown, where: string): SampleEpisode {
  if (!isObject(raw) || raw.format !== SAMPLES_FORMAT) throw new SamplesFormatError(`${where}: not a marft samples line (no "format": "${SAMPLES_FORMAT}")`);
  if (typeof raw.version !== 'number' || !Number.isInteger(raw.version) || raw.version < 1) throw new SamplesFormatError(`${where}: samples version ${JSON.stringify(raw.version)} is not a format version`);
  if (raw.version > SAMPLES_VERSION)
    throw new SamplesFormatError(`${where}: samples format version ${raw.version} is newer than this marft reads (up to ${SAMPLES_VERSION}); update marft to read it`);
  const at = (key: string) => `${where}: ${key}`;
  if (!Array.isArray(raw.turns)) throw new SamplesFormatError(`${at('turns')} is not a list`);
  if (!Array.isArray(raw.actions)) throw new SamplesFormatError(`${at('actions')} is not a list`);
  const turns = raw.turns.map((t: unknown, i): SampleTurn => {
    if (!isObject(t)) throw new SamplesFormatError(`${at(`turns[${i}]`)} is not an object`);
    return {
      t: numberIn(t.t, at(`turns[${i}].t`)),
      teamReward: numberIn(t.teamReward, at(`turns[${i}].teamReward`)),
      done: t.done === true,
      feedback: orNull(t.feedback, (x) => stringIn(x, at(`turns[${i}].feedback`))),
      verdict: orNull(t.verdict, (x) => stringIn(x, at(`turns[${i}].verdict`))),
    };
  });
  const actions = raw.actions.map((a: unknown, i): SampleAction => {
    const w = (key: string) => at(`actions[${i}].${key}`);
    if (!isObject(a)) throw new SamplesFormatError(`${at(`actions[${i}]`)} is not an object`);
    const tokens = numbersIn(a.tokens, w('tokens'));
    const pieces = Array.isArray(a.pieces) ? a.pieces.map((p, k) => stringIn(p, w(`pieces[${k}]`))) : [];
    const perToken = (key: string): number[] | null => {
      const xs = orNull(a[key], (x) => numbersIn(x, w(key)));
      if (xs && xs.length !== tokens.length) throw new SamplesFormatError(`${w(key)} has ${xs.length} entries for ${tokens.length} tokens`);
      return xs;
    };
    const logprobs = perToken('logprobs') ?? [];
    if (pieces.length !== tokens.length) throw new SamplesFormatError(`${w('pieces')} has ${pieces.length} entries for ${tokens.length} tokens`);
    return {
      agent: stringIn(a.agent, w('agent')),
      role: typeof a.role === 'string' ? a.role : stringIn(a.agent, w('agent')),
      t: numberIn(a.t, w('t')),
      policy: typeof a.policy === 'string' ? a.policy : '',
      messages: Array.isArray(a.messages) ? (a.messages as SampleMessage[]) : null,
      text: stringIn(a.text, w('text')),
      tokens,
      pieces,
      logprobs,
      reward: numberIn(a.reward, w('reward')),
      value: orNull(a.value, (x) => numberIn(x, w('value'))),
      advantages: perToken('advantages'),
      teacherGap: perToken('teacherGap'),
      ratio: perToken('ratio'),
    };
  });
  return {
    format: SAMPLES_FORMAT,
    version: SAMPLES_VERSION,
    step: orNull(raw.step, (x) => numberIn(x, at('step'))),
    episode: numberIn(raw.episode, at('episode')),
    problem: String(raw.problem ?? ''),
    prompt: typeof raw.prompt === 'string' ? raw.prompt : '',
    group: typeof raw.group === 'string' ? raw.group : null,
    outcome: numberIn(raw.outcome, at('outcome')),
    turns,
    actions,
    info: isObject(raw.info) ? raw.info : {},
  };
}

/** Parses a samples file's text: a last line without its newline that does not parse is dropped (a cut write). */
export function parseSamples(text: string, file: string): SampleEpisode[] {
  const parts = text.split('\n');
  const out: SampleEpisode[] = [];
  parts.forEach((line, i) => {
    if (!line.trim()) return;
    const last = i === parts.length - 1;
    if (last) {
      try {
        JSON.parse(line);
      } catch {
        return; // cut short while being written
      }
    }
    out.push(...decodeSamplesLine(line, `${file}:${i + 1}`));
  });
  return out;
}

export async function readSamplesFile(file: string): Promise<SampleEpisode[]> {
  return parseSamples(await readFile(file, 'utf8'), file);
}

/** The steps that have a samples file in RUN/samples, ascending. */
export async function sampleSteps(runDir: string): Promise<number[]> {
  const dir = samplesDir(runDir);
  if (!existsSync(dir)) return [];
  const steps: number[] = [];
  for (const name of await readdir(dir)) {
    const m = /^step-(\d+)\.jsonl$/.exec(name);
    if (m) steps.push(Number(m[1]));
  }
  return steps.sort((a, b) => a - b);
}

export async function readStepSamples(runDir: string, step: number): Promise<SampleEpisode[]> {
  return readSamplesFile(stepSamplesFile(runDir, step));
}

// A lookup-table engine: each policy adapter is a table of logit offsets indexed by the whole
// context (every prefix is its own state), each critic a table of values. It implements the full
// Engine interface exactly (sampling, log-probs, gradients, AdamW, state files), so the RL maths and
// the training loop can be checked on tiny Flex-MG tasks in milliseconds and independently of any
// network; it generalises across nothing, which is the point of a sanity check. Selected with
// `model.engine: tabular`.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  BackwardGrads, Engine, ForwardOptions, ForwardOutput, GraphHandle, LoraConfig, OptimParams, OptimResult,
  ModelInfo, PolicyTarget, SampleParams, SampleResult, ScoreOptions, ScoreRequest, Target, Trainable, ValueHeadSpec,
} from '../types.ts';
import { firstNonFinite, NonFiniteStateError } from '../non-finite.ts';
import { mulberry32, deriveSeed } from '../../core/rng.ts';

/** Parameters of one trainable: rows indexed by a context key, with gradients and Adam moments. */
class Table {
  readonly rows = new Map<string, Float64Array>();
  readonly grads = new Map<string, Float64Array>();
  readonly m = new Map<string, Float64Array>();
  readonly v = new Map<string, Float64Array>();
  t = 0;
  constructor(readonly width: number) {}

  row(key: string): Float64Array | undefined {
    return this.rows.get(key);
  }

  grad(key: string): Float64Array {
    let g = this.grads.get(key);
    if (!g) {
      if (!this.rows.has(key)) this.rows.set(key, new Float64Array(this.width));
      g = new Float64Array(this.width);
      this.grads.set(key, g);
    }
    return g;
  }
}

interface Graph {
  target: Target;
  batch: ScoreRequest[];
  temperature: number;
}

const keyOf = (tokens: number[], length: number): string => tokens.slice(0, length).join(',');

/** The largest finite float32: beyond it a table entry reaches the engine's outputs (Float32Array) as Infinity. */
const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * JSON has no NaN or Infinity (JSON.stringify writes null, which would load back as 0 and silently
 * change a resumed run), so a table with a non-finite entry is refused here: a diverged state is
 * never written. Policy and value rows are refused beyond `limit` too (FLOAT32_MAX for them: such a
 * value is already infinite for every caller). `what` names the table in the error.
 */
function tableToJson(rows: Map<string, Float64Array>, what: string, limit = Number.MAX_VALUE): Record<string, number[]> {
  for (const [k, r] of rows) if (firstNonFinite(r) >= 0 || r.some((x) => Math.abs(x) > limit)) throw new NonFiniteStateError(`${what} (row "${k}")`);
  return Object.fromEntries([...rows].map(([k, r]) => [k, Array.from(r)]));
}

function tableFromJson(json: Record<string, number[]>, file: string): Map<string, Float64Array> {
  return new Map(Object.entries(json).map(([k, r]) => {
    if (!Array.isArray(r) || !r.every((x) => typeof x === 'number')) throw new Error(`${file}: row "${k}" is not a list of numbers (the file is damaged)`);
    return [k, Float64Array.from(r)];
  }));
}

export class TabularEngine implements Engine {
  readonly info: ModelInfo;
  private readonly adapters = new Map<string, Table>();
  private readonly critics = new Map<string, Table>();
  private readonly graphs = new Map<number, Graph>();
  private nextGraph = 1;

  constructor(vocabSize: number, eosTokenIds: number[] = []) {
    // A table has no context limit of its own; 2^20 tokens stands for "longer than any episode".
    this.info = { vocabSize, contextLength: 1 << 20, bosTokenId: null, eosTokenIds };
  }

  async createAdapter(name: string, _lora: LoraConfig, _seed: number): Promise<void> {
    // Zero offsets: a fresh adapter is the base policy, as a LoRA adapter with B = 0 is.
    this.adapters.set(name, new Table(this.info.vocabSize));
  }
  async loadAdapter(name: string, dir: string): Promise<void> {
    this.adapters.set(name, await this.loadTable(join(dir, 'tabular_adapter.json'), this.info.vocabSize));
  }
  async saveAdapter(name: string, dir: string): Promise<void> {
    await this.saveTable(this.table({ kind: 'adapter', name }), join(dir, 'tabular_adapter.json'), dir, `the policy adapter '${name}'`);
  }
  async deleteAdapter(name: string): Promise<void> {
    this.adapters.delete(name);
  }
  async listAdapters(): Promise<string[]> {
    return [...this.adapters.keys()];
  }
  async createCritic(name: string, _spec: ValueHeadSpec, _seed: number): Promise<void> {
    this.critics.set(name, new Table(1));
  }
  async loadCritic(name: string, dir: string): Promise<void> {
    this.critics.set(name, await this.loadTable(join(dir, 'tabular_critic.json'), 1));
  }
  async saveCritic(name: string, dir: string): Promise<void> {
    await this.saveTable(this.table({ kind: 'critic', name }), join(dir, 'tabular_critic.json'), dir, `the critic '${name}'`);
  }
  async setBaseTrainable(trainable: boolean): Promise<void> {
    if (trainable) throw new Error('the tabular engine has a fixed uniform base');
  }
  async saveBase(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'tabular_base.json'), JSON.stringify({ vocabSize: this.info.vocabSize, eosTokenIds: this.info.eosTokenIds }));
  }

  /** Logits of the next token after `tokens[0..length)` under a target (base = all zeros). */
  private logits(target: Target, tokens: number[], length: number): Float64Array {
    const out = new Float64Array(this.info.vocabSize);
    if (target.kind === 'adapter') {
      const row = this.table(target).row(keyOf(tokens, length));
      if (row) out.set(row);
    }
    return out;
  }

  private probs(logits: Float64Array, temperature: number): Float64Array {
    const t = temperature > 0 ? temperature : 1;
    let max = -Infinity;
    for (const l of logits) max = Math.max(max, l / t);
    const p = new Float64Array(logits.length);
    let z = 0;
    for (let j = 0; j < logits.length; j++) z += p[j] = Math.exp(logits[j]! / t - max);
    for (let j = 0; j < p.length; j++) p[j]! /= z;
    return p;
  }

  async score(target: PolicyTarget, batch: ScoreRequest[], options: ScoreOptions = {}): Promise<Float32Array[]> {
    return (await this.forward(target, batch, { temperature: options.temperature })).logprobs!;
  }

  async sample(target: Target, prompts: number[][], params: SampleParams): Promise<SampleResult[]> {
    if (target.kind === 'critic') throw new Error('cannot sample from a critic');
    return prompts.map((prompt, b) => {
      const rng = mulberry32(deriveSeed(params.seed, b));
      const tokens: number[] = [];
      const logprobs: number[] = [];
      const seq = [...prompt];
      let stopReason: SampleResult['stopReason'] = 'max_tokens';
      while (tokens.length < params.maxNewTokens) {
        const p = this.probs(this.logits(target, seq, seq.length), params.temperature);
        const order = Array.from(p.keys()).sort((a, c) => p[c]! - p[a]! || a - c);
        let keep = params.temperature === 0 ? 1 : params.topK > 0 ? Math.min(params.topK, order.length) : order.length;
        if (params.topP < 1) {
          let mass = 0;
          for (let r = 0; r < keep; r++) if ((mass += p[order[r]!]!) >= params.topP) { keep = r + 1; break; }
        }
        const kept = order.slice(0, keep);
        let z = 0;
        for (const j of kept) z += p[j]!;
        let u = rng() * z;
        let token = kept[kept.length - 1]!;
        for (const j of kept) if ((u -= p[j]!) < 0) { token = j; break; }
        tokens.push(token);
        logprobs.push(Math.log(p[token]! / z));
        seq.push(token);
        if (params.stopTokenIds.includes(token)) { stopReason = 'stop_token'; break; }
      }
      return { tokens, logprobs, stopReason };
    });
  }

  async forward(target: Target, batch: ScoreRequest[], options: ForwardOptions = {}): Promise<ForwardOutput> {
    const temperature = options.temperature && options.temperature > 0 ? options.temperature : 1;
    const out: ForwardOutput = {};
    if (target.kind === 'critic') {
      const table = this.table(target);
      out.values = batch.map(({ tokens, scoreFrom }) => Float32Array.from({ length: tokens.length - scoreFrom }, (_, k) => table.row(keyOf(tokens, scoreFrom + k))?.[0] ?? 0));
    } else {
      out.logprobs = batch.map(({ tokens, scoreFrom }) =>
        Float32Array.from({ length: tokens.length - scoreFrom }, (_, k) => Math.log(this.probs(this.logits(target, tokens, scoreFrom + k), temperature)[tokens[scoreFrom + k]!]!)),
      );
    }
    if (options.retainGraph) {
      const id = this.nextGraph++;
      this.graphs.set(id, { target, batch, temperature });
      out.handle = { id };
    }
    return out;
  }

  async backward(handle: GraphHandle, grads: BackwardGrads): Promise<void> {
    const graph = this.graphs.get(handle.id);
    if (!graph) throw new Error(`unknown or consumed graph handle ${handle.id}`);
    this.graphs.delete(handle.id);
    const { target, batch, temperature } = graph;
    if (target.kind === 'base') throw new Error('the tabular base is not trainable');
    const table = this.table(target);
    batch.forEach(({ tokens, scoreFrom }, b) => {
      for (let k = 0; k < tokens.length - scoreFrom; k++) {
        const key = keyOf(tokens, scoreFrom + k);
        if (target.kind === 'critic') {
          const d = grads.dValues?.[b]?.[k] ?? 0;
          if (d !== 0) table.grad(key)[0]! += d;
          continue;
        }
        const d = grads.dLogprobs?.[b]?.[k] ?? 0;
        if (d === 0) continue;
        // d log softmax(l/T)_y / d l_j = (1[j = y] − p_j) / T
        const p = this.probs(this.logits(target, tokens, scoreFrom + k), temperature);
        const g = table.grad(key);
        const y = tokens[scoreFrom + k]!;
        for (let j = 0; j < p.length; j++) g[j]! += (d * ((j === y ? 1 : 0) - p[j]!)) / temperature;
      }
    });
  }

  async optimStep(trainable: Trainable, params: OptimParams): Promise<OptimResult> {
    const table = this.table(trainable);
    let sq = 0;
    for (const g of table.grads.values()) for (const x of g) sq += x * x;
    const gradNorm = Math.sqrt(sq);
    const scale = params.maxGradNorm > 0 && gradNorm > params.maxGradNorm ? params.maxGradNorm / (gradNorm + 1e-6) : 1;
    table.t++;
    const bc1 = 1 - params.beta1 ** table.t;
    const bc2 = 1 - params.beta2 ** table.t;
    for (const [key, row] of table.rows) {
      const g = table.grads.get(key);
      let m = table.m.get(key);
      let v = table.v.get(key);
      if (!m || !v) {
        table.m.set(key, (m = new Float64Array(row.length)));
        table.v.set(key, (v = new Float64Array(row.length)));
      }
      for (let j = 0; j < row.length; j++) {
        const gj = (g?.[j] ?? 0) * scale;
        m[j] = params.beta1 * m[j]! + (1 - params.beta1) * gj;
        v[j] = params.beta2 * v[j]! + (1 - params.beta2) * gj * gj;
        row[j] = row[j]! * (1 - params.lr * params.weightDecay) - (params.lr * (m[j]! / bc1)) / (Math.sqrt(v[j]! / bc2) + params.eps);
      }
    }
    table.grads.clear();
    return { gradNorm };
  }

  async zeroGrad(trainable: Trainable): Promise<void> {
    this.table(trainable).grads.clear();
  }

  async saveOptimizerState(trainable: Trainable, file: string): Promise<void> {
    const table = this.table(trainable);
    const what = `the optimiser state of ${trainable.kind === 'base' ? 'the base' : `${trainable.kind} '${trainable.name}'`}`;
    await writeFile(file, JSON.stringify({ t: table.t, m: tableToJson(table.m, what), v: tableToJson(table.v, what) }));
  }

  async loadOptimizerState(trainable: Trainable, file: string): Promise<void> {
    const table = this.table(trainable);
    const json = JSON.parse(await readFile(file, 'utf8')) as { t: number; m: Record<string, number[]>; v: Record<string, number[]> };
    table.t = json.t;
    table.m.clear();
    table.v.clear();
    for (const [k, r] of tableFromJson(json.m, file)) table.m.set(k, r);
    for (const [k, r] of tableFromJson(json.v, file)) table.v.set(k, r);
  }

  async dispose(): Promise<void> {
    this.adapters.clear();
    this.critics.clear();
    this.graphs.clear();
  }

  private table(t: Target | Trainable): Table {
    if (t.kind === 'base') throw new Error('the tabular base has no parameters');
    const table = (t.kind === 'adapter' ? this.adapters : this.critics).get(t.name);
    if (!table) throw new Error(`no ${t.kind} named '${t.name}'`);
    return table;
  }

  private async saveTable(table: Table, file: string, dir: string, what: string): Promise<void> {
    const rows = tableToJson(table.rows, what, FLOAT32_MAX);
    await mkdir(dir, { recursive: true });
    await writeFile(file, JSON.stringify({ width: table.width, rows }));
  }

  private async loadTable(file: string, width: number): Promise<Table> {
    const json = JSON.parse(await readFile(file, 'utf8')) as { width: number; rows: Record<string, number[]> };
    if (json.width !== width) throw new Error(`${file}: table width ${json.width}, expected ${width}`);
    const table = new Table(width);
    for (const [k, r] of tableFromJson(json.rows, file)) table.rows.set(k, r);
    return table;
  }
}

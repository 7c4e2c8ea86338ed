// The decoder: embed → layers → final RMSNorm, over a packed batch of sequences, with optional LoRA
// and KV cache, plus the backward from dL/d(final hidden) to every trainable parameter.
import type { ModelConfig } from '../types.ts';
import type { BaseWeights } from './weights.ts';
import type { LoraAdapter } from './lora.ts';
import { createLayerWorkspace, layerBackward, layerForward, prepareLayerGrads, releaseLayerActs, releaseLayerWorkspace, type LayerActs, type PassSetup, type SeqSpan } from './decoder-layer.ts';
import { releaseBuffers, takeBuffer } from './buffer-pool.ts';
import { sharedFloats } from '../shareable-arrays.ts';
import { rmsnormBackward, rmsnormForward } from './kernels/rmsnorm.ts';
import { RopeTable } from './kernels/rope.ts';
import type { KvCache } from './kv-cache.ts';
import { ensureGrad } from './param.ts';

export interface HiddenPass {
  setup: PassSetup;
  tokens: Int32Array;
  adapter: LoraAdapter | null;
  /** Final normed hidden states [N, H]. */
  hidden: Float32Array;
  /** Kept for the backward (empty when not retained). */
  layerActs: LayerActs[];
  preNorm: Float32Array | null;
  rstdFinal: Float32Array | null;
}

/** Shape constraints the kernels rely on; a violation is a clear Error rather than wrong numbers. */
export function validateModelConfig(cfg: ModelConfig): void {
  const positive = ['vocabSize', 'hiddenSize', 'intermediateSize', 'numHiddenLayers', 'numAttentionHeads', 'numKeyValueHeads', 'headDim', 'maxPositionEmbeddings'] as const;
  for (const k of positive) if (!(Number.isInteger(cfg[k]) && cfg[k] > 0)) throw new Error(`model config: ${k} must be a positive integer, got ${cfg[k]}`);
  if (cfg.numAttentionHeads % cfg.numKeyValueHeads !== 0) throw new Error(`model config: ${cfg.numAttentionHeads} attention heads are not a multiple of ${cfg.numKeyValueHeads} key/value heads`);
  if (cfg.headDim % 2 !== 0) throw new Error(`model config: head_dim must be even for RoPE, got ${cfg.headDim}`);
  if (!(cfg.rmsNormEps > 0) || !(cfg.ropeTheta > 0)) throw new Error('model config: rms_norm_eps and rope_theta must be positive');
}

export class DecoderModel {
  readonly rope: RopeTable;
  constructor(readonly cfg: ModelConfig, public weights: BaseWeights) {
    validateModelConfig(cfg);
    this.rope = new RopeTable(cfg.headDim, cfg.ropeTheta, Math.min(cfg.maxPositionEmbeddings, 4096));
  }

  /** tokens [N] packed as described by seqs. */
  forward(tokens: Int32Array, seqs: SeqSpan[], adapter: LoraAdapter | null, cache: KvCache | null, retain: boolean): HiddenPass {
    const cfg = this.cfg, H = cfg.hiddenSize, N = tokens.length;
    let maxPos = 0;
    for (const s of seqs) maxPos = Math.max(maxPos, s.past + s.len);
    this.rope.ensure(maxPos);
    const setup: PassSetup = { cfg, rope: this.rope, seqs, N, cache };
    let x: Float32Array = takeBuffer(N * H);
    const E = this.weights.embed.data;
    for (let r = 0; r < N; r++) {
      const t = tokens[r]!;
      if (!(t >= 0 && t < cfg.vocabSize)) throw new Error(`token id ${t} is outside the vocabulary (size ${cfg.vocabSize})`);
      x.set(E.subarray(t * H, (t + 1) * H), r * H);
    }
    const layerActs: LayerActs[] = [];
    this.weights.layers.forEach((w, i) => {
      const { out, acts } = layerForward(setup, i, w, adapter?.layers[i] ?? null, adapter?.scale ?? 0, x, retain);
      if (retain) layerActs.push(acts);
      else releaseLayerActs(acts);
      x = out;
    });
    const hidden = sharedFloats(N * H); // the output projection's operand: shared (thread-pool.ts)
    const rstdFinal = new Float32Array(N);
    rmsnormForward(x, this.weights.finalNorm.data, hidden, rstdFinal, N, H, cfg.rmsNormEps);
    if (!retain) releaseBuffers(x);
    return { setup, tokens, adapter, hidden, layerActs, preNorm: retain ? x : null, rstdFinal: retain ? rstdFinal : null };
  }

  /** Returns a retained pass's activations to the buffer pool without a backward; the pass is unusable afterwards. */
  releasePass(pass: HiddenPass): void {
    for (const acts of pass.layerActs) releaseLayerActs(acts);
    pass.layerActs.length = 0;
    releaseBuffers(pass.preNorm);
    pass.preNorm = null;
  }

  /**
   * dHidden [N, H] → gradients. trainBase: every base weight (embedding included); trainLora: the pass's adapter.
   * Consumes the pass's activations.
   */
  backward(pass: HiddenPass, dHidden: Float32Array, trainBase: boolean, trainLora: boolean): void {
    if (!pass.preNorm || !pass.rstdFinal) throw new Error('this forward pass was not retained for a backward');
    const cfg = this.cfg, H = cfg.hiddenSize, N = pass.setup.N, w = this.weights;
    const lora = trainLora ? pass.adapter : null;
    if (trainBase) ensureGrad(w.finalNorm);
    const dxBuffers = [takeBuffer(N * H), takeBuffer(N * H)];
    let dx: Float32Array | null = dxBuffers[0]!;
    let spare: Float32Array = dxBuffers[1]!; // layers write dL/dx here; the two buffers alternate
    rmsnormBackward(dHidden, pass.preNorm, w.finalNorm.data, pass.rstdFinal, dx, trainBase ? w.finalNorm.grad : null, N, H, false);
    const ws = createLayerWorkspace(cfg, N);
    for (let i = w.layers.length - 1; i >= 0 && dx; i--) {
      const t = { base: trainBase, lora: lora !== null, needDx: i > 0 || trainBase };
      const layerLora = pass.adapter?.layers[i] ?? null;
      prepareLayerGrads(w.layers[i]!, lora ? layerLora : null, t);
      const dOut: Float32Array = dx;
      dx = layerBackward(pass.setup, w.layers[i]!, layerLora, pass.adapter?.scale ?? 0, pass.layerActs[i]!, dOut, t, ws, spare);
      releaseLayerActs(pass.layerActs[i]!);
      spare = dOut;
    }
    releaseLayerWorkspace(ws);
    if (trainBase && dx) {
      const gE = ensureGrad(w.embed);
      for (let r = 0; r < N; r++) {
        const t = pass.tokens[r]!;
        for (let j = 0; j < H; j++) gE[t * H + j]! += dx[r * H + j]!;
      }
    }
    releaseBuffers(...dxBuffers, pass.preNorm);
    pass.layerActs.length = 0;
    pass.preNorm = null;
  }
}

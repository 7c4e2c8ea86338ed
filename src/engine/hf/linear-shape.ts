// The shape of each linear module of a decoder layer, as Hugging Face checkpoints store its weight
// ([out_features, in_features], torch.nn.Linear's layout): what base weights are allocated with
// (embedded/weights.ts), what PEFT adapters are checked against (peft.ts) and what new adapters are
// initialised with (../trainables.ts).
import type { LinearModule, ModelConfig } from '../types.ts';

/** [out, in] of each linear module. */
export function linearShape(cfg: ModelConfig, m: LinearModule): [number, number] {
  const H = cfg.hiddenSize, qDim = cfg.numAttentionHeads * cfg.headDim, kvDim = cfg.numKeyValueHeads * cfg.headDim;
  switch (m) {
    case 'q_proj': return [qDim, H];
    case 'k_proj': return [kvDim, H];
    case 'v_proj': return [kvDim, H];
    case 'o_proj': return [H, qDim];
    case 'gate_proj': return [cfg.intermediateSize, H];
    case 'up_proj': return [cfg.intermediateSize, H];
    case 'down_proj': return [H, cfg.intermediateSize];
  }
}

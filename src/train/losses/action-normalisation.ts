// Action normalisation (spec section 4): an action's log-probability is the sum of its token
// log-probabilities, optionally divided by its token count or its word count (long
// chain-of-thought actions otherwise look improbable and dominate the ratio).
//
// The action log-prob is a linear function of the token log-probs, so its gradient is a constant
// per token: dL/dlogp_k = dL/dlogp_action · scale, with scale = 1, 1/tokens or 1/words.

import type { ActionNormalisation } from '../../config/choices.ts';
export type { ActionNormalisation };

/** Whitespace-separated words of the action's text; at least 1 so that an empty action has a finite scale. */
export function wordCount(text: string): number {
  let n = 0;
  for (const w of text.split(/\s+/)) if (w.length > 0) n++;
  return Math.max(1, n);
}

/** The factor that maps the sum of token log-probs to the normalised action log-prob. */
export function actionScale(mode: ActionNormalisation, tokenCount: number, text: string): number {
  switch (mode) {
    case 'sum':
      return 1;
    case 'token':
      return 1 / Math.max(1, tokenCount);
    case 'word':
      return 1 / wordCount(text);
  }
}

/** Σ_k mask_k·logprobs_K[k] · scale. */
export function actionLogprob(logprobs_K: ArrayLike<number>, scale: number, mask_K?: ArrayLike<number>): number {
  let s = 0;
  for (let k = 0; k < logprobs_K.length; k++) if (!mask_K || mask_K[k] !== 0) s += logprobs_K[k]!;
  return s * scale;
}

/** Spreads dL/dlogp_action back to the tokens: dLogprobs_K[k] = grad · scale on unmasked tokens. */
export function spreadActionGrad(grad: number, scale: number, length: number, mask_K?: ArrayLike<number>): Float32Array {
  const out = new Float32Array(length);
  for (let k = 0; k < length; k++) if (!mask_K || mask_K[k] !== 0) out[k] = grad * scale;
  return out;
}

// Parameters that are not finite (NaN, ±Infinity): the error an engine's save path throws rather
// than write them, and the scan it uses. It lives with the engines so that an engine reports it
// without importing the trainer; the trainer's checks (src/runs/finite-guard.ts) throw the same error,
// so a run tells a diverged state apart from any other failure whichever side found it.

/** Parameters that are not finite: thrown by engines' save paths and by the checkpoint scan. */
export class NonFiniteStateError extends Error {
  override name = 'NonFiniteStateError';
  /** `what` names the parameters, e.g. "critic 'critic'" or "adapters/policy/adapter_model.safetensors (tensor x)". */
  constructor(readonly what: string) {
    super(`${what} holds values that are not finite`);
  }
}

/** Index of the first non-finite entry, or -1. */
export function firstNonFinite(xs: ArrayLike<number>): number {
  for (let i = 0; i < xs.length; i++) if (!Number.isFinite(xs[i]!)) return i;
  return -1;
}

// Algorithms by name (the `algorithm` key of a configuration).
import type { AlgorithmName } from '../config/schema.ts';
import { ippo } from './ippo.ts';
import { marftAction } from './marft-action.ts';
import { marftOutcome } from './marft-outcome.ts';
import { marftToken } from './marft-token.ts';
import type { Algorithm } from './types.ts';

export const ALGORITHM_REGISTRY: Record<AlgorithmName, Algorithm> = {
  'marft-action': marftAction,
  'marft-token': marftToken,
  ippo,
  'marft-outcome': marftOutcome,
};

export type { Algorithm, AlgorithmPlan, CreditLevel } from './types.ts';

// Algorithms by name (the `algorithm` key of a configuration): one file each. Its keys are exactly
// src/config/choices.ts's ALGORITHMS (the Record type and test/algorithms/registry.test.ts hold them equal).
import type { AlgorithmName } from '../config/schema.ts';
import { atGrpo } from './at-grpo.ts';
import { cure } from './cure.ts';
import { grpo } from './grpo.ts';
import { ippo } from './ippo.ts';
import { magrpo } from './magrpo.ts';
import { marftAction } from './marft-action.ts';
import { marftOutcome } from './marft-outcome.ts';
import { marftToken } from './marft-token.ts';
import { masOpd } from './mas-opd.ts';
import type { Algorithm } from './types.ts';

export const ALGORITHM_REGISTRY: Record<AlgorithmName, Algorithm> = {
  'marft-action': marftAction,
  'marft-token': marftToken,
  ippo,
  'marft-outcome': marftOutcome,
  grpo,
  magrpo,
  'at-grpo': atGrpo,
  cure,
  'mas-opd': masOpd,
};

export type { Algorithm, AlgorithmPlan, CreditLevel } from './types.ts';

// The embedded engine's critics (spec section 4): the engine-level critic (../trainables.ts, with its
// initialiser) held in this engine's parameters (param.ts); the head's passes are value-head.ts.
import type { Critic as CriticOf } from '../trainables.ts';
import { loraParams } from './lora.ts';
import { valueHeadParams } from './value-head.ts';
import type { Param } from './param.ts';

export type Critic = CriticOf<Param>;

export function criticParams(c: Critic): Param[] {
  return [...(c.lora ? loraParams(c.lora) : []), ...valueHeadParams(c.head)];
}

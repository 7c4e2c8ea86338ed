// The embedded engine's LoRA adapters: the engine-level adapter (../trainables.ts, PEFT's LoraLayer,
// with its initialiser) held in this engine's parameters (param.ts), which carry the gradients.
import type { LoraAdapter as AdapterOf, LoraModule as ModuleOf } from '../trainables.ts';
import type { Param } from './param.ts';

export type LoraModule = ModuleOf<Param>;
export type LoraAdapter = AdapterOf<Param>;

export function loraParams(a: LoraAdapter): Param[] {
  const out: Param[] = [];
  for (const layer of a.layers) for (const m of Object.values(layer)) out.push(m.A, m.B);
  return out;
}

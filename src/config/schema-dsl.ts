// A tiny schema language for configuration files: each node knows its default, its allowed
// values and a one-line meaning, so one definition yields validation (errors that name the dotted
// key and what is allowed), the TypeScript type (Infer) and the documentation table.
import { didYouMean } from '../core/did-you-mean.ts';

interface Doc {
  doc: string;
}
export interface NumberNode extends Doc {
  kind: 'number';
  default: number;
  min?: number;
  max?: number;
  /** true: min is exclusive. */
  minExclusive?: boolean;
  integer?: boolean;
  /** Why `max` is the upper bound (said when a value exceeds it, and in the docs). */
  maxWhy?: string;
}
export interface BooleanNode extends Doc {
  kind: 'boolean';
  default: boolean;
}
export interface StringNode extends Doc {
  kind: 'string';
  default: string;
}
export interface EnumNode<V extends string = string> extends Doc {
  kind: 'enum';
  values: readonly V[];
  default: V;
}
export interface NumberListNode extends Doc {
  kind: 'number-list';
  default: number[];
  min?: number;
  max?: number;
  maxWhy?: string;
  integer?: boolean;
}
export interface EnumListNode<V extends string = string> extends Doc {
  kind: 'enum-list';
  values: readonly V[];
  default: V[];
}
/** A free-form mapping handed to a component that validates it itself (e.g. a task's options). */
export interface RecordNode extends Doc {
  kind: 'record';
}
export interface ObjectNode<F extends Record<string, SchemaNode> = Record<string, SchemaNode>> extends Doc {
  kind: 'object';
  fields: F;
  /** A rule across keys, run on the validated mapping: returns what is wrong, or null. (Method syntax:
   *  its parameter is compared bivariantly, so an ObjectNode<F> still is a SchemaNode.) */
  check?(value: { [K in keyof F]: Infer<F[K]> }): string | null;
}
export type SchemaNode = NumberNode | BooleanNode | StringNode | EnumNode | NumberListNode | EnumListNode | RecordNode | ObjectNode;

export type Infer<N> = N extends NumberNode
  ? number
  : N extends BooleanNode
    ? boolean
    : N extends StringNode
      ? string
      : N extends EnumNode<infer V>
        ? V
        : N extends NumberListNode
          ? number[]
          : N extends EnumListNode<infer V>
            ? V[]
            : N extends RecordNode
              ? Record<string, unknown>
              : N extends ObjectNode<infer F>
                ? { [K in keyof F]: Infer<F[K]> }
                : never;

/** An upper bound of a setting and the reason for it (sizes that could not fit in memory, counts that could not finish). */
export interface Bound {
  max: number;
  why: string;
}

export const num = (doc: string, def: number, limits: Omit<NumberNode, 'kind' | 'doc' | 'default'> = {}): NumberNode => ({ kind: 'number', doc, default: def, ...limits });
/** An integer setting; `bound` caps it (test/config checks that every integer key of the schema has one). */
export const int = (doc: string, def: number, min = 0, bound?: Bound): NumberNode => ({ kind: 'number', doc, default: def, min, integer: true, ...(bound ? { max: bound.max, maxWhy: bound.why } : {}) });
export const bool = (doc: string, def: boolean): BooleanNode => ({ kind: 'boolean', doc, default: def });
export const str = (doc: string, def: string): StringNode => ({ kind: 'string', doc, default: def });
export const oneOf = <V extends string>(doc: string, values: readonly V[], def: V): EnumNode<V> => ({ kind: 'enum', doc, values, default: def });
export const numbers = (doc: string, def: number[], limits: { min?: number; integer?: boolean; bound?: Bound } = {}): NumberListNode => {
  const { bound, ...rest } = limits;
  return { kind: 'number-list', doc, default: def, ...rest, ...(bound ? { max: bound.max, maxWhy: bound.why } : {}) };
};
export const someOf = <V extends string>(doc: string, values: readonly V[], def: V[]): EnumListNode<V> => ({ kind: 'enum-list', doc, values, default: def });
export const record = (doc: string): RecordNode => ({ kind: 'record', doc });
export const obj = <F extends Record<string, SchemaNode>>(doc: string, fields: F, check?: ObjectNode<F>['check']): ObjectNode<F> => ({ kind: 'object', doc, fields, ...(check ? { check } : {}) });

export class ConfigError extends Error {
  override name = 'ConfigError';
  /**
   * Lines shown under the one-line message: the code frame of a syntax error (src/config/yaml-error.ts).
   * Kept apart from the message so that wrapping the message (`${file}: ${err.message}`) keeps it.
   */
  frame?: string;
}

/** The range of a number, e.g. 'in [1, 65536]', 'in (0, 1]', '>= 0' or '' (any). */
function range(n: { min?: number; max?: number; minExclusive?: boolean }): string {
  if (n.min !== undefined && n.max !== undefined) return `in ${n.minExclusive ? '(' : '['}${n.min}, ${n.max}]`;
  if (n.min !== undefined) return `${n.minExclusive ? '>' : '>='} ${n.min}`;
  if (n.max !== undefined) return `<= ${n.max}`;
  return '';
}

function describeNumber(n: NumberNode, finite = false): string {
  const what = finite ? `a finite ${n.integer ? 'integer' : 'number'}` : n.integer ? 'an integer' : 'a number';
  return [what, range(n)].filter((s) => s !== '').join(' ');
}

/** What a node allows, in words (used by errors and by the docs table). */
export function allowedValues(node: SchemaNode): string {
  switch (node.kind) {
    case 'number':
      return describeNumber(node);
    case 'boolean':
      return 'true or false';
    case 'string':
      return 'a string';
    case 'enum':
      return `one of ${node.values.map((v) => `'${v}'`).join(', ')}`;
    case 'number-list':
      return [`a list of ${node.integer ? 'integers' : 'numbers'}`, range(node)].filter((s) => s !== '').join(' ');
    case 'enum-list':
      return `a list of ${node.values.map((v) => `'${v}'`).join(', ')}`;
    case 'record':
      return 'a mapping';
    case 'object':
      return `a mapping with keys ${Object.keys(node.fields).join(', ')}`;
  }
}

function checkNumber(node: NumberNode, v: unknown): boolean {
  if (typeof v !== 'number' || !Number.isFinite(v)) return false;
  if (node.integer && !Number.isInteger(v)) return false;
  if (node.min !== undefined && (node.minExclusive ? v <= node.min : v < node.min)) return false;
  if (node.max !== undefined && v > node.max) return false;
  return true;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A value as the user wrote it, shortened; NaN and ±Infinity by name (JSON would print null). */
function render(v: unknown): string {
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (Array.isArray(v)) return `[${v.map(render).join(',')}]`;
  return JSON.stringify(v) ?? String(v);
}

function show(v: unknown): string {
  const s = render(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

const isNonFinite = (v: unknown): boolean => typeof v === 'number' && !Number.isFinite(v);

/** An unknown key `k` of the mapping at `path`: the allowed keys, and the nearest of them when `k` looks like a typo of it. */
export function unknownKey(path: string, k: string, allowed: readonly string[]): string {
  const hint = didYouMean(k, allowed);
  return `${path ? `${path}.${k}` : k}: unknown key; allowed keys${path ? ` of ${path}` : ''}: ${allowed.join(', ')}${hint ? `; ${hint}` : ''}`;
}

/** Validates `value` against `node`, filling defaults for absent keys; throws ConfigError naming the dotted key. */
export function validate<N extends SchemaNode>(node: N, value: unknown, path = ''): Infer<N> {
  const key = path || '(top level)';
  const fail = (): never => {
    throw new ConfigError(`${key}: got ${show(value)}, expected ${allowedValues(node)}`);
  };
  /** Above the bound: the error says why there is one. */
  const tooLarge = (why: string | undefined): never => {
    throw new ConfigError(`${key}: got ${show(value)}, expected ${allowedValues(node)}${why ? ` (${why})` : ''}`);
  };
  switch (node.kind) {
    case 'number':
      if (value === undefined) return node.default as Infer<N>;
      // YAML's .nan / .inf and overflowing literals (1e999) arrive as numbers: name them as such.
      if (isNonFinite(value)) throw new ConfigError(`${key}: got ${show(value)}, expected ${describeNumber(node, true)}`);
      if (!checkNumber(node, value)) {
        if (node.max !== undefined && typeof value === 'number' && value > node.max) tooLarge(node.maxWhy);
        fail();
      }
      return value as Infer<N>;
    case 'boolean':
      if (value === undefined) return node.default as Infer<N>;
      if (typeof value !== 'boolean') fail();
      return value as Infer<N>;
    case 'string':
      if (value === undefined) return node.default as Infer<N>;
      if (typeof value !== 'string') fail();
      return value as Infer<N>;
    case 'enum':
      if (value === undefined) return node.default as Infer<N>;
      if (typeof value !== 'string' || !node.values.includes(value)) {
        const hint = typeof value === 'string' ? didYouMean(value, node.values, (v) => `'${v}'`) : null;
        throw new ConfigError(`${key}: got ${show(value)}, expected ${allowedValues(node)}${hint ? `; ${hint}` : ''}`);
      }
      return value as Infer<N>;
    case 'number-list': {
      if (value === undefined) return [...node.default] as Infer<N>;
      const item: NumberNode = { kind: 'number', doc: '', default: 0, min: node.min, max: node.max, integer: node.integer };
      if (!Array.isArray(value)) fail();
      const items = value as unknown[];
      if (!items.every((x) => checkNumber(item, x))) {
        const allFinite = items.every((x) => typeof x === 'number' && Number.isFinite(x));
        if (allFinite && node.max !== undefined && (items as number[]).some((x) => x > node.max!)) tooLarge(node.maxWhy);
        fail();
      }
      return [...(items as number[])] as Infer<N>;
    }
    case 'enum-list':
      if (value === undefined) return [...node.default] as Infer<N>;
      if (!Array.isArray(value) || !value.every((x) => typeof x === 'string' && node.values.includes(x))) fail();
      return [...(value as string[])] as Infer<N>;
    case 'record':
      if (value === undefined) return {} as Infer<N>;
      if (!isPlainObject(value)) fail();
      return { ...(value as Record<string, unknown>) } as Infer<N>;
    case 'object': {
      if (value === undefined || value === null) value = {};
      if (!isPlainObject(value)) fail();
      const input = value as Record<string, unknown>;
      for (const k of Object.keys(input)) if (!Object.hasOwn(node.fields, k)) throw new ConfigError(unknownKey(path, k, Object.keys(node.fields)));
      const out: Record<string, unknown> = {};
      for (const [k, child] of Object.entries(node.fields)) out[k] = validate(child, input[k], path ? `${path}.${k}` : k);
      const problem = node.check?.(out as never);
      if (problem) throw new ConfigError(`${key}: ${problem}`);
      return out as Infer<N>;
    }
  }
}

/** The defaults of a schema, as a plain object. */
export function defaults<N extends SchemaNode>(node: N): Infer<N> {
  return validate(node, undefined);
}

export interface DocRow {
  key: string;
  default: string;
  allowed: string;
  doc: string;
}

/** One row per leaf key, depth first, for the documentation table. */
export function docRows(node: SchemaNode, path = ''): DocRow[] {
  if (node.kind === 'object') return Object.entries(node.fields).flatMap(([k, child]) => docRows(child, path ? `${path}.${k}` : k));
  const def = node.kind === 'record' ? '{}' : JSON.stringify(node.default);
  const why = (node.kind === 'number' || node.kind === 'number-list') && node.maxWhy ? ` (at most ${node.max}: ${node.maxWhy})` : '';
  return [{ key: path, default: def, allowed: allowedValues(node), doc: `${node.doc}${why}` }];
}

// A tiny schema language for configuration files: each node knows its default, its allowed
// values and a one-line meaning, so one definition yields validation (errors that name the dotted
// key and what is allowed), the TypeScript type (Infer) and the documentation table.

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

export const num = (doc: string, def: number, limits: Omit<NumberNode, 'kind' | 'doc' | 'default'> = {}): NumberNode => ({ kind: 'number', doc, default: def, ...limits });
export const int = (doc: string, def: number, min = 0): NumberNode => ({ kind: 'number', doc, default: def, min, integer: true });
export const bool = (doc: string, def: boolean): BooleanNode => ({ kind: 'boolean', doc, default: def });
export const str = (doc: string, def: string): StringNode => ({ kind: 'string', doc, default: def });
export const oneOf = <V extends string>(doc: string, values: readonly V[], def: V): EnumNode<V> => ({ kind: 'enum', doc, values, default: def });
export const numbers = (doc: string, def: number[], limits: { min?: number; integer?: boolean } = {}): NumberListNode => ({ kind: 'number-list', doc, default: def, ...limits });
export const someOf = <V extends string>(doc: string, values: readonly V[], def: V[]): EnumListNode<V> => ({ kind: 'enum-list', doc, values, default: def });
export const record = (doc: string): RecordNode => ({ kind: 'record', doc });
export const obj = <F extends Record<string, SchemaNode>>(doc: string, fields: F): ObjectNode<F> => ({ kind: 'object', doc, fields });

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function describeNumber(n: NumberNode): string {
  const parts = [n.integer ? 'an integer' : 'a number'];
  if (n.min !== undefined) parts.push(`${n.minExclusive ? '>' : '>='} ${n.min}`);
  if (n.max !== undefined) parts.push(`<= ${n.max}`);
  return parts.join(' ');
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
      return `a list of ${node.integer ? 'integers' : 'numbers'}${node.min !== undefined ? ` >= ${node.min}` : ''}`;
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

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** Validates `value` against `node`, filling defaults for absent keys; throws ConfigError naming the dotted key. */
export function validate<N extends SchemaNode>(node: N, value: unknown, path = ''): Infer<N> {
  const key = path || '(top level)';
  const fail = (): never => {
    throw new ConfigError(`${key}: got ${show(value)}, expected ${allowedValues(node)}`);
  };
  switch (node.kind) {
    case 'number':
      if (value === undefined) return node.default as Infer<N>;
      if (!checkNumber(node, value)) fail();
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
      if (typeof value !== 'string' || !node.values.includes(value)) fail();
      return value as Infer<N>;
    case 'number-list': {
      if (value === undefined) return [...node.default] as Infer<N>;
      const item: NumberNode = { kind: 'number', doc: '', default: 0, min: node.min, integer: node.integer };
      if (!Array.isArray(value) || !value.every((x) => checkNumber(item, x))) fail();
      return [...(value as number[])] as Infer<N>;
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
      for (const k of Object.keys(input)) {
        if (!(k in node.fields)) {
          const where = path ? `${path}.${k}` : k;
          throw new ConfigError(`${where}: unknown key; allowed keys${path ? ` of ${path}` : ''}: ${Object.keys(node.fields).join(', ')}`);
        }
      }
      const out: Record<string, unknown> = {};
      for (const [k, child] of Object.entries(node.fields)) out[k] = validate(child, input[k], path ? `${path}.${k}` : k);
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
  return [{ key: path, default: def, allowed: allowedValues(node), doc: node.doc }];
}

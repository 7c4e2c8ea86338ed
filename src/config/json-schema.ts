// The configuration's JSON Schema (draft-07), generated from the schema DSL (./schema.ts), for
// editors: YAML and JSON language servers complete keys, show each key's meaning and flag unknown
// keys and out-of-range values as the file is written. schema/marft-config.schema.json is this
// output (test/config checks that it is current):
//   node --import tsx src/config/json-schema.ts > schema/marft-config.schema.json
// What JSON Schema cannot say (the rules across keys of ObjectNode.check, a task's own options) is
// still checked when marft loads the file.
import { fileURLToPath } from 'node:url';
import { configSchema } from './schema.ts';
import type { SchemaNode } from './schema-dsl.ts';

type JsonSchema = Record<string, unknown>;

function numberLimits(n: { min?: number; max?: number; minExclusive?: boolean }): JsonSchema {
  return {
    ...(n.min !== undefined ? (n.minExclusive ? { exclusiveMinimum: n.min } : { minimum: n.min }) : {}),
    ...(n.max !== undefined ? { maximum: n.max } : {}),
  };
}

/** The JSON Schema of one node; `required` lists keys a file must give (beyond the DSL, which fills defaults). */
export function nodeSchema(node: SchemaNode, required: Record<string, string[]> = {}, path = ''): JsonSchema {
  const why = (node.kind === 'number' || node.kind === 'number-list') && node.maxWhy ? ` (at most ${node.max}: ${node.maxWhy})` : '';
  const description = `${node.doc}${why}`;
  switch (node.kind) {
    case 'number':
      return { description, type: node.integer ? 'integer' : 'number', ...numberLimits(node), default: node.default };
    case 'boolean':
      return { description, type: 'boolean', default: node.default };
    case 'string':
      return { description, type: 'string', default: node.default };
    case 'enum':
      return { description, enum: [...node.values], default: node.default };
    case 'number-list':
      return { description, type: 'array', items: { type: node.integer ? 'integer' : 'number', ...numberLimits(node) }, default: node.default };
    case 'enum-list':
      return { description, type: 'array', items: { enum: [...node.values] }, default: node.default };
    case 'record':
      return { description, type: 'object' };
    case 'object': {
      const properties = Object.fromEntries(Object.entries(node.fields).map(([k, child]) => [k, nodeSchema(child, required, path ? `${path}.${k}` : k)]));
      const req = required[path];
      return { description, type: 'object', properties, additionalProperties: false, ...(req ? { required: req } : {}) };
    }
  }
}

/** The schema of a configuration file: every key of configSchema, and task.name required (src/config/load.ts). */
export function configJsonSchema(): JsonSchema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'marft configuration (docs/config.md)',
    ...nodeSchema(configSchema, { '': ['task'], task: ['name'] }),
  };
}

export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.stdout.write(configJsonSchemaText());

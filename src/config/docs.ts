// Renders the configuration reference (docs/config.md) from the schema, so the two never drift.
//   node --import tsx src/config/docs.ts > docs/config.md
import { fileURLToPath } from 'node:url';
import { configSchema } from './schema.ts';
import { docRows } from './schema-dsl.ts';

const escape = (s: string): string => s.replace(/\|/g, '\\|');

export function configReference(): string {
  const lines = [
    '# Configuration reference',
    '',
    'Training runs read one YAML or JSON file (`npx marft train CONFIG --run-dir DIR`). Every key is optional;',
    'absent keys take the defaults below, which are the settings of the MARFT paper (spec section 4, App. B).',
    'Unknown keys and out-of-range values are errors that name the dotted key and what it allows.',
    'Examples: `examples/*.yaml`. This file is generated from `src/config/schema.ts` by',
    '`node --import tsx src/config/docs.ts > docs/config.md`.',
    '',
    '| key | default | allowed | meaning |',
    '| --- | --- | --- | --- |',
  ];
  for (const row of docRows(configSchema)) lines.push(`| \`${row.key}\` | \`${escape(row.default)}\` | ${escape(row.allowed)} | ${escape(row.doc)} |`);
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.stdout.write(configReference());

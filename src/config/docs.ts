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
    'Training runs read one YAML or JSON file (`npx marft train CONFIG --run-dir DIR`). A file must name at least',
    '`task.name`, the task it trains on (an empty file, `{}` or a file of comments only is refused); every other key',
    'is optional, and absent keys take the defaults below, which are the settings of the MARFT paper (spec section 4,',
    'App. B). `--set KEY=VALUE` (repeatable, `marft train` and `marft eval`) changes one dotted key from the command',
    'line, VALUE written as in YAML (`--set actor.optim.lr=3e-4 --set policy.targetModules=[q_proj,v_proj]`).',
    'Unknown keys, out-of-range values and non-finite numbers (YAML `.nan`, `.inf`) are errors that name the dotted',
    'key and what it allows. Every integer has an upper bound, generous for real runs, that refuses sizes which could',
    'not fit in memory or finish; the table gives each reason.',
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

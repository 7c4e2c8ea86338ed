// `marft` command dispatcher. Each subcommand lives in ./commands/<name>.ts and exports
// `run(args: string[]): Promise<number>` (the exit code) and `summary` (one line for the help).
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { UserError } from './errors.ts';
import { ConfigError } from '../config/schema-dsl.ts';

const commandsDir = fileURLToPath(new URL('./commands/', import.meta.url));

interface Command {
  summary: string;
  run(args: string[]): Promise<number>;
}

async function listCommands(): Promise<string[]> {
  const files = await readdir(commandsDir);
  return files.filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).map((f) => f.slice(0, -3)).sort();
}

async function loadCommand(name: string): Promise<Command | null> {
  if (!(await listCommands()).includes(name)) return null;
  return (await import(`./commands/${name}.ts`)) as Command;
}

async function printHelp(): Promise<void> {
  const lines = ['usage: marft <command> [options]', '', 'commands:'];
  for (const name of await listCommands()) {
    const cmd = await loadCommand(name);
    lines.push(`  ${name.padEnd(10)} ${cmd?.summary ?? ''}`);
  }
  lines.push('', 'Run `marft <command> --help` for the options of one command.');
  console.log(lines.join('\n'));
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    await printHelp();
    return name ? 0 : 1;
  }
  const cmd = await loadCommand(name);
  if (!cmd) {
    console.error(`marft: unknown command '${name}'. Commands: ${(await listCommands()).join(', ')}`);
    return 2;
  }
  try {
    return await cmd.run(rest);
  } catch (err) {
    // A user's mistake is reported in one line; anything else is a bug and keeps its stack.
    if (err instanceof UserError || err instanceof ConfigError) {
      // One line even when the message came with several (an engine's error passed on).
      console.error(`marft ${name}: ${err.message.replace(/\s*\n\s*/g, ' ')}`);
      return 2;
    }
    throw err;
  }
}

// Reading configuration files (YAML or JSON) into a validated MarftConfig.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { configSchema, type MarftConfig } from './schema.ts';
import { ConfigError, validate } from './schema-dsl.ts';

/** Validates an already-parsed object (defaults filled in). */
export function parseConfig(raw: unknown): MarftConfig {
  return validate(configSchema, raw);
}

/** Reads and validates a .yaml/.yml/.json file; ConfigError names the file and the key. */
export async function loadConfig(file: string): Promise<MarftConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new ConfigError(`${file}: cannot read the configuration file`);
  }
  let raw: unknown;
  try {
    raw = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError(`${file}: not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`);
  }
  try {
    return parseConfig(raw ?? {});
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(`${file}: ${err.message}`);
    throw err;
  }
}

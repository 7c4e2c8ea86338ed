// Reading configuration files (YAML or JSON) into a validated MarftConfig.
import { readFile, stat } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { applyEvalProtocol } from './eval-protocols.ts';
import { applyOverrides, parseOverride } from './overrides.ts';
import { configSchema, type MarftConfig } from './schema.ts';
import { ConfigError, validate } from './schema-dsl.ts';
import { syntaxError } from './yaml-error.ts';

/** Validates an already-parsed object (defaults filled in: a named eval.protocol's first, src/config/eval-protocols.ts). */
export function parseConfig(raw: unknown): MarftConfig {
  return validate(configSchema, applyEvalProtocol(raw));
}

/** Why a file cannot be read, in words. */
async function unreadable(file: string, err: unknown): Promise<string> {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR' || (await stat(file).then((s) => s.isDirectory(), () => false))) return 'is a folder, not a configuration file';
  if (code === 'EACCES' || code === 'EPERM') return 'cannot be read (permission denied)';
  return `cannot be read (${code ?? (err as Error).message})`;
}

const isEmpty = (raw: unknown): boolean => raw === null || raw === undefined || (typeof raw === 'object' && !Array.isArray(raw) && Object.keys(raw).length === 0);

/**
 * Reads and validates a .yaml/.yml/.json file, after the `--set KEY=VALUE` overrides (src/config/overrides.ts).
 * A configuration file must name at least `task.name`, what it trains on: an empty file (or `{}`, or
 * only comments) is refused rather than silently training the defaults. ConfigError names the file and the key.
 */
export async function loadConfig(file: string, sets: readonly string[] = []): Promise<MarftConfig> {
  const overrides = sets.map(parseOverride);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${file}: ${await unreadable(file, err)}`);
  }
  const json = file.endsWith('.json');
  let raw: unknown;
  try {
    raw = text.trim() === '' ? null : json ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw syntaxError(file, text, err, json ? 'JSON' : 'YAML');
  }
  if (isEmpty(raw) && overrides.length === 0) {
    throw new ConfigError(`${file}: the config is empty: it must name at least task.name, the task to train on (e.g. 'task: { name: coordination-game }'; docs/config.md)`);
  }
  const merged = applyOverrides(raw, overrides);
  const where = overrides.length > 0 ? `${file} (with --set)` : file;
  let config: MarftConfig;
  try {
    config = parseConfig(merged);
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(`${where}: ${err.message}`);
    throw err;
  }
  const task = (merged as { task?: { name?: unknown } }).task;
  if (task?.name === undefined) throw new ConfigError(`${where}: task.name is missing: a configuration names the task it trains on (e.g. 'task: { name: coordination-game }'; docs/config.md)`);
  return config;
}

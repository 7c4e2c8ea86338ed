// An experiment file's `set` mappings become the `--set KEY=VALUE` arguments `marft train` and
// `marft eval` take, so a row runs exactly as the same command typed by hand would.
export type SetMapping = Record<string, unknown>;

/**
 * `{ 'train.steps': 2, 'model.path': 'm', 'policy.targetModules': ['q_proj'] }` →
 * `['train.steps=2', 'model.path=m', 'policy.targetModules=["q_proj"]']`. A string is passed as written
 * (a path stays a path); anything else as JSON, which is YAML's flow syntax, so it parses back to the
 * same value.
 */
export function setArgs(set: SetMapping): string[] {
  return Object.entries(set).map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
}

// `marft show RUN [--step N] [--episode E] [--agent NAME]`: a run's sampled episodes in a terminal.
import { existsSync, statSync } from 'node:fs';
import { parseArgs, stringFlag } from '../args.ts';
import { UserError } from '../errors.ts';
import { SamplesFormatError, type SampleEpisode, readSamplesFile, sampleSteps, stepSamplesFile } from '../../runs/samples.ts';
import { episodeText } from '../samples-text.ts';


const HELP = `usage: marft show RUN [--step N] [--episode E] [--agent NAME]

Prints the episodes a run sampled at one step (RUN/samples/step-N.jsonl; docs/dashboard.md): the
problem, each turn's team reward and verdict, each agent's action with its reward, critic value and
text, and its per-token advantage (MAS-OPD: teacher gap; else the importance ratio). On a terminal
every token of the text is coloured by that value (red negative, green positive); otherwise a strip
of one block character per token (▁ lowest … █ highest) follows the text. NO_COLOR turns colour off.
RUN may also be a samples file itself (marft eval --output FILE).
  --step N      the step to show (default: the latest with samples)
  --episode E   only episode E of that step (default: all of them)
  --agent NAME  only that agent's actions`;

function wholeNumber(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim())) throw new UserError(`--${flag} must be a whole number ≥ 0, got '${value}'`);
  return Number(value);
}

async function episodesOf(run: string, step: number | undefined): Promise<{ file: string; episodes: SampleEpisode[] }> {
  if (!existsSync(run)) throw new UserError(`${run}: no such run folder or samples file`);
  if (statSync(run).isFile()) {
    if (step !== undefined) throw new UserError(`--step applies to a run folder; ${run} is a samples file`);
    return { file: run, episodes: await readSamplesFile(run) };
  }
  const steps = await sampleSteps(run);
  if (steps.length === 0)
    throw new UserError(`${run} has no samples yet: a run writes RUN/samples/step-N.jsonl every log.samplesEvery steps (docs/dashboard.md)`);
  const chosen = step ?? steps[steps.length - 1]!;
  if (!steps.includes(chosen)) throw new UserError(`${run} has no samples for step ${chosen} (steps with samples: ${listed(steps)})`);
  const file = stepSamplesFile(run, chosen);
  return { file, episodes: await readSamplesFile(file) };
}

function listed(xs: readonly (string | number)[]): string {
  return xs.length > 12 ? `${xs.slice(0, 5).join(', ')}, ..., ${xs.slice(-5).join(', ')}` : xs.join(', ');
}

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const parsed = parseArgs(args, { string: ['step', 'episode', 'agent'] });
  const [runDir, ...extra] = parsed.positionals;
  if (!runDir || extra.length > 0) throw new UserError('expected exactly one RUN folder (see --help)');
  const step = wholeNumber(stringFlag(parsed, 'step'), 'step');
  const episode = wholeNumber(stringFlag(parsed, 'episode'), 'episode');
  const agent = stringFlag(parsed, 'agent');
  let found: { file: string; episodes: SampleEpisode[] };
  try {
    found = await episodesOf(runDir, step);
  } catch (err) {
    if (err instanceof SamplesFormatError) throw new UserError(err.message);
    throw err;
  }
  let { episodes } = found;
  if (episodes.length === 0) throw new UserError(`${found.file} holds no episodes`);
  if (episode !== undefined) {
    episodes = episodes.filter((e) => e.episode === episode);
    if (episodes.length === 0) throw new UserError(`${found.file} has no episode ${episode} (episodes: ${listed(found.episodes.map((e) => e.episode))})`);
  }
  if (agent !== undefined) {
    const agents = [...new Set(found.episodes.flatMap((e) => e.actions.map((a) => a.agent)))];
    if (!agents.includes(agent)) throw new UserError(`${found.file} has no agent '${agent}' (agents: ${agents.join(', ')})`);
  }
  const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
  const width = Math.max(20, (process.stdout.columns ?? 100) - 4);
  console.log(`${found.file}: ${found.episodes.length} episode${found.episodes.length === 1 ? '' : 's'}`);
  for (const e of episodes) console.log(`\n${episodeText(e, { color, width, ...(agent !== undefined ? { agent } : {}) })}`);
  return 0;
}

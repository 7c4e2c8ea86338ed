// A samples-file episode (src/runs/samples.ts) as terminal text, for `marft show`: the problem, each
// turn with its team reward and verdict, each agent's action with its reward, value and text, and
// its per-token signal (advantage, else MAS-OPD's teacher gap, else the importance ratio). In colour
// each token of the text gets a background from red (negative) through white to green (positive);
// in plain text a strip of one block character per token (▁ lowest … █ highest) stands for it.
import type { SampleAction, SampleEpisode } from '../runs/samples.ts';

export type SignalName = 'advantage' | 'teacher gap' | 'ratio';

/** The per-token signal an action shows: advantages when computed, else the teacher gap, else the ratio. */
export function actionSignal(a: SampleAction): { name: SignalName; values: number[] } | null {
  if (a.advantages) return { name: 'advantage', values: a.advantages };
  if (a.teacherGap) return { name: 'teacher gap', values: a.teacherGap };
  if (a.ratio) return { name: 'ratio', values: a.ratio };
  return null;
}

/** A value on the signal's diverging scale, in [-1, 1]: 0 at the neutral point (0, or 1 for a ratio, on a log scale). */
export function signalPosition(name: SignalName, x: number, extent: number): number {
  if (!Number.isFinite(x) || !(extent > 0)) return 0;
  const centred = name === 'ratio' ? Math.log(Math.max(x, 1e-12)) : x;
  return Math.max(-1, Math.min(1, centred / extent));
}

/** The largest distance from the neutral point over the values (the scale's half-width). */
export function signalExtent(name: SignalName, values: readonly number[]): number {
  let m = 0;
  for (const x of values) if (Number.isFinite(x)) m = Math.max(m, Math.abs(name === 'ratio' ? Math.log(Math.max(x, 1e-12)) : x));
  return m;
}

const BLOCKS = '▁▂▃▄▅▆▇█';
const RESET = '\x1b[0m';

/** A background colour for a position in [-1, 1]: red, white at 0, green. */
function background(p: number): string {
  const w = (v: number) => Math.round(255 - (255 - v) * Math.abs(p));
  const [r, g, b] = p < 0 ? [w(230), w(80), w(80)] : [w(70), w(190), w(90)];
  return `\x1b[48;2;${r};${g};${b}m\x1b[38;2;0;0;0m`;
}

/** Control characters and newlines made visible inside a coloured token (a newline still breaks the line). */
function visible(piece: string): string {
  return piece.replace(/\n/g, '↵\n').replace(/\t/g, '→').replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '·');
}

function stat(xs: readonly number[]): string {
  const f = xs.filter(Number.isFinite);
  if (!f.length) return 'no finite values';
  const mean = f.reduce((s, x) => s + x, 0) / f.length;
  return `min ${fmt(Math.min(...f))} · mean ${fmt(mean)} · max ${fmt(Math.max(...f))}`;
}

const fmt = (x: number | null): string => (x === null ? '-' : Number.isFinite(x) ? (Math.abs(x) >= 1000 || (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(2) : x.toFixed(3)) : String(x));

function indent(text: string, prefix: string): string {
  return text.split('\n').map((l) => prefix + l).join('\n');
}

function wrap(s: string, width: number): string[] {
  const out: string[] = [];
  const chars = [...s];
  for (let i = 0; i < chars.length; i += width) out.push(chars.slice(i, i + width).join(''));
  return out.length ? out : [''];
}

export interface EpisodeTextOptions {
  color: boolean;
  /** Show only this agent's actions. */
  agent?: string;
  /** Width of the plain strip's lines. */
  width?: number;
}

/** The action's text and its per-token signal. */
function actionBody(a: SampleAction, extent: number, options: EpisodeTextOptions): string[] {
  const signal = actionSignal(a);
  const lines: string[] = [];
  if (options.color && signal) {
    // Coloured line by line: a newline inside a token must not carry its background into the indent.
    const coloured = a.pieces
      .map((piece, i) => visible(piece).split('\n').map((part) => (part ? `${background(signalPosition(signal.name, signal.values[i]!, extent))}${part}${RESET}` : '')).join('\n'))
      .join('');
    lines.push(indent(coloured, '    '));
  } else {
    lines.push(indent(a.text, '    '));
  }
  if (signal) {
    lines.push(`    ${signal.name} per token (${a.tokens.length}): ${stat(signal.values)}`);
    if (!options.color) {
      const strip = signal.values.map((x) => BLOCKS[Math.round(((signalPosition(signal.name, x, extent) + 1) / 2) * (BLOCKS.length - 1))]).join('');
      for (const l of wrap(strip, options.width ?? 80)) lines.push(`    ${l}`);
    }
  } else {
    lines.push(`    ${a.tokens.length} tokens, no per-token advantage, teacher gap or ratio recorded`);
  }
  return lines;
}

export function episodeText(e: SampleEpisode, options: EpisodeTextOptions): string {
  const bold = (s: string) => (options.color ? `\x1b[1m${s}${RESET}` : s);
  const dim = (s: string) => (options.color ? `\x1b[2m${s}${RESET}` : s);
  const head = [`step ${e.step ?? '-'}`, `episode ${e.episode}`, `problem ${e.problem}`, ...(e.group !== null ? [`group ${e.group}`] : []), `outcome ${fmt(e.outcome)}`];
  const lines = [bold(head.join(' · ')), ...indent(e.prompt, '  ').split('\n').map(dim)];
  // One scale per signal over the whole episode, so the agents' tokens compare.
  const extents = new Map<SignalName, number>();
  for (const a of e.actions) {
    const s = actionSignal(a);
    if (s) extents.set(s.name, Math.max(extents.get(s.name) ?? 0, signalExtent(s.name, s.values)));
  }
  const turnIds = [...new Set([...e.turns.map((t) => t.t), ...e.actions.map((a) => a.t)])].sort((x, y) => x - y);
  for (const t of turnIds) {
    const turn = e.turns.find((x) => x.t === t);
    lines.push(bold(`turn ${t}${turn ? ` · team reward ${fmt(turn.teamReward)}${turn.done ? ' · done' : ''}` : ''}`));
    for (const a of e.actions.filter((x) => x.t === t && (options.agent === undefined || x.agent === options.agent))) {
      const role = a.role && a.role !== a.agent ? `${a.role}, ` : '';
      lines.push(`  ${bold(a.agent)} (${role}policy ${a.policy || '-'}) · reward ${fmt(a.reward)} · value ${fmt(a.value)}`);
      const s = actionSignal(a);
      lines.push(...actionBody(a, s ? extents.get(s.name)! : 0, options));
    }
    if (turn?.verdict) lines.push(`  verdict: ${turn.verdict}`);
    if (turn?.feedback) lines.push(`  feedback: ${turn.feedback.replace(/\n/g, '\n            ')}`);
  }
  if (Object.keys(e.info).length) lines.push(dim(`info: ${JSON.stringify(e.info)}`));
  return lines.join('\n');
}

// The maths PAC rules on episodes of the Reasoner–Tool-User pair run through TurnRecordingEnv over
// MathEnv: turn t's answers are MathEnv's own reading of that turn (the Reasoner's #### answer, the
// Tool-User's printed result or program status, and whether each matches the reference).
import { mathAttribution, type Attribution, type MathTurnAnswer } from './pac.ts';

interface RecordedAnswer {
  agent: string;
  role: string;
  answer: string | null;
  correct: boolean;
  program?: { status: string };
}

export function mathTurnAnswers(info: Record<string, unknown>, t: number): MathTurnAnswer[] | null {
  const turns = info.turns as Array<{ answers?: RecordedAnswer[] }> | undefined;
  const answers = turns?.[t]?.answers;
  if (!answers) return null;
  return answers.map((a) => {
    const out: MathTurnAnswer = { agent: a.agent, role: a.role, answer: a.answer, correct: a.correct };
    if (a.program) out.programStatus = a.program.status;
    return out;
  });
}

export function mathAttributor(episode: { info: Record<string, unknown> }, t: number): Attribution | null {
  const answers = mathTurnAnswers(episode.info, t);
  return answers ? mathAttribution(answers) : null;
}

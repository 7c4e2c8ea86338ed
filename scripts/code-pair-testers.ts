// How often the code-pair Tester's first-turn case is right: for each `marft eval --output` file of
// a code-pair run, the fraction of first-turn Tester replies holding a case whose declared output is
// the value of the problem's expression at the case's input (what the reference solution prints;
// recomputed here from the text and the problem, not read from any reward). CURE trains the Tester
// on exactly this; the team's score (the Coder's golden pass rate) does not show it.
//
//   node --import tsx scripts/code-pair-testers.ts RECORDS.jsonl [RECORDS.jsonl ...]
//
// Prints one JSON line per file and system: {file, system, cases, right, accuracy, perSeed}.
import { readFileSync } from 'node:fs';
import { expressionOf, testerCaseRight } from '../src/tasks/code-pair/code-problems.ts';

interface Action { agent: string; role?: string; t: number; text: string }

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node --import tsx scripts/code-pair-testers.ts RECORDS.jsonl [RECORDS.jsonl ...]');
  process.exit(2);
}
for (const file of files) {
  // A file may hold several systems (marft eval --checkpoint DIR --base): each is counted apart.
  const bySystem = new Map<string, { cases: number; right: number }[]>();
  for (const line of readFileSync(file, 'utf8').split('\n').filter((l) => l.trim())) {
    const r = JSON.parse(line) as { system: string; problem: { id: string }; episodes: { actions: Action[] }[] };
    const perSeed = bySystem.get(r.system) ?? [];
    bySystem.set(r.system, perSeed);
    r.episodes.forEach((ep, s) => {
      perSeed[s] ??= { cases: 0, right: 0 };
      for (const a of ep.actions.filter((x) => x.t === 0 && x.agent.startsWith('tester'))) {
        perSeed[s]!.cases++;
        if (testerCaseRight(expressionOf(r.problem.id), a.text)) perSeed[s]!.right++;
      }
    });
  }
  for (const [system, perSeed] of bySystem) {
    const cases = perSeed.reduce((n, p) => n + p.cases, 0);
    const right = perSeed.reduce((n, p) => n + p.right, 0);
    console.log(JSON.stringify({ file, system, cases, right, accuracy: cases ? right / cases : null, perSeed: perSeed.map((p) => (p.cases ? p.right / p.cases : null)) }));
  }
}

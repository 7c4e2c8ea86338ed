// Runs one training of a resolved configuration in this process and prints {resumedFrom, steps} as
// JSON: node --import tsx test/tasks/train-in-child.ts CONFIG.json RUN_DIR [STOP_AT_STEP]
// A resumed run is a new process in real use (marft train --resume), so resume tests run each leg in
// a process of its own, as a user's would.
import { readFileSync } from 'node:fs';
import { parseConfig } from '../../src/config/load.ts';
import { buildRun } from '../../src/run/setup.ts';
import { train } from '../../src/run/train.ts';

const [configFile, runDir, stop] = process.argv.slice(2);
const config = parseConfig(JSON.parse(readFileSync(configFile!, 'utf8')));
const { engine, bundle } = await buildRun(config, runDir!);
const result = await train({ config, engine, task: bundle.task, runDir: runDir!, progress: false, stopAtStep: stop === undefined ? undefined : Number(stop) });
await engine.dispose();
console.log(JSON.stringify({ resumedFrom: result.resumedFrom, steps: result.metrics.length }));

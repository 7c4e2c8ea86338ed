// The dashboard end to end in headless Chromium: `marft dashboard` on a run folder and an
// experiment made here; the page's charts carry the runs' metrics.jsonl points (read back from the
// uPlot instances) and take up a line appended while the page is open; the trajectory viewer shows a
// picked step and episode, colours each token by its advantage or ratio, and clicking a token shows
// its numbers. MARFT_SCREENSHOTS=DIR also saves dashboard.png and trajectory.png there (how
// docs/images/ was made).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { browserSkipReason, launchBrowser } from './browser.ts';
import { spawnDashboard } from './spawn-dashboard.ts';
import { makeSampleRun, nextMetricsLine } from '../fixtures/sample-run.ts';
import { MetricsLog } from '../../src/runs/metrics-log.ts';
import { readStepSamples } from '../../src/runs/samples.ts';

const skip = browserSkipReason();

type ChartData = { labels: string[]; x: number[]; ys: (number | null)[][] };
const chart = (page: Page, family: string) => page.evaluate((f) => (window as any).marftDashboard.chart(f) as ChartData | null, family);

test('the dashboard draws the runs’ curves, follows a growing run, and shows a token’s numbers on a click', { skip: skip ?? false, timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-dash-page-'));
  const run = join(dir, 'marft-run');
  const row = join(dir, 'exp', 'runs', 'SA+OPD', 'seed-0');
  await makeSampleRun(run, { kind: 'marft', steps: 30, samplesEvery: 5, episodesPerStep: 4 });
  await makeSampleRun(row, { kind: 'mas-opd', steps: 20, samplesEvery: 10, episodesPerStep: 2 });
  // Started in the folder of the runs: their names are 'marft-run' and 'exp/runs/SA+OPD/seed-0'.
  const dashboard = await spawnDashboard(['marft-run', 'exp'], dir);
  const browser = await launchBrowser();
  try {
    assert.match(dashboard.firstLine, /\(2 runs: marft-run, exp\/runs\/SA\+OPD\/seed-0\)/);
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${dashboard.url}?poll=300`);
    await page.waitForFunction(() => (window as any).marftDashboard?.polls() > 0 && (window as any).marftDashboard.chart('a_opd') !== null);

    // The curves carry the run's points: reward/<agent> of both runs, steps as in metrics.jsonl.
    const metrics = await new MetricsLog(join(run, 'metrics.jsonl')).read();
    const rowMetrics = await new MetricsLog(join(row, 'metrics.jsonl')).read();
    const reward = (await chart(page, 'reward'))!;
    assert.deepEqual(reward.labels, ['marft-run · planner', 'marft-run · solver', 'exp/runs/SA+OPD/seed-0 · planner', 'exp/runs/SA+OPD/seed-0 · solver']);
    assert.deepEqual(reward.x, metrics.map((m) => m.step));
    assert.deepEqual(reward.ys[0], metrics.map((m) => m['reward/planner']));
    assert.deepEqual(reward.ys[3]!.slice(0, 20), rowMetrics.map((m) => m['reward/solver']));
    assert.deepEqual(reward.ys[3]!.slice(20), Array(10).fill(null), 'the shorter run has no points past its last step');
    const held = (await chart(page, 'eval_score'))!;
    assert.deepEqual(held.x, metrics.filter((m) => m.eval_score !== undefined).map((m) => m.step));
    const ev = (await chart(page, 'explained_variance'))!;
    assert.deepEqual(ev.labels, ['explained_variance', 'pos0', 'pos1'], 'one run has a critic: per agent position');
    assert.deepEqual((await chart(page, 'a_opd'))!.labels, ['Planner', 'Solver'], 'MAS-OPD per role');
    assert.equal(await page.locator('.chart[data-family="reward"] canvas').count(), 1, 'uPlot drew the chart');
    assert.equal(await page.locator('.chart[data-family="reward"]').getAttribute('data-points'), String(2 * 30 + 2 * 20));

    // A step the run writes while the page is open appears in the charts.
    appendFileSync(join(run, 'metrics.jsonl'), nextMetricsLine('marft', 30, 31));
    await page.waitForFunction(() => (window as any).marftDashboard.chart('score_mean').x.includes(30), undefined, { timeout: 20_000 });

    // The trajectory viewer: the run, step 10, episode 2.
    await page.selectOption('#viewer-run', 'marft-run');
    await page.selectOption('#viewer-step', '10');
    await page.waitForFunction(() => document.querySelector('.episode-head')?.textContent?.includes('step 10'));
    await page.selectOption('#viewer-episode', '2');
    const episode = (await readStepSamples(run, 10))[2]!;
    await page.waitForFunction((p) => document.querySelector('.episode-head')?.textContent?.includes(`problem ${p}`), episode.problem);
    assert.equal(await page.locator('.tok').count(), episode.actions.reduce((n, a) => n + a.tokens.length, 0));
    assert.equal(await page.locator('.tokens[data-action="1"]').innerText(), episode.actions[1]!.pieces.join(''));
    assert.equal(await page.locator('[data-field="verdict"]').innerText(), episode.turns[0]!.verdict);
    assert.ok(await page.locator('input[name=signal][value=teacherGap]').isDisabled(), 'no teacher gap in a MARFT run');

    // Colours follow the advantage's sign; a click shows the token's numbers.
    const solver = episode.actions[1]!;
    const k = solver.advantages!.findIndex((a) => Math.abs(a) > 0.05);
    const token = page.locator('.tok[data-action="1"][data-token="' + k + '"]');
    const background = () => token.evaluate((n) => getComputedStyle(n).backgroundColor);
    assert.match(await background(), solver.advantages![k]! > 0 ? /^rgba\(70, 190, 90/ : /^rgba\(230, 80, 80/);
    await token.click();
    const field = (name: string) => page.locator(`#token-panel [data-field="${name}"]`).innerText();
    assert.equal(await field('id'), String(solver.tokens[k]));
    assert.equal(await field('text'), JSON.stringify(solver.pieces[k]));
    assert.equal(await field('token'), `${k + 1} of ${solver.tokens.length}`);
    for (const [name, value] of [['logprob', solver.logprobs[k]!], ['advantage', solver.advantages![k]!], ['ratio', solver.ratio![k]!], ['value', solver.value!]] as const)
      assert.ok(Math.abs(Number(await field(name)) - value) < 1e-4, `${name}: ${await field(name)} for ${value}`);
    assert.ok(Math.abs(Number(await field('probability')) - Math.exp(solver.logprobs[k]!)) < 1e-4);
    assert.equal(await field('teacherGap'), '-');
    await page.check('input[name=signal][value=ratio]');
    const ratio = solver.ratio![k]!;
    assert.match(await background(), ratio > 1 ? /^rgba\(70, 190, 90/ : ratio < 1 ? /^rgba\(230, 80, 80/ : /rgba\(0, 0, 0, 0\)/);
    assert.deepEqual(errors, [], 'no script errors on the page');

    const shots = process.env.MARFT_SCREENSHOTS;
    if (shots) {
      mkdirSync(shots, { recursive: true });
      await page.check('input[name=signal][value=advantages]');
      await page.locator('.tok[data-action="1"][data-token="' + k + '"]').click();
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(shots, 'dashboard.png'), clip: { x: 0, y: 0, width: 1400, height: 1000 } });
      await page.locator('#viewer-section').screenshot({ path: join(shots, 'trajectory.png') });
    }
  } finally {
    await browser.close();
    assert.equal(await dashboard.stop(), 0, 'marft dashboard exits 0 on SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});

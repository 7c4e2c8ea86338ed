// The dashboard page: polls the server's JSON endpoints (src/dashboard/server.ts), draws every
// numeric metric with uPlot (one chart per metric family, the ticked runs side by side) and shows
// sampled episodes token by token. Plain browser JavaScript, no build step; every text from a run
// goes into the page through textContent, never as HTML.
'use strict';

const params = new URLSearchParams(location.search);
const POLL_MS = Math.max(100, Number(params.get('poll')) || 2000);
const PALETTE = ['#4c78a8', '#f58518', '#54a24b', '#e45756', '#72b7b2', '#b279a2', '#eeca3b', '#ff9da6', '#9d755d', '#bab0ac'];
const DASHES = [[], [6, 4], [2, 3], [10, 3, 2, 3]];
/** Keys `<prefix>_<role>` that MAS-OPD writes per role: one chart per prefix, one line per role. */
const ROLE_PREFIXES = ['a_opd', 'a_role', 'teacher_gap', 'teacher_logprob', 'student_logprob', 'responses', 'pac'];
/** Families shown first, in this order; the rest follow alphabetically. */
const ORDER = ['reward', 'score_mean', 'eval_score', 'kl', 'value_loss', 'explained_variance', 'a_opd', 'teacher_gap', 'a_role', 'pac', 'policy_loss', 'grad_norm_actor', 'grad_norm_critic', 'tokens_per_s'];
const ABOUT = {
  reward: 'mean credited reward of each agent’s actions',
  score_mean: 'mean episode score of the step’s rollouts',
  eval_score: 'held-out score (every train.evalEvery steps)',
  kl: 'KL to the frozen reference',
  value_loss: 'critic’s value loss',
  explained_variance: 'critic’s explained variance of the returns (all, and per agent position)',
  a_opd: 'MAS-OPD teacher gap A_OPD per role (mean over tokens)',
  teacher_gap: 'teacher gap per role (mean over tokens)',
  a_role: 'MAS-OPD role advantage per role',
  pac: 'share of each PAC verdict',
  grad_norm_actor: 'actor gradient norm',
  grad_norm_critic: 'critic gradient norm',
  tokens_per_s: 'generated tokens per second of rollout',
};
const SIGNAL_NAMES = { advantages: 'advantage', teacherGap: 'teacher gap', ratio: 'importance ratio' };

const state = {
  runs: [],
  shown: new Set(),
  /** run id → its name in legends */
  short: new Map(),
  /** run id → metrics lines received so far */
  metrics: new Map(),
  /** family → { plot, signature, data, labels } */
  charts: new Map(),
  viewer: { run: null, step: null, episodes: [], episode: null, signal: 'advantages', selected: null },
  polls: 0,
};

async function getJson(path) {
  const res = await fetch(path, { cache: 'no-store' });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || `${res.status} ${res.statusText}`);
  return body;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k.startsWith('data-')) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

const fmt = (x) => (x === null || x === undefined ? '-' : typeof x !== 'number' ? String(x) : Math.abs(x) >= 1000 || (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(3) : x.toFixed(4));

function setStatus(text, error = false) {
  const s = document.getElementById('status');
  s.textContent = text;
  s.classList.toggle('error', error);
}

// ---- metrics and charts ----

function familyOf(key) {
  const slash = key.indexOf('/');
  if (slash > 0) return [key.slice(0, slash), key.slice(slash + 1)];
  for (const p of ROLE_PREFIXES) if (key.startsWith(`${p}_`)) return [p, key.slice(p.length + 1)];
  return [key, ''];
}

function familyRank(f) {
  const i = ORDER.indexOf(f);
  return i < 0 ? ORDER.length : i;
}

/** Families of the shown runs: family → run id → sorted sub-keys [sub, full key]. */
function families() {
  const out = new Map();
  for (const id of shownRunIds()) {
    for (const row of state.metrics.get(id) ?? []) {
      for (const [key, value] of Object.entries(row)) {
        if (key === 'step' || (typeof value !== 'number' && value !== null)) continue;
        const [family, sub] = familyOf(key);
        if (!out.has(family)) out.set(family, new Map());
        const byRun = out.get(family);
        if (!byRun.has(id)) byRun.set(id, new Map());
        byRun.get(id).set(sub, key);
      }
    }
  }
  return [...out.entries()].sort(([a], [b]) => familyRank(a) - familyRank(b) || a.localeCompare(b));
}

function shownRunIds() {
  return state.runs.map((r) => r.id).filter((id) => state.shown.has(id));
}

/** Run ids without the path they all share (tmp/runs/a, tmp/runs/b → a, b), for legends. */
function shortNames(ids) {
  const parts = ids.map((id) => id.split('/'));
  let common = 0;
  while (parts.every((p) => p.length > common + 1 && p[common] === parts[0][common])) common++;
  return new Map(ids.map((id, i) => [id, parts[i].slice(common).join('/')]));
}

const shortName = (id) => state.short.get(id) ?? id;

function runColor(id) {
  return PALETTE[state.runs.findIndex((r) => r.id === id) % PALETTE.length];
}

/** uPlot's data for one family: x = the union of steps, one y array per (run, sub-key). */
function chartData(byRun) {
  const multiRun = byRun.size > 1;
  const defs = [];
  for (const [id, subs] of byRun) {
    const sorted = [...subs.entries()].sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true }));
    sorted.forEach(([sub, key], k) => {
      const label = multiRun ? (sub ? `${shortName(id)} · ${sub}` : shortName(id)) : sub || key;
      const stroke = multiRun ? runColor(id) : PALETTE[k % PALETTE.length];
      defs.push({ id, key, label, stroke, dash: multiRun ? DASHES[k % DASHES.length] : [] });
    });
  }
  const steps = new Set();
  for (const d of defs) for (const row of state.metrics.get(d.id) ?? []) if (typeof row[d.key] === 'number' && typeof row.step === 'number') steps.add(row.step);
  const x = [...steps].sort((a, b) => a - b);
  const ys = defs.map((d) => {
    const at = new Map();
    for (const row of state.metrics.get(d.id) ?? []) if (typeof row[d.key] === 'number') at.set(row.step, row[d.key]);
    return x.map((s) => (at.has(s) ? at.get(s) : null));
  });
  return { defs, x, ys };
}

function chartWidth(card) {
  return Math.max(280, card.clientWidth - 12);
}

function renderCharts() {
  const container = document.getElementById('charts');
  const fams = families();
  const wanted = new Set(fams.map(([f]) => f));
  for (const [f, c] of state.charts) {
    if (!wanted.has(f)) {
      c.plot.destroy();
      c.card.remove();
      state.charts.delete(f);
    }
  }
  fams.forEach(([family, byRun], index) => {
    const { defs, x, ys } = chartData(byRun);
    const signature = defs.map((d) => `${d.label}|${d.stroke}`).join('\n');
    let c = state.charts.get(family);
    if (c && c.signature !== signature) {
      c.plot.destroy();
      c.card.remove();
      state.charts.delete(family);
      c = undefined;
    }
    if (!c) {
      const card = el('div', { class: 'chart', 'data-family': family }, el('h3', { text: family }), el('p', { class: 'about', text: ABOUT[family] ?? '' }));
      const before = container.children[index] ?? null;
      container.insertBefore(card, before);
      const sparse = ys.map((y) => y.filter((v) => v !== null).length < x.length / 2 || x.length < 3);
      const opts = {
        width: chartWidth(card),
        height: 210,
        scales: { x: { time: false } },
        legend: { live: true },
        cursor: { drag: { x: true, y: false } },
        axes: [{ label: 'step', size: 40 }, { size: 56 }],
        series: [{ label: 'step' }, ...defs.map((d, i) => ({ label: d.label, stroke: d.stroke, dash: d.dash, width: 1.6, spanGaps: true, points: { show: sparse[i] }, value: (_u, v) => fmt(v) }))],
      };
      c = { card, signature, plot: new uPlot(opts, [x, ...ys], card) };
      state.charts.set(family, c);
    } else {
      c.plot.setData([x, ...ys]);
    }
    c.labels = defs.map((d) => d.label);
    c.card.setAttribute('data-series', String(defs.length));
    c.card.setAttribute('data-points', String(ys.reduce((n, y) => n + y.filter((v) => v !== null).length, 0)));
  });
}

async function pollMetrics() {
  let changed = false;
  for (const id of shownRunIds()) {
    const have = state.metrics.get(id) ?? [];
    const got = await getJson(`/api/metrics?run=${encodeURIComponent(id)}&from=${have.length}`);
    if (got.reset) {
      state.metrics.set(id, got.lines);
      changed = true;
    } else if (got.lines.length) {
      state.metrics.set(id, have.concat(got.lines));
      changed = true;
    }
  }
  if (changed || state.polls === 0) renderCharts();
}

function renderRuns() {
  const list = document.getElementById('runs');
  list.replaceChildren(
    ...state.runs.map((r) => {
      const box = el('input', { type: 'checkbox', checked: state.shown.has(r.id), 'data-run': r.id });
      box.addEventListener('change', () => {
        if (box.checked) state.shown.add(r.id);
        else state.shown.delete(r.id);
        void pollMetrics().then(renderCharts);
      });
      const meta = `${r.metrics} step${r.metrics === 1 ? '' : 's'}${r.sampleSteps.length ? `, samples at ${r.sampleSteps.length} step${r.sampleSteps.length === 1 ? '' : 's'}` : ''}${r.row !== null ? ` · row ${r.row}, seed ${r.seed}` : ''}`;
      return el('li', {}, el('label', {}, box, el('span', { class: 'swatch', style: `background:${runColor(r.id)}` }), el('span', { text: r.id }), el('span', { class: 'meta', text: meta })));
    }),
  );
}

async function pollRuns() {
  const { runs } = await getJson('/api/runs');
  const known = new Set(state.runs.map((r) => r.id));
  state.runs = runs;
  state.short = shortNames(runs.map((r) => r.id));
  // New runs are shown as they appear (an experiment starting its next row).
  for (const r of runs) if (!known.has(r.id)) state.shown.add(r.id);
  renderRuns();
}

// ---- trajectory viewer ----

function fillSelect(select, options, value) {
  const current = [...select.options].map((o) => `${o.value}\t${o.textContent}`).join('\n');
  const next = options.map(([v, t]) => `${v}\t${t}`).join('\n');
  if (current !== next) select.replaceChildren(...options.map(([v, t]) => el('option', { value: String(v), text: t })));
  if (value !== null && value !== undefined) select.value = String(value);
}

function signalPosition(signal, x, extent) {
  if (typeof x !== 'number' || !Number.isFinite(x) || !(extent > 0)) return 0;
  const c = signal === 'ratio' ? Math.log(Math.max(x, 1e-12)) : x;
  return Math.max(-1, Math.min(1, c / extent));
}

function signalExtent(signal, episode) {
  let m = 0;
  for (const a of episode.actions) for (const x of a[signal] ?? []) if (typeof x === 'number' && Number.isFinite(x)) m = Math.max(m, Math.abs(signal === 'ratio' ? Math.log(Math.max(x, 1e-12)) : x));
  return m;
}

function tokenColor(p) {
  if (p === 0) return 'transparent';
  const [r, g, b] = p < 0 ? [230, 80, 80] : [70, 190, 90];
  return `rgba(${r}, ${g}, ${b}, ${(0.85 * Math.abs(p)).toFixed(3)})`;
}

function visiblePiece(piece) {
  return piece.replace(/\n/g, '↵\n').replace(/\t/g, '→\t');
}

function renderTokenPanel() {
  const panel = document.getElementById('token-panel');
  const sel = state.viewer.selected;
  const episode = state.viewer.episodes.find((e) => e.episode === state.viewer.episode);
  if (!sel || !episode) {
    panel.replaceChildren(el('p', { class: 'hint', text: 'Click a token to see its numbers.' }));
    return;
  }
  const a = episode.actions[sel.action];
  const i = sel.token;
  const lp = a.logprobs[i];
  const rows = [
    ['agent', `${a.agent}${a.role && a.role !== a.agent ? ` (${a.role})` : ''}`],
    ['turn', String(a.t)],
    ['token', `${i + 1} of ${a.tokens.length}`],
    ['id', String(a.tokens[i])],
    ['text', JSON.stringify(a.pieces[i])],
    ['logprob', fmt(lp)],
    ['probability', typeof lp === 'number' ? fmt(Math.exp(lp)) : '-'],
    ['advantage', fmt(a.advantages?.[i])],
    ['teacherGap', fmt(a.teacherGap?.[i])],
    ['ratio', fmt(a.ratio?.[i])],
    ['reward', fmt(a.reward)],
    ['value', fmt(a.value)],
  ];
  const labels = { logprob: 'log-prob', teacherGap: 'teacher gap', ratio: 'importance ratio', reward: 'action reward', value: 'critic value' };
  panel.replaceChildren(el('h3', { text: 'token' }), el('dl', {}, ...rows.flatMap(([k, v]) => [el('dt', { text: labels[k] ?? k }), el('dd', { 'data-field': k, text: v })])));
}

function renderEpisode() {
  const box = document.getElementById('episode');
  const v = state.viewer;
  const e = v.episodes.find((x) => x.episode === v.episode);
  for (const input of document.querySelectorAll('input[name=signal]')) {
    const has = e ? e.actions.some((a) => Array.isArray(a[input.value])) : false;
    input.disabled = !has;
    input.parentElement.classList.toggle('disabled', !has);
  }
  if (!e) {
    box.replaceChildren(el('p', { class: 'hint', text: v.run ? 'No episode picked.' : 'No samples yet: a run writes RUN/samples/step-N.jsonl every log.samplesEvery steps.' }));
    renderTokenPanel();
    return;
  }
  // Fall back to a signal this episode has.
  if (!e.actions.some((a) => Array.isArray(a[v.signal]))) {
    const other = Object.keys(SIGNAL_NAMES).find((s) => e.actions.some((a) => Array.isArray(a[s])));
    if (other) v.signal = other;
  }
  for (const input of document.querySelectorAll('input[name=signal]')) input.checked = input.value === v.signal;
  const extent = signalExtent(v.signal, e);
  const head = el(
    'div',
    { class: 'episode-head' },
    el('span', {}, el('b', { text: 'problem ' }), e.problem),
    e.group !== null ? el('span', {}, el('b', { text: 'group ' }), e.group) : null,
    el('span', { 'data-field': 'outcome' }, el('b', { text: 'outcome ' }), fmt(e.outcome)),
    el('span', {}, el('b', { text: 'step ' }), String(e.step), el('b', { text: ' episode ' }), String(e.episode)),
  );
  const scaleText = v.signal === 'ratio' ? [`×${fmt(Math.exp(-extent))}`, `×${fmt(Math.exp(extent))}`] : [fmt(-extent), `+${fmt(extent)}`];
  const scale = el('div', { class: 'scale' }, el('span', { text: `${SIGNAL_NAMES[v.signal]}:` }), el('span', { text: scaleText[0] }), el('span', { class: 'bar' }), el('span', { text: scaleText[1] }));
  const turnIds = [...new Set([...e.turns.map((t) => t.t), ...e.actions.map((a) => a.t)])].sort((a, b) => a - b);
  const turns = turnIds.map((t) => {
    const turn = e.turns.find((x) => x.t === t);
    const actions = e.actions
      .map((a, k) => [a, k])
      .filter(([a]) => a.t === t)
      .map(([a, k]) => {
        const values = a[v.signal];
        const tokens = el('div', { class: 'tokens', 'data-action': String(k) });
        a.pieces.forEach((piece, i) => {
          const span = el('span', { class: 'tok', 'data-action': String(k), 'data-token': String(i), text: visiblePiece(piece) });
          const x = values ? values[i] : null;
          span.style.background = tokenColor(signalPosition(v.signal, x, extent));
          span.title = `${JSON.stringify(piece)}  ${SIGNAL_NAMES[v.signal]} ${fmt(x)}`;
          if (v.selected && v.selected.action === k && v.selected.token === i) span.classList.add('selected');
          tokens.append(span);
        });
        const messages = a.messages ? el('details', {}, el('summary', { text: `what ${a.agent} saw (${a.messages.length} message${a.messages.length === 1 ? '' : 's'})` }), el('pre', { text: a.messages.map((m) => `[${m.role}]\n${m.content}`).join('\n\n') })) : null;
        return el(
          'div',
          { class: 'action' },
          el('div', { class: 'action-head' }, el('span', { class: 'agent', text: a.agent }), el('span', { class: 'meta', text: `${a.role && a.role !== a.agent ? `${a.role} · ` : ''}policy ${a.policy || '-'} · reward ${fmt(a.reward)} · value ${fmt(a.value)} · ${a.tokens.length} tokens` })),
          messages,
          tokens,
        );
      });
    return el(
      'div',
      { class: 'turn', 'data-turn': String(t) },
      el('div', { class: 'turn-head', text: `turn ${t}${turn ? ` · team reward ${fmt(turn.teamReward)}${turn.done ? ' · done' : ''}` : ''}` }),
      ...actions,
      turn && turn.verdict ? el('div', { class: 'verdict' }, 'verdict: ', el('span', { 'data-field': 'verdict', text: turn.verdict })) : null,
      turn && turn.feedback ? el('div', { class: 'feedback' }, 'feedback: ', el('span', { text: turn.feedback })) : null,
    );
  });
  const info = Object.keys(e.info).length ? el('details', {}, el('summary', { text: 'environment details' }), el('pre', { text: JSON.stringify(e.info, null, 2) })) : null;
  box.replaceChildren(head, el('div', { class: 'prompt', text: e.prompt }), scale, ...turns, info);
  renderTokenPanel();
}

async function loadStep() {
  const v = state.viewer;
  v.episodes = [];
  if (v.run !== null && v.step !== null) {
    try {
      v.episodes = (await getJson(`/api/samples?run=${encodeURIComponent(v.run)}&step=${v.step}`)).episodes;
    } catch (err) {
      setStatus(String(err.message || err), true);
    }
  }
  if (!v.episodes.some((e) => e.episode === v.episode)) {
    v.episode = v.episodes.length ? v.episodes[0].episode : null;
    v.selected = null;
  }
  fillSelect(
    document.getElementById('viewer-episode'),
    v.episodes.map((e) => [e.episode, `${e.episode} · ${e.problem} · outcome ${fmt(e.outcome)}`]),
    v.episode,
  );
  renderEpisode();
}

async function refreshViewer() {
  const v = state.viewer;
  const withSamples = state.runs.filter((r) => r.sampleSteps.length > 0);
  if (v.run === null || !withSamples.some((r) => r.id === v.run)) v.run = withSamples.length ? withSamples[0].id : null;
  fillSelect(document.getElementById('viewer-run'), withSamples.map((r) => [r.id, r.id]), v.run);
  const steps = withSamples.find((r) => r.id === v.run)?.sampleSteps ?? [];
  const follow = document.getElementById('viewer-follow').checked;
  const latest = steps.length ? steps[steps.length - 1] : null;
  const next = follow || !steps.includes(v.step) ? latest : v.step;
  fillSelect(document.getElementById('viewer-step'), steps.map((s) => [s, `step ${s}`]), next);
  if (next !== v.step) {
    v.step = next;
    await loadStep();
  } else if (v.episodes.length === 0 && v.step !== null) {
    await loadStep();
  }
}

function wireViewer() {
  const v = state.viewer;
  document.getElementById('viewer-run').addEventListener('change', (ev) => {
    v.run = ev.target.value;
    v.step = null;
    void refreshViewer();
  });
  document.getElementById('viewer-step').addEventListener('change', (ev) => {
    document.getElementById('viewer-follow').checked = false;
    v.step = Number(ev.target.value);
    v.selected = null;
    void loadStep();
  });
  document.getElementById('viewer-follow').addEventListener('change', () => void refreshViewer());
  document.getElementById('viewer-episode').addEventListener('change', (ev) => {
    v.episode = Number(ev.target.value);
    v.selected = null;
    renderEpisode();
  });
  for (const input of document.querySelectorAll('input[name=signal]'))
    input.addEventListener('change', () => {
      if (input.checked) {
        v.signal = input.value;
        renderEpisode();
      }
    });
  document.getElementById('episode').addEventListener('click', (ev) => {
    const tok = ev.target.closest('.tok');
    if (!tok) return;
    v.selected = { action: Number(tok.dataset.action), token: Number(tok.dataset.token) };
    for (const s of document.querySelectorAll('.tok.selected')) s.classList.remove('selected');
    tok.classList.add('selected');
    renderTokenPanel();
  });
}

// ---- the loop ----

async function poll() {
  try {
    await pollRuns();
    await pollMetrics();
    await refreshViewer();
    state.polls++;
    setStatus(`${state.runs.length} run${state.runs.length === 1 ? '' : 's'} · updated ${new Date().toLocaleTimeString()} · every ${POLL_MS / 1000} s`);
  } catch (err) {
    setStatus(`update failed: ${err.message || err}`, true);
  } finally {
    setTimeout(poll, POLL_MS);
  }
}

window.addEventListener('resize', () => {
  for (const c of state.charts.values()) c.plot.setSize({ width: chartWidth(c.card), height: 210 });
});

/** What the browser test (test/dashboard/) reads back: the charts' own data, and whether a poll completed. */
window.marftDashboard = {
  polls: () => state.polls,
  families: () => [...state.charts.keys()],
  chart: (family) => {
    const c = state.charts.get(family);
    if (!c) return null;
    const [x, ...ys] = c.plot.data;
    return { labels: c.labels, x: [...x], ys: ys.map((y) => [...y]) };
  },
};

wireViewer();
void poll();

// performance.js: the Performance view. Live, from the cycles the page
// holds: where the scheduling cycle's time goes (a flame of points and
// their plugins), each plugin's time per cycle, and pods placed each
// second. And a finished `minisched bench -o json` report, loaded from a
// file: the same pictures, with pods/s each second of each run.

import { useMemo } from 'preact/hooks';
import { html } from '../../ui.js';
import { formatNanos, plural } from '../../format.js';
import { flame, liveCost, placedPerSecond, polyline } from './perf.js';

const FLAME_W = 960;
const ROW_H = 26;
const CHART_W = 960;
const CHART_H = 140;

/** Two rows of boxes: the points, and under each its plugins. */
function Flame({ rows, label }) {
  const boxes = useMemo(() => flame(rows, FLAME_W), [rows]);
  if (!boxes.length) return html`<p class="muted">No plugin time yet: schedule a pod.</p>`;
  return html`<svg class="flame" viewBox=${`0 0 ${FLAME_W} ${2 * ROW_H}`} role="img" aria-label=${label}>
    ${boxes.map((b) => html`<g key=${`${b.row}-${b.point || ''}-${b.label}`}>
      <title>${b.row ? `${b.label} at ${b.point}` : b.label}: ${formatNanos(b.nanos)}, ${(100 * b.share).toFixed(1)}% of the plugin time</title>
      <rect x=${b.x} y=${b.row * ROW_H} width=${Math.max(0, b.w - 1)} height=${ROW_H - 2} class=${b.row ? 'f-plugin' : 'f-point'} />
      ${b.w > 64 ? html`<text x=${b.x + 4} y=${b.row * ROW_H + 16} class=${b.row ? '' : 'on-point'}>${b.label}</text>` : null}
    </g>`)}
  </svg>`;
}

function CostTable({ rows, perCycle }) {
  if (!rows.length) return null;
  return html`<div class="scroll-x"><table class="perf-table">
    <thead><tr><th scope="col">point</th><th scope="col">plugin</th><th scope="col" class="num">calls</th><th scope="col" class="num">time</th>
      <th scope="col" class="num">p50</th><th scope="col" class="num">p90</th><th scope="col" class="num">p99</th></tr></thead>
    <tbody>${rows.map((r) => html`<tr key=${`${r.point}/${r.plugin}`}>
      <td>${r.point}${r.binding ? html` <span class="badge">binding</span>` : null}</td><td>${r.plugin}</td><td class="num">${r.calls}</td>
      <td class="num">${formatNanos(r.nanos)}</td><td class="num">${formatNanos(r.p50)}</td><td class="num">${formatNanos(r.p90)}</td><td class="num">${formatNanos(r.p99)}</td>
    </tr>`)}</tbody>
  </table></div>
  <p class="muted small">${perCycle ? 'p50, p90 and p99 are of the time a plugin took in one cycle (at Filter and Score, summed over the nodes).' : "p50, p90 and p99 are of each call, as minisched bench measures them."}</p>`;
}

function Chart({ lines, max, label, seconds }) {
  return html`<svg class="perf-chart" viewBox=${`-40 -10 ${CHART_W + 50} ${CHART_H + 30}`} role="img" aria-label=${label}>
    <line class="axis" x1="0" x2="0" y1="0" y2=${CHART_H} /><line class="axis" x1="0" x2=${CHART_W} y1=${CHART_H} y2=${CHART_H} />
    <text x="-6" y="4" text-anchor="end">${Math.max(1, Math.ceil(max))}</text><text x="-6" y=${CHART_H} text-anchor="end">0</text>
    <text x=${CHART_W} y=${CHART_H + 16} text-anchor="end">${seconds}</text>
    ${lines.map((l) => html`<polyline key=${l.label} class=${`line s-${l.scheduler}`} fill="none" points=${polyline(l.values, CHART_W, CHART_H, max)}><title>${l.label}</title></polyline>`)}
  </svg>`;
}

function Live({ store }) {
  // entriesAll subscribes to every change of the details and summaries.
  const details = Array.from(store.cycles.details.entriesAll(), ([, d]) => d);
  const summaries = Array.from(store.cycles.summaries.entriesAll(), ([, s]) => s);
  const cost = useMemo(() => liveCost(details), [details.length, details.at(-1)]);
  const newest = summaries.reduce((a, s) => Math.max(a, s.endTime || 0), 0);
  const placed = placedPerSecond(summaries, newest || Date.now());
  const max = Math.max(1, ...placed.map((p) => p.count));
  return html`<section aria-labelledby="perf-live-h">
    <h2 id="perf-live-h">Live <span class="muted">the last ${cost.cycles} cycles this page holds</span></h2>
    <h3>Where the scheduling cycle's time goes</h3>
    <p class="muted small">Each extension point is as wide as its plugins' time (Filter and Score summed over the nodes, which run in parallel); under it, its plugins, longest first. Hover a box for its time.</p>
    <${Flame} rows=${cost.rows} label="the scheduling cycle's plugin time by point and plugin, live" />
    <h3>Pods placed each second <span class="muted">the minute up to the newest cycle</span></h3>
    <${Chart} lines=${[{ label: 'pods placed each second', scheduler: 'minisched', values: placed.map((p) => p.count) }]} max=${max} label="pods placed each second, the last minute" seconds="60 s" />
    <h3>Each plugin</h3>
    <${CostTable} rows=${cost.rows} perCycle=${true} />
  </section>`;
}

function Bench({ store, actions }) {
  const bench = store.page.bench.value;
  const cost = bench?.cost;
  const lines = cost ? cost.runs.filter((r) => r.rates.length).map((r) => ({ label: r.label, scheduler: r.scheduler, values: r.rates })) : [];
  const max = Math.max(1, ...lines.flatMap((l) => l.values));
  const seconds = Math.max(0, ...lines.map((l) => l.values.length));
  return html`<section aria-labelledby="perf-bench-h">
    <h2 id="perf-bench-h">A bench run</h2>
    <div class="reset-row">
      <input type="file" id="bench-file" class="sr-only" accept=".json,application/json" onChange=${(e) => actions.loadBench(e.currentTarget.files[0])} />
      <label class="button" for="bench-file">Open a report…</label>
      ${bench ? html`<button type="button" onClick=${actions.clearBench}>Close</button>` : null}
      <span class="hint">the output of <code>minisched bench -o json</code> (docs/workshop.md, "Benchmark your plugin")</span>
    </div>
    ${cost ? html`
      <h3>${cost.workload} <span class="muted">${bench.name} · ${cost.cycles} scheduling cycles</span></h3>
      <ul class="perf-runs">${cost.runs.map((r) => html`<li key=${r.label} class=${`s-${r.scheduler}`}>${r.label}: ${r.placed} of ${plural(r.pods, 'pod')} placed, ${r.podsPerSecond.toFixed(1)} pods/s</li>`)}</ul>
      ${lines.length ? html`<${Chart} lines=${lines} max=${max} label="pods/s each second of each run" seconds=${`${seconds} s`} />`
        : html`<p class="muted">No per-second sample: each measured window was under two seconds.</p>`}
      <${Flame} rows=${cost.rows} label="the scheduling cycle's plugin time by point and plugin, in the bench run" />
      <${CostTable} rows=${cost.rows} perCycle=${false} />` : null}
  </section>`;
}

export default function Performance({ store, actions }) {
  return html`<div class="performance">
    <${Live} store=${store} />
    <${Bench} store=${store} actions=${actions} />
  </div>`;
}


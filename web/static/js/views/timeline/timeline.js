// The timeline: one row per pod; coloured bands show where the pod waited
// (activeQ, backoffQ, unschedulable, in flight), marks show its attempts
// and how each ended. Rows are virtualised.

import { useState } from 'preact/hooks';
import { html, VirtualList } from '../../ui.js';
import { clock } from '../../clock.js';
import { formatClock, formatDuration, keyLabel, outcomeClass, outcomeText, plural, podLabel, queueTitle } from '../../format.js';
import { failedRow, preemptions, profilesOf, rowProfile, segments, timeRange, zoomed } from './bands.js';

const WINDOWS = Object.freeze([
  { id: 'fit', label: 'fit', ms: -1 },
  { id: '1m', label: 'last minute', ms: 60_000 },
  { id: '5m', label: 'last 5 minutes', ms: 300_000 },
  { id: '15m', label: 'last 15 minutes', ms: 900_000 },
  { id: 'all', label: 'everything kept', ms: 0 },
]);

const ROW = 40;

function pct(t, t0, span) {
  return ((t - t0) / span) * 100;
}

function Row({ row, t0, t1, actions, selected }) {
  const span = Math.max(1, t1 - t0);
  const bands = segments(row.trail, t0, t1);
  const marks = row.cycles.filter((c) => c.start != null && c.start >= t0 && c.start <= t1);
  const name = row.pod ? podLabel(row.pod) : keyLabel(row.key);
  return html`<div class=${`tl-row${selected ? ' selected' : ''}`}>
    <button type="button" class="tl-name" data-pod=${row.key} onClick=${() => actions.inspectPod(row.key)} title=${row.key}>
      ${name}${row.bound ? html` <span class="muted small">→ ${row.pod.nodeName}</span>` : null}${row.deletedAt ? html` <span class="badge">deleted</span>` : null}
    </button>
    <div class="tl-track">
      ${bands.map((b) => html`<span class=${`tl-band q-${b.queue}`} style=${`left:${pct(b.from, t0, span)}%;width:${Math.max(0.2, pct(b.to, t0, span) - pct(b.from, t0, span))}%`}
        title=${`${b.queue} from ${formatClock(b.from)} for ${formatDuration(b.to - b.from)}${b.event ? ` (${b.event})` : ''}`}></span>`)}
      ${marks.map((c) => html`<button type="button" class=${`tl-mark o-${outcomeClass(c)}`} style=${`left:${pct(c.start, t0, span)}%`}
        aria-label=${`${name} attempt ${c.attempt}: ${outcomeText(c)}`} title=${`attempt ${c.attempt} at ${formatClock(c.start)}: ${outcomeText(c)}`}
        onClick=${() => actions.inspectPod(row.key, c.id)}>${c.attempt}</button>`)}
      ${preemptions(row, t0, t1).map((p) => html`<button type="button" class=${`tl-preempt ${p.role}`} style=${`left:${pct(p.t, t0, span)}%`} key=${`${p.role}-${p.pod}-${p.t}`}
        aria-label=${p.words} title=${`${p.words} at ${formatClock(p.t)}`} onClick=${() => actions.inspectPod(p.pod)}>⚡</button>`)}
    </div>
  </div>`;
}

function Axis({ t0, t1 }) {
  const span = Math.max(1, t1 - t0);
  const steps = [1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000];
  const step = steps.find((s) => span / s <= 8) || 3_600_000;
  const ticks = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) ticks.push(t);
  return html`<div class="tl-axis" aria-hidden="true"><span class="tl-name"></span><div class="tl-track">
    ${ticks.map((t) => html`<span class="tl-tick" style=${`left:${pct(t, t0, span)}%`}>${formatClock(t)}</span>`)}
  </div></div>`;
}

function Legend({ store }) {
  const { queues, results } = store.server.vocabulary.value;
  return html`<ul class="legend" aria-label="legend">
    ${queues.map((q) => html`<li key=${q}><span class=${`swatch q-${q}`}></span> ${queueTitle(q)}</li>`)}
    <li class="muted">attempts:</li>
    ${results.map((r) => html`<li key=${r}><span class=${`swatch o-${r}`}></span> ${r}</li>`)}
  </ul>`;
}

export default function Timeline({ store, actions }) {
  const [win, setWin] = useState('fit');
  const [filter, setFilter] = useState('');
  const [onlyFailed, setOnlyFailed] = useState(false);
  const [profile, setProfile] = useState('');
  const [zoom, setZoom] = useState(1);
  let rows = store.timelineRows.value;
  const selected = store.page.selectedPod.value;
  const profiles = profilesOf(rows);
  if (profile && profiles.includes(profile)) rows = rows.filter((r) => rowProfile(r) === profile);
  const f = filter.trim().toLowerCase();
  if (f) rows = rows.filter((r) => r.key.toLowerCase().includes(f));
  if (onlyFailed) rows = rows.filter(failedRow);
  const w = WINDOWS.find((x) => x.id === win) || WINDOWS[0];
  const range = zoomed(timeRange(rows, w.ms, clock(1000)), zoom);
  const { t0, t1 } = range;
  rows = range.rows;
  return html`<div class="timeline">
    <div class="tl-tools">
      <fieldset class="segmented"><legend>Show</legend>
        ${WINDOWS.map((x) => html`<label><input type="radio" name="tl-window" value=${x.id} checked=${x.id === win} onChange=${() => { setWin(x.id); setZoom(1); }} /> ${x.label}</label>`)}
      </fieldset>
      <div class="zoom" role="group" aria-label="zoom">
        <button type="button" class="small" id="tl-zoom-in" onClick=${() => setZoom((z) => z * 2)} title="show the last half of the window">Zoom in</button>
        <button type="button" class="small" id="tl-zoom-out" disabled=${zoom <= 1} onClick=${() => setZoom((z) => Math.max(1, z / 2))}>Zoom out</button>
      </div>
      <label class="check"><input type="checkbox" id="tl-failed" checked=${onlyFailed} onChange=${(e) => setOnlyFailed(e.currentTarget.checked)} /> only pods that failed an attempt</label>
      <label class="filter-box">Find pod <input type="search" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} /></label>
      ${profiles.length > 1 ? html`<label class="filter-box">Profile <select id="tl-profile" value=${profile} onChange=${(e) => setProfile(e.currentTarget.value)}>
        <option value="">all</option>${profiles.map((p) => html`<option key=${p} value=${p}>${p}</option>`)}
      </select></label>` : null}
      <span class="muted">${plural(rows.length, 'pod')}</span>
    </div>
    <${Legend} store=${store} />
    <${Axis} t0=${t0} t1=${t1} />
    <${VirtualList} items=${rows} rowHeight=${ROW} keyOf=${(r) => r.key} label="pods over time" className="tl-list"
      empty=${'No scheduling activity in this window.'}
      renderRow=${(r) => html`<${Row} row=${r} t0=${t0} t1=${t1} actions=${actions} selected=${selected === r.key} />`} />
  </div>`;
}

// app.js: wires the store, the stream, the API and the views, and renders
// at most once per animation frame, only when the store changed (or a clock
// a visible view needs has ticked).

import { render } from 'preact';
import { html, pure } from './ui.js';
import { createStore, VIEWS } from './store.js';
import { createApi } from './api.js';
import { connectStream } from './stream.js';
import { createActions } from './actions.js';
import { formatCountdown } from './format.js';
import QueueBoard from './views/queue.js';
import Inspector, { inspectorSig } from './views/inspector.js';
import Cluster from './views/cluster.js';
import Timeline from './views/timeline.js';
import Controls from './views/controls.js';

const TABS = [
  { id: 'queue', label: 'Queue' },
  { id: 'cycle', label: 'Cycle inspector' },
  { id: 'cluster', label: 'Cluster' },
  { id: 'timeline', label: 'Timeline' },
  { id: 'controls', label: 'Controls' },
];

function Connection({ conn, now, onRetry }) {
  const words = {
    idle: 'not connected',
    connecting: 'connecting…',
    open: 'live',
    reconnecting: conn.retryAt ? `reconnecting in ${formatCountdown(conn.retryAt - now)}` : 'reconnecting…',
    closed: 'disconnected',
  };
  const text = words[conn.status] || conn.status;
  return html`<div class=${`conn conn-${conn.status}`} role="status" aria-live="polite" id="connection" data-status=${conn.status}>
    <span class="dot" aria-hidden="true"></span>
    <span class="conn-text">${text}</span>
    ${conn.status === 'reconnecting' && conn.error ? html`<span class="conn-error">${conn.error}${conn.attempt > 1 ? ` (try ${conn.attempt})` : ''}</span>` : null}
    ${conn.status === 'reconnecting' && conn.retryAt ? html`<button type="button" class="small" onClick=${onRetry}>Retry now</button>` : null}
  </div>`;
}

function SchedulerBar({ scheduler, actions, busy }) {
  const paused = scheduler.state === 'paused';
  return html`<div class="sched" role="group" aria-label="scheduler">
    <span class=${`sched-state s-${scheduler.state}`} id="scheduler-state" title=${scheduler.message || ''}>
      scheduler ${scheduler.state}${paused && scheduler.steps ? ` (${scheduler.steps} step${scheduler.steps > 1 ? 's' : ''} pending)` : ''}
    </span>
    ${paused
      ? html`<button type="button" id="resume" onClick=${actions.resume} disabled=${busy}>Resume</button>`
      : html`<button type="button" id="pause" onClick=${actions.pause} disabled=${busy || scheduler.state !== 'running'}>Pause</button>`}
    <button type="button" id="step" onClick=${actions.step} disabled=${busy || !paused} title="schedule one pod, then stay paused">Step</button>
  </div>`;
}

function Counts({ c }) {
  return html`<div class="counts" aria-label="cluster counts">
    <span><strong>${c.nodes}</strong> nodes</span>
    <span><strong>${c.pods}</strong> pods</span>
    <span><strong>${c.active}</strong> active</span>
    <span><strong>${c.backoff}</strong> backoff</span>
    ${c.errorBackoff ? html`<span><strong>${c.errorBackoff}</strong> error backoff</span>` : null}
    <span><strong>${c.unschedulable}</strong> unschedulable</span>
  </div>`;
}

function Notices({ notices, onDismiss }) {
  return html`<div class="notices" role="log" aria-live="polite" aria-label="messages">
    ${notices.map((n) => html`<div class=${`notice n-${n.level}`} key=${n.id} role=${n.level === 'error' ? 'alert' : null}>
      <span>${n.text}</span>
      <button type="button" class="small" aria-label="dismiss" onClick=${() => onDismiss(n.id)}>✕</button>
    </div>`)}
  </div>`;
}

const PureNotices = pure(Notices, 'Notices');
const PureCounts = pure(Counts, 'Counts');
const PureSchedulerBar = pure(SchedulerBar, 'SchedulerBar');

function Tabs({ view, onSelect }) {
  const onKey = (ev) => {
    const i = TABS.findIndex((t) => t.id === view);
    let next = -1;
    if (ev.key === 'ArrowRight') next = (i + 1) % TABS.length;
    if (ev.key === 'ArrowLeft') next = (i + TABS.length - 1) % TABS.length;
    if (ev.key === 'Home') next = 0;
    if (ev.key === 'End') next = TABS.length - 1;
    if (next < 0) return;
    ev.preventDefault();
    onSelect(TABS[next].id);
    requestAnimationFrame(() => document.getElementById(`tab-${TABS[next].id}`)?.focus());
  };
  return html`<nav class="tabs" role="tablist" aria-label="views" onKeyDown=${onKey}>
    ${TABS.map((t) => html`<button type="button" role="tab" id=${`tab-${t.id}`} aria-selected=${t.id === view ? 'true' : 'false'}
      aria-controls="view" tabindex=${t.id === view ? 0 : -1} onClick=${() => onSelect(t.id)}>${t.label}</button>`)}
  </nav>`;
}

const PureTabs = pure(Tabs, 'Tabs');

function App({ store, actions, stream, now }) {
  const st = store.state;
  const rev = st.rev;
  const { view, selectedPod, selectedCycle } = st.ui;
  let body;
  switch (view) {
    case 'queue':
      body = html`<${QueueBoard} store=${store} actions=${actions} revQueue=${rev.queue} revCycles=${rev.cycles} tick=${now} selected=${selectedPod} />`;
      break;
    case 'cycle':
      body = html`<${Inspector} store=${store} actions=${actions} selectedPod=${selectedPod} selectedCycle=${selectedCycle}
        pod=${selectedPod ? st.pods.get(selectedPod) : null} sig=${inspectorSig(store, selectedPod, selectedCycle)}
        loading=${st.ui.cycleLoading} busy=${selectedPod ? st.busy[`delete:pod:${selectedPod}`] : false} />`;
      break;
    case 'cluster':
      body = html`<${Cluster} store=${store} actions=${actions} revNodes=${rev.nodes} revPods=${rev.pods} busy=${st.busy} />`;
      break;
    case 'timeline':
      body = html`<${Timeline} store=${store} actions=${actions} revCycles=${rev.cycles} tick=${Math.floor(now / 1000) * 1000} selected=${selectedPod} />`;
      break;
    default:
      body = html`<${Controls} store=${store} actions=${actions} busy=${st.busy} generation=${st.scheduler.generation} revScenarios=${rev.scenarios} revNodes=${rev.nodes} />`;
  }
  return html`<div class="app">
    <header class="top">
      <h1>minisched</h1>
      <${Connection} conn=${st.conn} now=${now} onRetry=${stream.retryNow} />
      <${PureCounts} c=${store.counts()} />
      <${PureSchedulerBar} scheduler=${st.scheduler} actions=${actions} busy=${!!st.busy.scheduler} />
    </header>
    <${PureTabs} view=${view} onSelect=${actions.setView} />
    <${PureNotices} notices=${st.notices} onDismiss=${actions.dismiss} />
    <main id="view" role="tabpanel" aria-labelledby=${`tab-${view}`} class=${`view view-${view}`}>${body}</main>
  </div>`;
}

// --- start ---------------------------------------------------------------

const store = createStore();
const api = createApi();
const actions = createActions({ api, store });
const root = document.getElementById('root');

// The view follows the address's #fragment, so a reload keeps it.
function viewFromHash() {
  const v = location.hash.replace(/^#/, '');
  return VIEWS.includes(v) ? v : null;
}
const initial = viewFromHash();
if (initial) store.setView(initial);
window.addEventListener('hashchange', () => {
  const v = viewFromHash();
  if (v) store.setView(v);
});

let frame = 0;
let lastView = store.state.ui.view;
function paint() {
  frame = 0;
  const st = store.state;
  if (st.ui.view !== lastView) {
    lastView = st.ui.view;
    if (location.hash !== `#${lastView}`) history.replaceState(null, '', `#${lastView}`);
  }
  render(html`<${App} store=${store} actions=${actions} stream=${stream} now=${Date.now()} />`, root);
}
function schedule() {
  if (!frame) frame = requestAnimationFrame(paint);
}
store.subscribe(schedule);

const stream = connectStream({ store });

// Clocks: backoff countdowns tick four times a second, the timeline and
// "3 s ago" once a second; nothing ticks when nothing shows a clock.
setInterval(() => {
  const st = store.state;
  const v = st.ui.view;
  if ((v === 'queue' && st.queue.size > 0) || st.conn.status === 'reconnecting') schedule();
}, 250);
setInterval(() => {
  if (store.state.ui.view === 'timeline') schedule();
  store.expireNotices();
}, 1000);

// After every snapshot, fill the timeline with the cycles that ran before.
let snapshotsSeen = 0;
store.subscribe(() => {
  if (store.state.snapshots !== snapshotsSeen) {
    snapshotsSeen = store.state.snapshots;
    actions.loadRecentCycles();
  }
});

// A hook for tests and the console.
window.minisched = { store, actions, stream, api };
schedule();

// app.js: wires the store, the stream, the API and the views. Each view
// reads the store's signals and renders again when what it read changes.

import { render } from 'preact';
import { useEffect } from 'preact/hooks';
// Teaches Preact to track the signals a component reads while it renders.
import '@preact/signals';
import { html } from './ui.js';
import { computed, effect, untracked } from './signals.js';
import { createStore, VIEWS } from './store/index.js';
import { createApi } from './api.js';
import { connectStream } from './stream.js';
import { createActions } from './actions.js';
import { clock } from './clock.js';
import { formatCountdown, queueTitle } from './format.js';
import QueueBoard from './views/queue.js';
import Inspector from './views/inspector.js';
import Cluster from './views/cluster.js';
import Timeline from './views/timeline.js';
import Controls from './views/controls.js';

const TABS = [
  { id: 'queue', label: 'Queue', View: QueueBoard },
  { id: 'cycle', label: 'Cycle inspector', View: Inspector },
  { id: 'cluster', label: 'Cluster', View: Cluster },
  { id: 'timeline', label: 'Timeline', View: Timeline },
  { id: 'controls', label: 'Controls', View: Controls },
];

function Connection({ store, stream }) {
  const conn = store.server.conn.value;
  const counting = conn.status === 'reconnecting' && conn.retryAt;
  const words = {
    idle: 'not connected',
    connecting: 'connecting…',
    open: 'live',
    reconnecting: counting ? `reconnecting in ${formatCountdown(conn.retryAt - clock(250))}` : 'reconnecting…',
    closed: 'disconnected',
  };
  const text = words[conn.status] || conn.status;
  return html`<div class=${`conn conn-${conn.status}`} role="status" aria-live="polite" id="connection" data-status=${conn.status}>
    <span class="dot" aria-hidden="true"></span>
    <span class="conn-text">${text}</span>
    ${conn.status === 'reconnecting' && conn.error ? html`<span class="conn-error">${conn.error}${conn.attempt > 1 ? ` (try ${conn.attempt})` : ''}</span>` : null}
    ${counting ? html`<button type="button" class="small" onClick=${stream.retryNow}>Retry now</button>` : null}
  </div>`;
}

function SchedulerBar({ store, actions }) {
  const scheduler = store.schedulerShown.value;
  const busy = store.page.isBusy('scheduler') || !scheduler.live;
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

function Counts({ store }) {
  const c = store.counts.value;
  // In flight shows on the queue board; the header counts the waiting.
  const queues = store.server.vocabulary.value.queues.filter((q) => q !== 'inFlight');
  return html`<div class="counts" aria-label="cluster counts">
    <span><strong>${c.nodes}</strong> nodes</span>
    <span><strong>${c.pods}</strong> pods</span>
    ${queues.map((q) => html`<span key=${q}><strong>${c.queues[q]}</strong> ${queueTitle(q)}</span>`)}
  </div>`;
}

function Notices({ store, actions }) {
  return html`<div class="notices" role="log" aria-live="polite" aria-label="messages">
    ${store.page.notices.value.map((n) => html`<div class=${`notice n-${n.level}`} key=${n.id} role=${n.level === 'error' ? 'alert' : null}>
      <span>${n.text}</span>
      <button type="button" class="small" aria-label="dismiss" onClick=${() => actions.dismiss(n.id)}>✕</button>
    </div>`)}
  </div>`;
}

/** The tab n steps from the current one for a key (arrows, Home, End), or null. */
function tabFor(key, current) {
  const i = TABS.findIndex((t) => t.id === current);
  const n = TABS.length;
  const to = { ArrowRight: (i + 1) % n, ArrowLeft: (i + n - 1) % n, Home: 0, End: n - 1 }[key];
  return to === undefined ? null : TABS[to].id;
}

function Tabs({ store, actions }) {
  const view = store.page.view.value;
  const onKey = (ev) => {
    const next = tabFor(ev.key, view);
    if (!next) return;
    ev.preventDefault();
    actions.setView(next);
    requestAnimationFrame(() => document.getElementById(`tab-${next}`)?.focus());
  };
  return html`<nav class="tabs" role="tablist" aria-label="views" onKeyDown=${onKey}>
    ${TABS.map((t) => html`<button type="button" role="tab" id=${`tab-${t.id}`} aria-selected=${t.id === view ? 'true' : 'false'}
      aria-controls="view" tabindex=${t.id === view ? 0 : -1} onClick=${() => actions.setView(t.id)}>${t.label}</button>`)}
  </nav>`;
}

function App({ store, actions, stream }) {
  const view = store.page.view.value;
  const { View } = TABS.find((t) => t.id === view);
  // Focus what an action asked for, once the view shows it.
  const focus = store.page.focus.value;
  useEffect(() => {
    if (!focus) return;
    const el = document.getElementById(focus);
    if (!el) return;
    if (!el.matches('input, select, textarea, button, a')) el.tabIndex = -1;
    el.focus();
    el.scrollIntoView({ block: 'nearest' });
    actions.focused();
  });
  return html`<div class="app">
    <header class="top">
      <h1>minisched</h1>
      <${Connection} store=${store} stream=${stream} />
      <${Counts} store=${store} />
      <${SchedulerBar} store=${store} actions=${actions} />
    </header>
    <${Tabs} store=${store} actions=${actions} />
    <${Notices} store=${store} actions=${actions} />
    <main id="view" role="tabpanel" aria-labelledby=${`tab-${view}`} class=${`view view-${view}`}>
      <${View} store=${store} actions=${actions} />
    </main>
  </div>`;
}

// --- start ---------------------------------------------------------------

const store = createStore();
const api = createApi();
const actions = createActions({ api, store });

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
effect(() => {
  const v = store.page.view.value;
  if (location.hash !== `#${v}`) history.replaceState(null, '', `#${v}`);
});

const stream = connectStream({ store });

// After every snapshot, fill the timeline with what happened before it.
effect(() => {
  if (store.server.snapshots.value > 0) untracked(() => actions.loadHistory());
});
// What the scheduler's plugins are, again after every restart (a new
// generation; not on a pause or a step).
const generation = computed(() => store.server.scheduler.value.generation);
effect(() => {
  if (generation.value > 0) untracked(() => actions.loadPluginView());
});
setInterval(() => store.expireNotices(), 1000);

// A hook for tests and the console.
window.minisched = { store, actions, stream, api };
// The loading line and the noscript go: the app replaces them.
const root = document.getElementById('root');
root.replaceChildren();
render(html`<${App} store=${store} actions=${actions} stream=${stream} />`, root);

// app.js: wires the store, the stream, the API and the views. Each view
// reads the store's signals and renders again when what it read changes.
// With ?recording=URL, or a recording opened or dropped on the page, it
// replays that file instead (player.js): no stream, and nothing sent that
// changes anything.

import { render } from 'preact';
import { useEffect } from 'preact/hooks';
// Teaches Preact to track the signals a component reads while it renders.
import '@preact/signals';
import { html } from './ui.js';
import { batch, computed, effect, signal, untracked } from './signals.js';
import { hashFor, parseHash, shortcut, THEMES } from './route.js';
import { createStore, toMillis, VIEWS } from './store/index.js';
import { createApi } from './api.js';
import { connectStream } from './stream.js';
import { createActions } from './actions.js';
import { clock, replayNow } from './clock.js';
import { formatClock, formatCountdown, mirrorWords, queueTitle } from './format.js';
import { readRecording } from './replay.js';
import { createPlayer, refusingApi } from './player.js';
import QueueBoard from './views/queue.js';
import Inspector from './views/inspector.js';
import Cluster from './views/cluster.js';
import Timeline from './views/timeline.js';
import Controls from './views/controls.js';
import Compare from './views/compare.js';
import LessonBanner from './views/lesson.js';
import {
  OpenRecording, PlayerBar, READ_ONLY, RecordingView, ReplayBanner, ReplayOpening,
} from './views/player.js';

const TABS = [
  { id: 'queue', label: 'Queue', View: QueueBoard },
  { id: 'cycle', label: 'Cycle inspector', View: Inspector },
  { id: 'cluster', label: 'Cluster', View: Cluster },
  { id: 'timeline', label: 'Timeline', View: Timeline },
  { id: 'controls', label: 'Controls', View: Controls },
  { id: 'compare', label: 'Compare', View: Compare },
];

function Connection({ store, stream }) {
  const conn = store.server.conn.value;
  if (store.page.replay.value) {
    return html`<div class="conn conn-replay" role="status" id="connection" data-status="replay"><span class="dot" aria-hidden="true"></span><span class="conn-text">recording</span></div>`;
  }
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
    ${counting && stream ? html`<button type="button" class="small" onClick=${stream.retryNow}>Retry now</button>` : null}
  </div>`;
}

function SchedulerBar({ store, actions }) {
  const scheduler = store.schedulerShown.value;
  const busy = store.page.isBusy('scheduler') || !scheduler.live;
  const paused = scheduler.state === 'paused';
  if (store.page.replay.value) {
    // The state as recorded; the player bar plays it.
    return html`<div class="sched" role="group" aria-label="scheduler">
      <span class=${`sched-state s-${scheduler.state}`} id="scheduler-state" title=${`${READ_ONLY} ${scheduler.message || ''}`}>scheduler ${scheduler.state} (recorded)</span>
    </div>`;
  }
  return html`<div class="sched" role="group" aria-label="scheduler">
    <span class=${`sched-state s-${scheduler.state}`} id="scheduler-state" title=${scheduler.message || ''}>
      scheduler ${scheduler.state}${paused && scheduler.steps ? ` (${scheduler.steps} step${scheduler.steps > 1 ? 's' : ''} pending)` : ''}
    </span>
    ${paused
      ? html`<button type="button" id="resume" onClick=${actions.resume} disabled=${busy}>Resume</button>`
      : html`<button type="button" id="pause" onClick=${actions.pause} disabled=${busy || scheduler.state !== 'running'}>Pause</button>`}
    <button type="button" id="step" onClick=${actions.step} disabled=${busy || !paused} title="S: schedule one pod, then stay paused">Step</button>
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

/**
 * The tabs of a replay: Recording in place of Controls, whose forms change a
 * cluster, and no Compare, which runs on one.
 */
function tabsOf(replaying) {
  return replaying ? TABS.filter((t) => t.id !== 'compare').map((t) => (t.id === 'controls' ? { ...t, label: 'Recording', View: RecordingView } : t)) : TABS;
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
    ${tabsOf(!!store.page.replay.value).map((t) => html`<button type="button" role="tab" id=${`tab-${t.id}`} aria-selected=${t.id === view ? 'true' : 'false'}
      aria-controls="view" tabindex=${t.id === view ? 0 : -1} onClick=${() => actions.setView(t.id)}>${t.label}</button>`)}
  </nav>`;
}

/** R asks before a reset: the dialog's Reset button has the focus, so Enter confirms. */
function ResetDialog({ store, actions }) {
  if (!store.page.confirmReset.value) return null;
  return html`<div class="dialog-back">
    <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="reset-dialog-h" id="reset-dialog">
      <h2 id="reset-dialog-h">Reset the cluster?</h2>
      <p>Every pod, node and PriorityClass (but the system- ones) goes, and the history with them. The scheduler's configuration stays.</p>
      <div class="form-actions">
        <button type="button" class="danger armed" id="reset-confirm" ref=${(el) => el?.focus()} onClick=${actions.confirmReset}>Reset</button>
        <button type="button" onClick=${actions.cancelShortcut}>Cancel (Esc)</button>
      </div>
    </div>
  </div>`;
}

/** The theme and the projector layout, for an instructor. */
function Display({ store, actions }) {
  const theme = store.page.theme.value;
  const projector = store.page.projector.value;
  return html`<div class="display" role="group" aria-label="display">
    <button type="button" class="small" id="theme" onClick=${actions.nextTheme} title="T: light, dark, or as the system says">theme: ${theme}</button>
    <button type="button" class="small" id="projector" aria-pressed=${projector ? 'true' : 'false'} onClick=${actions.toggleProjector} title="P: larger type, fewer panels">projector</button>
    <${OpenRecording} onOpen=${openFile} />
  </div>`;
}

/** Says the cluster is a copy, of what, and that nothing here reaches the original. */
function CopyBanner({ copy, store, actions }) {
  const how = { 'import-from': 'copied at start from', load: 'loaded at start from', import: 'loaded from', mirror: 'mirrored from' }[copy.kind] || 'a copy of';
  const mirrored = copy.kind === 'mirror';
  // A mirror's lag changes by the second: the banner asks for it.
  useEffect(() => {
    if (!mirrored) return undefined;
    actions.loadMirror();
    const id = setInterval(actions.loadMirror, MIRROR_POLL);
    return () => clearInterval(id);
  }, [mirrored]);
  const m = mirrored ? store.server.mirror.value : null;
  return html`<section class="copy-banner" id="copy-banner" aria-label="a copy">
    <strong>${mirrored ? 'A mirror' : 'A copy'}</strong> <span>${how} <span id="copy-source">${copy.source}</span>${copy.at ? html` <span class="muted small">at ${formatClock(toMillis(copy.at))}</span>` : null}:
    what minisched does here happens to this copy alone. Reset ends it.</span>
    ${m ? html` <span id="mirror-state">${mirrorWords(m)}</span>` : null}
  </section>`;
}

// How often the banner asks a mirror how far behind it is.
const MIRROR_POLL = 2000;

/** The page of the session in use (live, or a recording's). */
function Root() {
  const { store, actions } = session.value;
  return html`<${App} store=${store} actions=${actions} stream=${stream} />`;
}

function App({ store, actions, stream }) {
  const view = store.page.view.value;
  const replay = store.page.replay.value;
  const tabs = tabsOf(!!replay);
  const { View } = tabs.find((t) => t.id === view) || tabs[0];
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
    <div class="tabs-row">
      <${Tabs} store=${store} actions=${actions} />
      <${Display} store=${store} actions=${actions} />
    </div>
    ${replay ? html`<${ReplayBanner} replay=${replay} />` : null}
    ${!replay && store.server.copy.value ? html`<${CopyBanner} copy=${store.server.copy.value} store=${store} actions=${actions} />` : null}
    ${player.value ? html`<${PlayerBar} player=${player.value} />` : null}
    <${ReplayOpening} opening=${opening.value} onOpen=${openFile} onDismiss=${player.value || !replayURL ? () => { opening.value = null; } : null} />
    <${LessonBanner} key=${store.server.scenarios.value.at(-1)?.id} store=${store} actions=${actions} />
    <${Notices} store=${store} actions=${actions} />
    <${ResetDialog} store=${store} actions=${actions} />
    <main id="view" role="tabpanel" aria-labelledby=${`tab-${view}`} class=${`view view-${view}`}>
      <${View} store=${store} actions=${actions} player=${player.value} onOpen=${openFile} />
    </main>
    ${dropping.value ? html`<div class="drop-here" aria-hidden="true">Drop a recording to replay it</div>` : null}
  </div>`;
}

// --- start ---------------------------------------------------------------

// A replay: the recording ?recording= names (same origin: the page's CSP
// allows no other), or one opened or dropped on the page.
const replayURL = new URLSearchParams(location.search).get('recording');

/**
 * What the page shows: {store, actions}. Live, the store the stream fills
 * and actions on the REST API; a recording gets a store and actions of its
 * own (on the player's API, which answers from the file and refuses every
 * change), so that nothing the live page still had under way lands in it.
 */
function newSession(api, replay = null) {
  const store = createStore();
  if (replay) {
    store.page.replay.value = replay;
    store.setConnection({ status: 'replay' });
  }
  return { store, actions: createActions({ api, store }) };
}
const session = signal(replayURL ? newSession(refusingApi(), { name: replayURL, header: null, server: false }) : newSession(createApi()));
// The live session, while there is one.
const liveSession = replayURL ? null : session.peek();
const player = signal(null);
// {state: "loading" | "error", name, message} while a recording opens or when it did not.
const opening = signal(null);
const dropping = signal(false);
let stream = null;

/** The name a response gives its file (Content-Disposition), or the URL's last part. */
function fileName(res, url) {
  const m = /filename="?([^";]+)"?/.exec(res.headers.get('Content-Disposition') || '');
  return m ? m[1] : decodeURIComponent(new URL(url).pathname.split('/').pop() || url);
}

/** Reads a recording (a Blob or a fetch's body) and replays it; says why when it cannot. */
async function replay(body, name, server = false) {
  opening.value = { state: 'loading', name };
  let rec;
  try {
    rec = await readRecording(body);
  } catch (err) {
    opening.value = { state: 'error', name, message: err?.message || String(err) };
    return;
  }
  // From here the page shows the recording: the stream closes, and the live
  // session is left behind with whatever it had under way.
  stream?.close();
  stream = null;
  player.peek()?.close();
  const old = session.peek().store.page;
  const next = newSession(refusingApi(), { name, header: rec.header, server });
  next.store.inBatch(() => {
    // The display stays as it was, and the pod or cycle a link named (#/pod/...) stays chosen.
    next.store.setTheme(old.theme.peek());
    next.store.setProjector(old.projector.peek());
    next.store.selectPod(old.selectedPod.peek(), old.selectedCycle.peek(), old.view.peek());
  });
  const p = createPlayer({ rec, store: next.store });
  batch(() => {
    player.value = p;
    next.actions = createActions({ api: p.api, store: next.store });
    session.value = next;
    opening.value = null;
  });
  await p.prepare();
  // A link's pod or cycle (#/cycle/12) opens once the recording can tell of it.
  if (session.peek().store === next.store) next.actions.openRoute(parseHash(location.hash, VIEWS));
}

function openFile(file) {
  replay(file, file.name);
}

async function openURL(param) {
  let url;
  try {
    url = new URL(param, location.href);
    if (url.origin !== location.origin) throw new Error(`${url.origin} is another site: a recording must come from this server (the page may fetch nothing else)`);
    const res = await fetch(url, { headers: { Accept: 'application/gzip' } });
    if (!res.ok) {
      const body = await res.json().catch(() => null);
      throw new Error(`${url.pathname} answered HTTP ${res.status}${body?.error ? `: ${body.error}` : ''}`);
    }
    // minisched replay serves its file here, and says so at /api/v1/replay.
    const about = url.pathname === '/api/v1/recording' ? await fetch('/api/v1/replay').then((r) => (r.ok ? r.json() : null)).catch(() => null) : null;
    await replay(res.body, about?.name || fileName(res, url.href), !!about);
  } catch (err) {
    opening.value = { state: 'error', name: url?.pathname || param, message: err?.message || String(err) };
  }
}

// A file dragged over the page can be dropped anywhere on it.
const hasFiles = (ev) => [...(ev.dataTransfer?.types || [])].includes('Files');
window.addEventListener('dragover', (ev) => {
  if (!hasFiles(ev)) return;
  ev.preventDefault();
  dropping.value = true;
});
window.addEventListener('dragleave', (ev) => { if (!ev.relatedTarget) dropping.value = false; });
window.addEventListener('drop', (ev) => {
  if (!hasFiles(ev)) return;
  ev.preventDefault();
  dropping.value = false;
  const file = ev.dataTransfer.files?.[0];
  if (file) openFile(file);
});
// The views' clocks ("12 s ago", countdowns, the timeline's edge) tell the recorded time.
effect(() => { replayNow.value = player.value ? player.value.state.value.time : null; });

// The address's #fragment names the view, or the pod or cycle the
// inspector shows (#/pod/default/web-1, #/cycle/12): a reload keeps it, and
// a link shares it.
// A recording's is only noted now, without asking anything: it opens once the recording is ready.
const linked = parseHash(location.hash, VIEWS);
if (!replayURL) session.peek().actions.openRoute(linked);
else if (linked) session.peek().store.selectPod(linked.pod ?? null, linked.cycle ?? null, linked.view);
window.addEventListener('hashchange', () => session.peek().actions.openRoute(parseHash(location.hash, VIEWS)));
effect(() => {
  const { view, selectedPod, selectedCycle } = session.value.store.page;
  const h = hashFor(view.value, selectedPod.value, selectedCycle.value);
  if (location.hash !== h) history.replaceState(null, '', h);
});

// Instructor mode: the theme and the projector layout, kept for the next visit.
const saved = JSON.parse(localStorage.getItem('minisched.display') || '{}');
session.peek().store.setTheme(THEMES.includes(saved.theme) ? saved.theme : 'auto');
session.peek().store.setProjector(!!saved.projector);
const systemDark = window.matchMedia('(prefers-color-scheme: dark)');
const prefersDark = signal(systemDark.matches);
systemDark.addEventListener('change', (ev) => { prefersDark.value = ev.matches; });
effect(() => {
  const { page } = session.value.store;
  const theme = page.theme.value;
  const projector = page.projector.value;
  const root = document.documentElement;
  root.dataset.theme = theme === 'auto' ? (prefersDark.value ? 'dark' : 'light') : theme;
  root.toggleAttribute('data-projector', projector);
  localStorage.setItem('minisched.display', JSON.stringify({ theme, projector }));
});

// Keyboard shortcuts (route.js says which key does what).
window.addEventListener('keydown', (ev) => {
  const el = ev.target instanceof Element ? ev.target : null;
  const replaying = !!session.peek().store.page.replay.peek();
  const s = shortcut({
    key: ev.key, ctrlKey: ev.ctrlKey, altKey: ev.altKey, metaKey: ev.metaKey,
    inField: !!el?.closest('input, textarea, select, [contenteditable]'), onButton: !!el?.closest('button, summary, a'),
  }, tabsOf(replaying).map((t) => t.id), replaying);
  if (!s) return;
  ev.preventDefault();
  // Before the recording is ready the player's keys do nothing.
  if (s.action === 'player') player.peek()?.[s.arg]();
  else session.peek().actions[s.action](s.arg);
});

if (replayURL) openURL(replayURL);
if (liveSession) {
  const { store, actions } = liveSession;
  // Messages are applied together every 50 ms at most (stream.js): the
  // views render a few times a second however fast the scheduler goes.
  stream = connectStream({ store, defer: (fn) => setTimeout(fn, 50) });
  // On a big cluster the stream leaves out the Filter and Score matrices
  // (store/index.js, limits.matrixNodes); the inspector loads them over REST.
  effect(() => stream?.setKinds(store.streamKinds.value));
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
}
setInterval(() => session.peek().store.expireNotices(), 1000);
// The timeline's rows are brought up to date when the page is idle, a
// second apart at most: the store keeps the rows of pods that did not
// change, so that opening the timeline on 20,000 pods finds them made
// rather than making them all in the click's task. (Safari has no
// requestIdleCallback: a timer stands in.)
const whenIdle = globalThis.requestIdleCallback?.bind(globalThis) ?? ((fn) => setTimeout(fn, 250));
(function warmTimeline() {
  whenIdle(() => {
    session.peek().store.timelineRows.peek();
    setTimeout(warmTimeline, 1000);
  });
}());

// A hook for tests and the console.
window.minisched = {
  get store() { return session.peek().store; },
  get actions() { return session.peek().actions; },
  get stream() { return stream; },
  get player() { return player.peek(); },
};
// The loading line and the noscript go: the app replaces them.
const root = document.getElementById('root');
root.replaceChildren();
render(html`<${Root} />`, root);

// app.js: wires the store, the stream, the API and the views. Each view
// reads the store's signals and renders again when what it read changes.
// With ?recording=URL, or a recording opened or dropped on the page, it
// replays that file instead (replay/player.js): no stream, and nothing sent that
// changes anything.

import { render } from 'preact';
import { useEffect } from 'preact/hooks';
// Teaches Preact to track the signals a component reads while it renders.
import '@preact/signals';
import { html } from './ui.js';
import { batch, computed, effect, signal, untracked } from './signals.js';
import { hashFor, parseHash, shortcut, THEMES } from './route.js';
import { createStore, VIEWS } from './store/index.js';
import { createApi } from './net/api.js';
import { connectStream } from './net/stream.js';
import { createActions } from './actions/index.js';
import { replayNow } from './clock.js';
import { readRecording, stepPosition } from './replay/recording.js';
import { createPlayer, refusingApi } from './replay/player.js';
import LessonBanner from './views/lesson.js';
import { PlayerBar, ReplayBanner, ReplayOpening } from './views/player.js';
import {
  Connection, CopyBanner, Counts, Display, Gates, InterruptedBanner, Notices, ResetDialog, SchedulerBar, Tabs, tabsOf,
} from './views/shell.js';

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
      <${Gates} store=${store} />
      <${SchedulerBar} store=${store} actions=${actions} />
    </header>
    <div class="tabs-row">
      <${Tabs} store=${store} actions=${actions} />
      <${Display} store=${store} actions=${actions} onOpen=${openFile} />
    </div>
    ${replay ? html`<${ReplayBanner} replay=${replay} />` : null}
    ${!replay && store.server.interruptedImport.value ? html`<${InterruptedBanner} interrupted=${store.server.interruptedImport.value} store=${store} actions=${actions} />` : null}
    ${!replay && store.server.copy.value ? html`<${CopyBanner} copy=${store.server.copy.value} store=${store} actions=${actions} />` : null}
    ${player.value ? html`<${PlayerBar} player=${player.value} />` : null}
    <${ReplayOpening} opening=${opening.value} onOpen=${openFile} onDismiss=${player.value || !replayURL ? () => { opening.value = null; } : null} />
    <${LessonBanner} key=${store.server.lessonRun()?.id} store=${store} actions=${actions} />
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
    store.setReplay(replay);
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

/**
 * Reads a recording (a Blob or a fetch's body) and replays it; says why
 * when it cannot. at, when given, names the position to open at.
 */
async function replay(body, name, server = false, at = null) {
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
  if (at) p.seek(at(rec));
  // A link's pod or cycle (#/cycle/12) opens once the recording can tell of it.
  if (session.peek().store === next.store) next.actions.openRoute(parseHash(location.hash, VIEWS));
}

function openFile(file) {
  replay(file, file.name);
}

async function openURL(param, at = null) {
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
    await replay(res.body, about?.name || fileName(res, url.href), !!about, at);
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
const TEXT_FIELDS = 'input:not([type="radio"], [type="checkbox"], [type="button"], [type="submit"], [type="reset"], [type="file"], [type="range"], [type="color"]), textarea, select, [contenteditable]';
window.addEventListener('keydown', (ev) => {
  const el = ev.target instanceof Element ? ev.target : null;
  const replaying = !!session.peek().store.page.replay.peek();
  const s = shortcut({
    key: ev.key, ctrlKey: ev.ctrlKey, altKey: ev.altKey, metaKey: ev.metaKey,
    // A radio or a checkbox takes no text: the number keys still switch
    // views there; Space and Enter are theirs, as a button's.
    inField: !!el?.closest(TEXT_FIELDS), onButton: !!el?.closest('button, summary, a, input[type="radio"], input[type="checkbox"]'),
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
  // A lesson's earlier step, as the cluster was then: the server's history
  // replayed up to the end of that step (the lesson goes on meanwhile).
  actions.showStep = (runId, step) => openURL('/api/v1/recording', (rec) => stepPosition(rec, runId, step));
  // The runs so far: a page opened (or reloaded) during a lesson shows its
  // banner, which the stream's events alone would not bring back.
  actions.loadScenarios();
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

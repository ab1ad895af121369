// views/shell.js: the frame around the views: the header (the
// connection, the counts, the scheduler's buttons), the tabs, the display
// switches, the banners of a copy, the notices and the reset dialog.

import { useEffect } from 'preact/hooks';
import { html } from '../ui.js';
import { clock } from '../clock.js';
import { formatClock, formatCountdown, mirrorWords, plural, queueTitle, shortCount } from '../format.js';
import { toMillis } from '../store/index.js';
import QueueBoard from './queue.js';
import Inspector from './inspector/inspector.js';
import Cluster from './cluster/cluster.js';
import Timeline from './timeline/timeline.js';
import Controls from './controls.js';
import Performance from './performance/performance.js';
import Compare from './compare/compare.js';
import { OpenRecording, READ_ONLY, RecordingView } from './player.js';

const TABS = [
  { id: 'queue', label: 'Queue', View: QueueBoard },
  { id: 'cycle', label: 'Cycle inspector', View: Inspector },
  { id: 'cluster', label: 'Cluster', View: Cluster },
  { id: 'timeline', label: 'Timeline', View: Timeline },
  { id: 'controls', label: 'Controls', View: Controls },
  { id: 'compare', label: 'Compare', View: Compare },
  { id: 'performance', label: 'Performance', View: Performance },
];

export function Connection({ store, stream }) {
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

export function SchedulerBar({ store, actions }) {
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
      <span class="sched-word">scheduler </span>${scheduler.state}${paused && scheduler.steps ? ` (${scheduler.steps} step${scheduler.steps > 1 ? 's' : ''} pending)` : ''}
    </span>
    ${paused
      ? html`<button type="button" id="resume" onClick=${actions.resume} disabled=${busy}>Resume</button>`
      : html`<button type="button" id="pause" onClick=${actions.pause} disabled=${busy || scheduler.state !== 'running'}>Pause</button>`}
    <button type="button" id="step" onClick=${actions.step} disabled=${busy || !paused} title="S: schedule one pod, then stay paused">Step</button>
  </div>`;
}

/** The feature gates this run set (--feature-gates), when it set any. */
export function Gates({ store }) {
  const gates = Object.entries(store.server.featureGates.value).sort(([a], [b]) => (a < b ? -1 : 1));
  if (!gates.length) return null;
  const words = gates.map(([g, on]) => `${g}=${on}`).join(', ');
  return html`<span class="gates small" id="feature-gates" title=${`--feature-gates ${words}: for this run, in the scheduler, the apiserver and the controllers`}>gates: ${words}</span>`;
}

export function Counts({ store }) {
  const c = store.counts.value;
  // In flight shows on the queue board; the header counts the waiting.
  const queues = store.server.vocabulary.value.queues.filter((q) => q !== 'inFlight');
  // The header stays one line: big counts are shortened (the exact one
  // in the title); on a narrow screen a queue's count is its lane's colour
  // and the number.
  const count = (n, word, cls) => html`<span key=${word} class=${cls} title=${`${n} ${word}`}><strong>${shortCount(n)}</strong> <span class="count-word">${word}</span></span>`;
  return html`<div class="counts" aria-label="cluster counts">
    ${count(c.nodes, 'nodes', '')}
    ${count(c.pods, 'pods', '')}
    ${queues.map((q) => count(c.queues[q], queueTitle(q), `q-count q-${q}`))}
  </div>`;
}

export function Notices({ store, actions }) {
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
export function tabsOf(replaying) {
  return replaying ? TABS.filter((t) => t.id !== 'compare').map((t) => (t.id === 'controls' ? { ...t, label: 'Recording', View: RecordingView } : t)) : TABS;
}

export function Tabs({ store, actions }) {
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
export function ResetDialog({ store, actions }) {
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
export function Display({ store, actions, onOpen }) {
  const theme = store.page.theme.value;
  const projector = store.page.projector.value;
  return html`<div class="display" role="group" aria-label="display">
    <button type="button" class="small" id="theme" onClick=${actions.nextTheme} title="T: light, dark, or as the system says">theme: ${theme}</button>
    <button type="button" class="small" id="projector" aria-pressed=${projector ? 'true' : 'false'} onClick=${actions.toggleProjector} title="P: larger type, fewer panels">projector</button>
    <${OpenRecording} onOpen=${onOpen} />
  </div>`;
}

/** Says the cluster is a copy, of what, and that nothing here reaches the original. */
export function CopyBanner({ copy, store, actions }) {
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

/** InterruptedBanner says an import was cut off by a crash, and offers to finish it or reset. */
export function InterruptedBanner({ interrupted, store, actions }) {
  const nodes = store.cluster.nodes.size;
  const pods = store.cluster.pods.size;
  return html`<section class="copy-banner interrupted-banner" id="interrupted-banner" role="alert" aria-label="an interrupted import">
    <strong>Import interrupted</strong> <span>minisched stopped while it loaded ${interrupted.source}${interrupted.began ? html` <span class="muted small">(begun at ${formatClock(toMillis(interrupted.began))})</span>` : null}:
    the cluster holds ${plural(nodes, 'node')} and ${plural(pods, 'pod')} of its ${plural(interrupted.nodes, 'node')} and ${plural(interrupted.pods, 'pod')}.</span>
    ${interrupted.resumable ? html` <button type="button" id="resume-import" disabled=${store.page.isBusy('import')} onClick=${actions.resumeImport}>Finish the import</button>` : null}
    <button type="button" id="interrupted-reset" disabled=${store.page.isBusy('reset')} onClick=${actions.askReset}>Reset…</button>
  </section>`;
}

// How often the banner asks a mirror how far behind it is.
const MIRROR_POLL = 2000;

// The queue board: activeQ, backoffQ and unschedulable as lanes, the pods in
// flight above them. Each card says what moved the pod there.

import { html, pure, VirtualList } from '../ui.js';
import { describeMove, formatAgo, formatCountdown, podLabel } from '../format.js';

const LANES = [
  { id: 'active', title: 'activeQ', hint: 'waiting for a scheduling cycle, highest priority first' },
  { id: 'backoff', title: 'backoffQ', hint: 'rejected recently; back to activeQ when the backoff ends, or popped early when activeQ is empty' },
  { id: 'errorBackoff', title: 'error backoff', hint: 'failed with an error; back to activeQ when the backoff ends, never early' },
  { id: 'unschedulable', title: 'unschedulable', hint: 'waiting for a cluster event that may help' },
];

const ROW = 112;

function reasonLine(entry, failure) {
  if (entry.gatingPlugin) return `gated by ${entry.gatingPlugin}`;
  if (entry.queue === 'active' && entry.plugins?.length && entry.event && entry.event !== 'PodAdd') {
    return `${entry.plugins.join(', ')} said it may fit now`;
  }
  const plugins = entry.queue !== 'active' && entry.plugins?.length ? entry.plugins : failure?.plugins;
  if (plugins?.length && entry.queue !== 'active') return `rejected by ${plugins.join(', ')}`;
  return '';
}

function PodCard({ entry, info, pod, now, onOpen, selected }) {
  const failure = info?.lastFailure;
  const reason = reasonLine(entry, failure);
  const message = entry.message || (entry.queue !== 'active' ? failure?.message || pod?.message || '' : '');
  const move = describeMove(entry.event);
  // backoffUntil is aligned down to its one-second window; the flush takes
  // the pod when that window is over, a second later.
  const countdown = (entry.queue === 'backoff' || entry.queue === 'errorBackoff') && entry.backoffUntil ? formatCountdown(entry.backoffUntil + 1000 - now) : '';
  return html`<button type="button" class=${`card pod-card q-${entry.queue}${selected ? ' selected' : ''}`}
      data-pod=${entry.key} onClick=${() => onOpen(entry.key)}
      title=${message || reason || entry.key}>
    <span class="card-head">
      <span class="pod-name">${podLabel(entry.pod)}</span>
      <span class="badge" title="scheduling attempts so far">${entry.attempts ? `attempt ${entry.attempts}` : 'new'}</span>
    </span>
    <span class="card-line muted">
      ${move ? html`<span class="move">${move}</span> · ` : null}${formatAgo(entry.changedAt, now)}
      ${entry.priority ? html` · <span class="prio">priority ${entry.priority}</span>` : null}
      ${countdown ? html` · <span class="countdown" aria-label=${`backoff ends in ${countdown}`}>⏱ ${countdown}</span>` : null}
    </span>
    ${reason ? html`<span class="card-line reason">${reason}</span>` : null}
    ${message && entry.queue !== 'active' ? html`<span class="card-line message">${message}</span>` : null}
  </button>`;
}

function Lane({ lane, entries, store, now, onOpen, selected }) {
  const st = store.state;
  return html`<section class=${`lane lane-${lane.id}`} aria-labelledby=${`lane-${lane.id}`}>
    <header class="lane-head">
      <h2 id=${`lane-${lane.id}`}>${lane.title} <span class="count">${entries.length}</span></h2>
      <p class="lane-hint">${lane.hint}</p>
    </header>
    <${VirtualList} items=${entries} rowHeight=${ROW} keyOf=${(e) => e.key} label=${`${lane.title}: ${entries.length} pods`}
      className="lane-list" empty=${'empty'}
      renderRow=${(e) => html`<${PodCard} entry=${e} info=${st.podInfo.get(e.key)} pod=${st.pods.get(e.key)} now=${now}
        onOpen=${onOpen} selected=${selected === e.key} />`} />
  </section>`;
}

const PureLane = pure(Lane, 'Lane');

function InFlight({ entries, store, onOpen }) {
  const st = store.state;
  return html`<div class="inflight" aria-live="polite">
    <span class="inflight-label">in flight <span class="count">${entries.length}</span></span>
    ${entries.slice(0, 8).map((e) => {
      const info = st.podInfo.get(e.key);
      const cid = info?.cycleIds[info.cycleIds.length - 1];
      const c = cid ? st.cycles.get(cid) : null;
      const what = c?.waiting ? 'waiting at Permit' : c?.end?.result === 'scheduled' ? `binding to ${c.end.node}` : 'in a scheduling cycle';
      return html`<button type="button" class="chip q-inFlight" data-pod=${e.key} onClick=${() => onOpen(e.key)}>
        ${podLabel(e.pod)} <span class="muted">${what}</span></button>`;
    })}
    ${entries.length > 8 ? html`<span class="muted">+${entries.length - 8} more</span>` : null}
    ${entries.length === 0 ? html`<span class="muted">no pod is being scheduled</span>` : null}
  </div>`;
}

const PureInFlight = pure(InFlight, 'InFlight');

/** QueueBoard re-renders when the queue changes, and each tick for countdowns. */
export function QueueBoard({ store, actions, revQueue, revCycles, tick, selected }) {
  const lanes = store.lanes();
  const now = tick;
  const onOpen = actions.inspectPod;
  return html`<div class="queue-board">
    <${PureInFlight} entries=${lanes.inFlight} store=${store} onOpen=${onOpen} rev=${revQueue} revCycles=${revCycles} />
    <div class="lanes">
      ${LANES.map((lane) => html`<${PureLane} key=${lane.id} lane=${lane} entries=${lanes[lane.id]} store=${store}
        now=${lanes[lane.id].length && (lane.id === 'backoff' || lane.id === 'errorBackoff') ? now : Math.floor(now / 5000) * 5000}
        onOpen=${onOpen} selected=${selected} rev=${revQueue} />`)}
    </div>
  </div>`;
}

export default pure(QueueBoard, 'QueueBoard');

// The queue board: a lane per queue of the server's vocabulary, in the order
// the server serves it; the pods in flight above them. Each card says what
// moved the pod there. A long lane counts its pods by reason (one button
// each, which keeps the lane to that reason), and a search box finds pods
// by name or reason on every lane.

import { useMemo, useState } from 'preact/hooks';
import { html, VirtualList } from '../ui.js';
import { laneGroups, laneShown } from './lanes.js';
import { clock } from '../clock.js';
import { describeMove, formatAgo, formatCountdown, keyLabel, plural, podLabel, queueTitle, waitReasons } from '../format.js';

const HINTS = {
  active: 'waiting for a scheduling cycle',
  backoff: 'rejected recently; back to activeQ when the backoff ends, or popped early when activeQ is empty',
  errorBackoff: 'failed with an error; back to activeQ when the backoff ends, never early',
  unschedulable: 'waiting for a cluster event that may help',
  incompletePodGroup: 'pods of a pod group whose PodGroup object the scheduler has not seen yet',
  pendingPodGroup: 'pods that came back, or came, while their group was in its cycle; they join it after',
};

// A card's height, in rem: it follows the type size.
const ROW_REM = 6.2;
// A lane of this many pods or more counts them by reason; the largest
// groups are named, the rest counted.
const GROUP_FROM = 6;
const GROUPS_SHOWN = 5;

function PodCard({ store, actions, podKey: key }) {
  const entry = store.queue.entries.get(key);
  if (!entry) return null;
  const pod = store.cluster.pods.get(key);
  const failure = store.cycles.podInfo.get(key)?.lastFailure;
  const selected = store.page.selectedPod.value === key;
  // A backoff counts down four times a second; "12 s ago" moves every 5 s.
  const now = clock(entry.backoffUntil ? 250 : 5000);
  // The last QueueSkip takes the message's line: it is the newest news,
  // and the message stays in the card's title.
  const all = waitReasons(entry);
  const skipped = all.find((r) => r.kind === 'skipped');
  const reasons = all.filter((r) => r !== skipped);
  const message = entry.message || (entry.queue !== 'active' ? failure?.message || pod?.message || '' : '');
  const move = describeMove(entry.event);
  // backoffUntil is aligned down to its one-second window; the flush takes
  // the pod when that window is over, a second later. Once it is over the
  // pod is on its way out: no countdown.
  const left = entry.backoffUntil ? entry.backoffUntil + 1000 - now : 0;
  const countdown = left > 0 ? formatCountdown(left) : '';
  return html`<button type="button" class=${`card pod-card q-${entry.queue}${selected ? ' selected' : ''}`}
      data-pod=${key} onClick=${() => actions.inspectPod(key)}
      title=${[message, skipped?.text].filter(Boolean).join('; ') || all.map((r) => r.text).join('; ') || key}>
    <span class="card-head">
      <span class="pod-name">${podLabel(entry.pod)}</span>
      <span class="badge" title="scheduling attempts so far">${entry.attempts ? `attempt ${entry.attempts}` : 'new'}</span>
    </span>
    <span class="card-line muted">
      ${move ? html`<span class="move">${move}</span> · ` : null}${formatAgo(entry.changedAt, now)}
      ${pod?.priority ? html` · <span class="prio">priority ${pod.priority}</span>` : null}
      ${entry.podGroup ? html` · <span class="pod-group" title="the pod group it is queued with">group ${entry.podGroup}</span>` : null}
      ${countdown ? html` · <span class="countdown">backoff ${countdown}</span>` : null}
    </span>
    ${reasons.length ? html`<span class="card-line">${reasons.map((r, i) => html`${i ? ' · ' : ''}<span class=${`why-${r.kind}`}>${r.text}</span>`)}</span>` : null}
    ${skipped ? html`<span class="card-line why-skipped">${skipped.text}</span>`
      : message && entry.queue !== 'active' ? html`<span class="card-line message">${message}</span>` : null}
  </button>`;
}

/**
 * How activeQ is ordered: by the QueueSort plugin, or by arrival when it
 * gives no key. The scheduler's state says, so a restart with another
 * QueueSort plugin shows at once.
 */
function OrderLine({ store }) {
  const sort = store.server.scheduler.value.queueSort;
  if (!sort?.plugin) return null;
  return html`<p class="lane-hint">${sort.ordered ? `in ${sort.plugin}'s order` : `order: arrival; ${sort.plugin} gives no sort key`}</p>`;
}

/** A lane's reasons with their counts; one pressed keeps the lane to it. */
function Groups({ title, groups, active, onPick }) {
  if (!groups.length) return null;
  return html`<div class="lane-groups" role="group" aria-label=${`${title} by reason`}>
    ${groups.slice(0, GROUPS_SHOWN).map((g) => html`<button type="button" key=${g.reason} class="chip group-chip" data-reason=${g.reason}
        aria-pressed=${g.reason === active ? 'true' : 'false'} onClick=${() => onPick(g.reason === active ? null : g.reason)}
        title=${g.reason === active ? 'show every pod of the lane' : `show only the pods ${g.reason}`}>
      ${g.reason} <span class="count">${g.count}</span></button>`)}
    ${groups.length > GROUPS_SHOWN ? html`<span class="muted">+${groups.length - GROUPS_SHOWN} more reasons</span>` : null}
  </div>`;
}

function Lane({ store, actions, name, search }) {
  const keys = store.lane(name).value;
  const [group, setGroup] = useState(null);
  // Read without subscribing: the lane's keys change whenever a pod moves
  // in or out, which is when its reason changes.
  const entryOf = (k) => store.queue.entries.peek(k);
  const groups = useMemo(() => (keys.length >= GROUP_FROM ? laneGroups(keys, entryOf) : []), [keys]);
  const active = group && groups.some((g) => g.reason === group) ? group : null;
  const shown = useMemo(() => laneShown(keys, entryOf, { search, group: active }), [keys, search, active]);
  const title = queueTitle(name);
  return html`<section class=${`lane lane-${name}${keys.length ? '' : ' lane-empty'}`} aria-labelledby=${`lane-${name}`}>
    <header class="lane-head">
      <h2 id=${`lane-${name}`}>${title} <span class="count">${shown.length === keys.length ? keys.length : `${shown.length} of ${keys.length}`}</span></h2>
      <p class="lane-hint">${HINTS[name] || ''}</p>
      ${name === 'active' ? html`<${OrderLine} store=${store} />` : null}
      <${Groups} title=${title} groups=${groups} active=${active} onPick=${setGroup} />
    </header>
    <${VirtualList} items=${shown} rowRem=${ROW_REM} keyOf=${(k) => k} label=${`${title}: ${plural(shown.length, 'pod')}`}
      className="lane-list" empty=${keys.length ? 'no pod matches' : 'empty'}
      renderRow=${(k) => html`<${PodCard} store=${store} actions=${actions} podKey=${k} />`} />
  </section>`;
}

function InFlightChip({ store, actions, podKey: key }) {
  const ids = store.cycles.podInfo.get(key)?.cycleIds;
  const c = ids?.length ? store.cycles.summaries.get(ids[ids.length - 1]) : null;
  const what = c?.waiting ? 'waiting at Permit' : c?.end?.result === 'scheduled' ? `binding to ${c.end.node}` : 'in a scheduling cycle';
  return html`<button type="button" class="chip q-inFlight" data-pod=${key} onClick=${() => actions.inspectPod(key)}>
    ${keyLabel(key)} <span class="muted">${what}</span></button>`;
}

function InFlight({ store, actions }) {
  const keys = store.lane('inFlight').value;
  return html`<div class="inflight" aria-live="polite">
    <span class="inflight-label">${queueTitle('inFlight')} <span class="count">${keys.length}</span></span>
    ${keys.slice(0, 8).map((k) => html`<${InFlightChip} key=${k} store=${store} actions=${actions} podKey=${k} />`)}
    ${keys.length > 8 ? html`<span class="muted">+${keys.length - 8} more</span>` : null}
    ${keys.length === 0 ? html`<span class="muted">no pod is being scheduled</span>` : null}
  </div>`;
}

/**
 * The pods bound last, newest first: on a busy scheduler a pod leaves the
 * board within milliseconds. A click opens its cycle.
 */
export function RecentlyBound({ store, actions }) {
  const recent = store.cycles.recentBound.value;
  const now = clock(5000);
  return html`<div class="recent-bound" id="recent-bound" aria-label="recently bound pods">
    <span class="inflight-label">bound lately</span>
    ${recent.length ? recent.map((r) => html`<button type="button" key=${r.key} class="chip recent" data-pod=${r.key} onClick=${() => actions.inspectPod(r.key, r.cycle)}
        title=${`${r.key} bound to ${r.node}${r.t ? `, ${formatAgo(r.t, now)}` : ''}: open its cycle`}>${keyLabel(r.key)} <span class="muted">→ ${r.node}</span></button>`)
      : html`<span class="muted">no pod bound yet</span>`}
  </div>`;
}

/** With no node, no pod can be scheduled: say what to do first. */
function NoNodes({ store, actions }) {
  if (store.cluster.nodes.size > 0) return null;
  if (store.page.replay.value) {
    return html`<div class="first-steps" role="status" id="no-nodes"><span><strong>The cluster has no node yet</strong> at this point of the recording, so every pod waits.</span></div>`;
  }
  return html`<div class="first-steps" role="status" id="no-nodes">
    <span><strong>The cluster has no node yet</strong>, so every pod waits.</span>
    <button type="button" class="primary" onClick=${actions.goAddNode}>Add a node</button>
    <button type="button" onClick=${actions.goLessons}>Run a lesson</button>
  </div>`;
}

export default function QueueBoard({ store, actions }) {
  const [search, setSearch] = useState('');
  // In flight is not a lane: those pods are being scheduled, shown above.
  const lanes = store.server.vocabulary.value.queues.filter((q) => q !== 'inFlight');
  if (!lanes.length) return html`<p class="hint" role="status">Waiting for the scheduler's first snapshot…</p>`;
  return html`<div class="queue-board">
    <${NoNodes} store=${store} actions=${actions} />
    <div class="board-bar">
      <${InFlight} store=${store} actions=${actions} />
      <label class="filter-box">Find <input type="search" id="queue-search" placeholder="pod name or plugin" value=${search} onInput=${(e) => setSearch(e.currentTarget.value)} /></label>
    </div>
    <${RecentlyBound} store=${store} actions=${actions} />
    <div class="lanes">
      ${lanes.map((name) => html`<${Lane} key=${name} store=${store} actions=${actions} name=${name} search=${search} />`)}
    </div>
  </div>`;
}

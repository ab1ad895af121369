// queue.js: where each pod waits in the scheduling queue (activeQ, the
// backoffs, unschedulable, or in flight in a cycle), what moved it there, and
// the lanes in the order the server serves them.

import { computed, signal } from '../signals.js';
import { keyedMap, natural, podKey, sameUid, toMillis } from './common.js';

const NONE = Object.freeze([]);

/**
 * The server's order: by `order` (an opaque string), ties by pod key. Pods
 * without one (activeQ under a QueueSort plugin that gives no key, and the
 * pods in flight) keep their arrival order, after those with one.
 */
function byServerOrder(a, b) {
  const ao = a.order ?? null;
  const bo = b.order ?? null;
  if ((ao === null) !== (bo === null)) return ao === null ? 1 : -1;
  if (ao !== bo) return ao < bo ? -1 : 1;
  if (ao === null && a.enteredAt !== b.enteredAt) return a.enteredAt - b.enteredAt;
  return natural(a.key, b.key);
}

function sameItems(a, b) {
  return b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * A queue event as a step of the pod's story: {t, action, from, to, event,
 * object, rejectedBy, hintedBy, skippedBy, gatingPlugin, failed,
 * backoffUntil, message, attempts}. A move out of a cycle is a failed attempt (a successful one is
 * "done"): its plugins rejected the pod. On a skip (action "skip": a
 * cluster event was checked and the pod stayed), plugins are those whose
 * QueueingHint said QueueSkip. On any other move, plugins are those whose
 * QueueingHint said Queue to the cluster event (about object) that moved
 * it. rejectedBy,
 * when the server sends it, names the last attempt's rejecters on every
 * move. event, when given, replaces the one the queue event names; seq is
 * the event's place in the history.
 */
export function moveStep(q, t, seq, event = null) {
  const failed = q.action === 'move' && q.from === 'inFlight';
  const skip = q.action === 'skip';
  const plugins = q.plugins || NONE;
  return {
    t,
    seq: seq ?? null,
    action: q.action,
    from: q.from || null,
    to: q.to || null,
    event: event ?? (q.action === 'pop' ? 'Pop' : q.event || ''),
    object: q.object || '',
    rejectedBy: failed ? (q.rejectedBy || plugins) : (q.rejectedBy || NONE),
    hintedBy: failed || skip ? NONE : plugins,
    skippedBy: skip ? plugins : NONE,
    gatingPlugin: q.gatingPlugin || '',
    failed,
    backoffUntil: toMillis(q.backoffUntil),
    message: q.message || '',
    attempts: q.attempts ?? null,
  };
}

export function createQueue() {
  // Pod key -> {key, pod, queue, order, attempts, enteredAt, changedAt,
  // backoffUntil, event, rejectedBy, hintedBy, gatingPlugin, podGroup,
  // message, skip}: podGroup the pod group it is queued with (or '');
  // rejectedBy the plugins that rejected the pod in its last attempt,
  // hintedBy those whose QueueingHint said Queue on its last move, when a
  // cluster event moved it; skip the last cluster event since that move
  // whose hints all said QueueSkip ({t, event, object, plugins}), or null.
  const entries = keyedMap();

  // Queue name -> {list, version}: the entries of the pods in that queue,
  // kept in the server's order as they move (a binary search and a splice
  // per move, not a sort of every pod per message: with 20,000 pods queued
  // a sort per message took longer than a frame), and a signal that counts
  // its changes.
  const lanes = new Map();
  function laneOf(name) {
    let l = lanes.get(name);
    if (!l) lanes.set(name, l = { list: [], version: signal(0) });
    return l;
  }
  /** The index of the first entry of list not before e. */
  function lowerBound(list, e) {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (byServerOrder(list[mid], e) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  function place(e) {
    const l = laneOf(e.queue);
    l.list.splice(lowerBound(l.list, e), 0, e);
    l.version.value = l.version.peek() + 1;
  }
  function unplace(e) {
    const l = lanes.get(e.queue);
    if (!l) return;
    let i = lowerBound(l.list, e);
    if (l.list[i] !== e) i = l.list.indexOf(e);
    if (i < 0) return;
    l.list.splice(i, 1);
    l.version.value = l.version.peek() + 1;
  }
  /** Replaces the entry of key (old, if any) with next (none when null). */
  function put(key, old, next) {
    if (old) unplace(old);
    if (next) {
      entries.set(key, next);
      place(next);
    } else entries.delete(key);
  }
  // Queue name -> computed pod keys. A lane whose keys did not change keeps
  // its array, so that its view does not render again.
  const laneCache = new Map();

  return {
    entries,

    /** The keys of the pods in one queue, in the server's order. */
    lane(name) {
      if (!laneCache.has(name)) {
        let previous = NONE;
        laneCache.set(name, computed(() => {
          const l = laneOf(name);
          l.version.value;
          const keys = l.list.length ? l.list.map((e) => e.key) : NONE;
          if (!sameItems(keys, previous)) previous = keys;
          return previous;
        }));
      }
      return laneCache.get(name);
    },

    /**
     * Applies a queue event. Returns {step, failure}: the step for the pod's
     * trail (null for an update in place) and, when the move ends a failed
     * attempt, that failure; null when the event names no queue.
     */
    apply(e, t) {
      const key = podKey(e.pod);
      const q = e.queue;
      const old = entries.peek(key);
      const same = !!old && sameUid(old.pod, e.pod);
      if (q.action === 'skip') {
        // The pod stays where it is; the card shows the hint's answer.
        if (!same) return null;
        put(key, old, { ...old, skip: { t, event: q.event || '', object: q.object || '', plugins: q.plugins || NONE } });
        return { step: moveStep(q, t, e.seq), failure: null };
      }
      if (q.action === 'delete' || q.action === 'done') {
        if (same) put(key, old, null);
        return { step: moveStep(q, t, e.seq), failure: null };
      }
      if (!q.to) return null;
      const moved = !same || old.queue !== q.to;
      const inPlace = q.action === 'update';
      const base = same ? old : { event: '', rejectedBy: NONE, hintedBy: NONE, message: '', enteredAt: t, backoffUntil: null };
      let event = base.event;
      if (q.action === 'pop') event = 'Pop';
      // An update in place (the pod object changed) keeps what moved it here.
      else if (q.event && (!inPlace || !base.event)) event = q.event;
      const step = moveStep(q, t, e.seq, event);
      const entry = {
        key,
        pod: e.pod,
        queue: q.to,
        order: q.order,
        attempts: q.attempts ?? base.attempts ?? 0,
        enteredAt: moved ? t : base.enteredAt,
        changedAt: t,
        backoffUntil: toMillis(q.backoffUntil) ?? (moved ? null : base.backoffUntil),
        event,
        rejectedBy: step.failed || step.rejectedBy.length ? step.rejectedBy : base.rejectedBy,
        hintedBy: inPlace ? base.hintedBy : step.hintedBy,
        gatingPlugin: q.gatingPlugin || '',
        podGroup: q.podGroup || '',
        message: (inPlace ? q.message || base.message : q.message) || '',
        skip: inPlace ? base.skip ?? null : null,
      };
      put(key, old, entry);
      const failure = step.failed ? { t, plugins: step.rejectedBy, message: entry.message, attempts: entry.attempts } : null;
      return { step: moved || !inPlace ? step : null, failure };
    },

    /** What it holds, to load into another store: the entries, and each lane's order (copied: lanes change in place). */
    save() {
      return { entries: entries.pairs(), lanes: [...lanes].map(([name, l]) => [name, l.list.slice()]) };
    },

    load(s) {
      entries.assign(s.entries);
      const saved = new Map(s.lanes);
      for (const name of new Set([...lanes.keys(), ...saved.keys()])) {
        const l = laneOf(name);
        l.list = saved.get(name)?.slice() || [];
        l.version.value = l.version.peek() + 1;
      }
    },

    /** Forgets a deleted pod, unless its name now belongs to another. */
    forget(pod) {
      const old = entries.peek(podKey(pod));
      if (old && sameUid(old.pod, pod)) put(podKey(pod), old, null);
    },

    /**
     * Holds a snapshot's queue (GET /queue's shape) and its QueueSort.
     * Returns, per pod, the step and the last failure it tells of.
     */
    fromSnapshot(view, t, seq) {
      const pairs = [];
      const told = [];
      for (const [name, list] of Object.entries(view || {})) {
        for (const qp of list || []) {
          const key = podKey(qp.pod);
          const entered = toMillis(qp.enteredAt) ?? t;
          // plugins name those that rejected the pod in its last attempt.
          const rejectedBy = qp.rejectedBy || qp.plugins || NONE;
          const hintedBy = qp.hintedBy || NONE;
          const message = qp.message || '';
          const event = qp.lastEvent || '';
          const skip = qp.lastSkip ? { t: null, event: qp.lastSkip.event || '', object: qp.lastSkip.object || '', plugins: qp.lastSkip.plugins || NONE } : null;
          pairs.push([key, {
            key, pod: qp.pod, queue: name, order: qp.order, attempts: qp.attempts ?? 0, enteredAt: entered, changedAt: entered,
            backoffUntil: toMillis(qp.backoffUntil), event, rejectedBy, hintedBy, gatingPlugin: qp.gatingPlugin || '', podGroup: qp.podGroup || '', message, skip,
          }]);
          told.push({
            key,
            step: { t: entered, seq, action: 'snapshot', from: null, to: name, event, rejectedBy, hintedBy, failed: false },
            failure: rejectedBy.length ? { t: entered, plugins: rejectedBy, message, attempts: qp.attempts ?? 0 } : null,
          });
        }
      }
      entries.assign(pairs);
      for (const l of lanes.values()) {
        l.list = [];
        l.version.value = l.version.peek() + 1;
      }
      for (const [, e] of pairs) laneOf(e.queue).list.push(e);
      for (const l of lanes.values()) l.list.sort(byServerOrder);
      return told;
    },
  };
}

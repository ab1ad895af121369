// cycles.js: the scheduling cycles. The server's summary of each (the newest
// limits.cycles), the full detail (points, Filter, Score, Permit) of the
// newest limits.details seen from their start, cycles loaded over REST, and
// per pod: its queue trail, its last failure, its cycle ids, the
// preemptions it took part in and when it was deleted (the newest
// limits.deletedPods deleted pods keep their story); per pod group, the
// pods its preemptions evicted.

import { signal } from '../signals.js';
import { keyedMap, podKey, toMillis } from './common.js';

/**
 * How many of a cycle's ties a summary names; it counts them all (tieCount).
 * On a big cluster of alike nodes a cycle ties on hundreds, and 5,000
 * summaries naming them all would hold most of the page's heap.
 */
export const TIES_NAMED = 8;

function fewerTies(end) {
  if (!end) return null;
  if ((end.ties?.length ?? 0) <= TIES_NAMED) return end;
  return { ...end, ties: end.ties.slice(0, TIES_NAMED), tieCount: end.tieCount ?? end.ties.length };
}

const NO_INFO = Object.freeze({ trail: [], lastFailure: null, cycleIds: [], firstSeen: null, deletedAt: null, deletedSeq: null, victims: [], preemptedBy: null });

/**
 * The store's cycle summary from the server's (the `summary` of cycle
 * events, the items of GET /api/v1/cycles): times in milliseconds, the
 * pod's key, and the first TIES_NAMED ties.
 */
function cycleSummary(s) {
  return {
    ...s,
    podKey: podKey(s.pod),
    start: toMillis(s.start),
    end: fewerTies(s.end),
    endTime: toMillis(s.endTime),
    binding: s.binding || null,
    bindTime: toMillis(s.bindTime),
    waiting: !!s.waiting,
  };
}

/**
 * A cycle's detail, built from its events. partial: the stream left out
 * its Filter and Score events (a big cluster, see streamKinds in
 * index.js): once the cycle ends they are loaded over REST.
 */
function newDetail(partial = false) {
  return { points: [], filter: null, nominatedFilter: null, score: null, batchRecheck: null, batchScore: null, permitWait: null, extenders: [], partial };
}

/** The detail with one more of its cycle's events. */
function withEvent(detail, e) {
  switch (e.kind) {
    // In the order they ran: that is the order of the events.
    case 'point': return { ...detail, points: [...detail.points, e.point] };
    case 'filter':
      // Opportunistic batching first checks the node the last pod went to.
      if (e.filter.batch === 'recheck') return { ...detail, batchRecheck: e.filter };
      // A pass over the pod's nominated node (or the batch's hint) alone may
      // come first; the pass over all nodes follows only when the pod did
      // not fit there.
      return { ...detail, filter: e.filter, nominatedFilter: e.filter.nominatedNode ? e.filter : detail.nominatedFilter };
    // The batch's rescore is not the cycle's Score: it ranks the batch.
    case 'score': return e.score.batch === 'rescore' ? { ...detail, batchScore: e.score } : { ...detail, score: e.score };
    case 'permitWait': return { ...detail, permitWait: e.permitWait };
    // Scheduler extenders' calls, in the order they were made.
    case 'extender': return { ...detail, extenders: [...(detail.extenders || []), e.extender] };
    default: return detail;
  }
}

function bounded(list, limit) {
  return list.length > limit ? list.slice(list.length - limit) : list;
}

function earliest(a, b) {
  return a == null ? b : b == null ? a : Math.min(a, b);
}

export function createCycles(limits) {
  const summaries = keyedMap(); // cycle id -> summary
  const details = keyedMap(); // cycle id -> detail
  const fetched = keyedMap(); // cycle id -> {summary, detail, truncated}
  const remote = keyedMap(); // pod key -> summaries of its attempts, newest first
  // pod key -> {trail, lastFailure, cycleIds, firstSeen, deletedAt, victims, preemptedBy}
  const podInfo = keyedMap();
  // pod group key -> the pods its preemptions evicted [{pod, node, t, seq}]
  const groupVictims = keyedMap();
  let deleted = []; // keys of the deleted pods kept, oldest first
  // The pods bound last, newest first ({key, node, cycle, t}): a pod bound
  // in milliseconds leaves the queue board before anyone sees it.
  const recentBound = signal([]);
  // Cycle id -> the node rows (Filter and Score) its detail holds, and their
  // sum: details are bounded by count and by rows, since one cycle over
  // 5,000 nodes weighs as much as a hundred over 50.
  const weights = new Map();
  let weight = 0;

  function weigh(id, d) {
    const w = d ? (d.filter?.nodes?.length || 0) + (d.nominatedFilter && d.nominatedFilter !== d.filter ? d.nominatedFilter.nodes?.length || 0 : 0) + (d.score?.nodes?.length || 0) + (d.batchScore?.nodes?.length || 0) : 0;
    weight += w - (weights.get(id) || 0);
    if (d) weights.set(id, w);
    else weights.delete(id);
  }

  /** Drops the oldest details until limits.details and limits.detailRows hold; the newest stays. */
  function trimDetails() {
    if (details.peekSize() <= limits.details && weight <= limits.detailRows) return;
    for (const id of details.keys()) {
      if (details.peekSize() <= 1 || (details.peekSize() <= limits.details && weight <= limits.detailRows)) break;
      details.delete(id);
      weigh(id, null);
    }
  }

  function updateInfo(key, fn) {
    podInfo.set(key, fn(podInfo.get(key) || NO_INFO));
  }

  /** Counts the cycle among its pod's. */
  function addToPod(s) {
    updateInfo(s.podKey, (info) => (info.cycleIds.includes(s.id) ? info : {
      ...info,
      cycleIds: bounded([...info.cycleIds, s.id].sort((a, b) => a - b), limits.podCycles),
      firstSeen: earliest(info.firstSeen, s.start),
    }));
  }

  return {
    summaries,
    details,
    fetched,
    remote,
    podInfo,
    groupVictims,
    recentBound,

    /** Applies a cycle's event (cycleStart, point, filter, score, extender, cycleEnd, permitWait, bindingEnd). */
    apply(e, matrices = true) {
      if (e.summary) {
        const s = cycleSummary(e.summary);
        summaries.set(s.id, s);
        summaries.trim(limits.cycles);
        addToPod(s);
      }
      if (e.kind === 'bindingEnd' && e.bindingEnd?.bound && e.pod) {
        const key = podKey(e.pod);
        recentBound.value = [{ key, node: e.bindingEnd.node, cycle: e.cycle, t: toMillis(e.time) }, ...recentBound.peek().filter((r) => r.key !== key)].slice(0, limits.recentBound);
      }
      if (e.kind === 'cycleStart' && !details.peek(e.cycle)) {
        details.set(e.cycle, newDetail(!matrices));
        trimDetails();
      }
      // A cycle that started before this page connected, or whose detail
      // was dropped, has none: it is loaded over REST when someone looks at
      // it.
      const d = details.peek(e.cycle);
      if (d) {
        const next = withEvent(d, e);
        details.set(e.cycle, next);
        if (e.kind === 'filter' || e.kind === 'score') {
          weigh(e.cycle, next);
          trimDetails();
        }
      }
    },

    /**
     * Adds a queue step to the pod's trail, and the failure it tells of. A
     * snapshot's steps (action "snapshot") may repeat what the trail knows:
     * they add only what is new.
     */
    queueStep(key, step, failure) {
      // A pod leaving a queue it was never seen in (after a reset, the
      // scheduler's own watch reports the deletions late) starts no story.
      if ((step.action === 'delete' || step.action === 'done') && !podInfo.peek(key)) return;
      const again = step.action === 'snapshot';
      updateInfo(key, (info) => ({
        ...info,
        trail: again && info.trail.at(-1)?.to === step.to ? info.trail : bounded([...info.trail, step], limits.trail),
        lastFailure: again ? info.lastFailure || failure : failure || info.lastFailure,
        firstSeen: earliest(info.firstSeen, step.t),
      }));
    },

    /**
     * Puts the steps the server's history tells of, up to seq upTo, before
     * the trail's newer steps, in place of the snapshot's step and of what
     * the trail held before; the last failed attempt among them is the
     * last failure unless a newer one is known.
     */
    pastSteps(key, steps, upTo) {
      const failed = steps.filter((s) => s.failed).at(-1);
      updateInfo(key, (info) => ({
        ...info,
        trail: bounded([...steps, ...info.trail.filter((s) => s.seq > upTo)], limits.trail),
        lastFailure: info.lastFailure || (failed ? { t: failed.t, plugins: failed.rejectedBy, message: failed.message, attempts: failed.attempts } : null),
        firstSeen: earliest(info.firstSeen, steps[0]?.t),
      }));
    },

    /**
     * A preemption at {t, seq}: the preemptor evicted the victim from node
     * (keys); group: the preemptor is a pod group, which made room for all
     * its pods at once.
     */
    preemption(victim, preemptor, node, { t, seq }, group = false) {
      updateInfo(victim, (info) => ({ ...info, preemptedBy: group ? { group: preemptor, node, t, seq } : { pod: preemptor, node, t, seq } }));
      const add = (victims) => (victims.some((v) => v.pod === victim && v.seq === seq) ? victims : bounded([...victims, { pod: victim, node, t, seq }], limits.trail));
      if (!group) {
        updateInfo(preemptor, (info) => {
          const victims = add(info.victims);
          return victims === info.victims ? info : { ...info, victims };
        });
        return;
      }
      groupVictims.set(preemptor, add(groupVictims.peek(preemptor) || []));
      groupVictims.trim(limits.remote);
    },

    /**
     * Keeps the story of a deleted pod (the timeline and the inspector
     * still show it), up to limits.deletedPods of them, oldest dropped.
     */
    podDeleted(key, { t, seq }) {
      updateInfo(key, (info) => ({ ...info, deletedAt: t, deletedSeq: seq }));
      deleted = [...deleted.filter((k) => k !== key), key];
      while (deleted.length > limits.deletedPods) podInfo.delete(deleted.shift());
    },

    /** A pod of a name that was deleted is another pod: its story starts again. */
    podAdded(key) {
      if (!podInfo.peek(key)?.deletedAt) return;
      podInfo.delete(key);
      deleted = deleted.filter((k) => k !== key);
    },

    /** Forgets what it knew of the pods that do not exist, but the deleted ones. */
    keepPods(exists) {
      for (const key of podInfo.keys()) if (!exists(key) && !podInfo.peek(key).deletedAt) podInfo.delete(key);
    },

    /** The stream stopped or started sending matrices: the details kept may miss theirs. */
    matricesChanged() {
      for (const id of details.keys()) {
        const d = details.peek(id);
        if (!d.partial) details.set(id, { ...d, partial: true });
      }
    },

    /** What it holds, to load into another store (values are shared: they are replaced, never changed). */
    save() {
      return {
        summaries: summaries.pairs(), details: details.pairs(), fetched: fetched.pairs(), remote: remote.pairs(), podInfo: podInfo.pairs(), groupVictims: groupVictims.pairs(),
        deleted: deleted.slice(), weights: [...weights], weight, recentBound: recentBound.peek(),
      };
    },

    load(s) {
      summaries.assign(s.summaries);
      details.assign(s.details);
      fetched.assign(s.fetched);
      remote.assign(s.remote);
      podInfo.assign(s.podInfo);
      groupVictims.assign(s.groupVictims || []);
      deleted = s.deleted.slice();
      recentBound.value = s.recentBound || [];
      weights.clear();
      for (const [id, w] of s.weights) weights.set(id, w);
      weight = s.weight;
    },

    /**
     * Holds the details of these cycles, built from their events
     * ([{id, events}], the oldest cycle first), before the details it
     * holds: a replay's keyframe keeps no details (their matrices are most
     * of a recording), so a seek builds those it needs from the recording.
     */
    putDetails(list) {
      const built = list.map(({ id, events }) => [id, events.reduce(withEvent, newDetail())]);
      const ids = new Set(built.map(([id]) => id));
      details.assign([...built, ...details.pairs().filter(([id]) => !ids.has(id))]);
      for (const [id, d] of built) weigh(id, d);
      trimDetails();
    },

    /** Forgets every cycle: the server's history was cleared. */
    reset() {
      for (const m of [summaries, details, fetched, remote, podInfo, groupVictims]) m.assign([]);
      deleted = [];
      recentBound.value = [];
      weights.clear();
      weight = 0;
    },

    /** Keeps a cycle loaded from GET /api/v1/cycles/{id}. */
    addFetched(rec) {
      fetched.delete(rec.id);
      fetched.set(rec.id, { summary: cycleSummary(rec), detail: (rec.events || []).reduce(withEvent, newDetail()), truncated: !!rec.truncated, brief: rec.brief || null });
      fetched.trim(limits.fetched);
    },

    /** Keeps a pod's attempts from GET /api/v1/cycles?pod=..., older ones too. */
    addRemote(key, items) {
      remote.delete(key);
      remote.set(key, (items || []).slice(0, limits.podCycles).map(cycleSummary));
      remote.trim(limits.remote);
    },

    /**
     * Merges the server's recent cycles (GET /api/v1/cycles), those that ran
     * before this page connected, into the timeline of the pods that exist
     * or whose deletion it knows of.
     * Cycles it knows stay as they are.
     */
    addSummaries(items, podExists) {
      const fresh = (items || []).filter((s) => s && !summaries.has(s.id)).map(cycleSummary);
      if (!fresh.length) return;
      const kept = [...summaries.values(), ...fresh].sort((a, b) => a.id - b.id).slice(-limits.cycles);
      summaries.assign(kept.map((s) => [s.id, s]));
      for (const s of fresh) if (summaries.has(s.id) && (podExists(s.podKey) || podInfo.peek(s.podKey)?.deletedAt)) addToPod(s);
    },
  };
}

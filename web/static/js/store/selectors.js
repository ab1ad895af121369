// selectors.js: what the views show that no one slice holds. The computed
// ones are worked out when read and kept until what they read changes; the
// functions are cheap enough to run in the view that calls them, which then
// depends on what they read.

import { computed } from '../signals.js';
import { natural } from './common.js';
import { podStory, wakeEvents } from './story.js';

/** The kinds of event that carry a Filter or Score matrix, one row per node. */
const MATRIX_KINDS = Object.freeze(['filter', 'score']);

function byFirstSeen(a, b) {
  return a.firstSeen - b.firstSeen || natural(a.key, b.key);
}

export function createSelectors({ cluster, queue, cycles, server, limits }) {
  /** Whether the stream should carry the Filter and Score matrices: only on a small cluster. */
  const streamMatrices = computed(() => cluster.nodes.size < limits.matrixNodes);
  /**
   * The kinds of event to ask the stream for: all (null) on a small cluster;
   * on a big one every kind the server's vocabulary names but the matrices.
   */
  const streamKinds = computed(() => {
    if (streamMatrices.value) return null;
    const kinds = server.vocabulary.value.kinds.filter((k) => !MATRIX_KINDS.includes(k));
    return kinds.length ? kinds : null;
  });

  /** Node names in name order. */
  const nodeNames = computed(() => cluster.nodes.keys().sort(natural));

  /** Nodes that are gone while pods still name them. */
  const orphanNodes = computed(() => cluster.usage.keys().filter((n) => !cluster.nodes.has(n)).sort(natural));

  /** What the nodes offer, and what the pods bound to them request. */
  const capacity = computed(() => {
    const c = { cpu: 0, memory: 0, cpuUsed: 0, memoryUsed: 0 };
    for (const n of cluster.nodes.values()) {
      c.cpu += n.allocatable?.cpu || 0;
      c.memory += n.allocatable?.memory || 0;
    }
    for (const name of cluster.usage.keys()) {
      if (!cluster.nodes.has(name)) continue;
      const u = cluster.usage.get(name);
      c.cpuUsed += u.cpu;
      c.memoryUsed += u.memory;
    }
    return c;
  });

  /** The header's counts: nodes, pods, bound, pending, and pods per queue. */
  const counts = computed(() => {
    const pods = cluster.pods.size;
    const bound = cluster.bound.value;
    const queues = {};
    for (const q of server.vocabulary.value.queues) queues[q] = queue.lane(q).value.length;
    return { nodes: cluster.nodes.size, pods, bound, pending: pods - bound, queues };
  });

  /** A pod's cycle summaries, newest first: those kept and those loaded over REST. */
  function podCycles(key) {
    const byId = new Map();
    for (const id of cycles.podInfo.get(key)?.cycleIds || []) {
      const c = cycles.summaries.get(id);
      if (c) byId.set(id, c);
    }
    for (const { summary } of cycles.fetched.values()) {
      if (summary.podKey === key && !byId.has(summary.id)) byId.set(summary.id, summary);
    }
    for (const c of cycles.remote.get(key) || []) if (!byId.has(c.id)) byId.set(c.id, c);
    return [...byId.values()].sort((a, b) => b.id - a.id);
  }

  /**
   * The pod group's cycle a cycle was part of (GenericWorkload), or null:
   * {key, lead, total, members, victims}. Its pods' cycles began one after
   * another, the lead's first, so their ids run from the lead's; members
   * are those the page holds, in the group's order, summary among them.
   * victims are the pods the group's preemptions evicted.
   */
  function groupCycle(summary) {
    const g = summary?.group;
    if (!g) return null;
    const members = [];
    for (let id = g.lead; id < g.lead + g.members; id++) {
      const c = id === summary.id ? summary : cycles.summaries.get(id);
      if (c?.group?.lead === g.lead && c.group.name === g.name && c.group.namespace === g.namespace) members.push(c);
    }
    const key = `${g.namespace}/${g.name}`;
    return { key, lead: g.lead, total: g.members, members, victims: cycles.groupVictims.get(key) || [] };
  }

  /**
   * The cycle the inspector shows: {id, summary, detail, source}. source is
   * "live" (kept from the stream), "fetched" (loaded over REST), "missing"
   * (to be loaded) or "none". id null means the pod's newest cycle.
   */
  function cycleView(key, id) {
    const cid = id ?? (key ? podCycles(key)[0]?.id : null) ?? null;
    if (cid == null) return { id: null, summary: null, detail: null, source: 'none' };
    const live = cycles.summaries.get(cid);
    const detail = cycles.details.get(cid);
    // A detail without its matrices serves while the cycle runs; once it
    // ended, the whole cycle is loaded over REST.
    if (live && detail && !(detail.partial && live.end)) return { id: cid, summary: live, detail, source: 'live' };
    const f = cycles.fetched.get(cid);
    if (f) return { id: cid, summary: live || f.summary, detail: f.detail, source: 'fetched', truncated: f.truncated, brief: f.brief };
    return { id: cid, summary: live || podCycles(key).find((c) => c.id === cid) || null, detail: null, source: 'missing' };
  }

  /**
   * Timeline rows: one per pod with a queue trail or cycles (deleted pods
   * too, with deletedAt), first seen first, each with its trail and its
   * cycles in time order.
   */
  // Pod key -> {info, pod, row, seen}, its last row: a pod whose info,
  // object and cycles did not change keeps its row (and the time of its
  // last activity, worked out once), so that with 20,000 pods the rows cost
  // a loop that allocates nothing for the pods that did not change.
  const rowCache = new Map();
  let pass = 0;
  const timelineRows = computed(() => {
    // Three signals, not one per pod and cycle: this runs at most once per
    // batch of stream messages.
    cycles.summaries.changes();
    cluster.pods.changes();
    pass += 1;
    const rows = [];
    let sorted = true;
    for (const [key, info] of cycles.podInfo.entriesAll()) {
      if (!info.trail.length && !info.cycleIds.length) continue;
      const pod = cluster.pods.peek(key);
      let entry = rowCache.get(key);
      if (!entry || entry.info !== info || entry.pod !== pod || !sameCycles(entry.row.cycles, info.cycleIds)) {
        const list = [];
        for (const id of info.cycleIds) {
          const c = cycles.summaries.peek(id);
          if (c) list.push(c);
        }
        const row = {
          key, pod, trail: info.trail, cycles: list, firstSeen: info.firstSeen ?? list[0]?.start ?? 0, bound: !!pod?.nodeName, deletedAt: pod ? null : info.deletedAt,
          preemptedBy: info.preemptedBy, victims: info.victims,
        };
        row.last = lastActivity(row);
        entry = { info, pod, row };
        rowCache.set(key, entry);
      }
      entry.seen = pass;
      if (sorted && rows.length && byFirstSeen(rows[rows.length - 1], entry.row) > 0) sorted = false;
      rows.push(entry.row);
    }
    if (rowCache.size > rows.length) {
      for (const [key, entry] of rowCache) if (entry.seen !== pass) rowCache.delete(key);
    }
    // Pods are mostly met in the order they were first seen: often sorted already.
    return sorted ? rows : rows.sort(byFirstSeen);
  });

  // Whether a row's cycles are still the summaries its pod's cycle ids name
  // (the same objects: a summary is replaced when it changes).
  function sameCycles(list, ids) {
    let k = 0;
    for (const id of ids) {
      const c = cycles.summaries.peek(id);
      if (c && list[k++] !== c) return false;
    }
    return k === list.length;
  }

  /**
   * The scheduler's state as the header shows it: "unknown" while the
   * stream is down, for what the page knows then is old; live says which.
   * A replay shows the recorded state, and is not live.
   */
  const schedulerShown = computed(() => {
    const status = server.conn.value.status;
    const live = status === 'open';
    return { ...(live || status === 'replay' ? server.scheduler.value : { state: 'unknown', steps: 0, message: 'not connected: the state would be old' }), live };
  });

  /** A pod's story, oldest first (story.js). */
  function story(key) {
    const info = cycles.podInfo.get(key);
    return podStory({ ...info, cycles: podCycles(key), deletedAt: cluster.pods.get(key) ? null : info?.deletedAt ?? null });
  }

  /**
   * For a pod that waits for a cluster event (unschedulable, or backing
   * off after a rejection): the events its rejecting plugins registered
   * for, [{plugin, events, moved}], moved the one that moved it since its
   * last attempt, if any did.
   */
  function wakeUp(key) {
    const e = queue.entries.get(key);
    if (!e || e.queue === 'active' || e.queue === 'inFlight') return [];
    return wakeEvents(e.rejectedBy, server.plugins.value?.plugins, cycles.podInfo.get(key)?.trail);
  }

  return { streamMatrices, streamKinds, schedulerShown, story, wakeUp, nodeNames, orphanNodes, capacity, counts, podCycles, cycleView, groupCycle, timelineRows };
}

/**
 * lastActivity is the time a row last changed (Infinity while the pod is still queued);
 * row.last when the row carries it (the store works it out once a row).
 */
export function lastActivity(row) {
  if (row.last !== undefined) return row.last;
  const a = row.trail.length ? row.trail[row.trail.length - 1].t : 0;
  const last = row.cycles.length ? row.cycles[row.cycles.length - 1] : null;
  const c = last ? Math.max(last.start || 0, last.endTime || 0, last.bindTime || 0) : 0;
  const queued = row.trail.length && row.trail[row.trail.length - 1].to ? Infinity : 0;
  return Math.max(a, c, row.deletedAt || 0, queued);
}

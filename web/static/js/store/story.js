// story.js: a pod's story for the inspector, in the order it happened: its
// queue moves (the event, the plugins whose QueueingHint said Queue, the
// backoff), the cluster events its hints answered QueueSkip to, its attempts (each a cycle), the preemptions it took part in
// and its deletion; and, for a pod that waits, the cluster events that
// would move it, the one that did marked. Pure functions, no DOM: tested with node --test.

import { describeMove, outcomeClass, outcomeText, queueTitle } from '../format.js';

// Entries of the same place in the stream in the order they happen.
const RANK = Object.freeze({ queue: 0, skip: 0, attempt: 1, preempted: 2, preempting: 2, deleted: 3 });

/**
 * podStory merges what the store knows of one pod: {trail, cycles (the
 * summaries, any order), victims: [{pod, node, t, seq}], preemptedBy:
 * {pod or group, node, t, seq}, deletedAt, deletedSeq}. Returns [{t, seq, kind,
 * text, detail, tone, cycle, pod}] in the stream's order (its seq: the
 * server's clocks may not agree to the millisecond, the order does): kind
 * is queue, skip (a cluster event the pod's hints answered QueueSkip to),
 * attempt, preempted (this pod was a victim),
 * preempting (it evicted pod), or deleted; cycle the id an attempt links
 * to, pod the key another pod's entry links to; tone a class name (ok,
 * fail, wait, info).
 */
export function podStory({ trail = [], cycles = [], victims = [], preemptedBy = null, deletedAt = null, deletedSeq = null }) {
  const out = [];
  const add = (seq, entry) => out.push({ seq: seq ?? 0, ...entry });
  for (const s of trail) {
    if (s.action === 'snapshot') {
      add(s.seq, { t: s.t, kind: 'queue', text: `in ${queueTitle(s.to)} when the page connected`, detail: reasons(s), tone: 'info' });
    } else if (s.action === 'pop') {
      add(s.seq, { t: s.t, kind: 'queue', text: `popped from ${queueTitle(s.from)} for attempt ${s.attempts ?? '?'}`, detail: '', tone: 'info' });
    } else if (s.action === 'skip') {
      add(s.seq, {
        t: s.t, kind: 'skip', text: `${s.event}${s.object ? ` (${s.object})` : ''} checked: stays in ${queueTitle(s.to)}`,
        detail: `${s.skippedBy.join(', ')}'s QueueingHint said QueueSkip`, tone: 'info',
      });
    } else if (s.failed) {
      add(s.seq, {
        t: s.t, kind: 'queue', text: `attempt ${s.attempts ?? '?'} failed: to ${queueTitle(s.to)}`,
        detail: [s.rejectedBy.length ? `rejected by ${s.rejectedBy.join(', ')}` : '', gate(s), backoff(s)].filter(Boolean).join('; '), tone: 'fail',
      });
    } else if (s.to) {
      const move = describeMove(s.event);
      add(s.seq, {
        t: s.t, kind: 'queue', text: `${move || s.action}${s.object ? ` (${s.object})` : ''}: ${s.from ? `${queueTitle(s.from)} → ` : ''}${queueTitle(s.to)}`,
        detail: [s.hintedBy.length ? `${s.hintedBy.join(', ')}'s QueueingHint said Queue` : '', gate(s), backoff(s)].filter(Boolean).join('; '),
        tone: s.hintedBy.length ? 'ok' : 'info',
      });
    } else {
      add(s.seq, { t: s.t, kind: 'queue', text: s.action === 'done' ? 'left the queue: bound' : `left the queue (${describeMove(s.event) || s.action})`, detail: '', tone: s.action === 'done' ? 'ok' : 'info' });
    }
  }
  for (const c of cycles) {
    add(c.firstSeq, {
      t: c.start, kind: 'attempt', text: `attempt ${c.attempt ?? '?'}, cycle ${c.id}${c.group ? `, with pod group ${c.group.namespace}/${c.group.name}` : ''}: ${outcomeText(c)}`,
      detail: c.end?.plugins?.length ? `rejected by ${c.end.plugins.join(', ')}` : '', tone: TONES[outcomeClass(c)] || 'info', cycle: c.id,
    });
  }
  for (const v of victims) add(v.seq, { t: v.t, kind: 'preempting', text: `preempted ${v.pod} on ${v.node} to make room`, detail: '', tone: 'wait', pod: v.pod });
  if (preemptedBy?.group) {
    // A pod group made room for all its pods at once: no one pod to open.
    add(preemptedBy.seq, { t: preemptedBy.t, kind: 'preempted', text: `evicted from ${preemptedBy.node} by pod group ${preemptedBy.group}, which preempted it for its pods`, detail: '', tone: 'fail' });
  } else if (preemptedBy) {
    add(preemptedBy.seq, { t: preemptedBy.t, kind: 'preempted', text: `evicted from ${preemptedBy.node} by ${preemptedBy.pod}, which preempted it`, detail: '', tone: 'fail', pod: preemptedBy.pod });
  }
  if (deletedAt != null) add(deletedSeq, { t: deletedAt, kind: 'deleted', text: 'deleted', detail: '', tone: 'info' });
  return out.sort((a, b) => a.seq - b.seq || RANK[a.kind] - RANK[b.kind]);
}

const TONES = Object.freeze({ scheduled: 'ok', unschedulable: 'fail', error: 'fail', running: 'wait' });

function reasons(s) {
  return [s.rejectedBy?.length ? `rejected by ${s.rejectedBy.join(', ')}` : '', s.hintedBy?.length ? `${s.hintedBy.join(', ')} said Queue` : ''].filter(Boolean).join('; ');
}

// A PreEnqueue plugin holding the pod back in the unschedulable set.
function gate(s) {
  return s.gatingPlugin && s.to === 'unschedulable' ? `gated by ${s.gatingPlugin} (PreEnqueue)` : '';
}

function backoff(s) {
  return s.backoffUntil && s.to === 'backoff' ? `backoff for ${Math.max(0, Math.round((s.backoffUntil + 1000 - s.t) / 100) / 10)} s` : '';
}

/**
 * wakeEvents lists, for the plugins that rejected a pod, the cluster events
 * each registered for requeueing (GET /scheduler/plugins' `plugins`):
 * [{plugin, events: ["NodeAdd", ...]}]; a plugin the server does not
 * describe has none. Given the pod's trail, a plugin whose events include
 * the one that moved the pod since its last failed attempt (movedByEvent)
 * gets `moved`, that event as its list names it.
 */
export function wakeEvents(rejectedBy, plugins, trail = []) {
  const byName = new Map((plugins || []).map((p) => [p.name, p]));
  const list = (rejectedBy || []).map((name) => ({ plugin: name, events: byName.get(name)?.events || [] }));
  const moved = movedByEvent(trail, list.flatMap((w) => w.events));
  if (!moved) return list;
  return list.map((w) => {
    const named = w.events.find((e) => sameEvent(e, moved));
    return named ? { ...w, moved: named } : w;
  });
}

/**
 * movedByEvent: the event of the first queue move after the pod's last
 * failed attempt that names one of events (a cluster event a rejecting
 * plugin registered), or null. Moves by a timer or a pop name none.
 */
export function movedByEvent(trail, events) {
  if (!trail?.length || !events?.length) return null;
  let start = 0;
  for (let i = trail.length - 1; i >= 0; i--) {
    if (trail[i].failed) {
      start = i + 1;
      break;
    }
  }
  for (const s of trail.slice(start)) {
    if (s.action === 'move' && !s.failed && s.event && events.some((e) => sameEvent(e, s.event))) return s.event;
  }
  return null;
}

// Whether registered (as a plugin lists it: NodeAdd, or Node/Add in older
// answers) covers the event a queue move names: NodeUpdate stands for every
// NodeUpdate... and NodeAll for every event of nodes.
function sameEvent(registered, moved) {
  const r = registered.replace('/', '');
  const m = moved.replace('/', '');
  if (r === m) return true;
  if (r.endsWith('Update')) return m.startsWith(r);
  return r.endsWith('All') && ['Add', 'Delete', 'Update'].some((a) => m.startsWith(r.slice(0, -3) + a));
}

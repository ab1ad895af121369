// story.js: a pod's story for the inspector, in the order it happened: its
// queue moves (the event, the plugins whose QueueingHint said Queue, the
// backoff), its attempts (each a cycle), the preemptions it took part in
// and its deletion; and, for a pod that waits, the cluster events that
// would move it. Pure functions, no DOM: tested with node --test.

import { describeMove, queueTitle } from './format.js';
import { outcomeClass, outcomeText } from './inspect.js';

// Entries of the same time in the order they happen: a pop, then the cycle
// it starts, then the move that ends it.
const RANK = Object.freeze({ queue: 0, attempt: 1, preempted: 2, preempting: 2, deleted: 3 });

/**
 * podStory merges what the store knows of one pod: {trail, cycles (the
 * summaries, any order), victims: [{pod, node, t}], preemptedBy: {pod,
 * node, t}, deletedAt}. Returns [{t, kind, text, detail, tone, cycle, pod}],
 * oldest first: kind is queue, attempt, preempted (this pod was a victim),
 * preempting (it evicted pod), or deleted; cycle the id an attempt links
 * to, pod the key another pod's entry links to; tone a class name (ok,
 * fail, wait, info).
 */
export function podStory({ trail = [], cycles = [], victims = [], preemptedBy = null, deletedAt = null }) {
  const out = [];
  for (const s of trail) {
    if (s.action === 'snapshot') {
      out.push({ t: s.t, kind: 'queue', text: `in ${queueTitle(s.to)} when the page connected`, detail: reasons(s), tone: 'info' });
    } else if (s.action === 'pop') {
      out.push({ t: s.t, kind: 'queue', text: `popped from ${queueTitle(s.from)} for attempt ${s.attempts ?? '?'}`, detail: '', tone: 'info' });
    } else if (s.failed) {
      out.push({
        t: s.t, kind: 'queue', text: `attempt ${s.attempts ?? '?'} failed: to ${queueTitle(s.to)}`,
        detail: [s.rejectedBy.length ? `rejected by ${s.rejectedBy.join(', ')}` : '', backoff(s)].filter(Boolean).join('; '), tone: 'fail',
      });
    } else if (s.to) {
      const move = describeMove(s.event);
      out.push({
        t: s.t, kind: 'queue', text: `${move || s.action}: ${s.from ? `${queueTitle(s.from)} → ` : ''}${queueTitle(s.to)}`,
        detail: [s.hintedBy.length ? `${s.hintedBy.join(', ')}'s QueueingHint said Queue` : '', backoff(s)].filter(Boolean).join('; '),
        tone: s.hintedBy.length ? 'ok' : 'info',
      });
    } else {
      out.push({ t: s.t, kind: 'queue', text: s.action === 'done' ? 'left the queue: bound' : `left the queue (${describeMove(s.event) || s.action})`, detail: '', tone: s.action === 'done' ? 'ok' : 'info' });
    }
  }
  for (const c of cycles) {
    out.push({
      t: c.start, kind: 'attempt', text: `attempt ${c.attempt ?? '?'}, cycle ${c.id}: ${outcomeText(c)}`,
      detail: c.end?.plugins?.length ? `rejected by ${c.end.plugins.join(', ')}` : '', tone: TONES[outcomeClass(c)] || 'info', cycle: c.id,
    });
  }
  for (const v of victims) out.push({ t: v.t, kind: 'preempting', text: `preempted ${v.pod} on ${v.node} to make room`, detail: '', tone: 'wait', pod: v.pod });
  if (preemptedBy) {
    out.push({ t: preemptedBy.t, kind: 'preempted', text: `evicted from ${preemptedBy.node} by ${preemptedBy.pod}, which preempted it`, detail: '', tone: 'fail', pod: preemptedBy.pod });
  }
  if (deletedAt != null) out.push({ t: deletedAt, kind: 'deleted', text: 'deleted', detail: '', tone: 'info' });
  return out.sort((a, b) => (a.t ?? 0) - (b.t ?? 0) || RANK[a.kind] - RANK[b.kind]);
}

const TONES = Object.freeze({ scheduled: 'ok', unschedulable: 'fail', error: 'fail', running: 'wait' });

function reasons(s) {
  return [s.rejectedBy?.length ? `rejected by ${s.rejectedBy.join(', ')}` : '', s.hintedBy?.length ? `${s.hintedBy.join(', ')} said Queue` : ''].filter(Boolean).join('; ');
}

function backoff(s) {
  return s.backoffUntil && s.to === 'backoff' ? `backoff for ${Math.max(0, Math.round((s.backoffUntil + 1000 - s.t) / 100) / 10)} s` : '';
}

/**
 * wakeEvents lists, for the plugins that rejected a pod, the cluster events
 * each registered for requeueing (GET /scheduler/plugins' `plugins`):
 * [{plugin, events: ["Node/Add", ...]}]; a plugin the server does not
 * describe has none.
 */
export function wakeEvents(rejectedBy, plugins) {
  const byName = new Map((plugins || []).map((p) => [p.name, p]));
  return (rejectedBy || []).map((name) => ({ plugin: name, events: byName.get(name)?.events || [] }));
}

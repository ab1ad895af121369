// timeline-logic.js: the timeline's bands, from a pod's queue trail. Pure
// functions, no DOM: tested with node --test.

/**
 * segments turns a pod's queue trail ([{t, to}], oldest first; to is null
 * once the pod left the queue) into bands [{from, to, queue, event}] within
 * [t0, t1]; the last band lasts until t1 while the pod is still queued.
 */
export function segments(trail, t0, t1) {
  const out = [];
  for (let i = 0; i < trail.length; i++) {
    const s = trail[i];
    if (!s.to) continue;
    const end = i + 1 < trail.length ? trail[i + 1].t : t1;
    if (end < t0 || s.t > t1) continue;
    out.push({ from: Math.max(s.t, t0), to: Math.min(end, t1), queue: s.to, event: s.event });
  }
  return out;
}

/** The time a row last changed (Infinity while the pod is still queued). */
export function lastActivity(row) {
  const a = row.trail.length ? row.trail[row.trail.length - 1].t : 0;
  const c = row.cycles.length ? row.cycles[row.cycles.length - 1].start : 0;
  const queued = row.trail.length && row.trail[row.trail.length - 1].to ? Infinity : 0;
  return Math.max(a, c, queued);
}

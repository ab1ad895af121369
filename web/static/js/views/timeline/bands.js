// bands.js: the timeline's bands, from a pod's queue trail. Pure
// functions, no DOM: tested with node --test.

import { lastActivity } from '../../store/index.js';

/**
 * segments turns a pod's queue trail ([{t, to}], oldest first; to is null
 * once the pod left the queue) into bands [{from, to, queue, event}] within
 * [t0, t1]; the last band lasts until t1 while the pod is still queued.
 */
export function segments(steps, t0, t1) {
  // A skip (a hint said QueueSkip) leaves the pod where it was.
  const trail = steps.filter((s) => s.action !== 'skip');
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

/**
 * timeRange picks the rows and the time window [t0, t1] to draw: the last
 * windowMs milliseconds (rows active in it), everything (0), or, for -1,
 * a window fitted to the activity of the last 15 minutes, at least 20 s:
 * it ends with the last activity (now while a pod is queued), so that a
 * finished lesson fills the width.
 */
export function timeRange(rows, windowMs, now) {
  if (windowMs > 0) {
    const t0 = now - windowMs;
    return { t0, t1: now, rows: rows.filter((r) => lastActivity(r) >= t0) };
  }
  if (windowMs === 0) {
    let t0 = now - 60_000;
    for (const r of rows) if (r.firstSeen) t0 = Math.min(t0, r.firstSeen);
    return { t0, t1: now, rows };
  }
  const horizon = now - 900_000;
  const kept = rows.filter((r) => lastActivity(r) >= horizon);
  let first = now;
  let end = kept.length ? 0 : now;
  for (const r of kept) {
    first = Math.min(first, Math.max(horizon, r.firstSeen || now));
    end = Math.max(end, Math.min(now, lastActivity(r)));
  }
  first = Math.min(first, end);
  const span = Math.max(20_000, (end - first) * 1.05);
  const t1 = Math.min(now, end + (span - (end - first)) / 2);
  return { t0: t1 - span, t1, rows: kept };
}

/**
 * zoomed narrows [t0, t1] by factor (2 halves it) around its end, or widens
 * it for a factor below 1; never below 2 s.
 */
export function zoomed(range, factor) {
  const span = Math.max(2000, (range.t1 - range.t0) / factor);
  return { ...range, t0: range.t1 - span };
}

/** Whether a row's pod failed an attempt (unschedulable, an error, a failed binding). */
export function failedRow(row) {
  return row.trail.some((s) => s.failed) || row.cycles.some((c) => (c.end && c.end.result !== 'scheduled') || c.binding?.bound === false);
}

/** rowProfile is the profile (scheduler name) that schedules a row's pod: its spec's, or its last cycle's once the pod is gone. */
export function rowProfile(row) {
  return row.pod?.schedulerName || row.cycles.at(-1)?.profile || '';
}

/** profilesOf names the profiles of the rows, sorted: the timeline filters by them when there are several. */
export function profilesOf(rows) {
  const names = new Set();
  for (const r of rows) {
    const p = rowProfile(r);
    if (p) names.add(p);
  }
  return [...names].sort();
}

/**
 * preemptions are a row's preemption marks within [t0, t1]: where the pod
 * was evicted (linking the preemptor), and where it evicted others (linking
 * each victim).
 */
export function preemptions(row, t0, t1) {
  const out = [];
  const by = row.preemptedBy;
  // A pod group has no page of its own: its mark opens the victim's, whose story names the group.
  if (by && by.t >= t0 && by.t <= t1) {
    out.push(by.group ? { role: 'victim', t: by.t, pod: row.key, words: `evicted by pod group ${by.group} from ${by.node}` } : { role: 'victim', t: by.t, pod: by.pod, words: `evicted by ${by.pod} from ${by.node}` });
  }
  for (const v of row.victims || []) {
    if (v.t >= t0 && v.t <= t1) out.push({ role: 'preemptor', t: v.t, pod: v.pod, words: `evicted ${v.pod} from ${v.node}` });
  }
  return out;
}

// perf.js: what the Performance view shows, from the cycles in memory or
// from a finished `minisched bench -o json` report: each plugin's cost at
// each extension point, a flame of where the scheduling cycle's time goes,
// and pods/s over time. Pure functions, no DOM: tested with node --test.

import { pluginTimes } from '../inspector/cycle.js';

// The binding cycle's points: they run beside the scheduling cycles, so
// they are not in the flame.
const BINDING = new Set(['WaitOnPermit', 'PreBindPreFlight', 'PreBind', 'Bind', 'PostBind']);

/** The value at quantile q of sorted, as upstream's percentiles: the ceil(n*q)-th. */
function quantile(sorted, q) {
  if (!sorted.length) return 0;
  return sorted[Math.max(0, Math.ceil(sorted.length * q) - 1)];
}

/**
 * liveCost sums the plugin calls of the cycle details in memory: rows
 * [{point, plugin, calls, nanos, p50, p90, p99, binding}], longest first,
 * where p50/p90/p99 are of the plugin's time in one cycle (at Filter and
 * Score, summed over the nodes); and cycles, how many details it read.
 */
export function liveCost(details) {
  const byKey = new Map();
  let cycles = 0;
  for (const d of details) {
    if (!d) continue;
    cycles += 1;
    for (const t of pluginTimes(d)) {
      const key = `${t.point}\u0000${t.plugin}`;
      let r = byKey.get(key);
      if (!r) byKey.set(key, (r = { point: t.point, plugin: t.plugin, calls: 0, nanos: 0, samples: [] }));
      r.calls += t.calls;
      r.nanos += t.nanos;
      r.samples.push(t.nanos);
    }
  }
  const rows = [...byKey.values()].map(({ samples, ...r }) => {
    samples.sort((a, b) => a - b);
    return { ...r, p50: quantile(samples, 0.5), p90: quantile(samples, 0.9), p99: quantile(samples, 0.99), binding: BINDING.has(r.point) };
  });
  rows.sort((a, b) => b.nanos - a.nanos || (a.point < b.point ? -1 : 1));
  return { rows, cycles };
}

/**
 * benchCost reads a `minisched bench -o json` report: its plugin rows (times
 * in nanoseconds, as Go writes a duration), and per run {label, scheduler,
 * podsPerSecond, rates}. It throws an Error in words on anything else.
 */
export function benchCost(report) {
  if (!report || typeof report !== 'object' || !Array.isArray(report.rounds) || typeof report.workload !== 'string') {
    throw new Error('This is not a report of minisched bench -o json: it has no workload and rounds.');
  }
  const rows = (report.plugins || []).map((p) => ({
    point: String(p.point), plugin: String(p.plugin), calls: Number(p.calls) || 0, nanos: Number(p.total) || 0,
    p50: Number(p.p50) || 0, p90: Number(p.p90) || 0, p99: Number(p.p99) || 0, binding: !!p.binding,
  }));
  const runs = [];
  report.rounds.forEach((round, i) => {
    for (const run of round?.runs || []) {
      for (const m of run?.measures || []) {
        runs.push({ label: `round ${i + 1}, ${run.scheduler}, ${m.name}`, scheduler: String(run.scheduler), podsPerSecond: Number(m.podsPerSecond) || 0, placed: m.placed, pods: m.pods, rates: (m.rates || []).map(Number) });
      }
    }
  });
  return { workload: report.workload, rows, runs, cycles: Number(report.cycles) || 0 };
}

/**
 * flame lays rows out as two rows of boxes across width: each scheduling
 * point as wide as its plugins' time, its plugins under it, longest first.
 * [{x, w, row: 0 | 1, label, nanos, share}]; the binding cycle's points are
 * left out.
 */
export function flame(rows, width) {
  const points = [];
  const byPoint = new Map();
  let all = 0;
  for (const r of rows) {
    if (r.binding || r.nanos <= 0) continue;
    let p = byPoint.get(r.point);
    if (!p) {
      p = { point: r.point, nanos: 0, plugins: [] };
      byPoint.set(r.point, p);
      points.push(p);
    }
    p.nanos += r.nanos;
    p.plugins.push(r);
    all += r.nanos;
  }
  if (!all) return [];
  const boxes = [];
  let x = 0;
  for (const p of points) {
    const w = (p.nanos / all) * width;
    boxes.push({ x, w, row: 0, label: p.point, nanos: p.nanos, share: p.nanos / all });
    let px = x;
    for (const pl of [...p.plugins].sort((a, b) => b.nanos - a.nanos)) {
      const pw = (pl.nanos / all) * width;
      boxes.push({ x: px, w: pw, row: 1, label: pl.plugin, point: p.point, nanos: pl.nanos, share: pl.nanos / all });
      px += pw;
    }
    x += w;
  }
  return boxes;
}

/**
 * placedPerSecond counts the cycles that placed a pod in each of the
 * seconds before now (the oldest first): [{at, count}], seconds of them.
 */
export function placedPerSecond(summaries, now, seconds = 60) {
  const start = Math.floor(now / 1000) - seconds + 1;
  const counts = new Array(seconds).fill(0);
  for (const s of summaries) {
    if (s?.end?.result !== 'scheduled' || s.endTime == null) continue;
    const i = Math.floor(s.endTime / 1000) - start;
    if (i >= 0 && i < seconds) counts[i] += 1;
  }
  return counts.map((count, i) => ({ at: (start + i) * 1000, count }));
}

/**
 * polyline gives an SVG polyline's points for values across a box of
 * width and height, the top at max (at least 1).
 */
export function polyline(values, width, height, max) {
  const top = Math.max(1, max);
  const n = values.length;
  return values.map((v, i) => `${n > 1 ? ((i / (n - 1)) * width).toFixed(1) : 0},${(height - (v / top) * height).toFixed(1)}`).join(' ');
}

// trace-tasks.mjs: what the page's main thread did inside its longest tasks,
// from a Chromium trace that perf.mjs kept (PERF_TRACE). For the tasks that
// took the most CPU time, it sums the trace events directly inside each
// (a script's run, a garbage collection, a style recalculation, a layout,
// a paint) by name: their wall and CPU time, longest first.
//
//   node test/web/trace-tasks.mjs page.trace.json [--tasks N] [--by wall|cpu]

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { mainThreadTasks } from './trace.mjs';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { tasks: { type: 'string' }, by: { type: 'string' } },
});
if (positionals.length !== 1 || (flags.by && !['wall', 'cpu'].includes(flags.by))) {
  process.stderr.write('usage: node test/web/trace-tasks.mjs page.trace.json [--tasks N] [--by wall|cpu]\n');
  process.exit(2);
}
const TASKS = Number(flags.tasks ?? 5);
const key = flags.by === 'wall' ? 'dur' : 'tdur';
const { traceEvents } = JSON.parse(readFileSync(positionals[0], 'utf8'));
const { tasks, thread } = mainThreadTasks(traceEvents);
const round = (ms) => (Math.round(ms * 10) / 10).toFixed(1);

// The complete events on the task's thread, nested inside it one level down.
const onThread = traceEvents
  .filter((e) => e.ph === 'X' && `${e.pid}/${e.tid}` === thread && e.name !== 'RunTask')
  .map((e) => ({ name: e.name, ts: e.ts / 1000, dur: (e.dur ?? 0) / 1000, tdur: (e.tdur ?? e.dur ?? 0) / 1000, data: e.args?.data }))
  .sort((a, b) => a.ts - b.ts || b.dur - a.dur);

function inside(task) {
  const end = task.ts + task.dur;
  const top = [];
  let coveredTo = -Infinity;
  for (const e of onThread) {
    if (e.ts < task.ts || e.ts + e.dur > end + 0.001) continue;
    // Only the outermost events: nested ones are counted in their parent.
    if (e.ts < coveredTo) continue;
    top.push(e);
    coveredTo = e.ts + e.dur;
  }
  return top;
}

const longest = [...tasks].sort((a, b) => b[key] - a[key]).slice(0, TASKS);
const first = tasks[0]?.ts ?? 0;
for (const t of longest) {
  process.stdout.write(`\ntask at ${round(t.ts - first)} ms: ${round(t.dur)} ms wall, ${round(t.tdur)} ms CPU\n`);
  const sums = new Map();
  for (const e of inside(t)) {
    const what = e.data?.url ? `${e.name} ${e.data.url.replace(/^.*\/static\//, '').replace(/^https?:\/\/[^/]+\//, '')}` : e.name;
    const s = sums.get(what) ?? { n: 0, dur: 0, tdur: 0 };
    sums.set(what, { n: s.n + 1, dur: s.dur + e.dur, tdur: s.tdur + e.tdur });
  }
  for (const [what, s] of [...sums].sort((a, b) => b[1][key] - a[1][key]).slice(0, 12)) {
    process.stdout.write(`  ${round(s.dur).padStart(7)} wall ${round(s.tdur).padStart(7)} CPU  ${String(s.n).padStart(4)}×  ${what}\n`);
  }
}

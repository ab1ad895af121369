// longtask-profile.mjs: what ran inside the page's long tasks. Reads a CPU
// profile that perf.mjs wrote (PERF_CPUPROFILE or PERF_CPUPROFILE_STREAM),
// and the long tasks beside it, and prints for the longest tasks, and for all of them
// together, the functions that took the most time: self (in the function
// itself) and total (with what it called).
//
//   node test/web/longtask-profile.mjs stream.cpuprofile [--top N] [--tasks N]

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string' }, tasks: { type: 'string' } },
});
if (positionals.length !== 1) {
  process.stderr.write('usage: node test/web/longtask-profile.mjs stream.cpuprofile [--top N] [--tasks N]\n');
  process.exit(2);
}
const TOP = Number(flags.top ?? 15);
const TASKS = Number(flags.tasks ?? 3);
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const tasks = JSON.parse(readFileSync(`${positionals[0]}.tasks.json`, 'utf8'));

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n) => {
  const f = n.callFrame;
  const file = f.url ? f.url.replace(/^.*\/static\//, '') : '';
  return `${f.functionName || '(anonymous)'} ${file}${file ? `:${f.lineNumber + 1}` : ''}`;
};

// Each sample's time, microseconds after the profile's start.
const times = [];
let t = 0;
for (const d of profile.timeDeltas) times.push((t += d));

function tally(windows) {
  const self = new Map();
  const total = new Map();
  let sampled = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const at = times[i];
    if (!windows.some(([from, to]) => at >= from && at < to)) continue;
    const us = profile.timeDeltas[i + 1] ?? 0;
    sampled += us;
    const leaf = byId.get(profile.samples[i]);
    self.set(label(leaf), (self.get(label(leaf)) ?? 0) + us);
    const seen = new Set();
    for (let id = leaf.id; id != null; id = parent.get(id)) {
      const name = label(byId.get(id));
      if (seen.has(name)) continue;
      seen.add(name);
      total.set(name, (total.get(name) ?? 0) + us);
    }
  }
  const top = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([name, us]) => `  ${(us / 1000).toFixed(1).padStart(8)} ms  ${name}`).join('\n');
  return `sampled ${(sampled / 1000).toFixed(1)} ms\n self:\n${top(self)}\n total:\n${top(total)}`;
}

const span = (task) => [task.fromUs, task.fromUs + task.duration * 1000];
const longest = [...tasks].sort((a, b) => b.duration - a.duration);
console.log(`${tasks.length} long tasks, ${Math.round(tasks.reduce((a, x) => a + x.duration, 0))} ms in all`);
for (const task of longest.slice(0, TASKS)) {
  console.log(`\ntask of ${Math.round(task.duration)} ms at ${Math.round(task.start)} ms:`);
  console.log(tally([span(task)]));
}
console.log('\nall long tasks together:');
console.log(tally(tasks.map(span)));

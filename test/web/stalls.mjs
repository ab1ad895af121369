// stalls.mjs: the times the machine took a core away from everything on it.
//
// On the 2-core virtual machine the benches run on, a busy virtual CPU is now
// and then stopped by its host for about 100 ms. The guest does not see the
// stop: it charges the time to whichever thread was running on that CPU, as
// that thread's own CPU time. A page task caught by one looks like ~100 ms of
// the page's work, in its wall time and in its CPU time alike (trace.mjs).
//
// watchStalls starts one watcher a CPU: a process pinned to it (taskset) at
// a real-time priority (chrt), which sleeps 1 ms at a time. Nothing on its
// CPU can keep it from running once it wakes, so a wake-up late by more than
// a few milliseconds means the CPU itself was stopped. Each watcher's clock
// is CLOCK_MONOTONIC, the clock of Chromium's trace timestamps.
//
// Given threads to follow (the renderers' main threads), each watcher also
// reads their run time (/proc/.../schedstat) at every wake-up, and after a
// stall the CPU each ran on last: a thread that was on the stopped CPU was
// charged the stall, and charged says how much of it.
//
//   node test/web/stalls.mjs [seconds]   watches every CPU and prints the stalls (a check of the machine)

import { spawn, spawnSync } from 'node:child_process';
import { openSync, readFileSync, readSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A wake-up this late (ms) counts as a stall of its CPU. */
export const STALL_MS = 10;

const now = () => Number(process.hrtime.bigint()) / 1e6;

/** runTime reads a thread's time on a CPU (ns) from its schedstat file; NaN once the thread is gone. */
function runTime(fd, buf) {
  try {
    const n = readSync(fd, buf, 0, buf.length, 0);
    return Number(buf.toString('latin1', 0, n).split(' ', 1)[0]);
  } catch {
    return NaN;
  }
}

/** lastCpu reads the CPU a thread ran on last (field 39 of its stat); NaN once it is gone. */
function lastCpu(tid) {
  try {
    const stat = readFileSync(`/proc/${tid}/task/${tid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[36]);
  } catch {
    return NaN;
  }
}

/**
 * watch is the watcher's loop on cpu: one JSON line {from, to, charged} (ms)
 * a stall, charged the run time each of tids gained in it on this CPU
 * ({tid: ms}, only those that gained some). A thread that ends (a renderer
 * closed) is charged nothing from then on; the watch goes on.
 */
function watch(cpu, tids) {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const buf = Buffer.alloc(128);
  const fds = tids.map((tid) => openSync(`/proc/${tid}/task/${tid}/schedstat`, 'r'));
  const times = () => fds.map((fd) => runTime(fd, buf));
  let last = now();
  let ran = times();
  process.stdout.write('{"ready":true}\n');
  for (;;) {
    Atomics.wait(cell, 0, 0, 1);
    const t = now();
    const running = times();
    if (t - last > STALL_MS) {
      const charged = {};
      tids.forEach((tid, i) => {
        if (running[i] > ran[i] && lastCpu(tid) === cpu) charged[tid] = (running[i] - ran[i]) / 1e6;
      });
      process.stdout.write(`${JSON.stringify({ from: last, to: t, charged })}\n`);
    }
    [last, ran] = [t, running];
  }
}

/** allowedCpus lists the CPUs this process may run on (its affinity). */
export function allowedCpus() {
  const list = readFileSync('/proc/self/status', 'latin1').match(/^Cpus_allowed_list:\s*(\S+)/m)?.[1] ?? '0';
  return list.split(',').flatMap((part) => {
    const [a, b = a] = part.split('-').map(Number);
    return Array.from({ length: b - a + 1 }, (_, i) => a + i);
  });
}

/**
 * watchStalls starts a watcher on each of cpus, following threads (OS thread
 * ids), and calls onStall with each stall as it is seen; stop() ends them
 * and returns {stalls: [{cpu, from, to, charged}] (ms, CLOCK_MONOTONIC),
 * watched}. ready resolves once every watcher watches; pids are the
 * watchers' processes, in the order of cpus. Without taskset none start
 * (watched is false). Without chrt's real-time priority (it needs root or
 * CAP_SYS_NICE) they run at an ordinary one (realtime is false): any busy
 * thread can then delay them, and a bench must not take what they see for
 * the machine's.
 */
export function watchStalls({ cpus = allowedCpus(), threads = [], onStall = () => {} } = {}) {
  if (spawnSync('taskset', ['--version']).status !== 0) {
    return { watched: false, realtime: false, ready: Promise.resolve(), pids: [], stop: async () => ({ stalls: [], watched: false }) };
  }
  const realtime = spawnSync('chrt', ['-f', '1', 'true']).status === 0;
  const stalls = [];
  const watchers = [];
  const ready = [];
  for (const cpu of cpus) {
    const watcher = [process.execPath, fileURLToPath(import.meta.url), '--watcher', String(cpu), threads.join(',')];
    const child = spawn('taskset', ['-c', String(cpu), ...(realtime ? ['chrt', '-f', '50'] : []), ...watcher], { stdio: ['ignore', 'pipe', 'inherit'] });
    let rest = '';
    let started;
    ready.push(new Promise((resolve, reject) => {
      started = resolve;
      child.on('close', (code) => reject(new Error(`the watcher on CPU ${cpu} ended (${code}) before it watched`)));
    }));
    child.stdout.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        const stall = JSON.parse(line);
        if (stall.ready) started();
        else {
          stalls.push({ cpu, ...stall });
          onStall(stalls.at(-1));
        }
      }
    });
    const closed = new Promise((resolve) => { child.on('close', resolve); });
    watchers.push(Object.assign(closed, { child }));
  }
  return {
    watched: true,
    realtime,
    ready: Promise.all(ready),
    pids: watchers.map((w) => w.child.pid),
    async stop() {
      for (const w of watchers) w.child.kill();
      await Promise.all(watchers);
      return { stalls: stalls.sort((a, b) => a.from - b.from), watched: true };
    },
  };
}

/**
 * inStalls returns, for [from, to], how long the stalls that charged thread
 * stopped it there (stalled, ms) and the run time they charged it (charged,
 * ms).
 */
export function inStalls(stalls, thread, from, to) {
  let stalled = 0;
  let charged = 0;
  for (const s of stalls) {
    const overlap = Math.min(to, s.to) - Math.max(from, s.from);
    const ms = s.charged[thread] ?? 0;
    if (overlap <= 0 || !(ms > 0)) continue;
    stalled += overlap;
    // A stall that began before the task charged the task only its share.
    charged += ms * (overlap / (s.to - s.from));
  }
  return { stalled, charged };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === '--watcher') {
    watch(Number(process.argv[3]), (process.argv[4] ?? '').split(',').filter(Boolean).map(Number));
  } else {
    const seconds = Number(process.argv[2] ?? 60);
    const watcher = watchStalls();
    if (!watcher.realtime) {
      console.error('stalls: taskset and chrt -f (root, or CAP_SYS_NICE) are needed to watch the CPUs');
      process.exit(1);
    }
    await watcher.ready;
    setTimeout(async () => {
      const { stalls } = await watcher.stop();
      for (const s of stalls) console.log(`cpu ${s.cpu}: stopped ${Math.round(s.to - s.from - 1)} ms`);
      console.log(`${stalls.length} stalls over ${STALL_MS} ms in ${seconds} s`);
    }, seconds * 1000);
  }
}

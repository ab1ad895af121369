// The bench's watch on the machine's stalls (stalls.mjs): which stalls a
// task's times lose, and a real watcher that sees a stop and says which
// thread it charged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { allowedCpus, inStalls, watchStalls } from './stalls.mjs';

test('inStalls: only the stalls that charged the thread, each by its share inside the task', () => {
  const page = 20;
  const other = 30;
  const stalls = [
    { cpu: 0, from: 100, to: 200, charged: { [page]: 100 } }, // inside the task
    { cpu: 1, from: 120, to: 220, charged: { [other]: 100 } }, // another tab's thread
    { cpu: 1, from: 300, to: 320, charged: {} }, // nothing followed was on that CPU
    { cpu: 0, from: 380, to: 420, charged: { [page]: 40 } }, // half inside
  ];
  const cases = [
    { name: 'a task around the first stall', from: 50, to: 250, want: { stalled: 100, charged: 100 } },
    { name: 'a task that the last stall ends inside', from: 400, to: 500, want: { stalled: 20, charged: 20 } },
    { name: 'a task under a stall that charged no one', from: 290, to: 330, want: { stalled: 0, charged: 0 } },
    { name: 'a task between stalls', from: 230, to: 280, want: { stalled: 0, charged: 0 } },
    { name: 'every stall', from: 0, to: 1000, want: { stalled: 140, charged: 140 } },
  ];
  for (const c of cases) assert.deepEqual(inStalls(stalls, page, c.from, c.to), c.want, c.name);
  assert.deepEqual(inStalls(stalls, other, 0, 1000), { stalled: 100, charged: 100 }, 'the other thread');
});

test('watchStalls: a watcher kept from running reports a stall and charges the thread that ran on its CPU', async () => {
  // A thread that spins on one CPU for as long as the test runs.
  const [cpu] = allowedCpus();
  const spinner = spawn('taskset', ['-c', String(cpu), process.execPath, '-e', 'process.stdout.write("spinning\\n"); for (;;);'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await once(spinner.stdout, 'data');
    let seen;
    const stalled = new Promise((resolve) => { seen = resolve; });
    const watcher = watchStalls({ threads: [spinner.pid], onStall: (s) => s.cpu === cpu && s.to - s.from >= 150 && seen() });
    // Stopped by a signal, a watcher wakes late whatever its priority.
    assert.equal(watcher.watched, true, 'taskset (util-linux) is needed');
    await watcher.ready;
    // A stopped watcher wakes late, as one on a stopped CPU does; the
    // spinner ran on that CPU all along and is charged for that time.
    process.kill(watcher.pids[0], 'SIGSTOP');
    await new Promise((resolve) => { setTimeout(resolve, 150); });
    process.kill(watcher.pids[0], 'SIGCONT');
    await stalled;
    const { stalls } = await watcher.stop();
    const stall = stalls.find((s) => s.cpu === cpu && s.to - s.from >= 150);
    assert.ok(stall, `a stall of CPU ${cpu} of at least 150 ms: ${JSON.stringify(stalls)}`);
    const charged = stall.charged[spinner.pid];
    assert.ok(charged > 0 && charged <= stall.to - stall.from + 1, `the spinner charged within the stall: ${JSON.stringify(stall)}`);
    assert.ok(stalls.every((s) => s.cpu === cpu || !(s.charged[spinner.pid] > 0)), `another CPU charged a thread pinned to CPU ${cpu}`);
  } finally {
    spinner.kill();
  }
});

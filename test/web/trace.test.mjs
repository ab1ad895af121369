// The bench's reading of a Chromium trace (trace.mjs): which thread is the
// page's, and what its tasks cost in wall and thread time. A real trace is
// read by perf.mjs; this pins the rules on a small one written by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mainThreadTasks, taskSummary } from './trace.mjs';

const meta = (pid, tid, name) => ({ ph: 'M', name: 'thread_name', pid, tid, args: { name } });
const task = (pid, tid, ts, dur, tdur) => ({ ph: 'X', name: 'RunTask', cat: 'disabled-by-default-devtools.timeline', pid, tid, ts: ts * 1000, dur: dur * 1000, tdur: tdur * 1000 });

test('mainThreadTasks: the busiest renderer main thread, its tasks and marks in order', () => {
  const events = [
    meta(1, 10, 'CrBrowserMain'), meta(2, 20, 'CrRendererMain'), meta(3, 30, 'CrRendererMain'), meta(2, 21, 'Compositor'),
    task(1, 10, 0, 500, 500), // the browser's own: not the page's
    task(2, 21, 5, 90, 90), // the compositor's: not the main thread
    task(3, 30, 1, 2, 2), // a blank tab's renderer, nearly idle
    task(2, 20, 300, 80, 12),
    task(2, 20, 100, 30, 29),
    { ph: 'R', cat: 'blink.user_timing', name: 'streamed', pid: 2, tid: 20, ts: 200_000 },
    { ph: 'R', cat: 'blink.user_timing', name: 'other tab', pid: 3, tid: 30, ts: 1000 },
  ];
  const { thread, tasks, marks } = mainThreadTasks(events);
  assert.equal(thread, '2/20');
  assert.deepEqual(tasks, [{ ts: 100, dur: 30, tdur: 29 }, { ts: 300, dur: 80, tdur: 12 }]);
  assert.deepEqual(marks, [{ ts: 200, name: 'streamed' }]);
});

test('mainThreadTasks: a trace without a renderer has no tasks', () => {
  assert.deepEqual(mainThreadTasks([meta(1, 10, 'CrBrowserMain'), task(1, 10, 0, 80, 80)]), { thread: null, tasks: [], marks: [] });
});

test('taskSummary: wall time against the thread time of the same tasks', () => {
  const tasks = [
    { ts: 0, dur: 94, tdur: 20 }, // starved: long on the wall, short on the CPU
    { ts: 1, dur: 61, tdur: 58 }, // long on both
    { ts: 2, dur: 12, tdur: 12 },
    { ts: 3, dur: 50, tdur: 50 }, // at the limit: not over it
  ];
  assert.deepEqual(taskSummary(tasks), {
    tasks: 4,
    overLimit: 2,
    overLimitCpu: [{ wall: 94, cpu: 20 }, { wall: 61, cpu: 58 }],
    maxWall: 94,
    maxCpu: 58,
    overLimitByCpu: 1,
  });
  assert.deepEqual(taskSummary([]), { tasks: 0, overLimit: 0, overLimitCpu: [], maxWall: 0, maxCpu: 0, overLimitByCpu: 0 });
});

// trace.mjs: the page's main-thread tasks from a Chromium trace, with the
// CPU time the thread spent in each. A long task's wall time counts the time
// the operating system gave the thread to others; on a machine whose cores
// the scheduler and the control plane keep busy, that can be most of it.
// The thread time ("tdur") is what the page's own work cost.

/** The categories to record for mainThreadTasks. */
export const TASK_CATEGORIES = ['disabled-by-default-devtools.timeline', 'blink.user_timing', '__metadata'];

/**
 * mainThreadTasks returns the top-level tasks of the busiest renderer main
 * thread in traceEvents (the page's: a blank tab's is nearly idle), oldest
 * first: {ts, dur, tdur} in milliseconds, ts on the trace's clock. Marks
 * lists the page's performance.mark()s on that thread: {ts, name}. Thread
 * is that thread ("pid/tid"), or null.
 */
export function mainThreadTasks(traceEvents) {
  const mains = new Set();
  for (const e of traceEvents) {
    if (e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain') mains.add(`${e.pid}/${e.tid}`);
  }
  const byThread = new Map();
  const marksByThread = new Map();
  for (const e of traceEvents) {
    const thread = `${e.pid}/${e.tid}`;
    if (!mains.has(thread)) continue;
    if (e.ph === 'X' && e.name === 'RunTask') {
      if (!byThread.has(thread)) byThread.set(thread, []);
      byThread.get(thread).push({ ts: e.ts / 1000, dur: e.dur / 1000, tdur: (e.tdur ?? e.dur) / 1000 });
    } else if (e.cat === 'blink.user_timing') {
      if (!marksByThread.has(thread)) marksByThread.set(thread, []);
      marksByThread.get(thread).push({ ts: e.ts / 1000, name: e.name });
    }
  }
  let busiest = null;
  let most = -1;
  for (const [thread, tasks] of byThread) {
    const busy = tasks.reduce((a, t) => a + t.tdur, 0);
    if (busy > most) [busiest, most] = [thread, busy];
  }
  const byTs = (a, b) => a.ts - b.ts;
  return {
    thread: busiest,
    tasks: (byThread.get(busiest) ?? []).sort(byTs),
    marks: (marksByThread.get(busiest) ?? []).sort(byTs),
  };
}

/**
 * taskSummary sums up tasks: how many took over limitMs of wall time, the
 * longest by wall time and by thread time, and the thread time of the
 * longest by wall time. Times are rounded to 0.1 ms.
 */
export function taskSummary(tasks, limitMs = 50) {
  const round = (ms) => Math.round(ms * 10) / 10;
  const long = tasks.filter((t) => t.dur > limitMs);
  const longest = tasks.reduce((a, t) => (!a || t.dur > a.dur ? t : a), null);
  return {
    tasks: tasks.length,
    overLimit: long.length,
    // The thread time of the tasks over the limit, the longest first.
    overLimitCpu: long.sort((a, b) => b.dur - a.dur).map((t) => ({ wall: round(t.dur), cpu: round(t.tdur) })),
    maxWall: round(longest?.dur ?? 0),
    maxCpu: round(tasks.reduce((a, t) => Math.max(a, t.tdur), 0)),
    overLimitByCpu: tasks.filter((t) => t.tdur > limitMs).length,
  };
}

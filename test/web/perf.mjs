// perf.mjs: a bench, not a test. Starts minisched, opens the dashboard in
// headless Chromium, creates NODES nodes and PODS pods over REST while the
// dashboard streams (and two pods that fit nowhere, whose cycles filter
// every node: the largest cycles there are), then switches through every
// view and opens the largest cycle in the inspector. It prints, for the time
// after the initial load: the main thread's long tasks (over 50 ms, from
// PerformanceObserver 'longtask'): how many and the longest; the JS heap
// (peak while streaming, and after a garbage collection at the end); how
// long each click took to answer; and how long the inspector took to open
// the largest cycle. Targets (issue 17): no task over 50 ms, a heap under
// 150 MB, the largest cycle open in under 200 ms. Beside the long tasks' wall
// time it prints each main-thread task's CPU time, from a Chromium trace
// (threadTime; trace.mjs says why).
//
//   MINISCHED_BIN=path/to/minisched node test/web/perf.mjs [--nodes N] [--pods N] [--view V] [--runs N] [--strict]
//   PERF_CPUPROFILE=page.cpuprofile also records the page's CPU profile after the streaming
//   (view switches, the inspector, the scrolls); PERF_CPUPROFILE_STREAM=stream.cpuprofile while
//   the cluster streams in. Each comes with the long tasks beside it (file.tasks.json), and
//   node test/web/longtask-profile.mjs file then names what ran inside them.
//   PERF_TRACE=page.trace.json keeps the Chromium trace of the main thread's tasks, with what ran
//   inside them: node test/web/trace-tasks.mjs page.trace.json then names it. PERF_TRACE_CATEGORIES
//   adds trace categories (comma-separated, e.g. v8,blink,fonts) to that trace.
//   PERF_HEAPSNAPSHOT=page.heapsnapshot keeps the page's heap at the end (after a collection):
//   node test/web/heap-summary.mjs page.heapsnapshot says what holds it.
//   NODES=200 PODS=2000 VIEW=queue RUNS=1 STRICT=1 (the same as environment variables; flags win)
//   --server-nice N runs minisched at nice N: on a 2-core machine the control plane scheduling
//   20,000 pods takes both cores, and the page's tasks then wait for one (their wall time grows,
//   their CPU time does not); a lower priority for the server shows what the page itself costs.
//   --stalls watches every CPU for the times the machine stopped it (stalls.mjs) and prints each
//   task's times less the stalls that caught the page's main thread: the ~100 ms a host's stop
//   charges whatever thread it catches is not the page's work.
//
// The issue's scale: node test/web/perf.mjs --nodes 1000 --pods 20000 --runs 3
// --strict (STRICT=1) exits 1 when a target is missed or the page threw.

import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';
import { api, launchBrowser, loadCluster, longTasksSince, observeLongTasks, startServer, timedClick, waitReady } from './harness.mjs';
import { inStalls, watchStalls } from './stalls.mjs';
import { mainThreadTasks, TASK_CATEGORIES, taskSummary } from './trace.mjs';

const { values: flags } = parseArgs({
  options: {
    nodes: { type: 'string' }, pods: { type: 'string' }, view: { type: 'string' }, runs: { type: 'string' }, strict: { type: 'boolean' },
    'server-nice': { type: 'string' }, stalls: { type: 'boolean' },
  },
});
const NODES = Number(flags.nodes ?? process.env.NODES ?? 200);
const PODS = Number(flags.pods ?? process.env.PODS ?? 2000);
const VIEW = flags.view ?? process.env.VIEW ?? 'queue';
const RUNS = Number(flags.runs ?? process.env.RUNS ?? 1);
const STRICT = flags.strict || process.env.STRICT === '1';
const SERVER_NICE = Number(flags['server-nice'] ?? 0);
const STALLS = flags.stalls || process.env.STALLS === '1';
const TARGET = { taskMs: 50, heapMB: 150, openMs: 200 };
const GIANTS = 2;
const MB = 2 ** 20;

function summary(tasks) {
  const durations = tasks.map((t) => t.duration);
  return {
    count: durations.length,
    max: durations.length ? Math.round(Math.max(...durations)) : 0,
    total: Math.round(durations.reduce((a, b) => a + b, 0)),
  };
}

const round = (ms) => Math.round(ms * 10) / 10;
const say = (words) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${words}\n`);

async function heapMB(cdp, collect = false) {
  if (collect) await cdp.send('HeapProfiler.collectGarbage');
  const { metrics } = await cdp.send('Performance.getMetrics');
  return Math.round(metrics.find((m) => m.name === 'JSHeapUsedSize').value / MB);
}

/** heapSnapshot writes the page's heap to file, for heap-summary.mjs or DevTools. */
async function heapSnapshot(cdp, file) {
  const chunks = [];
  const add = ({ chunk }) => chunks.push(chunk);
  cdp.on('HeapProfiler.addHeapSnapshotChunk', add);
  await cdp.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  cdp.off('HeapProfiler.addHeapSnapshotChunk', add);
  writeFileSync(file, chunks.join(''));
}

/**
 * rendererThreads returns the OS thread ids of the renderers' main threads
 * (a renderer's main thread has the process's id). The page's is one of
 * them; the trace says which (trace.mjs).
 */
async function rendererThreads(browser) {
  const session = await browser.newBrowserCDPSession();
  const { processInfo } = await session.send('SystemInfo.getProcessInfo');
  await session.detach();
  return processInfo.filter((p) => p.type === 'renderer').map((p) => p.id);
}

/**
 * lessStalls gives each task its wall and CPU time less the stalls that
 * caught the page's thread inside it, and those stalls' times.
 */
function lessStalls(tasks, stalls, thread) {
  return tasks.map((t) => {
    const { stalled, charged } = inStalls(stalls, thread, t.ts, t.ts + t.dur);
    return { ...t, dur: t.dur - stalled, tdur: Math.max(0, t.tdur - charged), stalled, charged };
  });
}

/**
 * startProfile starts the page's CPU profile; stop(tasks) writes it to
 * file, and the long tasks given to file.tasks.json, each with its start
 * in the profile's clock (microseconds after the profile began), for
 * longtask-profile.mjs.
 */
async function startProfile(page, cdp, file) {
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  const from = await page.evaluate(() => performance.now());
  return {
    from,
    async stop(tasks) {
      const { profile } = await cdp.send('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
      writeFileSync(`${file}.tasks.json`, JSON.stringify(tasks.map((t) => ({ ...t, fromUs: Math.round((t.start - from) * 1000) }))));
    },
  };
}

async function run(index) {
  // The bench creates thousands of objects as fast as it can: lift the
  // per-client limit meant for people.
  const server = await startServer({ extraArgs: ['--rate-limit', '100000'], nice: SERVER_NICE });
  let browser;
  let sampler;
  let watcher;
  try {
    await waitReady(server.url);
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    page.setDefaultTimeout(120_000);
    const errors = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await observeLongTasks(page);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    await cdp.send('HeapProfiler.enable');
    await page.goto(`${server.url}/#${VIEW}`);
    await page.waitForSelector('#connection[data-status="open"]');
    await page.waitForSelector(`#tab-${VIEW}[aria-selected="true"]`);
    // The initial load ends once the first snapshot is drawn and the plugin
    // view and the history (loaded after it) are in.
    await page.waitForFunction(() => window.minisched.store.server.snapshots.value > 0 && !!window.minisched.store.server.plugins.value);
    const loadedAt = await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(performance.now()))));
    // A trace of the main thread's tasks from here on: each with the CPU
    // time the thread spent in it, beside its wall time (trace.mjs).
    // A kept trace also names what ran inside each task (trace-tasks.mjs).
    // PERF_TRACE_CATEGORIES adds more (comma-separated: fonts, v8, ...).
    const more = (process.env.PERF_TRACE_CATEGORIES || '').split(',').filter(Boolean);
    const categories = process.env.PERF_TRACE ? [...TASK_CATEGORIES, 'devtools.timeline', ...more] : TASK_CATEGORIES;
    await browser.startTracing(page, { categories });
    const threads = STALLS ? await rendererThreads(browser) : [];
    watcher = STALLS && watchStalls({ threads });
    if (watcher && !watcher.realtime) throw new Error('--stalls: taskset and chrt -f (root, or CAP_SYS_NICE) are needed to watch the CPUs');
    if (watcher) await watcher.ready;

    // The heap, sampled while the cluster streams in.
    let peak = 0;
    const sample = async () => { peak = Math.max(peak, await heapMB(cdp).catch(() => 0)); };
    sampler = setInterval(sample, 2000);

    const streamProfile = process.env.PERF_CPUPROFILE_STREAM && await startProfile(page, cdp, process.env.PERF_CPUPROFILE_STREAM);
    say(`run ${index + 1}: creating ${NODES} nodes and ${PODS} pods`);
    const t0 = Date.now();
    const made = await loadCluster(server.url, { nodes: NODES, pods: PODS, giants: GIANTS });
    // Until the dashboard shows every pod bound and has applied every event
    // the server recorded so far.
    await page.waitForFunction((n) => {
      const c = window.minisched.store.counts.value;
      return c.pods >= n + 2 && c.bound >= n;
    }, PODS, { timeout: 1_800_000, polling: 500 });
    const tBound = Date.now();
    say('every pod bound; waiting for the page to apply every event');
    const { lastSeq } = await api(server.url, 'GET', '/history');
    await page.waitForFunction((seq) => window.minisched.store.server.seq.value >= seq, lastSeq, { timeout: 120_000, polling: 200 });
    clearInterval(sampler);
    await sample();
    const streamedAt = await page.evaluate(() => {
      performance.mark('streamed');
      return performance.now();
    });
    const streamTasks = (await longTasksSince(page, loadedAt)).filter((t) => t.start < streamedAt);
    if (streamProfile) await streamProfile.stop(streamTasks);

    say('switching views');
    // PERF_CPUPROFILE=file.cpuprofile records the page's CPU from here to the
    // scrolls, for Chromium's DevTools or any .cpuprofile reader.
    const switchProfile = process.env.PERF_CPUPROFILE && await startProfile(page, cdp, process.env.PERF_CPUPROFILE);
    // Switch to each view with everything loaded; each click is timed to the view's answer.
    const clicks = {};
    const views = [['cluster', '.cluster .node-card'], ['timeline', '.timeline .tl-row'], ['controls', '.controls'], ['queue', '.queue-board .lane'], ['cycle', '.inspector']];
    // Each tab once, the one open last (its answer must be new).
    const at = views.findIndex(([v]) => v === VIEW);
    for (const [view, answer] of [...views.slice(at + 1), ...views.slice(0, at + 1)]) {
      clicks[`view ${view}`] = await timedClick(page, `#tab-${view}`, { answer });
    }
    await page.click('#tab-queue');
    await page.waitForSelector('.lane-unschedulable [data-pod="default/giant-0"]');

    say('opening the largest cycle');
    // The largest cycle: giant-0's, over every node. Its detail is loaded
    // first (it may have left the page's memory), so that the time is the
    // inspector's own; giant-1's is opened cold, fetched from the server.
    const largest = await page.evaluate(async () => {
      const { store, actions } = window.minisched;
      const id = store.podCycles('default/giant-0')[0].id;
      await actions.ensureCycle(id);
      const v = store.cycleView('default/giant-0', id);
      return { id, filterRows: v.detail?.filter?.nodes?.length ?? 0 };
    });
    const open = await timedClick(page, '.lane-unschedulable [data-pod="default/giant-0"]', {
      answer: '.filter h3', text: `of ${largest.filterRows} nodes feasible`,
    });
    await page.click('#tab-queue');
    const openCold = await timedClick(page, '.lane-unschedulable [data-pod="default/giant-1"]', { answer: '.filter h3', text: 'nodes feasible' });
    // A Score table of the size a pod that fits gets: the newest bound
    // pod's (its detail loaded first, as for giant-0).
    const scored = await page.evaluate(async () => {
      const { store, actions } = window.minisched;
      const ids = store.cycles.summaries.keys().reverse();
      const id = ids.find((i) => store.cycles.summaries.peek(i)?.end?.result === 'scheduled');
      if (id == null) return null;
      await actions.ensureCycle(id);
      const s = store.cycles.summaries.peek(id);
      const detail = store.cycleView(s.podKey, id).detail;
      return detail?.score ? { pod: s.podKey, id, rows: detail.score.nodes.length } : null;
    });
    let openScore = null;
    if (scored) {
      // From the inspector on giant-0 (which has no Score), the pod picker opens it.
      await page.evaluate(() => window.minisched.actions.inspectPod('default/giant-0'));
      await page.waitForSelector('.filter h3');
      await page.fill('#pod-pick', scored.pod);
      openScore = await timedClick(page, '.picker button[type="submit"]', { answer: '.score h3', text: `${scored.rows} nodes` });
    }
    // Scroll the matrix and the timeline to their ends.
    const beforeScroll = await page.evaluate(() => performance.now());
    await page.evaluate(() => window.minisched.actions.inspectPod('default/giant-0'));
    await page.waitForSelector('.filter .vtable');
    await page.evaluate(() => { const t = document.querySelector('.filter .vtable'); t.scrollTop = t.scrollHeight; });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await page.click('#tab-timeline');
    await page.waitForSelector('.tl-list');
    await page.evaluate(() => { const l = document.querySelector('.tl-list'); l.scrollTop = l.scrollHeight; });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const scrollTasks = await longTasksSince(page, beforeScroll);
    if (switchProfile) await switchProfile.stop(await longTasksSince(page, switchProfile.from));

    const after = await longTasksSince(page, loadedAt);
    const trace = await browser.stopTracing();
    if (process.env.PERF_TRACE) writeFileSync(process.env.PERF_TRACE, trace);
    const { stalls, watched } = watcher ? await watcher.stop() : { stalls: [], watched: false };
    watcher = null;
    const { tasks: traced, marks, thread } = mainThreadTasks(JSON.parse(trace.toString()).traceEvents);
    const pageTid = Number(thread?.split('/')[1]);
    if (watched && !threads.includes(pageTid)) throw new Error(`--stalls followed threads ${threads}, not the trace's page thread ${thread}`);
    const own = lessStalls(traced, stalls, pageTid);
    const streamedTs = marks.find((m) => m.name === 'streamed')?.ts ?? Infinity;
    const state = await page.evaluate(() => {
      const { server, cycles, cluster } = window.minisched.store;
      return { seq: server.seq.value, snapshots: server.snapshots.value, cycles: cycles.summaries.size, details: cycles.details.size, pods: cluster.pods.size, domNodes: document.getElementsByTagName('*').length };
    });
    const heapAfterGC = await heapMB(cdp, true);
    if (process.env.PERF_HEAPSNAPSHOT) await heapSnapshot(cdp, process.env.PERF_HEAPSNAPSHOT);
    const all = summary(after);
    const out = {
      run: index + 1, nodes: NODES, pods: PODS, view: VIEW,
      createNodesSeconds: made.nodesSeconds, createPodsSeconds: made.podsSeconds, allBoundSeconds: (tBound - t0) / 1000,
      eventsStreamed: state.seq,
      longTasksAfterLoad: all,
      // The same time from the trace: the main thread's CPU time in its
      // tasks, while streaming and after.
      threadTime: {
        whileStreaming: taskSummary(traced.filter((t) => t.ts < streamedTs), TARGET.taskMs),
        afterStreaming: taskSummary(traced.filter((t) => t.ts >= streamedTs), TARGET.taskMs),
        traceMB: Math.round(trace.length / MB),
      },
      // With --stalls: the CPUs' stalls, the tasks that a stall which
      // charged the page's thread fell in, and the same summaries as above
      // with what the stalls charged taken out.
      stalls: watched ? {
        all: stalls.length,
        chargedThePage: stalls.filter((s) => s.charged[pageTid] > 0).length,
        longestMs: round(Math.max(0, ...stalls.map((s) => s.to - s.from))),
        inTasks: traced.map((t, i) => ({ wall: round(t.dur), cpu: round(t.tdur), stalled: round(own[i].stalled), charged: round(own[i].charged) })).filter((t, i) => own[i].stalled > 0),
        whileStreaming: taskSummary(own.filter((t) => t.ts < streamedTs), TARGET.taskMs),
        afterStreaming: taskSummary(own.filter((t) => t.ts >= streamedTs), TARGET.taskMs),
      } : null,
      whileStreaming: summary(streamTasks),
      scrolling: summary(scrollTasks),
      clicksMs: Object.fromEntries(Object.entries(clicks).map(([k, v]) => [k, { dom: round(v.dom), frame: round(v.frame) }])),
      inspector: {
        largestCycle: { id: largest.id, filterRows: largest.filterRows, openMs: round(open.dom), frameMs: round(open.frame) },
        fetchedOverRest: { openMs: round(openCold.dom) },
        largestScore: scored ? { id: scored.id, scoreRows: scored.rows, openMs: round(openScore.dom), frameMs: round(openScore.frame) } : null,
      },
      heapMB: { peakWhileStreaming: peak, afterGC: heapAfterGC },
      // More than one snapshot: the stream fell behind and resynced.
      snapshots: state.snapshots,
      kept: { cycleSummaries: state.cycles, cycleDetails: state.details, pods: state.pods, domNodes: state.domNodes },
      pageErrors: errors,
    };
    console.log(JSON.stringify(out, null, 2));
    const maxCpu = (t) => Math.max(t.whileStreaming.maxCpu, t.afterStreaming.maxCpu);
    const line = `run ${index + 1}: ${NODES} nodes, ${PODS} pods: longest task after load ${all.max} ms, ${all.count} long tasks (${all.total} ms); `
      + `the longest task's main-thread CPU ${maxCpu(out.threadTime)} ms`
      + `${out.stalls ? ` (${maxCpu(out.stalls)} ms less the machine's stalls, which ${out.stalls.chargedThePage} times charged the page's thread)` : ''}; `
      + `JS heap peak ${peak} MB, ${heapAfterGC} MB after GC; inspector opened the largest cycle (${largest.filterRows} Filter rows) in ${round(open.dom)} ms`
      + `${scored ? `, the largest Score (${scored.rows} rows) in ${round(openScore.dom)} ms` : ''}`;
    console.log(line);
    const ok = all.max <= TARGET.taskMs && peak <= TARGET.heapMB && open.dom <= TARGET.openMs && !errors.length;
    return { line, ok, out };
  } finally {
    clearInterval(sampler);
    if (watcher) await watcher.stop();
    await browser?.close().catch(() => {});
    await server.stop();
  }
}

async function main() {
  const results = [];
  for (let i = 0; i < RUNS; i++) results.push(await run(i));
  console.log(`\n${results.map((r) => r.line).join('\n')}`);
  console.log(`targets: no task over ${TARGET.taskMs} ms after the initial load, JS heap under ${TARGET.heapMB} MB, the largest cycle open in under ${TARGET.openMs} ms -> ${results.every((r) => r.ok) ? 'OK' : 'MISSED'}`);
  if (STRICT && !results.every((r) => r.ok)) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

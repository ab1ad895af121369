// replay-bench.mjs: a bench, not a test (issue 14's budgets). Makes a
// recording of PODS pods on NODES nodes (created over REST against a
// minisched whose history keeps the whole session), downloads it and
// prints its size, then opens it in headless Chromium (minisched replay
// FILE) and times seeks to several positions: the start, the middle, the
// end, back to the start, and a few more. A seek is timed in the page from
// the call to the player to the first animation frame after the views
// rendered its state. Also prints how long the page took to open the file
// and its JS heap then. Targets: a file under 10 MB, every seek under 200 ms.
//
//   MINISCHED_BIN=path/to/minisched node test/web/replay-bench.mjs [--nodes N] [--pods N] [--keep FILE] [--recording FILE] [--strict]
//
// --keep FILE keeps the recording made; --recording FILE times an existing
// one instead of making one. --strict exits 1 when a target is missed.

import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, launchBrowser, loadCluster, startReplay, startServer, waitReady } from './harness.mjs';

const { values: flags } = parseArgs({
  options: {
    nodes: { type: 'string' }, pods: { type: 'string' }, keep: { type: 'string' }, recording: { type: 'string' }, strict: { type: 'boolean' },
  },
});
const NODES = Number(flags.nodes ?? process.env.NODES ?? 200);
const PODS = Number(flags.pods ?? process.env.PODS ?? 2000);
const STRICT = flags.strict || process.env.STRICT === '1';
const TARGET = { fileMB: 10, seekMs: 200 };
const MB = 2 ** 20;
const say = (words) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${words}\n`);

/** Makes the recording: the cluster over REST, every pod bound, then GET /recording. */
async function record(file) {
  // The history keeps the whole session, so that the recording starts from
  // the empty cluster; the per-client rate limit is for people.
  const server = await startServer({ extraArgs: ['--history', '10000000', '--rate-limit', '100000'] });
  try {
    await waitReady(server.url);
    say(`creating ${NODES} nodes and ${PODS} pods`);
    const made = await loadCluster(server.url, { nodes: NODES, pods: PODS, giants: 0 });
    say(`created in ${(made.nodesSeconds + made.podsSeconds).toFixed(0)} s; waiting for every pod to be bound`);
    for (;;) {
      const q = await api(server.url, 'GET', '/queue');
      const waiting = Object.values(q).reduce((n, list) => n + (list?.length || 0), 0);
      if (waiting === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const res = await fetch(`${server.url}/api/v1/recording`);
    if (!res.ok) throw new Error(`GET /recording: HTTP ${res.status}: ${await res.text()}`);
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    return made;
  } finally {
    await server.stop();
  }
}

/** The column heads of the seek table: each position once, in order. */
function positionsLabels(seeks) {
  return [...new Set(seeks.map((x) => `${x.label} (${x.to})`))];
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'replay-bench-'));
  const file = flags.recording || flags.keep || join(dir, 'bench.recording.gz');
  if (!flags.recording) await record(file);
  const sizeMB = statSync(file).size / MB;
  say(`recording: ${sizeMB.toFixed(2)} MB`);
  const results = { nodes: NODES, pods: PODS, fileMB: Math.round(sizeMB * 100) / 100 };
  if (process.env.RECORD_ONLY) {
    console.log(JSON.stringify(results, null, 2));
    return;
  }
  const replay = await startReplay(file);
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const errors = [];
    page.on('pageerror', (err) => errors.push(err.message));
    const t0 = Date.now();
    await page.goto(`${replay.url}/`);
    await page.waitForSelector('#player[data-ready="true"]', { timeout: 120_000 });
    results.openSeconds = (Date.now() - t0) / 1000;
    results.events = await page.evaluate(() => window.minisched.player.length);
    // The page's JS heap with the recording open (its parsed events, the keyframes), after a collection.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    await cdp.send('Performance.enable');
    const { metrics } = await cdp.send('Performance.getMetrics');
    results.heapMB = Math.round(metrics.find((m) => m.name === 'JSHeapUsedSize').value / MB);
    const n = results.events;
    const positions = [['start', 0], ['middle', Math.floor(n / 2)], ['end', n], ['back to start', 0], ['a quarter', Math.floor(n / 4)],
      ['three quarters', Math.floor((3 * n) / 4)], ['a tenth', Math.floor(n / 10)], ['end again', n]];
    results.seeks = [];
    for (const view of ['queue', 'cycle', 'cluster', 'timeline']) {
      await page.evaluate((v) => window.minisched.actions.setView(v), view);
      if (view === 'cycle') await page.evaluate(() => window.minisched.actions.inspectPod(window.minisched.store.cluster.pods.keys()[0] || 'default/none'));
      for (const [label, to] of positions) {
        const ms = await page.evaluate((target) => new Promise((resolve) => {
          const start = performance.now();
          window.minisched.player.seek(target);
          // The views render on a microtask; the frame after them is what a person sees.
          requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - start), 0));
        }), to);
        results.seeks.push({ view, label, to, ms: Math.round(ms * 10) / 10 });
      }
    }
    results.worstSeekMs = Math.max(...results.seeks.map((s) => s.ms));
    results.pageErrors = errors;
  } finally {
    await browser.close().catch(() => {});
    await replay.stop();
    if (!flags.recording && !flags.keep) rmSync(dir, { recursive: true, force: true });
  }
  const { seeks, ...figures } = results;
  console.log(JSON.stringify(figures, null, 2));
  console.log('\nseek (ms, to the frame after the views rendered):');
  console.log(['view', ...positionsLabels(seeks)].join('\t'));
  for (const view of [...new Set(seeks.map((x) => x.view))]) console.log([view, ...seeks.filter((x) => x.view === view).map((x) => x.ms)].join('\t'));
  const missed = results.fileMB > TARGET.fileMB || results.worstSeekMs > TARGET.seekMs || results.pageErrors.length;
  console.log(`\n${missed ? 'MISSED' : 'met'}: file ${results.fileMB} MB (target < ${TARGET.fileMB}), worst seek ${results.worstSeekMs} ms (target < ${TARGET.seekMs})`);
  if (STRICT && missed) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

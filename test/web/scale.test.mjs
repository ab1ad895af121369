// Scale: a real minisched binary, the dashboard in headless Chromium, and
// 1,000 nodes and 20,000 pods created over REST while the page streams them
// (issue 17). The page must stay responsive: every click below answers
// within 200 ms, measured in the page (performance.now()) from the click
// event (the trusted input's timeStamp) to the DOM change that answers it,
// while the cluster streams in and once it is all there; and the
// inspector opens the largest cycle (Filter over every node) within 200 ms.
// The server runs at nice 10 (see before()).
//
//   MINISCHED_BIN=path/to/minisched node --test test/web/scale.test.mjs
//   SCALE_NODES=1000 SCALE_PODS=20000 (the defaults) for another size.
//
// See harness.mjs for MINISCHED_WEB_DIR and CHROMIUM. It takes a few
// minutes on 2 cores, most of them creating the pods.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, launchBrowser, loadCluster, longTasksSince, observeLongTasks, startServer, timedClick, waitReady } from './harness.mjs';

const NODES = Number(process.env.SCALE_NODES || 1000);
const PODS = Number(process.env.SCALE_PODS || 20000);
const LIMIT_MS = 200;

let server;
let browser;
let page;
const pageErrors = [];

before(async () => {
  // The test creates objects as fast as the server takes them: lift the
  // per-client rate limit meant for people. On a 2-core machine the control
  // plane scheduling 20,000 pods takes both cores, and a click then waits
  // for one behind it (one full test run saw a switch take 313 ms that
  // took 71 ms in the next run): at nice 10 the server yields to the page,
  // so that what is timed is the page's answer, not the fight for a core.
  server = await startServer({ extraArgs: ['--rate-limit', '100000'], nice: 10 });
  await waitReady(server.url);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  page.setDefaultTimeout(60_000);
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await observeLongTasks(page);
});

after(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
});

const answered = [];

/** Clicks selector and waits for answer; the times are checked at the end, all of them reported. */
async function click(what, selector, answer) {
  const r = await timedClick(page, selector, answer);
  answered.push({ what, ...r });
  return r;
}

/** Goes through the views and opens a pod from the timeline, every click timed. */
async function walk(when) {
  await click(`${when}: switch to the cluster`, '#tab-cluster', { answer: '.cluster .node-card' });
  await click(`${when}: switch to the timeline`, '#tab-timeline', { answer: '.timeline .tl-row' });
  const key = await page.$eval('.tl-row .tl-name[data-pod]', (el) => el.dataset.pod);
  await click(`${when}: open ${key} from the timeline`, `.tl-row .tl-name[data-pod="${key}"]`, { answer: '.pod-header h2', text: key });
  await click(`${when}: switch to the queue`, '#tab-queue', { answer: '.queue-board .lane' });
}

test(`${NODES} nodes and ${PODS} pods streamed: every click answers within ${LIMIT_MS} ms`, { timeout: 1_800_000 }, async (t) => {
  await page.goto(`${server.url}/#queue`);
  await page.waitForSelector('#connection[data-status="open"]');
  await page.waitForFunction(() => window.minisched.store.server.snapshots.value > 0);
  const loadedAt = await page.evaluate(() => performance.now());

  const loading = loadCluster(server.url, { nodes: NODES, pods: PODS, giants: 2 });
  // While the pods stream in: a tenth of them there, then half.
  for (const share of [0.1, 0.5]) {
    await page.waitForFunction((n) => window.minisched.store.counts.value.bound >= n, Math.floor(PODS * share), { timeout: 900_000, polling: 250 });
    await walk(`with ${Math.round(share * 100)}% of the pods bound`);
  }
  const made = await loading;
  await page.waitForFunction((n) => {
    const c = window.minisched.store.counts.value;
    return c.bound >= n && c.queues.unschedulable >= 2;
  }, PODS, { timeout: 900_000, polling: 250 });
  const { lastSeq } = await api(server.url, 'GET', '/history');
  await page.waitForFunction((seq) => window.minisched.store.server.seq.value >= seq, lastSeq, { polling: 200 });
  await walk('with every pod bound');

  // The largest cycle: a giant pod's Filter over every node, none feasible.
  // Its detail is made sure of first (it may have left the page's memory
  // and come from the server), so that the time is the inspector's.
  const rows = await page.evaluate(async () => {
    const { store, actions } = window.minisched;
    const id = store.podCycles('default/giant-1')[0].id;
    await actions.ensureCycle(id);
    return store.cycleView('default/giant-1', id).detail.filter.nodes.length;
  });
  assert.equal(rows, NODES, 'Filter checked every node for a pod that fits nowhere');
  await page.waitForSelector('.lane-unschedulable [data-pod="default/giant-1"]');
  await click('open the largest cycle from the queue board', '.lane-unschedulable [data-pod="default/giant-1"]', {
    answer: '.filter h3', text: `0 of ${NODES} nodes feasible`,
  });
  // Only the rows in view are in the page.
  const shown = await page.$$eval('.filter .matrix tbody tr:not(.vpad)', (trs) => trs.length);
  assert.ok(shown > 0 && shown < 100, `${shown} of ${NODES} matrix rows rendered`);
  await click('switch back to the queue', '#tab-queue', { answer: '.queue-board .lane' });

  const tasks = await longTasksSince(page, loadedAt);
  const heap = await page.evaluate(() => (performance.memory ? Math.round(performance.memory.usedJSHeapSize / 2 ** 20) : null));
  t.diagnostic(`created ${NODES} nodes in ${made.nodesSeconds} s and ${PODS} pods in ${made.podsSeconds} s`);
  t.diagnostic(`long tasks after the initial load: ${tasks.length}, the longest ${Math.round(Math.max(0, ...tasks.map((x) => x.duration)))} ms; JS heap ${heap} MB`);
  for (const a of answered) t.diagnostic(`${a.what}: ${a.dom.toFixed(1)} ms (next frame ${a.frame.toFixed(1)} ms)`);
  assert.deepEqual(pageErrors, []);
  const slow = answered.filter((a) => a.dom > LIMIT_MS).map((a) => `${a.what}: ${a.dom.toFixed(1)} ms`);
  assert.deepEqual(slow, [], `clicks that took over ${LIMIT_MS} ms to answer`);
});

// End to end: a recording made over REST against a real minisched, replayed
// in headless Chromium by `minisched replay FILE` and by ?recording= on the
// live server. The page opens no websocket and sends nothing that changes
// anything; it says it shows a recording; play, step and seek move the queue
// board and the inspector; a cut-off file and a file that is no recording
// get a clear error.
//
//   MINISCHED_BIN=path/to/minisched node --test test/web/replay-e2e.test.mjs
//
// See harness.mjs for MINISCHED_WEB_DIR and CHROMIUM.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { api, launchBrowser, nodeBody, podBody, startReplay, startServer, waitReady } from './harness.mjs';

// Generous: the machines these run on may be busy.
const TIMEOUT = 60_000;
const dir = mkdtempSync(join(tmpdir(), 'replay-e2e-'));
const FILE = join(dir, 'lesson.recording.gz');
const CUT = join(dir, 'cut.recording.gz');
const NOT = join(dir, 'notes.txt');

let live;
let replay;
let browser;
const pageErrors = [];

/** Waits until the live scheduler has placed the small pods and given up on the huge one. */
async function settled(url) {
  const end = Date.now() + 60_000;
  for (;;) {
    const q = await api(url, 'GET', '/queue');
    const pods = await api(url, 'GET', '/pods');
    const bound = pods.items.filter((p) => p.spec.nodeName).length;
    if (bound === 3 && q.unschedulable.some((e) => e.pod.name === 'huge')) return;
    if (Date.now() > end) throw new Error(`the pods did not settle: ${bound} bound, queue ${JSON.stringify(q)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

before(async () => {
  live = await startServer();
  await waitReady(live.url);
  await api(live.url, 'POST', '/nodes', nodeBody('rp-small', { cpu: '2', memory: '4Gi' }));
  await api(live.url, 'POST', '/nodes', nodeBody('rp-large', { cpu: '4', memory: '8Gi' }));
  for (const name of ['web-1', 'web-2', 'web-3']) await api(live.url, 'POST', '/pods', podBody(name, { cpu: '500m', memory: '256Mi' }));
  await api(live.url, 'POST', '/pods', podBody('huge', { cpu: '100' }));
  await settled(live.url);
  const res = await fetch(`${live.url}/api/v1/recording`);
  assert.equal(res.status, 200, await res.clone().text());
  const bytes = Buffer.from(await res.arrayBuffer());
  writeFileSync(FILE, bytes);
  // The same recording without its trailer: a copy that stopped early.
  const lines = gunzipSync(bytes).toString().trimEnd().split('\n');
  writeFileSync(CUT, gzipSync(`${lines.slice(0, -3).join('\n')}\n`));
  writeFileSync(NOT, 'shopping list\n');
  replay = await startReplay(FILE);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close().catch(() => {});
  await replay?.stop();
  await live?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A page that notes every request and websocket it makes: a replay must
 * open no websocket and send nothing but GETs of its files and recording.
 */
async function watchedPage() {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 }, colorScheme: 'light' });
  page.setDefaultTimeout(TIMEOUT);
  page.on('pageerror', (err) => pageErrors.push(err.message));
  const seen = { requests: [], sockets: [] };
  page.on('request', (r) => seen.requests.push({ method: r.method(), path: new URL(r.url()).pathname }));
  page.on('websocket', (ws) => seen.sockets.push(ws.url()));
  return { page, seen };
}

/** Nothing but GETs, no websocket, and of the API only the recording (and what a replay server says of it). */
function assertQuiet(seen) {
  assert.deepEqual(seen.sockets, [], 'no websocket');
  const changing = seen.requests.filter((r) => r.method !== 'GET');
  assert.deepEqual(changing, [], 'no changing request');
  const apiCalls = seen.requests.filter((r) => r.path.startsWith('/api/')).map((r) => r.path);
  assert.ok(apiCalls.every((p) => p === '/api/v1/recording' || p === '/api/v1/replay'), `API calls: ${apiCalls.join(', ')}`);
}

/** What the page's store shows: each pod's node, the queue's lanes, each pod's cycles with how they ended. */
function shown() {
  const s = window.minisched.store;
  const keys = s.cluster.pods.keys().sort();
  return {
    nodes: s.cluster.nodes.keys().sort(),
    pods: keys.map((k) => [k, s.cluster.pods.peek(k).nodeName || '']),
    lanes: s.server.vocabulary.peek().queues.map((q) => [q, s.lane(q).peek()]),
    cycles: keys.map((k) => [k, (s.cycles.podInfo.peek(k)?.cycleIds || []).map((id) => {
      const c = s.cycles.summaries.peek(id);
      return [id, c?.attempt, c?.end?.result, c?.end?.node || '', c?.binding?.bound ?? null];
    })]),
  };
}

const position = (page) => page.$eval('#player', (el) => Number(el.dataset.position));

test('minisched replay FILE: the page plays the recording through the same views and changes nothing', async (t) => {
  const { page, seen } = await watchedPage();

  await t.test('opens the recording, says so with its name and date, and keeps the controls away', async () => {
    await page.goto(`${replay.url}/`);
    await page.waitForSelector('#player[data-ready="true"]');
    assert.match(page.url(), /\?recording=\/api\/v1\/recording(#|$)/);
    const banner = await page.textContent('#replay-banner');
    assert.match(banner, /lesson\.recording\.gz/);
    assert.match(banner, /made /);
    assert.match(banner, /nothing here changes a cluster/);
    assert.match(await page.textContent('#back-to-live'), /live cluster/);
    await page.waitForSelector('#connection[data-status="replay"]');
    assert.match(await page.textContent('#scheduler-state'), /recorded/);
    for (const sel of ['#pause', '#resume', '#step']) assert.equal(await page.locator(sel).count(), 0, `${sel} is not shown`);
    await page.click('#tab-controls');
    await page.waitForSelector('#recording-no-controls');
    assert.equal(await page.locator('#node-form, #pod-form, #reset, #plugins-form').count(), 0);
    await page.click('#tab-queue');
  });

  await t.test('at the end the queue board holds what the live scheduler held; at the start nothing', async () => {
    const n = await page.evaluate(() => window.minisched.player.length);
    await page.focus('#player-seek');
    await page.keyboard.press('End');
    await page.waitForFunction((len) => document.querySelector('#player').dataset.position === String(len), n);
    await page.waitForSelector('.lane-unschedulable [data-pod="default/huge"]');
    assert.match(await page.textContent('.counts'), /2\s*nodes\s*4\s*pods/);
    await page.keyboard.press('Home');
    await page.waitForSelector('#player[data-position="0"]');
    await page.waitForSelector('#no-nodes');
    assert.equal(await page.locator('[data-pod="default/huge"]').count(), 0);
    assert.match(await page.textContent('#player-position'), /event 0 of \d+ · seq \d+/);
  });

  await t.test('step one cycle: the pod in flight, then the inspector on its cycle; step one event; keys', async () => {
    await page.click('#tab-queue');
    // Step cycle by cycle to the first pod scheduled.
    for (let i = 0; i < 40; i++) {
      await page.click('#player-cycle');
      const text = await page.textContent('#player-position');
      if (/cycleEnd default\/web-/.test(text)) break;
    }
    const text = await page.textContent('#player-position');
    const pod = /cycleEnd (default\/web-\d)/.exec(text)?.[1];
    assert.ok(pod, `stopped at a cycle's end: ${text}`);
    // Scheduled, not bound yet: the pod is in flight, binding.
    await page.waitForSelector(`.inflight [data-pod="${pod}"]`);
    assert.match(await page.textContent(`.inflight [data-pod="${pod}"]`), /binding to rp-/);
    await page.click(`.inflight [data-pod="${pod}"]`);
    await page.waitForSelector('#tab-cycle[aria-selected="true"]');
    await page.waitForSelector('#filter-h');
    assert.match(await page.textContent('.outcome'), /Cycle \d+ · attempt 1 · /);
    assert.equal(await page.locator('#delete-pod').count(), 0, 'no Delete pod');
    // On to the binding's end: the inspector says where it went.
    const at = await position(page);
    for (let i = 0; i < 40 && !/bound to rp-/.test(await page.textContent('.outcome')); i++) await page.click('#player-step');
    assert.match(await page.textContent('.outcome'), /bound to rp-/);
    assert.ok(await position(page) > at);
    // Keys: B steps back one event, S forward one, C one cycle.
    const before = await position(page);
    await page.locator('body').press('b');
    await page.waitForSelector(`#player[data-position="${before - 1}"]`);
    await page.locator('body').press('s');
    await page.waitForSelector(`#player[data-position="${before}"]`);
  });

  await t.test('play as fast as possible runs to the end; the inspector and the board follow', async () => {
    await page.selectOption('#player-speed', 'Infinity');
    await page.click('#player-play');
    await page.waitForSelector('#player[data-playing="false"]');
    const n = await page.evaluate(() => window.minisched.player.length);
    assert.equal(await position(page), n);
    await page.click('#tab-queue');
    await page.waitForSelector('.lane-unschedulable [data-pod="default/huge"]');
    await page.click('.lane-unschedulable [data-pod="default/huge"]');
    await page.waitForSelector('.outcome');
    assert.match(await page.textContent('.outcome'), /unschedulable|Insufficient cpu/i);
    assert.match(await page.textContent('#delete-pod-ro'), /recording/);
  });

  await t.test('a cut-off file and a file that is no recording get a clear error; the recording plays on', async () => {
    await page.click('#tab-controls');
    await page.setInputFiles('#open-recording-view', CUT);
    await page.waitForSelector('#replay-error');
    assert.match(await page.textContent('#replay-error'), /cut off/);
    assert.match(await page.textContent('#replay-error'), /cut\.recording\.gz/);
    await page.setInputFiles('#open-recording-error', NOT);
    await page.waitForFunction(() => /not gzip-compressed/.test(document.querySelector('#replay-error')?.textContent || ''));
    // A file dropped on the page opens too: the cut-off one again.
    const b64 = readFileSync(CUT).toString('base64');
    await page.evaluate((data) => {
      const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], 'dropped.recording.gz', { type: 'application/gzip' }));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, b64);
    await page.waitForFunction(() => /dropped\.recording\.gz.*cut off/s.test(document.querySelector('#replay-error')?.textContent || ''));
    assert.match(await page.textContent('#replay-banner'), /lesson\.recording\.gz/, 'the recording that plays stays');
    await page.click('#replay-error button');
    await page.waitForSelector('#replay-error', { state: 'detached' });
  });

  await t.test('nothing but GETs of its files and the recording, and no websocket', () => {
    assertQuiet(seen);
    assert.ok(seen.requests.some((r) => r.path === '/api/v1/recording'));
  });
  await page.close();
});

test('?recording= on a live server replays its history without a stream; dropped on a live page, the recording closes the stream and shows what the live page showed', async () => {
  const { page, seen } = await watchedPage();
  await page.goto(`${live.url}/?recording=/api/v1/recording`);
  await page.waitForSelector('#player[data-ready="true"]');
  assert.match(await page.textContent('#replay-banner'), /minisched-.*\.recording\.gz/);
  assert.equal(await page.getAttribute('#back-to-live', 'href'), '/');
  await page.focus('#player-seek');
  await page.keyboard.press('End');
  await page.waitForSelector('.lane-unschedulable [data-pod="default/huge"]');
  assertQuiet(seen);
  await page.close();

  // A live page that a recording is dropped on closes its stream and replays it.
  const { page: livePage, seen: liveSeen } = await watchedPage();
  let socket = null;
  livePage.on('websocket', (ws) => { socket = ws; });
  await livePage.goto(`${live.url}/`);
  await livePage.waitForSelector('#connection[data-status="open"]');
  // What the live page shows once it has every event and the history before
  // it, and a recording of exactly that: downloaded again if the server
  // moved on in between (a retry of the huge pod, say).
  let liveState = null;
  let bytes = null;
  for (let i = 0; i < 5 && !liveState; i++) {
    bytes = Buffer.from(await (await fetch(`${live.url}/api/v1/recording`)).arrayBuffer());
    const { lastSeq } = JSON.parse(gunzipSync(bytes).toString().trimEnd().split('\n').at(-1));
    await livePage.waitForFunction((seq) => {
      const s = window.minisched.store;
      return s.server.seq.value >= seq && s.cluster.pods.keys().every((k) => s.cycles.podInfo.peek(k)?.cycleIds.length);
    }, lastSeq);
    const state = await livePage.evaluate(shown);
    if (await livePage.evaluate(() => window.minisched.store.server.seq.peek()) === lastSeq) liveState = state;
  }
  assert.ok(liveState, 'the live server held still long enough to compare');
  const b64 = bytes.toString('base64');
  const before = liveSeen.requests.length;
  await livePage.evaluate((data) => {
    const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], 'dropped.recording.gz', { type: 'application/gzip' }));
    window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, b64);
  await livePage.waitForSelector('#player[data-ready="true"]');
  assert.match(await livePage.textContent('#replay-banner'), /dropped\.recording\.gz/);
  await livePage.waitForSelector('#connection[data-status="replay"]');
  await livePage.waitForFunction(() => window.minisched.stream === null);
  assert.ok(socket && socket.isClosed(), 'the live stream is closed');
  await livePage.focus('#player-seek');
  await livePage.keyboard.press('End');
  await livePage.waitForSelector('.lane-unschedulable [data-pod="default/huge"]');
  // The recording reproduces the live run: where each pod is, the queue, each pod's cycles and how they ended.
  assert.deepEqual(await livePage.evaluate(shown), liveState);
  const after = liveSeen.requests.slice(before);
  assert.deepEqual(after.filter((r) => r.method !== 'GET' || r.path.startsWith('/api/')), [], 'nothing asked of the server once the recording opened');
  await livePage.close();
});

test('a recording ?recording= names on another site is refused with the reason', async () => {
  const { page, seen } = await watchedPage();
  await page.goto(`${replay.url}/?recording=${encodeURIComponent('http://example.invalid/x.recording.gz')}`);
  await page.waitForSelector('#replay-error');
  assert.match(await page.textContent('#replay-error'), /another site/);
  assert.equal(seen.requests.filter((r) => !r.path.startsWith('/') || r.path.includes('x.recording')).length, 0);
  assertQuiet(seen);
  await page.close();
});

test('a link to a pod in a recording opens the inspector on it once the recording is ready', async () => {
  const { page, seen } = await watchedPage();
  await page.goto(`${replay.url}/?recording=/api/v1/recording#/pod/default/huge`);
  await page.waitForSelector('#player[data-ready="true"]');
  await page.waitForSelector('#tab-cycle[aria-selected="true"]');
  await page.focus('#player-seek');
  await page.keyboard.press('End');
  await page.waitForFunction(() => /unschedulable|Insufficient cpu/i.test(document.querySelector('.outcome')?.textContent || ''));
  assert.match(await page.textContent('.pod-header h2'), /default\/huge/);
  assert.equal(await page.locator('.notice.n-error').count(), 0, 'no error');
  assertQuiet(seen);
  await page.close();
});

test('no script error on the pages', () => {
  assert.deepEqual(pageErrors, []);
});

// End to end: a real minisched binary, the dashboard in headless Chromium,
// driven as a person would with the forms and buttons. Saves screenshots
// of the main views under docs/screenshots/ (SCREENSHOTS=dir elsewhere).
//
//   MINISCHED_BIN=path/to/minisched node --test test/web/e2e.test.mjs
//
// See harness.mjs for MINISCHED_WEB_DIR and CHROMIUM.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT, api, launchBrowser, podBody, startServer, waitReady } from './harness.mjs';

const SHOTS = process.env.SCREENSHOTS ? resolve(process.env.SCREENSHOTS) : join(ROOT, 'docs', 'screenshots');
const TIMEOUT = 20_000;

let server;
let browser;
let page;
const pageErrors = [];

before(async () => {
  server = await startServer();
  await waitReady(server.url);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1600, height: 1000 }, colorScheme: 'light' });
  page.setDefaultTimeout(TIMEOUT);
  page.on('pageerror', (err) => pageErrors.push(err.message));
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
});

async function tab(name) {
  await page.click(`#tab-${name}`);
  await page.waitForSelector(`#tab-${name}[aria-selected="true"]`);
}

async function notice(re) {
  await page.waitForFunction((src) => [...document.querySelectorAll('.notice')].some((n) => new RegExp(src).test(n.textContent)), re.source);
}

async function createNode(name, cpu, memory, labels = '') {
  await tab('controls');
  await page.fill('#node-name', name);
  await page.fill('#node-cpu', cpu);
  await page.fill('#node-memory', memory);
  await page.fill('#node-labels', labels);
  await page.click('#node-form button[type="submit"]');
  await notice(new RegExp(`Node ${name} created`));
}

async function createPod(name, cpu, memory = '256Mi') {
  await tab('controls');
  await page.fill('#pod-name', name);
  await page.fill('#pod-cpu', cpu);
  await page.fill('#pod-memory', memory);
  await page.click('#pod-form button[type="submit"]');
  await notice(new RegExp(`Pod ${name} created`));
}

async function shot(file) {
  // Clear the messages so that they do not cover the view in the picture.
  await page.evaluate(() => {
    const { store } = window.minisched;
    for (const n of store.page.notices.value) store.dismissNotice(n.id);
  });
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(SHOTS, file) });
}

test('the dashboard drives and shows the scheduler', async (t) => {
  await t.test('opens live', async () => {
    await page.goto(`${server.url}/`);
    await page.waitForSelector('#connection[data-status="open"]');
    await page.waitForSelector('#scheduler-state');
    assert.match(await page.textContent('#scheduler-state'), /running/);
  });

  await t.test('creates two nodes with the form', async () => {
    await createNode('e2e-small', '2', '4Gi', 'zone=a');
    await createNode('e2e-large', '4', '8Gi', 'zone=b');
    await tab('cluster');
    await page.waitForSelector('[data-node="e2e-small"]');
    await page.waitForSelector('[data-node="e2e-large"]');
    assert.match(await page.textContent('[data-node="e2e-large"]'), /zone=b/);
  });

  await t.test('a pod waits in activeQ while paused, then one step schedules and binds it', async () => {
    await page.click('#pause');
    await page.waitForFunction(() => /paused/.test(document.querySelector('#scheduler-state').textContent));
    await createPod('web', '500m', '1Gi');
    await tab('queue');
    const card = page.locator('.lane-active [data-pod="default/web"]');
    await card.waitFor();
    assert.match(await card.textContent(), /web/);
    await page.click('#step');
    await page.locator('.lane-active [data-pod="default/web"]').waitFor({ state: 'detached' });
    await tab('cluster');
    await page.waitForSelector('.node-card [data-pod="default/web"]');
    await page.click('#resume');
    await page.waitForFunction(() => /running/.test(document.querySelector('#scheduler-state').textContent));
  });

  await t.test('the cycle inspector shows the Filter matrix and the Score table', async () => {
    await page.click('.node-card [data-pod="default/web"]');
    await page.waitForSelector('#tab-cycle[aria-selected="true"]');
    await page.waitForSelector('.outcome');
    assert.match(await page.textContent('.outcome'), /bound to e2e-/);
    const filterRows = await page.$$eval('.matrix tbody tr', (rows) => rows.map((r) => r.textContent));
    assert.equal(filterRows.length, 2);
    assert.ok(filterRows.every((r) => r.includes('✓')), 'both nodes pass Filter');
    const headers = await page.$$eval('.matrix thead th', (ths) => ths.map((th) => th.textContent.trim()));
    assert.ok(headers.includes('NodeResourcesFit'), `Filter columns: ${headers}`);
    const scoreRows = await page.$$eval('.scores tbody tr', (rows) => rows.map((r) => r.textContent));
    assert.equal(scoreRows.length, 2);
    assert.equal(await page.locator('.scores tr.winner').count(), 1);
    assert.match(await page.textContent('.scores tr.winner'), /chosen/);
    const scoreHeads = await page.$$eval('.scores thead th', (ths) => ths.map((th) => th.textContent));
    assert.ok(scoreHeads.some((h) => /NodeResourcesFit\s*weight 1/.test(h)), `Score columns: ${scoreHeads}`);
    assert.ok(await page.locator('.barchart .bar-row').count() >= 2);
    assert.match(await page.textContent('.points'), /Bind/);
    // The points are listed as they ran: in the order of the cycle's events.
    const shown = await page.$$eval('.points tbody th[scope="row"]', (ths) => ths.map((th) => th.firstChild.textContent.trim()));
    const ran = await page.evaluate(() => {
      const s = window.minisched.store;
      return s.cycleView(s.page.selectedPod.value, s.page.selectedCycle.value).detail.points.filter((p) => p.results?.length).map((p) => p.point);
    });
    assert.deepEqual(shown, ran);
    assert.match(await page.textContent('.times'), /DefaultBinder/);
    await shot('cycle-inspector.png');
  });

  await t.test('a pod that fits nowhere is unschedulable, with the reason', async () => {
    await createPod('hog', '6', '1Gi');
    // giant fits on no node of this test, ever: it keeps the unschedulable lane busy.
    await api(server.url, 'POST', '/pods', podBody('giant', { cpu: '64' }));
    await tab('queue');
    const card = page.locator('.lane-unschedulable [data-pod="default/hog"]');
    await card.waitFor();
    await page.waitForFunction(() => /NodeResourcesFit/.test(document.querySelector('.lane-unschedulable [data-pod="default/hog"]')?.textContent || ''));
    const text = await card.textContent();
    assert.match(text, /rejected by NodeResourcesFit/);
    assert.match(text, /Insufficient cpu/);
    await card.click();
    await page.waitForSelector('.outcome.o-unschedulable');
    assert.match(await page.textContent('.outcome'), /0\/2 nodes are available/);
    assert.match(await page.textContent('.filter .reasons'), /2\s*Insufficient cpu/);
    assert.ok(await page.locator('.matrix td.c-fail').count() >= 2);
  });

  await t.test('a new node requeues the pod and it binds there', async () => {
    await createNode('e2e-huge', '16', '32Gi');
    await tab('cluster');
    await page.waitForSelector('[data-node="e2e-huge"] [data-pod="default/hog"]', { timeout: 30_000 });
    await shot('cluster.png');
    await tab('timeline');
    const row = page.locator('.tl-row', { has: page.locator('[data-pod="default/hog"]') });
    await row.waitFor();
    await page.waitForFunction(() => {
      const r = [...document.querySelectorAll('.tl-row')].find((x) => x.querySelector('[data-pod="default/hog"]'));
      return r && r.querySelectorAll('.tl-mark').length >= 2 && r.querySelector('.tl-mark.o-scheduled');
    });
    assert.ok(await row.locator('.tl-mark.o-unschedulable').count() >= 1);
    await shot('timeline.png');
    // The hog's inspector lists both attempts.
    await row.locator('.tl-mark.o-scheduled').first().click();
    await page.waitForSelector('.attempts .attempt.o-unschedulable');
    assert.ok(await page.locator('.attempts .attempt').count() >= 3, 'two attempts and "newest"');
  });

  await t.test('pause and step from the header; activeQ in the order the server pops it', async () => {
    await page.click('#pause');
    await page.waitForFunction(() => /paused/.test(document.querySelector('#scheduler-state').textContent));
    await createPod('stepped', '100m');
    // Created later but of a higher priority: PrioritySort pops it first.
    const urgent = podBody('urgent');
    urgent.spec.priorityClassName = 'system-node-critical';
    await api(server.url, 'POST', '/pods', urgent);
    await tab('queue');
    await page.locator('.lane-active [data-pod="default/stepped"]').waitFor();
    await page.locator('.lane-active [data-pod="default/urgent"]').waitFor();
    await page.locator('[data-pod="default/giant"]').first().waitFor();
    await page.waitForTimeout(500);
    await shot('queue-board.png');
    const lane = await page.$$eval('.lane-active [data-pod]', (cards) => cards.map((c) => c.dataset.pod));
    assert.deepEqual(lane.filter((k) => k === 'default/urgent' || k === 'default/stepped'), ['default/urgent', 'default/stepped']);
    assert.match(await page.textContent('.lane-active .lane-head'), /PrioritySort/);
    assert.equal(await page.locator('.lane-active [data-pod="default/stepped"]').count(), 1, 'paused: the pod stays in activeQ');
    await page.click('#step');
    await page.locator('.lane-active [data-pod="default/urgent"]').waitFor({ state: 'detached' });
    assert.equal(await page.locator('.lane-active [data-pod="default/stepped"]').count(), 1, 'one step, one pod');
    await page.click('#step');
    await page.locator('.lane-active [data-pod="default/stepped"]').waitFor({ state: 'detached' });
    assert.match(await page.textContent('#scheduler-state'), /paused/);
    await page.click('#resume');
    await page.waitForFunction(() => /running/.test(document.querySelector('#scheduler-state').textContent));
  });

  await t.test('plugins: enable NodeNumber with weight 5, disable ImageLocality, and the scores follow', async () => {
    await tab('controls');
    const generation = await page.evaluate(() => window.minisched.store.server.scheduler.value.generation);
    await page.waitForSelector('#plugins-form input[aria-label="enable NodeNumber"]');
    await page.check('#plugins-form input[aria-label="enable NodeNumber"]');
    await page.fill('#plugins-form input[aria-label="weight of NodeNumber"]', '5');
    await page.uncheck('#plugins-form input[aria-label="enable ImageLocality"]');
    await page.click('#plugins-form button[type="submit"]');
    await notice(/restarted with the new plugins/);
    await page.waitForFunction((g) => window.minisched.store.server.scheduler.value.generation > g, generation);
    await page.waitForFunction(() => /Score/.test(document.querySelector('#plugins-form tr:has(input[aria-label="enable NodeNumber"])')?.textContent || ''));
    assert.equal(await page.isChecked('#plugins-form input[aria-label="enable NodeNumber"]'), true);
    assert.equal(await page.isChecked('#plugins-form input[aria-label="enable ImageLocality"]'), false);
    await createPod('numbered-1', '100m');
    await page.evaluate(() => window.minisched.actions.inspectPod('default/numbered-1'));
    await page.waitForSelector('.scores');
    const heads = await page.$$eval('.scores thead th', (ths) => ths.map((th) => th.textContent));
    assert.ok(heads.some((h) => /NodeNumber\s*weight 5/.test(h)), `Score columns: ${heads}`);
    assert.ok(!heads.some((h) => /ImageLocality/.test(h)), `Score columns: ${heads}`);
  });

  await t.test('API errors are shown in words', async () => {
    await tab('controls');
    await page.fill('#node-name', 'e2e-small');
    await page.click('#node-form button[type="submit"]');
    await notice(/Could not create the node: .*already exists/);
    await page.fill('#yaml-text', 'apiVersion: v1\nkind: Pod\nmetadata: {name: typo}\nspec:\n  contaners: []\n');
    await page.click('#yaml-form button[type="submit"]');
    await notice(/unknown field "spec.contaners"/);
    // The scenarios panel answers in words either way.
    await page.waitForFunction(() => {
      const el = document.querySelector('#scenarios');
      return el && !/Loading/.test(el.textContent);
    });
    const scen = await page.textContent('#scenarios');
    assert.ok(/no scenario API yet|Reset and run|No bundled scenario/.test(scen), scen);
    await shot('controls.png');
  });

  await t.test('a pasted YAML manifest creates a pod', async () => {
    await page.fill('#yaml-text', 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: from-yaml\nspec:\n  containers:\n  - name: app\n    image: pause:3.10\n');
    await page.click('#yaml-form button[type="submit"]');
    await notice(/Created from the manifest: Pod from-yaml/);
    await tab('cluster');
    await page.waitForSelector('.node-card [data-pod="default/from-yaml"]');
  });

  await t.test('a dropped connection resumes with since= and misses nothing', async () => {
    const before = await page.evaluate(() => window.minisched.store.server.snapshots.value);
    await page.evaluate(() => window.minisched.stream.drop());
    await page.waitForSelector('#connection[data-status="reconnecting"]');
    await api(server.url, 'POST', '/pods', podBody('while-away'));
    await page.waitForSelector('#connection[data-status="open"]');
    const st = await page.evaluate(() => ({ since: window.minisched.store.server.conn.value.since, snapshots: window.minisched.store.server.snapshots.value }));
    assert.ok(st.since > 0, 'reconnected with ?since=');
    assert.equal(st.snapshots, before, 'resumed from history: no new snapshot');
    await page.waitForSelector('.node-card [data-pod="default/while-away"]');
  });

  await t.test('the inspector in the dark theme', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.evaluate(() => window.minisched.actions.inspectPod('default/hog'));
    await page.waitForSelector('.outcome');
    await shot('cycle-inspector-dark.png');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  await t.test('scenarios, against the API contract (answers mocked in the browser)', async () => {
    const bundled = [{ name: 'taints', title: 'Taints and tolerations', description: 'A tainted node, pods that tolerate it and pods that do not.' }];
    await page.route('**/api/v1/scenarios', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ bundled, runs: [] }) }));
    await page.route('**/api/v1/scenarios?bundled=*', (route) => route.fulfill({
      status: 202, contentType: 'application/json', body: JSON.stringify({ id: 'run-1', name: 'taints', state: 'running', step: 0, steps: 3 }),
    }));
    await page.route('**/api/v1/scenarios/run-1', (route) => route.fulfill({
      status: 200, contentType: 'application/json',
      body: JSON.stringify({ id: 'run-1', name: 'taints', state: 'passed', step: 3, steps: 3, report: { expectations: 2, failed: 0 } }),
    }));
    await page.reload();
    await page.waitForSelector('#connection[data-status="open"]');
    await tab('controls');
    await page.click('button[aria-label="Run scenario Taints and tolerations"]');
    await notice(/Scenario taints started/);
    await page.waitForSelector('[data-run="run-1"]');
    await page.evaluate(() => window.minisched.store.applyEvents([
      { time: new Date().toISOString(), kind: 'scenario', scenario: { id: 'run-1', name: 'taints', step: 2, steps: 3, phase: 'expect', message: 'pod tolerant-1 on node tainted' } },
    ]));
    await page.waitForFunction(() => /step 2 of 3/.test(document.querySelector('[data-run="run-1"]').textContent));
    assert.match(await page.textContent('[data-run="run-1"]'), /pod tolerant-1 on node tainted/);
    await page.evaluate(() => window.minisched.store.applyEvents([
      { time: new Date().toISOString(), kind: 'scenario', scenario: { id: 'run-1', name: 'taints', step: 3, steps: 3, phase: 'passed' } },
    ]));
    await page.waitForSelector('[data-run="run-1"] details');
    assert.match(await page.textContent('[data-run="run-1"] .badge'), /passed/);
    await page.unrouteAll();
  });

  await t.test('no script error on the page', () => {
    assert.deepEqual(pageErrors, []);
  });
});

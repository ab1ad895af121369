// End to end: gang scheduling (GenericWorkload) in the inspector. Lesson 29
// runs on a minisched started with the gate. From any of the gang's pods,
// the inspector's "Pod group" panel shows the group's cycle: its pods side
// by side in the order tried, turned away together on two nodes, then, on
// three, placed together and bound; each member opens its own cycle.
//
//   MINISCHED_BIN=path/to/minisched node --test test/web/gang-e2e.test.mjs

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, launchBrowser, startServer, waitReady } from './harness.mjs';

const TIMEOUT = 60_000;

let server;
let browser;

before(async () => {
  server = await startServer({ extraArgs: ['--feature-gates=GenericWorkload=true'] });
  await waitReady(server.url);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
});

test('a pod group\'s cycle in the inspector: its pods side by side, turned away together, then placed together (issue 34)', async () => {
  const run = await api(server.url, 'POST', '/scenarios?bundled=29-gang-scheduling&wait=true');
  assert.equal(run.state, 'passed', JSON.stringify(run.report?.expectations));
  const { items } = await api(server.url, 'GET', '/cycles?pod=default/trio-1&limit=100');
  const failed = items.filter((c) => c.end?.result === 'unschedulable').at(-1);
  const placed = items.find((c) => c.end?.result === 'scheduled');
  assert.ok(failed && placed, `trio-1's cycles: ${JSON.stringify(items.map((c) => [c.id, c.end?.result]))}`);
  assert.deepEqual([failed.group.name, failed.group.member, failed.group.members], ['trio', 1, 3]);

  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(TIMEOUT);
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));

  // The first try: two nodes for a gang of three.
  await page.goto(`${server.url}/#/cycle/${failed.id}`);
  const panel = page.locator('#group-cycle');
  await panel.locator('#group-members tbody tr').nth(2).waitFor();
  assert.match(await panel.locator('h3').innerText(), /Pod group default\/trio\s+pod 1 of 3 in the group's cycle/);
  assert.match(await panel.innerText(), /Turned away together: none of its 3 pods took a node, for minCount \(3\) cannot be satisfied/);
  const rows = await panel.locator('#group-members tbody tr').allInnerTexts();
  assert.deepEqual(rows.map((r) => r.split(/\s+/).slice(0, 2).join(' ')), ['1 trio-1', '2 trio-2', '3 trio-3']);
  assert.match(rows[2], /0\/2 nodes are available: 2 Insufficient cpu\./);
  // The first two found a node each in the group's simulation, undone with the group.
  assert.match(rows[0], /placed on [ab] in the simulation, then undone/);
  assert.match(rows[1], /placed on [ab] in the simulation, then undone/);
  assert.match(await page.locator('#simulated-node').innerText(), /placed on [ab], undone with its group/);

  // A member opens its own cycle of the same group cycle.
  await panel.locator('#group-members button[data-cycle]').last().click();
  await page.locator('.pod-header h2', { hasText: 'default/trio-3' }).waitFor();
  await page.locator('#group-cycle h3', { hasText: 'pod 3 of 3' }).waitFor();

  // With a third node the group is placed whole, and every pod binds.
  await page.goto(`${server.url}/#/cycle/${placed.id}`);
  await page.locator('#group-cycle', { hasText: 'Placed together: all 3 pods took their nodes.' }).waitFor();
  await page.locator('#group-cycle', { hasText: 'All 3 are bound.' }).waitFor();
  // The first two waited at Permit until the third completed the gang.
  const placedRows = await page.locator('#group-members tbody tr').allInnerTexts();
  assert.match(placedRows[0], /bound to [abc] waited .+ at Permit/);
  assert.match(placedRows[1], /bound to [abc] waited .+ at Permit/);
  assert.doesNotMatch(placedRows[2], /at Permit/);
  assert.deepEqual(errors, []);
});

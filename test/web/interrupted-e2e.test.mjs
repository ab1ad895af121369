// End to end: a data directory that holds the journal of an import a crash
// cut off (the mark and the document, as a kill -9 in the middle leaves
// them). The dashboard says the import was interrupted and what the
// cluster holds of it; "Finish the import" loads it again in full, and the
// banner goes.
//
//   MINISCHED_BIN=path/to/minisched node --test test/web/interrupted-e2e.test.mjs

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, launchBrowser, startServer, waitReady } from './harness.mjs';

const TIMEOUT = 60_000;
const dir = mkdtempSync(join(tmpdir(), 'interrupted-e2e-'));

function snapshotDoc(nodes, pods) {
  return JSON.stringify({
    apiVersion: 'minisched.dev/v1',
    kind: 'Snapshot',
    nodes: Array.from({ length: nodes }, (_, i) => ({ metadata: { name: `n${i}` }, status: { allocatable: { cpu: '4', pods: '110' } } })),
    pods: Array.from({ length: pods }, (_, i) => ({ metadata: { name: `p${i}`, namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'pause' }] } })),
  });
}

let server;
let browser;

before(async () => {
  writeFileSync(join(dir, 'minisched-import-document'), snapshotDoc(3, 5), { mode: 0o600 });
  writeFileSync(join(dir, 'minisched-import'), JSON.stringify({ kind: 'import', source: 'a snapshot loaded over the API', began: new Date().toISOString(), nodes: 3, pods: 5 }), { mode: 0o600 });
  server = await startServer({ extraArgs: ['--data-dir', dir] });
  await waitReady(server.url);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('an interrupted import is reported, and finished from the banner', async () => {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(TIMEOUT);
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(server.url);
  const banner = page.locator('#interrupted-banner');
  await banner.waitFor();
  const text = await banner.innerText();
  assert.match(text, /Import interrupted/i);
  assert.match(text, /holds 0 nodes and 0 pods of its 3 nodes and 5 pods/);
  await page.click('#resume-import');
  await banner.waitFor({ state: 'detached' });
  await page.locator('.notice', { hasText: 'The import is finished: 3 nodes and 5 pods.' }).waitFor();
  const nodes = await api(server.url, 'GET', '/nodes');
  assert.equal(nodes.items.length, 3);
  const snap = await api(server.url, 'GET', '/snapshot');
  assert.equal(snap.interruptedImport, undefined);
  assert.equal(snap.copy?.kind, 'import');
  assert.deepEqual(errors, []);
});

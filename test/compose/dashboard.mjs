// dashboard.mjs: opens a running minisched's dashboard in headless Chromium
// and checks that the app loaded and shows the cluster, the way a workshop's
// browsers see it. hack/compose-check.sh runs it against the container.
//
//   node test/compose/dashboard.mjs URL [NODE...]
//
//   URL              the dashboard, e.g. http://127.0.0.1:8080
//   NODE...          node names the cluster view must show
//   MINISCHED_TOKEN  when set, the page is opened as /?token=... (the room's
//                    link): the server must set its cookie and take the token
//                    out of the address bar, and the stream must still open
//   RESTART          when set, a shell command that restarts the server
//                    (e.g. `docker compose restart`): run once the page has
//                    loaded; the open page must then reconnect by itself and
//                    show a node created after the restart
//   SCREENSHOT       when set, a PNG of the cluster view is written there
//   CHROMIUM         the browser (default: /usr/bin/chromium, Debian's)
//
// Exits non-zero with the reason on the first failed check.

import { execSync } from 'node:child_process';
import { launchBrowser, nodeBody, waitReady } from '../web/harness.mjs';

const [url, ...nodes] = process.argv.slice(2);
if (!url) {
  console.error('usage: node test/compose/dashboard.mjs URL [NODE...]');
  process.exit(2);
}
const token = process.env.MINISCHED_TOKEN || '';
const base = url.replace(/\/$/, '');

const browser = await launchBrowser();
let failed = null;
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(30_000);
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));

  const res = await page.goto(token ? `${base}/?token=${encodeURIComponent(token)}` : `${base}/`);
  if (!res || !res.ok()) throw new Error(`GET / answered ${res ? res.status() : 'nothing'}`);
  if (token && page.url().includes('token=')) throw new Error(`the token stayed in the address bar: ${page.url()}`);

  // The app rendered: the live stream is open, the scheduler's state shows
  // and the "Loading the minisched dashboard…" line is gone.
  await page.waitForSelector('#connection[data-status="open"]');
  await page.waitForSelector('#scheduler-state');
  if (await page.locator('.loading').count() !== 0) throw new Error('the loading line is still there');

  // The cluster view shows the nodes the server has.
  await page.click('#tab-cluster');
  await page.waitForSelector('#tab-cluster[aria-selected="true"]');
  for (const n of nodes) await page.waitForSelector(`[data-node="${n}"]`);
  if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT });
  console.log(`dashboard loaded: stream open, ${(await page.textContent('#scheduler-state')).trim()}, ${nodes.length} node(s) shown${token ? ', token taken from the link into the cookie' : ''}`);

  if (process.env.RESTART) {
    // The server goes away and comes back; the page, left open, must find
    // it again by itself, with the cookie it has.
    const t0 = Date.now();
    let sawDown = false;
    const watch = setInterval(async () => {
      const st = await page.getAttribute('#connection', 'data-status').catch(() => null);
      if (st && st !== 'open') sawDown = true;
    }, 100);
    execSync(process.env.RESTART, { stdio: 'pipe' }); // its output is in the error when it fails
    await waitReady(base);
    const res = await fetch(`${base}/api/v1/nodes`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(nodeBody('after-restart')),
    }).catch((err) => ({ ok: false, status: err.message }));
    if (!res.ok) throw new Error(`creating a node after the restart: ${res.status}`);
    await page.waitForSelector('[data-node="after-restart"]', { timeout: 60_000 });
    await page.waitForSelector('#connection[data-status="open"]');
    clearInterval(watch);
    if (!sawDown) throw new Error('the page never saw the server go away: was it restarted?');
    console.log(`after the restart (${((Date.now() - t0) / 1000).toFixed(1)}s): the open page reconnected by itself and shows a node created since`);
  }
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
} catch (err) {
  failed = err;
} finally {
  await browser.close().catch(() => {});
}
if (failed) {
  console.error(`dashboard check failed: ${failed.message}`);
  process.exit(1);
}

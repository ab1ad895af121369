// harness.mjs: starts a minisched binary and a headless Chromium for the
// end-to-end test and the performance bench.
//
//   MINISCHED_BIN      the binary to run (default: bin/minisched, then
//                      minisched-bin, at the repository's root)
//   MINISCHED_WEB_DIR  when set, passed as --web-dir (serve the dashboard
//                      from disk instead of the files embedded in the binary)
//   CHROMIUM           the browser (default: /usr/bin/chromium, Debian's)

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];

export function binaryPath() {
  if (process.env.MINISCHED_BIN) return process.env.MINISCHED_BIN;
  for (const p of [join(ROOT, 'bin', 'minisched'), join(ROOT, 'minisched-bin')]) if (existsSync(p)) return p;
  throw new Error('no minisched binary: set MINISCHED_BIN to the binary to test (or build it as bin/minisched)');
}

/**
 * run starts the binary with args and resolves with {url, stop, output,
 * child} once a line of its output matches address (the URL is the first
 * group); what names it in errors.
 */
async function run(args, address, what, timeoutMs, nice = 0) {
  // nice > 0 runs the binary at a lower CPU priority (nice(1)), so that on a
  // machine with few cores a page beside it gets a core when it has work.
  const [cmd, argv] = nice > 0 ? ['nice', ['-n', String(nice), binaryPath(), ...args]] : [binaryPath(), args];
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = [];
  let exited = null;
  const exit = new Promise((res) => child.on('exit', (code, signal) => { exited = { code, signal }; res(exited); }));
  const keep = (line) => {
    output.push(line);
    if (output.length > 400) output.shift();
  };
  createInterface({ input: child.stderr }).on('line', keep);
  const url = await new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${what} printed no address within ${timeoutMs} ms:\n${output.join('\n')}`)), timeoutMs);
    createInterface({ input: child.stdout }).on('line', (line) => {
      keep(line);
      const m = address.exec(line);
      if (m) {
        clearTimeout(timer);
        res(m[1].replace(/\/$/, ''));
      }
    });
    exit.then((e) => { clearTimeout(timer); rej(new Error(`${what} exited (${e.code ?? e.signal}) before serving:\n${output.join('\n')}`)); });
    child.on('error', (err) => { clearTimeout(timer); rej(err); });
  }).catch((err) => {
    child.kill('SIGKILL');
    throw err;
  });
  async function stop() {
    if (exited) return exited;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const e = await exit;
    clearTimeout(timer);
    return e;
  }
  // Never leave the binary behind, whatever happens to this process.
  process.once('exit', () => { if (!exited) child.kill('SIGKILL'); });
  return { url, stop, output, child };
}

/** The dashboard's files from disk, when MINISCHED_WEB_DIR says so. */
function webDirArgs() {
  return process.env.MINISCHED_WEB_DIR ? ['--web-dir', resolve(process.env.MINISCHED_WEB_DIR)] : [];
}

/**
 * startServer runs the binary on a free loopback port and resolves with
 * {url, stop, output} once it prints its dashboard's address; nice lowers
 * its CPU priority by that much.
 */
export function startServer({ extraArgs = [], timeoutMs = 90_000, nice = 0 } = {}) {
  return run(['--addr', '127.0.0.1:0', ...extraArgs, ...webDirArgs()], /minisched dashboard: (http:\/\/\S+)/, 'minisched', timeoutMs, nice);
}

/** waitReady polls /readyz until the scheduler and the watchers are up. */
export async function waitReady(url, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.ok) return;
    } catch {
      // not yet
    }
    if (Date.now() > end) throw new Error('minisched did not become ready');
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function launchBrowser() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** api sends one REST call and returns the parsed JSON (throws on failure). */
export async function api(url, method, path, body) {
  const res = await fetch(`${url}/api/v1${path}`, {
    method, headers: body ? { 'Content-Type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

export function podBody(name, { cpu = '100m', memory = '64Mi', namespace = 'default' } = {}) {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace },
    spec: { containers: [{ name: 'app', image: 'pause:3.10', resources: { requests: { cpu, memory } } }] },
  };
}

export function nodeBody(name, { cpu = '32', memory = '64Gi', pods = '110', labels = {} } = {}) {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, status: { allocatable: { cpu, memory, pods } } };
}

/** pool runs fn(0) ... fn(n - 1), concurrency of them at a time. */
export async function pool(n, concurrency, fn) {
  let next = 0;
  const workers = Array.from({ length: Math.min(n, concurrency) }, async () => {
    while (next < n) {
      const i = next++;
      await fn(i);
    }
  });
  await Promise.all(workers);
}

/**
 * loadCluster creates nodes nodes (32 CPUs, 128Gi, four zones) and pods pods
 * (100m, 128Mi each) over REST, a few requests at a time, then giants pods
 * that fit on no node: Filter checks every node for them (nothing passes,
 * so it never stops early), which makes their cycles the largest a cluster
 * of this size has. Names: scale-node-0000, scale-pod-00000, giant-0.
 * Returns the seconds each part took.
 */
export async function loadCluster(url, { nodes, pods, giants = 2, concurrency = 8 }) {
  const t0 = Date.now();
  await pool(nodes, concurrency, (i) => api(url, 'POST', '/nodes', nodeBody(`scale-node-${String(i).padStart(4, '0')}`, {
    cpu: '32', memory: '128Gi', labels: { zone: `z${i % 4}` },
  })));
  const t1 = Date.now();
  await pool(pods, concurrency, (i) => api(url, 'POST', '/pods', podBody(`scale-pod-${String(i).padStart(5, '0')}`, { cpu: '100m', memory: '128Mi' })));
  const t2 = Date.now();
  for (let i = 0; i < giants; i++) await api(url, 'POST', '/pods', podBody(`giant-${i}`, { cpu: '1000' }));
  return { nodesSeconds: (t1 - t0) / 1000, podsSeconds: (t2 - t1) / 1000 };
}

/**
 * Starts the long-task observer before the page's own scripts: every main
 * thread task over 50 ms lands in window.__longtasks as {start, duration}.
 */
export async function observeLongTasks(page) {
  await page.addInitScript(() => {
    window.__longtasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longtasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  });
}

/** The long tasks that started at or after performance.now() t, in the page. */
export function longTasksSince(page, t) {
  return page.evaluate((since) => window.__longtasks.filter((x) => x.start >= since), t);
}

/**
 * timedClick clicks selector as a person would (a trusted input event, sent
 * by the browser) and resolves with how long the page took to answer, in
 * milliseconds of the page's own clock (performance.now()): from the
 * click event's timeStamp (when the input reached the page, so the time it
 * waited behind a busy main thread counts) to the first DOM change after
 * which answer (a CSS selector, whose text includes text when given;
 * it must not match before the click) matches, and to the next animation frame after it ("frame"). Both are
 * measured in the page; nothing sleeps.
 */
export async function timedClick(page, selector, { answer, text = null, timeout = 30_000 }) {
  await page.evaluate(({ answer: sel, text: want, timeout: ms }) => {
    window.__answer = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${sel}${want == null ? '' : ` with "${want}"`} within ${ms} ms of the click`)), ms);
      let start = null;
      const ok = () => {
        const el = document.querySelector(sel);
        return !!el && (want == null || el.textContent.includes(want));
      };
      const mo = new MutationObserver(() => {
        if (start != null && ok()) finish();
      });
      function finish() {
        const dom = performance.now() - start;
        mo.disconnect();
        clearTimeout(timer);
        requestAnimationFrame(() => resolve({ dom, frame: performance.now() - start }));
      }
      window.addEventListener('click', (ev) => {
        start = ev.timeStamp;
        mo.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      }, { capture: true, once: true });
    });
    // The answer must be new: one that shows already would time nothing.
    const el = document.querySelector(sel);
    if (el && (want == null || el.textContent.includes(want))) throw new Error(`${sel} shows before the click`);
  }, { answer, text, timeout });
  await page.click(selector, { timeout });
  return page.evaluate(() => window.__answer);
}

/**
 * startReplay runs `minisched replay FILE` on a free loopback port and
 * resolves with {url, stop, output} once it prints its address.
 */
export function startReplay(file, { timeoutMs = 30_000 } = {}) {
  return run(['replay', '--addr', '127.0.0.1:0', ...webDirArgs(), file], /minisched replay of .*: (http:\/\/\S+)/, 'minisched replay', timeoutMs);
}

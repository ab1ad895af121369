// The Compare view's data: totals, the pods and nodes tables, one pod's two
// Score tables with the differing cells, the request body, and the action
// that follows a comparison until it is over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gatesLine, nodeRows, podRows, scoreTables, summary } from '../../web/static/js/views/compare/comparison.js';
import { comparisonRequest } from '../../web/static/js/schedconfig.js';
import { createApi } from '../../web/static/js/net/api.js';
import { createActions } from '../../web/static/js/actions/index.js';
import { createStore } from '../../web/static/js/store/index.js';
import { fakeFetch } from './fixtures.mjs';

// Lesson 17 under LeastAllocated (spread) and MostAllocated (pack), as the
// server reports it.
const REPORT = {
  a: 'spread', b: 'pack', moved: 1, unschedulableOnlyA: [], unschedulableOnlyB: ['default/late'],
  pods: [
    { pod: 'default/pinned', nodeA: 'small', nodeB: 'small', same: true },
    { pod: 'default/web', nodeA: 'big', nodeB: 'small', same: false, plugins: [{ plugin: 'NodeResourcesFit', underA: 30, underB: -25 }] },
    { pod: 'default/late', nodeA: 'big', nodeB: '', same: false, notes: ['under pack: 0/2 nodes are available'] },
  ],
  nodes: [
    { node: 'big', a: { cpu: 25, memory: 12.5, pods: 2 }, b: { cpu: 0, memory: 0, pods: 0 } },
    { node: 'small', a: { cpu: 25, memory: 12.5, pods: 1 }, b: { cpu: 25.4, memory: 12.5, pods: 1 } },
  ],
};

test('the totals say how many pods moved and which only one configuration could not place', () => {
  assert.equal(summary(REPORT), '1 of 3 pods placed differently; 1 unschedulable under pack only');
  assert.equal(summary(null), '');
});

test('the pods table puts the pods placed differently first, with the plugin that moved them', () => {
  assert.deepEqual(podRows(REPORT).map((r) => [r.pod, r.moved, r.lead]), [
    ['default/late', true, ''], ['default/web', true, 'NodeResourcesFit'], ['default/pinned', false, ''],
  ]);
});

test('the nodes table marks a node whose utilisation changed, not one that rounds alike', () => {
  assert.deepEqual(nodeRows(REPORT).map((n) => [n.node, n.changed]), [['big', true], ['small', false]]);
});

test('a pod\'s two Score tables share rows and columns, and mark the cells that differ', () => {
  const detail = {
    pod: 'default/web',
    a: { node: 'big', scores: { big: { NodeResourcesFit: 69, TaintToleration: 300, ImageLocality: 0 }, small: { NodeResourcesFit: 56, TaintToleration: 300, ImageLocality: 0 } }, filtered: {} },
    b: { node: 'small', scores: { small: { NodeResourcesFit: 43, TaintToleration: 300, ImageLocality: 0 } }, filtered: { big: 'NodeResourcesFit: Insufficient cpu' } },
  };
  const t = scoreTables(detail);
  assert.deepEqual(t.plugins, ['NodeResourcesFit', 'TaintToleration']);
  assert.deepEqual(t.zero, ['ImageLocality']);
  assert.deepEqual(t.rows.map((r) => r.node), ['big', 'small']);
  const [big, small] = t.rows;
  assert.deepEqual(big.a, { cells: [69, 300], total: 369, chosen: true, filtered: '' });
  assert.deepEqual(big.b, { cells: [null, null], total: null, chosen: false, filtered: 'NodeResourcesFit: Insufficient cpu' });
  assert.deepEqual(small.differs, [true, false]);
  assert.equal(small.totalDiffers, true);
  assert.equal(small.b.chosen, true);
  assert.deepEqual(scoreTables({ pod: 'x', a: null, b: null }), { plugins: [], zero: [], rows: [] });
});

test('the request names each side, sends a configuration only when one was typed, and the scenario only in scenario mode', () => {
  const form = { mode: 'scenario', bundled: '17-spread-or-pack', nameA: ' spread ', configA: '', nameB: '', configB: 'kind: KubeSchedulerConfiguration\n' };
  assert.deepEqual(comparisonRequest(form), { a: { name: 'spread' }, b: { config: 'kind: KubeSchedulerConfiguration\n' }, bundled: '17-spread-or-pack' });
  assert.deepEqual(comparisonRequest({ ...form, mode: 'cluster' }), { a: { name: 'spread' }, b: { config: 'kind: KubeSchedulerConfiguration\n' } });
  assert.deepEqual(comparisonRequest({ ...form, mode: 'reschedule' }), { reschedule: true });
  // Feature gates go with their side, trimmed, only when typed.
  const gated = { ...form, gatesA: ' OpportunisticBatching=false ', gatesB: '  ' };
  assert.deepEqual(comparisonRequest(gated).a, { name: 'spread', featureGates: 'OpportunisticBatching=false' });
  assert.deepEqual(comparisonRequest(gated).b, { config: 'kind: KubeSchedulerConfiguration\n' });
  assert.deepEqual(comparisonRequest({ ...gated, mode: 'reschedule' }), { reschedule: true });
});

test('the gates each side set, in words, and nothing when neither set any', () => {
  assert.equal(gatesLine({ a: 'A', b: 'B' }), '');
  assert.equal(gatesLine({ a: 'A', b: 'B', featureGates: ['', ''] }), '');
  assert.equal(gatesLine({ a: 'off', b: 'on', featureGates: ['OpportunisticBatching=false,SchedulerAsyncAPICalls=true', ''] }),
    'Feature gates of each side\'s scheduler: off: OpportunisticBatching=false, SchedulerAsyncAPICalls=true; on: the run\'s.');
});

test('compare follows the run until it is over, and a new comparison forgets the pod shown', async () => {
  const answers = [
    { id: 2, state: 'running', progress: 'running 17-spread-or-pack under pack', a: 'spread', b: 'pack' },
    { id: 2, state: 'done', a: 'spread', b: 'pack', report: REPORT },
  ];
  const fetchImpl = fakeFetch((url, init) => {
    if (init.method === 'POST') return { status: 202, body: { id: 2, state: 'running', a: 'spread', b: 'pack' } };
    return { status: 200, body: answers.shift() };
  });
  const store = createStore();
  store.setComparison({ id: 1, state: 'done', report: REPORT });
  store.setComparedPod({ pod: 'default/web', a: null, b: null });
  const seen = [];
  const actions = createActions({ api: createApi({ fetchImpl }), store, delay: async () => { seen.push(store.server.comparison.peek().state); } });
  const c = await actions.compare({ mode: 'scenario', bundled: '17-spread-or-pack', nameA: 'spread', configA: '', nameB: 'pack', configB: '' });
  assert.equal(c.state, 'done');
  assert.deepEqual(seen, ['running', 'running']);
  assert.equal(store.server.comparison.peek().report.moved, 1);
  assert.equal(store.server.comparedPod.peek(), null);
  assert.deepEqual(JSON.parse(fetchImpl.calls[0].body), { a: { name: 'spread' }, b: { name: 'pack' }, bundled: '17-spread-or-pack' });
  assert.equal(store.page.isBusy('compare'), false);
});

test('a comparison that fails says why; none run yet is no error', async () => {
  const store = createStore();
  const failing = createActions({ api: createApi({ fetchImpl: fakeFetch(() => ({ status: 200, body: { id: 3, state: 'error', error: 'under pack: the scheduler is paused' } })) }), store });
  await failing.loadComparison();
  assert.match(store.page.notices.peek().at(-1).text, /The comparison failed: under pack: the scheduler is paused/);
  const fresh = createStore();
  const none = createActions({ api: createApi({ fetchImpl: fakeFetch(() => ({ status: 404, body: { error: 'no comparison has run yet' } })) }), store: fresh });
  await none.loadComparison();
  assert.deepEqual(fresh.page.notices.peek(), []);
  assert.equal(fresh.server.comparison.peek(), null);
});

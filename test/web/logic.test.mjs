// Formatting, the inspector's tables, the forms' manifests, the plugin
// configuration, the API client's errors and the stream's reconnects. Over
// 400 lines: one file for the pure logic of every view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  codeClass, codeName, formatAgo, mirrorWords, formatBytes, podLife, formatCores, formatCountdown, formatCpu, formatDuration, formatNanos, formatTaint, outcomeText, percent, plural, shortCount, tidyReason,
} from '../../web/static/js/format.js';
import { decidedWords, extenderRows, filterMatrix, partialSearch, pluginTimes, pointRows, reasonSummary, scoreTable } from '../../web/static/js/views/inspector/cycle.js';
import {
  FormError, linesInPaste, manifestKind, nextName, nodeManifest, parseAffinity, parseLabels, parseTaints, parseTolerations, nodeEditForm, nodePatch, priorityClassManifest, splitDocuments, podManifest, podManifests, workloadManifest,
} from '../../web/static/js/manifests.js';
import { configWithPlugins, lineDiff, pluginArgs, pluginChecks, pluginRows, withPluginArgs } from '../../web/static/js/schedconfig.js';
import { livesText, workloadOf, workloadTree } from '../../web/static/js/views/cluster/workloads.js';
import { ApiError, createApi, describeError } from '../../web/static/js/net/api.js';
import { backoffDelay, connectStream, streamURL } from '../../web/static/js/net/stream.js';
import { createStore } from '../../web/static/js/store/index.js';
import { effect } from '../../web/static/js/signals.js';
import { createActions } from '../../web/static/js/actions/index.js';
import { preemptions, profilesOf, rowProfile, segments, timeRange, zoomed } from '../../web/static/js/views/timeline/bands.js';
import { trialView, whyView } from '../../web/static/js/views/inspector/why.js';
import { hashFor, parseHash, shortcut } from '../../web/static/js/route.js';
import { nodeHealth, nodeRows } from '../../web/static/js/views/cluster/nodes.js';
import { deletedNotice, kubeletNotice } from '../../web/static/js/actions/cluster.js';
import { columnsFor, gridRange, visibleRange } from '../../web/static/js/windowing.js';
import { E, events, fakeFetch, nodeSummary, podSummary, resetSeq, snapshot, VOCABULARY } from './fixtures.mjs';

const { codes } = VOCABULARY;

test('format: CPU, memory, durations, codes', () => {
  assert.equal(formatCpu(500), '0.5');
  assert.equal(formatCpu(2000), '2');
  assert.equal(formatCpu(1250), '1.25');
  assert.equal(formatCpu(0), '0');
  // Figures carry their unit; one of a thing is singular (issue 16, 9).
  assert.equal(formatCores(500), '0.5 cores');
  assert.equal(formatCores(1000), '1 core');
  assert.equal(plural(1, 'pod'), '1 pod');
  assert.equal(plural(2, 'pod'), '2 pods');
  assert.equal(tidyReason('found a potential placement for pod on node n-2, preempting 1 victims'), 'found a potential placement for pod on node n-2, preempting 1 victim');
  assert.equal(tidyReason('preempting 11 victims; 0/1 nodes'), 'preempting 11 victims; 0/1 nodes');
  assert.equal(formatBytes(16 * 2 ** 30), '16Gi');
  assert.equal(formatBytes(1.5 * 2 ** 30), '1.5Gi');
  assert.equal(formatBytes(512 * 2 ** 20), '512Mi');
  assert.equal(formatBytes(100), '100B');
  assert.equal(formatNanos(820), '820 ns');
  assert.equal(formatNanos(12_345), '12.3 µs');
  assert.equal(formatNanos(4_500_000), '4.5 ms');
  assert.equal(formatNanos(1_200_000_000), '1.20 s');
  assert.equal(formatCountdown(4200), '4.2 s');
  assert.equal(formatCountdown(-5), 'now');
  assert.equal(formatCountdown(65_000), '1 min 5 s');
  assert.equal(formatDuration(850), '850 ms');
  assert.equal(formatAgo(1000, 13_000), '12 s ago');
  assert.equal(formatAgo(1000, 1500), 'just now');
  assert.equal(codeName(3, codes), 'UnschedulableAndUnresolvable');
  assert.equal(codeName(42, codes), 'code 42');
  assert.equal(codeClass('UnschedulableAndUnresolvable'), 'fail');
  assert.equal(codeClass('Skip'), 'skip');
  assert.equal(codeClass('SomethingNew'), 'error');
  assert.equal(formatTaint({ key: 'gpu', value: 'true', effect: 'NoSchedule' }), 'gpu=true:NoSchedule');
  assert.equal(percent(3, 2), 100);
  assert.equal(percent(1, 4), 25);
});

const FILTER = {
  plugins: ['NodeName', 'NodeUnschedulable', 'TaintToleration', 'NodeResourcesFit'],
  nodes: [
    { node: 'n1', codes: [0, 0, 0, 0], nanos: [1, 2, 3, 4] },
    { node: 'n2', codes: [0, 0, 3], nanos: [1, 1, 10], reason: 'node(s) had untolerated taint(s)' },
    { node: 'n3', codes: [0, 0, 0, 2], nanos: [1, 1, 1, 50], reason: 'Insufficient cpu' },
    { node: 'n4', codes: [0, 0, 0, 2], nanos: [1, 1, 1, 50], reason: 'Insufficient cpu' },
    { node: 'n5', codes: [0, 5, 0, 0], nanos: [1, 1, 1, 1] },
  ],
  nanos: 999,
};

test('filter matrix: pass, failure reason, skip and not-run cells', () => {
  const m = filterMatrix(FILTER, codes);
  assert.equal(m.feasible, 2);
  assert.equal(m.total, 5);
  const n2 = m.rows[1];
  assert.deepEqual(n2.cells.map((c) => c.state), ['pass', 'pass', 'fail', 'notrun']);
  assert.equal(n2.cells[2].label, 'node(s) had untolerated taint(s)');
  assert.equal(n2.failedPlugin, 'TaintToleration');
  assert.equal(n2.cells[3].label, 'not run');
  assert.equal(m.rows[4].cells[1].state, 'skip');
  assert.equal(m.rows[4].feasible, true);
  assert.deepEqual(m.columnNanos, [5, 6, 16, 105]);
  assert.deepEqual(reasonSummary(m), [
    { plugin: 'NodeResourcesFit', reason: 'Insufficient cpu', count: 2 },
    { plugin: 'TaintToleration', reason: 'node(s) had untolerated taint(s)', count: 1 },
  ]);
  assert.deepEqual(filterMatrix(FILTER, codes, { failingFirst: true }).rows.slice(0, 3).map((r) => r.node), ['n2', 'n3', 'n4']);
  assert.equal(filterMatrix(null, codes), null);
  // The columns of a table: the plugins that rejected nodes first, most
  // rejections first, then the rest as Filter ran them (issue 37, 4).
  assert.deepEqual(m.columns, [3, 2, 0, 1]);
  assert.deepEqual(filterMatrix({ ...FILTER, nodes: [FILTER.nodes[0]] }, codes).columns, [0, 1, 2, 3]);
});

test('score table: sorted by total, winner and ties marked', () => {
  const score = {
    plugins: [{ name: 'NodeResourcesFit', weight: 1 }, { name: 'TaintToleration', weight: 3 }],
    nodes: [
      { node: 'a', raw: [50, 0], normalized: [50, 100], weighted: [50, 300], nanos: [5, 5], total: 350 },
      { node: 'b', raw: [70, 0], normalized: [70, 100], weighted: [70, 300], nanos: [5, 5], total: 370 },
      { node: 'c', raw: [70, 0], normalized: [70, 100], weighted: [70, 300], nanos: [5, 5], total: 370 },
    ],
    nanos: 20,
  };
  const t = scoreTable(score, { result: 'scheduled', node: 'c', ties: ['b', 'c'] }, codes);
  assert.deepEqual(t.rows.map((r) => r.node), ['b', 'c', 'a']);
  assert.deepEqual(t.rows.map((r) => r.winner), [false, true, false]);
  assert.deepEqual(t.rows.map((r) => r.tie), [true, true, false]);
  // A compact stream's end counts the ties and names none: the same marks, from the totals.
  const compact = scoreTable(score, { result: 'scheduled', node: 'c', tieCount: 1 }, codes);
  assert.deepEqual(compact.rows.map((r) => [r.node, r.winner, r.tie]), [['b', false, true], ['c', true, true], ['a', false, false]]);
  const alone = scoreTable({ ...score, nodes: score.nodes.slice(0, 2) }, { result: 'scheduled', node: 'b' }, codes);
  assert.deepEqual(alone.rows.map((r) => r.tie), [false, false]);
  assert.equal(t.best, 370);
  assert.equal(t.plugins[0].nanos, 15);
  const u = scoreTable(score, { result: 'unschedulable' }, codes);
  assert.ok(u.rows.every((r) => !r.winner));
  assert.deepEqual(u.failed, []);
  const failing = scoreTable({ ...score, plugins: [{ ...score.plugins[0], code: 1, reason: 'boom' }, score.plugins[1]] }, null, codes);
  assert.deepEqual(failing.failed.map((p) => [p.name, p.codeName, p.reason]), [['NodeResourcesFit', 'Error', 'boom']]);
  // Close totals look apart: the bars start below the lowest (issue 16, 11).
  const close = scoreTable({ plugins: score.plugins, nodes: [{ node: 'x', total: 442 }, { node: 'y', total: 436 }] }, null, codes);
  assert.equal(close.floor, 434);
  assert.deepEqual(close.rows.map((r) => r.bar), [100, 25]);
  assert.equal(scoreTable({ plugins: [], nodes: [{ node: 'x', total: 0 }, { node: 'y', total: 10 }] }, null, codes).floor, 0);
  // A negative weight (upstream takes one) makes negative totals: the best
  // is the one nearest zero, and every bar is within 0-100%.
  const negative = scoreTable({ plugins: [{ name: 'NodeResourcesFit', weight: -1 }], nodes: [{ node: 'big', total: -88 }, { node: 'small', total: -50 }] }, { result: 'scheduled', node: 'small' }, codes);
  assert.deepEqual(negative.rows.map((r) => [r.node, r.winner]), [['small', true], ['big', false]]);
  assert.equal(negative.best, -50);
  assert.ok(negative.rows.every((r) => r.bar > 0 && r.bar <= 100), JSON.stringify(negative.rows.map((r) => r.bar)));
  assert.equal(negative.rows[0].bar, 100);
});

test('the Score table names the plugin that decided, and names the columns that are 0 on every node (issue 37, 3)', () => {
  const plugins = [{ name: 'NodeResourcesFit', weight: 1 }, { name: 'NodeResourcesBalancedAllocation', weight: 1 }, { name: 'ImageLocality', weight: 1 }, { name: 'VolumeBinding', weight: 1 }];
  const row = (node, fit, balanced) => ({ node, raw: [fit, balanced, 0, 0], normalized: [fit, balanced, 0, 0], weighted: [fit, balanced, 0, 0], nanos: [1, 1, 1, 1], total: fit + balanced });
  // web-2 went to node-3 at 465 against 463: only BalancedAllocation differs.
  const t = scoreTable({ plugins, nodes: [row('node-1', 91, 72), row('node-3', 91, 74), row('node-2', 80, 70)] }, { result: 'scheduled', node: 'node-3' }, codes);
  assert.deepEqual(t.decided.columns, [1]);
  assert.equal(decidedWords(t.decided), 'node-3 beat node-1 165 to 163: decided by NodeResourcesBalancedAllocation (74 against 72).');
  assert.deepEqual(t.zero, ['ImageLocality (weight 1)', 'VolumeBinding (weight 1)']);
  assert.deepEqual(t.drawn, [0, 1]);
  // No one plugin decides alone: the fewest whose lead adds up, largest first.
  const u = scoreTable({ plugins, nodes: [row('a', 50, 50), row('b', 53, 52)] }, { result: 'scheduled', node: 'b' }, codes);
  assert.equal(decidedWords(u.decided), 'b beat a 105 to 100: decided by NodeResourcesFit (53 against 50) and NodeResourcesBalancedAllocation (52 against 50).');
  // A plugin that alone outweighs the margin decides, even when another led by more.
  const v = scoreTable({ plugins, nodes: [row('a', 10, 60), row('b', 40, 31)] }, { result: 'scheduled', node: 'b' }, codes);
  assert.deepEqual(v.decided.columns, [0]);
  // A tie, or no winner: nothing decided.
  assert.equal(scoreTable({ plugins, nodes: [row('a', 50, 50), row('b', 50, 50)] }, { result: 'scheduled', node: 'b' }, codes).decided, null);
  assert.equal(scoreTable({ plugins, nodes: [row('a', 50, 50)] }, { result: 'unschedulable' }, codes).decided, null);
});

test('a Filter that stopped early says how many nodes it checked, and why (issue 37, 5)', () => {
  assert.equal(partialSearch({ total: 144, feasible: 144 }, 300),
    'Filter checked 144 of the 300 nodes: it stops once it has found enough feasible ones (144 here), as kube-scheduler does with percentageOfNodesToScore. The other 156 were not checked.');
  assert.equal(partialSearch({ total: 300, feasible: 12 }, 300), '', 'every node checked');
  assert.equal(partialSearch({ total: 1, feasible: 1, nominatedNode: true }, 300), '', 'a nominated node or a hint, alone');
  assert.equal(partialSearch(null, 300), '');
});

test('points in the order they ran, and plugin times', () => {
  const detail = {
    points: [
      { point: 'PreFilter', results: [{ plugin: 'NodeResourcesFit', code: 0, nanos: 100 }, { plugin: 'NodeAffinity', code: 5, nanos: 10, nodeNames: ['n1'] }] },
      { point: 'Permit', node: 'n1', results: [{ plugin: 'PermitDelay', code: 4, nanos: 5, timeoutNanos: 2e9 }] },
      { point: 'Bind', node: 'n1', results: [{ plugin: 'DefaultBinder', code: 1, nanos: 9000, reason: 'binding refused' }] },
      { point: 'Unreserve', node: 'n1', results: [{ plugin: 'VolumeBinding', code: 0, nanos: 20 }] },
    ],
    filter: FILTER,
    score: { plugins: [{ name: 'NodeResourcesFit', weight: 1, normalizeNanos: 7 }], nodes: [{ node: 'n1', raw: [1], normalized: [1], weighted: [1], nanos: [30], total: 1 }] },
  };
  const rows = pointRows(detail.points, codes);
  assert.deepEqual(rows.map((r) => r.point), ['PreFilter', 'Permit', 'Bind', 'Unreserve'], 'an Unreserve after a failed Bind stays after it');
  assert.equal(rows[0].results[1].state, 'skip');
  assert.equal(rows[1].results[0].label, 'Wait');
  assert.equal(rows[2].results[0].state, 'error');
  assert.match(rows[1].results[0].extra, /wait up to 2.0 s/);
  assert.match(rows[0].results[1].extra, /narrowed to 1 node/);
  const times = pluginTimes(detail);
  assert.equal(times[0].plugin, 'DefaultBinder');
  const fit = times.find((t) => t.point === 'Filter' && t.plugin === 'NodeResourcesFit');
  assert.equal(fit.nanos, 105);
  assert.equal(fit.calls, 4, 'nodes that stopped before the plugin did not call it');
  assert.ok(times.some((t) => t.point === 'NormalizeScore' && t.nanos === 7));
  assert.equal(outcomeText({ end: { result: 'scheduled', node: 'n1' }, binding: { bound: true } }), 'bound to n1');
  assert.equal(outcomeText({ end: null, waiting: true }), 'waiting at Permit');
  assert.equal(outcomeText({ end: { result: 'scheduled', node: 'n3' }, waiting: true }), 'scheduled on n3, waiting at Permit');
});

test('forms: node manifest', () => {
  const n = nodeManifest({ name: 'node-1', cpu: '8', memory: '32Gi', pods: '50', labels: 'zone=a, disk=ssd', taints: 'gpu=true:NoSchedule, maint:NoExecute', unschedulable: true });
  assert.deepEqual(n.status.allocatable, { cpu: '8', memory: '32Gi', pods: '50' });
  assert.deepEqual(n.metadata.labels, { zone: 'a', disk: 'ssd', 'kubernetes.io/hostname': 'node-1' });
  assert.deepEqual(n.spec.taints, [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }, { key: 'maint', effect: 'NoExecute' }]);
  assert.equal(n.spec.unschedulable, true);
  assert.throws(() => nodeManifest({ name: 'Bad_Name' }), FormError);
  assert.throws(() => nodeManifest({ name: 'ok', cpu: 'lots' }), /CPU "lots"/);
  assert.deepEqual(nodeManifest({ name: 'gpu-1', devices: '2' }).metadata.annotations, { 'devices.minisched.io/count': '2' });
  assert.equal(nodeManifest({ name: 'plain', devices: '0' }).metadata.annotations, undefined);
  assert.throws(() => nodeManifest({ name: 'ok', devices: '65' }), (err) => err instanceof FormError && err.field === 'devices');
  assert.throws(() => nodeManifest({ name: 'ok', devices: '1.5' }), /devices "1.5"/);
  assert.throws(() => parseTaints('gpu=true:Sometimes'), /effect "Sometimes"/);
  assert.throws(() => parseLabels('novalue'), /not key=value/);
});

test('forms: pod manifest with requests, tolerations, affinity, priority', () => {
  const p = podManifest({
    name: 'web', namespace: 'default', cpu: '500m', memory: '1Gi', labels: 'app=web', nodeSelector: 'zone=a',
    tolerations: 'gpu=true:NoSchedule, maint, *', affinity: 'zone In a|b, disk Exists', priorityClassName: 'system-cluster-critical',
  });
  assert.equal(p.spec.containers[0].image, 'pause:3.10');
  assert.deepEqual(p.spec.containers[0].resources.requests, { cpu: '500m', memory: '1Gi' });
  assert.deepEqual(p.spec.nodeSelector, { zone: 'a' });
  assert.deepEqual(p.spec.tolerations, [
    { key: 'gpu', operator: 'Equal', value: 'true', effect: 'NoSchedule' }, { key: 'maint', operator: 'Exists' }, { operator: 'Exists' },
  ]);
  assert.deepEqual(p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions, [
    { key: 'zone', operator: 'In', values: ['a', 'b'] }, { key: 'disk', operator: 'Exists' },
  ]);
  assert.equal(p.spec.priorityClassName, 'system-cluster-critical');
  assert.equal(p.spec.priority, undefined, 'the apiserver refuses a bare priority');
  assert.deepEqual(podManifests({ name: 'x', count: '3' }).map((m) => m.metadata.name), ['x-1', 'x-2', 'x-3']);
  assert.throws(() => podManifests({ name: 'x', count: '0' }), /count/);
  assert.throws(() => parseAffinity('zone In'), /needs values/);
  assert.throws(() => parseTolerations('a=b:Never'), /effect "Never"/);
  assert.equal(nextName('node', new Set(['node-1', 'node-2'])), 'node-3');
  assert.equal(manifestKind('apiVersion: v1\nkind: Node\n'), 'Node');
  assert.equal(manifestKind('{"kind": "Pod"}'), 'Pod');
});

const PLUGINS_VIEW = {
  available: ['ImageLocality', 'NodeNumber', 'NodeResourcesFit', 'PermitDelay', 'TaintToleration'],
  enabled: {
    Filter: [{ name: 'NodeResourcesFit' }, { name: 'TaintToleration' }],
    Score: [{ name: 'TaintToleration', weight: 3 }, { name: 'NodeResourcesFit', weight: 1 }, { name: 'ImageLocality', weight: 1 }],
    Permit: [],
    PreFilter: [{ name: 'NodeResourcesFit' }],
  },
  // What each plugin may run at (contract D): disabled ones too.
  plugins: [
    { name: 'NodeNumber', extensionPoints: ['PreScore', 'Score'], events: [] },
    { name: 'PermitDelay', extensionPoints: ['Permit'], events: [] },
  ],
};

test('plugins: rows and the configuration that enables, disables and weighs', () => {
  const rows = pluginRows(PLUGINS_VIEW, VOCABULARY.extensionPoints);
  assert.deepEqual(rows.map((r) => [r.name, r.enabled]), [
    ['ImageLocality', true], ['NodeResourcesFit', true], ['TaintToleration', true], ['NodeNumber', false], ['PermitDelay', false],
  ]);
  assert.equal(rows.find((r) => r.name === 'TaintToleration').weight, 3);
  assert.deepEqual(rows.find((r) => r.name === 'NodeResourcesFit').points, ['PreFilter', 'Filter', 'Score'], 'in the order a pod meets them');
  assert.equal(rows.find((r) => r.name === 'NodeNumber').score, true);
  // A disabled plugin names the points it would run at (issue 16, 12).
  assert.deepEqual(rows.find((r) => r.name === 'NodeNumber').canRun, ['PreScore', 'Score']);
  assert.deepEqual(rows.find((r) => r.name === 'NodeNumber').points, []);
  const config = {
    apiVersion: 'kubescheduler.config.k8s.io/v1', kind: 'KubeSchedulerConfiguration',
    profiles: [{ schedulerName: 'default-scheduler', plugins: { multiPoint: { enabled: [{ name: 'TaintToleration', weight: 3 }, { name: 'ImageLocality', weight: 1 }, { name: 'NodeName', weight: 0 }] } } }],
  };
  const next = configWithPlugins(config, {
    NodeNumber: { enabled: true, weight: '5' }, ImageLocality: { enabled: false }, TaintToleration: { weight: 7 },
  });
  const mp = next.profiles[0].plugins.multiPoint;
  assert.deepEqual(mp.enabled, [{ name: 'TaintToleration', weight: 7 }, { name: 'NodeName', weight: 0 }, { name: 'NodeNumber', weight: 5 }]);
  assert.deepEqual(mp.disabled, [{ name: 'ImageLocality' }]);
  assert.equal(config.profiles[0].plugins.multiPoint.disabled, undefined, 'the input is not changed');
  // Enabling a disabled plugin again takes it off the disabled list.
  const again = configWithPlugins(next, { ImageLocality: { enabled: true } });
  assert.equal(again.profiles[0].plugins.multiPoint.disabled, undefined);
  assert.ok(again.profiles[0].plugins.multiPoint.enabled.some((p) => p.name === 'ImageLocality'));
  assert.throws(() => configWithPlugins(config, { NodeNumber: { weight: 'x' } }), /whole number/);
  assert.throws(() => configWithPlugins({}, {}), /no profile/);
});

test('plugins: the points a profile requires lock their last plugins on (issue 16, 12)', () => {
  const view = {
    available: ['PrioritySort', 'CustomSort', 'DefaultBinder', 'NodeName'],
    plugins: [{ name: 'PrioritySort', extensionPoints: ['QueueSort'] }, { name: 'CustomSort', extensionPoints: ['QueueSort'] },
      { name: 'DefaultBinder', extensionPoints: ['Bind'] }, { name: 'NodeName', extensionPoints: ['Filter'] }],
    enabled: { QueueSort: [{ name: 'PrioritySort' }], Bind: [{ name: 'DefaultBinder' }], Filter: [{ name: 'NodeName' }] },
    required: { QueueSort: 1, Bind: 1 },
  };
  const rows = pluginRows(view, ['QueueSort', 'PreFilter', 'Filter', 'Bind']);
  const none = pluginChecks(rows, {}, view.required);
  assert.deepEqual(Object.keys(none.locked).sort(), ['DefaultBinder', 'PrioritySort']);
  assert.deepEqual(none.problems, []);
  const two = pluginChecks(rows, { CustomSort: { enabled: true } }, view.required);
  assert.deepEqual(Object.keys(two.locked), ['DefaultBinder'], 'with two QueueSort plugins either may go');
  assert.match(two.problems[0], /takes one QueueSort plugin: untick 1 of PrioritySort, CustomSort/);
  assert.deepEqual(pluginChecks(rows, { DefaultBinder: { enabled: false } }, view.required).problems, ['a profile needs a Bind plugin']);
  assert.deepEqual(pluginChecks(rows, {}, undefined), { locked: {}, problems: [] }, 'an older server requires nothing');
});


test('api: errors in words from the server\'s error JSON, 404 and network failures', async () => {
  const fetchImpl = fakeFetch((url, init) => {
    if (url.endsWith('/pods') && init.method === 'POST' && init.headers['Content-Type'] === 'application/json') return { status: 409, body: { error: 'pods "a" already exists', reason: 'AlreadyExists' } };
    if (url.endsWith('/nodes')) return { status: 422, body: { error: 'Node "X" is invalid', reason: 'Invalid', causes: ['metadata.name: Invalid value'] } };
    if (url.includes('/scenarios')) return { status: 404, body: { error: 'no such API route: GET /api/v1/scenarios' } };
    if (url.endsWith('/reset')) return { status: 204 };
    if (url.endsWith('/queue')) return new TypeError('Failed to fetch');
    if (url.endsWith('/scheduler/pause')) return { status: 502, body: 'Bad Gateway' };
    return { status: 200, body: { ok: true } };
  });
  const api = createApi({ fetchImpl });
  await assert.rejects(api.createPod({ kind: 'Pod' }), (err) => err instanceof ApiError && err.status === 409 && err.reason === 'AlreadyExists');
  try {
    await api.createNode({});
  } catch (err) {
    assert.equal(describeError(err, 'Could not create the node'), 'Could not create the node: Node "X" is invalid (metadata.name: Invalid value)');
  }
  await assert.rejects(api.scenarios(), (err) => err.status === 404 && /no such API route/.test(err.message));
  assert.equal(await api.reset(), null);
  await assert.rejects(api.queue(), /did not answer/);
  await assert.rejects(api.pause(), /HTTP 502/);
  await api.createPod('kind: Pod\n', 'application/yaml');
  const last = fetchImpl.calls.at(-1);
  assert.equal(last.headers['Content-Type'], 'application/yaml');
  assert.equal(last.body, 'kind: Pod\n');
  await api.cycles('default/x y', 5);
  assert.match(fetchImpl.calls.at(-1).url, /\/api\/v1\/cycles\?pod=default%2Fx%20y&limit=5$/);
});

test('actions: failures become notices; a missing scenario API is said in words', async () => {
  resetSeq(0);
  const store = createStore();
  const fetchImpl = fakeFetch((url) => {
    if (url.includes('/scenarios')) return { status: 404, body: { error: 'no such API route: GET /api/v1/scenarios' } };
    if (url.endsWith('/pods')) return { status: 403, body: { error: 'pods "p" is forbidden: exceeded quota', reason: 'Forbidden' } };
    return { status: 200, body: {} };
  });
  const actions = createActions({ api: createApi({ fetchImpl }), store });
  const res = await actions.loadScenarios();
  assert.match(res.unavailable, /no scenario API yet.*404/);
  assert.equal(await actions.createPods({ name: 'p', namespace: 'default', cpu: '1', memory: '' }), undefined);
  assert.match(store.page.notices.value.at(-1).text, /Could not create the pod: .*forbidden: exceeded quota/);
  assert.equal(store.page.isBusy('createPod'), false, 'busy is cleared after a failure');
  await actions.createNode({ name: 'Not Valid' });
  assert.match(store.page.notices.value.at(-1).text, /node name "Not Valid"/);
  await actions.createFromYaml('apiVersion: v1\nkind: Service\n');
  assert.match(store.page.notices.value.at(-1).text, /^0 of 1 document created: the list under the manifest says what is wrong/);
});

class FakeSocket {
  static all = [];
  constructor(url) {
    this.url = url;
    this.closed = false;
    FakeSocket.all.push(this);
  }
  close() { this.closed = true; }
  open() { this.onopen?.(); }
  send(msg) { this.onmessage?.({ data: JSON.stringify(msg) }); }
  drop(code = 1006, reason = '') { this.onclose?.({ code, reason }); }
}

test('stream: connects, reconnects with ?since=<last seq>, and resyncs from a fresh snapshot', () => {
  resetSeq(0);
  FakeSocket.all = [];
  const timers = [];
  let clock = 0;
  const store = createStore({ now: () => clock });
  const s = connectStream({
    store, location: { protocol: 'http:', host: 'h:1' }, WebSocketImpl: FakeSocket,
    setTimer: (fn, ms) => { timers.push({ fn, ms }); return timers.length; }, clearTimer: () => {}, now: () => clock,
  });
  const first = FakeSocket.all[0];
  assert.equal(first.url, 'ws://h:1/api/v1/stream', 'no since before any snapshot');
  assert.equal(store.server.conn.value.status, 'connecting');
  first.open();
  assert.equal(store.server.conn.value.status, 'open');
  first.send(snapshot({ pods: [podSummary('a')] }));
  first.send(events([E.pod('added', podSummary('b')), E.pod('added', podSummary('c'))]));
  const seen = store.server.seq.value;
  assert.equal(seen, 2);

  first.drop();
  assert.equal(store.server.conn.value.status, 'reconnecting');
  assert.equal(store.server.conn.value.error, 'the connection was lost');
  assert.equal(timers.at(-1).ms, backoffDelay(1));
  timers.at(-1).fn();
  const second = FakeSocket.all[1];
  assert.equal(second.url, `ws://h:1/api/v1/stream?since=${seen}`);
  second.open();
  // Resumed: only the missed events come, no snapshot; state is kept.
  second.send(events([E.pod('added', podSummary('d'))]));
  assert.deepEqual(store.cluster.pods.keys().sort(), ['default/a', 'default/b', 'default/c', 'default/d']);

  // The server no longer holds our events: resync, then a fresh snapshot.
  second.drop(1001, 'the server is shutting down');
  assert.match(store.server.conn.value.error, /shutting down/);
  timers.at(-1).fn();
  const third = FakeSocket.all[2];
  assert.match(third.url, /since=3$/);
  third.open();
  third.send({ type: 'resync', reason: 'the history no longer holds the events after your last one', dropped: 0 });
  third.send(snapshot({ at: 900, pods: [podSummary('z')] }));
  assert.deepEqual(store.cluster.pods.keys(), ['default/z']);
  assert.equal(store.server.seq.value, 900);
  assert.match(store.page.notices.value.at(-1).text, /resynchronised/);

  // Back-off grows, and close() stops for good.
  third.drop();
  third.drop();
  assert.equal(backoffDelay(1), 500);
  assert.equal(backoffDelay(2), 1000);
  assert.equal(backoffDelay(10), 8000);
  s.close();
  assert.equal(store.server.conn.value.status, 'closed');
  assert.equal(streamURL({ protocol: 'https:', host: 'x' }, 5), 'wss://x/api/v1/stream?since=5');
});

test('timeline bands follow the queue trail within the window', () => {
  const trail = [
    { t: 0, to: 'active' }, { t: 10, to: 'inFlight' }, { t: 12, to: 'backoff' }, { t: 1012, to: 'active' }, { t: 1013, to: 'inFlight' }, { t: 1020, to: null },
  ];
  const bands = segments(trail, 5, 2000);
  assert.deepEqual(bands.map((b) => [b.queue, b.from, b.to]), [
    ['active', 5, 10], ['inFlight', 10, 12], ['backoff', 12, 1012], ['active', 1012, 1013], ['inFlight', 1013, 1020],
  ]);
  const open = segments([{ t: 0, to: 'unschedulable' }], 100, 200);
  assert.deepEqual(open.map((b) => [b.from, b.to]), [[100, 200]], 'a pod still waiting has a band to the end');
});

test('timeline window: fitted to the activity, or a fixed span', () => {
  const now = 1_000_000;
  const rows = [
    { key: 'a', firstSeen: now - 40_000, trail: [{ t: now - 40_000, to: 'active' }, { t: now - 39_000, to: null }], cycles: [] },
    { key: 'b', firstSeen: now - 5_000, trail: [{ t: now - 5_000, to: 'unschedulable' }], cycles: [] },
    { key: 'old', firstSeen: now - 990_000, trail: [{ t: now - 990_000, to: 'active' }, { t: now - 980_000, to: null }], cycles: [] },
  ];
  const fit = timeRange(rows, -1, now);
  assert.deepEqual(fit.rows.map((r) => r.key), ['a', 'b'], 'rows idle for 15 minutes leave the fitted view');
  assert.equal(fit.t0, now - 42_000);
  assert.equal(timeRange([rows[1]], -1, now).t0, now - 20_000, 'at least 20 s');
  const minute = timeRange(rows, 60_000, now);
  assert.deepEqual(minute.rows.map((r) => r.key), ['a', 'b']);
  assert.equal(timeRange(rows, 10_000, now).rows.length, 1, 'b is still queued, so it stays');
  assert.equal(timeRange(rows, 0, now).t0, now - 990_000);
  // A finished lesson: the window ends with the last activity, not now (issue 16, 7).
  const done = timeRange([rows[0]], -1, now + 300_000);
  assert.deepEqual([done.t0, done.t1], [now - 49_500, now - 29_500]);
  const zoom = zoomed({ t0: 0, t1: 40_000 }, 2);
  assert.deepEqual([zoom.t0, zoom.t1], [20_000, 40_000]);
  assert.equal(zoomed({ t0: 0, t1: 3000 }, 4).t0, 1000, 'never below 2 s');
});

test('notices: successes fade, errors stay until dismissed', () => {
  let t = 0;
  const store = createStore({ now: () => t });
  store.addNotice('ok', 'made it');
  const err = store.addNotice('error', 'broke');
  t = 9000;
  store.expireNotices(8000);
  assert.deepEqual(store.page.notices.value.map((n) => n.text), ['broke']);
  store.dismissNotice(err);
  assert.equal(store.page.notices.value.length, 0);
});

test('actions: several pods from one form, and busy flags while it runs', async () => {
  const store = createStore();
  const fetchImpl = fakeFetch(() => ({ status: 201, body: {} }));
  const actions = createActions({ api: createApi({ fetchImpl }), store });
  const made = actions.createPods({ name: 'batch', namespace: 'default', cpu: '100m', memory: '', count: '5' });
  assert.equal(store.page.isBusy('createPod'), true);
  assert.deepEqual(await made, ['default/batch-1', 'default/batch-2', 'default/batch-3', 'default/batch-4', 'default/batch-5']);
  assert.equal(fetchImpl.calls.length, 5);
  assert.deepEqual(fetchImpl.calls.map((c) => JSON.parse(c.body).metadata.name).sort(), ['batch-1', 'batch-2', 'batch-3', 'batch-4', 'batch-5']);
  assert.equal(store.page.isBusy('createPod'), false);
  assert.match(store.page.notices.value.at(-1).text, /5 pods created/);
});

test('a pasted YAML stream creates every document at its kind\'s route and reports on each (issue 16, 8)', async () => {
  const text = '# nodes first\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: big\n  labels: {zone: a}\n---\nkind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nmetadata: {name: high}\nvalue: 1000\n--- # a pod\nkind: Pod\nmetadata:\n  name: web-1\n---\n\n';
  const docs = splitDocuments(text);
  assert.deepEqual(docs.map((d) => [d.line, d.kind, d.name]), [[3, 'Node', 'big'], [9, 'PriorityClass', 'high'], [14, 'Pod', 'web-1']]);
  const store = createStore();
  const fetchImpl = fakeFetch((url, init) => {
    if (url.endsWith('/priorityclasses') && init.method === 'GET') return { status: 200, body: { items: [{ metadata: { name: 'high' }, value: 1000 }, { metadata: { name: 'system-node-critical' }, value: 2000001000 }] } };
    if (url.endsWith('/pods')) return { status: 409, body: { error: 'pods "web-1" already exists', reason: 'AlreadyExists' } };
    return { status: 201, body: {} };
  });
  const actions = createActions({ api: createApi({ fetchImpl }), store });
  const results = await actions.createFromYaml(text);
  const posts = fetchImpl.calls.filter((c) => c.method === 'POST');
  assert.deepEqual(posts.map((c) => c.url), ['/api/v1/nodes', '/api/v1/priorityclasses', '/api/v1/pods']);
  assert.ok(posts.every((c) => c.headers['Content-Type'] === 'application/yaml' && !c.body.includes('---')), 'one document per request');
  assert.deepEqual(results.map((r) => r.ok), [true, true, false]);
  // Its error stands beside the manifest, in the results; the notice only
  // counts them, so nothing is said twice (issue 37).
  assert.equal(results[2].error, 'pods "web-1" already exists');
  assert.equal(results[2].line, 14);
  assert.match(store.page.notices.value.at(-1).text, /^2 of 3 documents created \(Node big, PriorityClass high\): the list under the manifest says what is wrong with the others\.$/);
  // A class made from the paste shows in the pod form's list, with every other class.
  assert.deepEqual(store.cluster.priorityClasses.value.map((c) => c.metadata.name), ['high', 'system-node-critical']);
  assert.deepEqual(priorityClassManifest({ name: 'low', value: '-5', preemptionPolicy: 'Never' }),
    { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'low' }, value: -5, preemptionPolicy: 'Never' });
  assert.throws(() => priorityClassManifest({ name: 'x', value: '2000000000' }), /up to 1000000000/);
});

test('a form\'s bad input is marked, and the mark goes with the next try (issue 16, 14)', async () => {
  const store = createStore();
  const actions = createActions({ api: createApi({ fetchImpl: fakeFetch(() => ({ status: 201, body: {} })) }), store });
  await actions.createNode({ name: 'n1', cpu: 'lots', memory: '1Gi', pods: '10' });
  assert.equal(store.page.invalidInput('createNode'), 'cpu');
  assert.match(store.page.notices.value.at(-1).text, /CPU "lots"/);
  await actions.createPods({ name: 'p', namespace: 'default', cpu: '1', memory: '1Gi', tolerations: 'gpu:Sometimes' });
  assert.equal(store.page.invalidInput('createPod'), 'tolerations');
  await actions.createNode({ name: 'n1', cpu: '2', memory: '1Gi', pods: '10' });
  assert.equal(store.page.invalidInput('createNode'), null);
});

test('deep links and keyboard shortcuts (issue 16, instructor mode)', () => {
  const views = ['queue', 'cycle', 'cluster', 'timeline', 'controls'];
  assert.deepEqual(parseHash('#/cycle/12', views), { view: 'cycle', cycle: 12 });
  assert.deepEqual(parseHash('#/pod/default/web-1', views), { view: 'cycle', pod: 'default/web-1' });
  assert.deepEqual(parseHash('#timeline', views), { view: 'timeline' });
  assert.equal(parseHash('#/cycle/x', views), null);
  assert.equal(parseHash('', views), null);
  assert.equal(hashFor('cycle', 'default/web-1', null), '#/pod/default/web-1');
  assert.equal(hashFor('cycle', 'default/web-1', 12), '#/cycle/12');
  assert.equal(hashFor('cluster', 'default/web-1', 12), '#cluster');
  const key = (k, more = {}) => shortcut({ key: k, ...more }, views);
  assert.deepEqual(key(' '), { action: 'togglePause' });
  assert.deepEqual(key('s'), { action: 'step' });
  assert.deepEqual(key('R'), { action: 'askReset' });
  assert.deepEqual(key('3'), { action: 'setView', arg: 'cluster' });
  assert.equal(key('6'), null);
  assert.equal(key('s', { inField: true }), null, 'typing in a field is typing');
  assert.deepEqual(key('Escape', { inField: true }), { action: 'cancelShortcut' });
  assert.equal(key(' ', { onButton: true }), null, 'Space on a button presses it');
  assert.deepEqual(key('s', { onButton: true }), { action: 'step' });
  assert.equal(key('s', { ctrlKey: true }), null);
});

test('instructor actions: Space toggles, R asks first, T and P change the display, a deep link opens a cycle', async () => {
  resetSeq(0);
  const store = createStore();
  const fetchImpl = fakeFetch((url) => {
    if (url.endsWith('/cycles/7')) return { status: 200, body: { id: 7, pod: { namespace: 'default', name: 'web-1' }, attempt: 1, events: [] } };
    return { status: 200, body: { state: 'paused' } };
  });
  const actions = createActions({ api: createApi({ fetchImpl }), store });
  store.applyMessage(snapshot({ scheduler: { state: 'running', generation: 1 } }));
  store.setConnection({ status: 'open' });
  await actions.togglePause();
  assert.match(fetchImpl.calls.at(-1).url, /\/scheduler\/pause$/);
  actions.askReset();
  assert.equal(store.page.confirmReset.value, true);
  actions.cancelShortcut();
  assert.equal(store.page.confirmReset.value, false);
  assert.equal(fetchImpl.calls.some((c) => c.url.endsWith('/reset')), false, 'nothing reset without the confirmation');
  actions.askReset();
  await actions.confirmReset();
  assert.ok(fetchImpl.calls.some((c) => c.url.endsWith('/reset') && c.method === 'POST'));
  actions.nextTheme();
  assert.equal(store.page.theme.value, 'light');
  actions.toggleProjector();
  assert.equal(store.page.projector.value, true);
  await actions.openCycle(7);
  assert.deepEqual([store.page.view.value, store.page.selectedPod.value, store.page.selectedCycle.value], ['cycle', 'default/web-1', 7]);
});

test('configuration editor: plugin args, and a line diff against the defaults (issue 16, config editor)', () => {
  const config = { profiles: [{ schedulerName: 'default-scheduler', pluginConfig: [{ name: 'NodeResourcesFit', args: { scoringStrategy: { type: 'LeastAllocated' }, ignoredResources: ['x'] } }] }] };
  const next = withPluginArgs(config, 'NodeResourcesFit', { scoringStrategy: { type: 'MostAllocated' } });
  assert.deepEqual(pluginArgs(next, 'NodeResourcesFit'), { scoringStrategy: { type: 'MostAllocated' }, ignoredResources: ['x'] });
  assert.equal(pluginArgs(config, 'NodeResourcesFit').scoringStrategy.type, 'LeastAllocated', 'the input is not changed');
  assert.deepEqual(pluginArgs(withPluginArgs(config, 'Random', { seed: 3 }), 'Random'), { seed: 3 });
  assert.throws(() => withPluginArgs({}, 'X', {}), /no profile/);
  const d = lineDiff('a\nb\nc\nd', 'a\nc\nd\ne');
  assert.deepEqual(d.map((x) => `${x.op}${x.text}`), [' a', '-b', ' c', ' d', '+e']);
  assert.deepEqual(d.filter((x) => x.op !== ' ').map((x) => [x.a, x.b]), [[2, null], [null, 4]]);
  assert.deepEqual(lineDiff('same', 'same').map((x) => x.op), [' ']);
});

test('configuration checks: the server\'s 422 line is kept; a newer check cancels an older one', async () => {
  const store = createStore();
  const fetchImpl = async (url, init) => {
    if (init.body.includes('stale')) {
      return new Promise((_, reject) => init.signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }))));
    }
    const bad = init.body.includes('bogus');
    const body = bad ? JSON.stringify({ error: 'unknown field "bogus"', line: 3 }) : 'kind: KubeSchedulerConfiguration\n';
    return { ok: !bad, status: bad ? 422 : 200, headers: { get: () => (bad ? 'application/json' : 'application/yaml') }, text: async () => body, json: async () => JSON.parse(body) };
  };
  const actions = createActions({ api: createApi({ fetchImpl }), store });
  const older = actions.checkConfig('stale');
  assert.deepEqual(await actions.checkConfig('a: 1\nb: 2\nbogus: 3\n'), { ok: false, message: 'unknown field "bogus"', line: 3 });
  assert.equal(await older, null, 'the older check was cancelled');
  assert.deepEqual(await actions.checkConfig('kind: KubeSchedulerConfiguration\n'), { ok: true, message: '', line: null });
});

test('node editing and the node overview: a patch from the editor, rows sorted by use and filtered by label (issue 16, cluster)', () => {
  const node = { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1', zone: 'a' }, taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }], allocatable: { cpu: 4000, memory: 16 * 2 ** 30, pods: 110 } };
  const form = nodeEditForm(node);
  assert.deepEqual(form, { labels: 'zone=a', taints: 'gpu=true:NoSchedule', cpu: '4', memory: '16Gi', pods: '110', devices: '0' });
  assert.deepEqual(nodePatch('n1', { ...form, labels: 'zone=b, disk=ssd', taints: '', devices: '3' }), {
    labels: { zone: 'b', disk: 'ssd', 'kubernetes.io/hostname': 'n1' }, taints: [], allocatable: { cpu: '4', memory: '16Gi', pods: '110' }, devices: 3,
  });
  assert.equal(nodeEditForm({ ...node, devices: 2 }).devices, '2');
  assert.throws(() => nodePatch('n1', { ...form, devices: '-1' }), (err) => err instanceof FormError && err.field === 'devices');
  assert.throws(() => nodePatch('n1', { ...form, cpu: 'x' }), (err) => err instanceof FormError && err.field === 'cpu');
  const nodes = [
    { name: 'n10', labels: { zone: 'a' }, allocatable: { cpu: 1000, memory: 100, pods: 10 } },
    { name: 'n2', labels: { zone: 'b' }, allocatable: { cpu: 1000, memory: 100, pods: 10 }, unschedulable: true },
    { name: 'n1', labels: { zone: 'a' }, allocatable: { cpu: 1000, memory: 100, pods: 10 } },
  ];
  const use = { n10: { cpu: 900, memory: 10, pods: 1 }, n1: { cpu: 100, memory: 90, pods: 5 } };
  const usage = (n) => use[n];
  assert.deepEqual(nodeRows(nodes, usage).map((r) => r.name), ['n1', 'n2', 'n10']);
  assert.deepEqual(nodeRows(nodes, usage, { sort: 'cpu' }).map((r) => [r.name, r.cpu]), [['n10', 90], ['n1', 10], ['n2', 0]]);
  assert.deepEqual(nodeRows(nodes, usage, { sort: 'memory', filter: 'zone=a' }).map((r) => r.name), ['n1', 'n10']);
  assert.equal(nodeRows(nodes, usage, { filter: 'zone=b' })[0].cordoned, true);
  assert.deepEqual(nodeRows(nodes, usage, { filter: 'N1' }).map((r) => r.name), ['n1', 'n10'], 'by name too (issue 37, 7)');
});

test('what would move a waiting pod: the event a later queue move names is marked as the one that moved it', async () => {
  const { wakeEvents, movedByEvent } = await import('../../web/static/js/store/story.js');
  const plugins = [
    { name: 'NodeResourcesFit', events: ['NodeAdd', 'NodeUpdateNodeAllocatable', 'AssignedPodDelete'] },
    { name: 'NodeUnschedulable', events: ['NodeAdd', 'NodeUpdateNodeTaint'] },
    { name: 'TaintToleration', events: ['NodeAdd', 'NodeUpdateNodeTaint'] },
  ];
  const failed = { action: 'move', from: 'inFlight', to: 'unschedulable', event: 'ScheduleAttemptFailure', failed: true };
  const moved = { action: 'move', from: 'unschedulable', to: 'backoff', event: 'NodeUpdateNodeAllocatable', failed: false };
  // Nothing moved it yet: no mark.
  assert.deepEqual(wakeEvents(['NodeResourcesFit'], plugins, [failed]), [{ plugin: 'NodeResourcesFit', events: plugins[0].events }]);
  // A later move names one of the events: marked on the plugins that registered it, and on none other.
  const marked = wakeEvents(['NodeResourcesFit', 'TaintToleration'], plugins, [failed, moved]);
  assert.deepEqual(marked.map((w) => [w.plugin, w.moved]), [['NodeResourcesFit', 'NodeUpdateNodeAllocatable'], ['TaintToleration', undefined]]);
  // An event both plugins registered is marked on both.
  const added = { ...moved, event: 'NodeAdd' };
  assert.deepEqual(wakeEvents(['NodeUnschedulable', 'TaintToleration'], plugins, [failed, added]).map((w) => w.moved), ['NodeAdd', 'NodeAdd']);
  // A move before the last failed attempt does not count: that attempt failed again after it.
  assert.equal(movedByEvent([failed, added, { ...failed }], ['NodeAdd']), null);
  // Timers and pops name no registered event; the first registered one after them does.
  const timeout = { action: 'move', from: 'unschedulable', to: 'active', event: 'UnschedulableTimeout' };
  const pop = { action: 'pop', from: 'backoff', to: 'inFlight', event: 'Pop' };
  assert.equal(movedByEvent([failed, timeout, pop], ['NodeAdd']), null);
  assert.equal(movedByEvent([failed, timeout, added, { ...moved }], ['NodeAdd', 'NodeUpdateNodeAllocatable']), 'NodeAdd');
  // Lists in the older Node/Add form match the moves' NodeAdd, and keep their own spelling.
  assert.equal(wakeEvents(['P'], [{ name: 'P', events: ['Node/Add'] }], [failed, added])[0].moved, 'Node/Add');
  // A registration for every update covers each kind of update; All covers every event.
  const labelled = { ...moved, event: 'NodeUpdateNodeLabel' };
  assert.equal(movedByEvent([failed, labelled], ['NodeUpdate']), 'NodeUpdateNodeLabel');
  assert.equal(wakeEvents(['P'], [{ name: 'P', events: ['NodeUpdate'] }], [failed, labelled])[0].moved, 'NodeUpdate');
  assert.equal(wakeEvents(['P'], [{ name: 'P', events: ['NodeAll'] }], [failed, added])[0].moved, 'NodeAll');
  assert.equal(wakeEvents(['P'], [{ name: 'P', events: ['NodeUpdate'] }], [failed, added])[0].moved, undefined, 'an add is no update');
  // No trail, no plugins: the list as before.
  assert.deepEqual(wakeEvents(['X'], null), [{ plugin: 'X', events: [] }]);
});

test('windowing: only the rows in view, and a few more, of lists, grids and tables (issue 17)', () => {
  // 20,000 cards of 100 px in a 600 px box scrolled to 250,000 px: rows 2500 to 2506 show.
  assert.deepEqual(visibleRange({ count: 20000, rowHeight: 100, scrollTop: 250_000, height: 600, overscan: 2 }),
    { first: 2498, last: 2508, offset: 249_800, total: 2_000_000 });
  // At the top, no row before the first; an empty list renders nothing.
  assert.deepEqual(visibleRange({ count: 5, rowHeight: 30, scrollTop: 0, height: 600 }), { first: 0, last: 5, offset: 0, total: 150 });
  assert.deepEqual(visibleRange({ count: 0, rowHeight: 30, scrollTop: 900, height: 600 }), { first: 0, last: 0, offset: 0, total: 0 });
  // Scrolled past the end (the list shrank under the box): the last rows, never an empty window.
  const past = visibleRange({ count: 1000, rowHeight: 20, scrollTop: 1e9, height: 400, overscan: 0 });
  assert.deepEqual([past.first, past.last], [999, 1000]);
  // A box with no height yet renders the overscan only.
  assert.deepEqual(visibleRange({ count: 1000, rowHeight: 20, scrollTop: 0, height: 0, overscan: 3 }).last, 3);
  // Whatever the numbers, the window is within the list and never longer than the view needs.
  for (const [count, rowHeight, scrollTop, height] of [[1, 10, 0, 5], [7, 33.5, 120.2, 99], [5000, 28, 77_777, 700], [3, 50, -40, 200]]) {
    const r = visibleRange({ count, rowHeight, scrollTop, height, overscan: 4 });
    assert.ok(r.first >= 0 && r.first <= r.last && r.last <= count, `${count}/${scrollTop}: ${JSON.stringify(r)}`);
    assert.ok(r.last - r.first <= Math.ceil(height / rowHeight) + 1 + 8);
    assert.equal(r.offset, r.first * rowHeight);
  }

  // Node cards: 1,000 in 4 columns of 250 px rows; scrolled to row 100, rows 99 to 104 render (one more each side).
  assert.equal(columnsFor(1280, 320, 12.8), 3);
  assert.equal(columnsFor(1318, 320, 12.8), 3);
  assert.equal(columnsFor(1319, 320, 12.8), 4, "four cards and three gaps: 1318.4 px");
  assert.equal(columnsFor(100, 320, 12.8), 1, 'at least one column');
  assert.equal(columnsFor(0, 320), 1);
  assert.deepEqual(gridRange({ count: 1000, columns: 4, rowHeight: 250, scrollTop: 25_000, height: 900, overscan: 1 }),
    { first: 396, last: 420, row: 99, rows: 250, offset: 24_750, total: 62_500 });
  // The last row may be short.
  assert.deepEqual(gridRange({ count: 10, columns: 4, rowHeight: 250, scrollTop: 0, height: 2000 }).last, 10);
});

test('stream at scale: a big cluster\'s stream leaves out the matrices, batches are applied together, a page far behind starts afresh (issue 17)', async () => {
  class Sock {
    static all = [];
    constructor(url) { this.url = url; this.sent = []; this.readyState = 0; Sock.all.push(this); }
    close() { this.readyState = 3; }
    open() { this.readyState = 1; this.onopen?.(); }
    send(text) { this.sent.push(JSON.parse(text)); }
    deliver(msg) { this.onmessage?.({ data: JSON.stringify(msg) }); }
  }
  resetSeq(0);
  const store = createStore({ limits: { matrixNodes: 3 } });
  const deferred = [];
  const s = connectStream({
    store, location: { protocol: 'http:', host: 'h:1' }, WebSocketImpl: Sock, setTimer: () => 0, clearTimer: () => {},
    defer: (fn) => deferred.push(fn), maxPending: 5,
  });
  const sock = Sock.all[0];
  sock.open();
  // Messages wait for the deferred flush, then go in as one batch.
  sock.deliver(snapshot({ nodes: ['n1', 'n2'].map((n) => nodeSummary(n)) }));
  sock.deliver(events([E.node('added', nodeSummary('n3'))]));
  assert.equal(store.server.snapshots.value, 0);
  assert.equal(deferred.length, 1, 'one flush for both');
  const heard = [];
  const stop = effect(() => heard.push(store.cluster.nodes.size));
  deferred.shift()();
  stop();
  assert.deepEqual(heard, [0, 3], 'the views hear of both messages at once');
  // Three nodes: the matrices go; the page asks the open stream, then knows once the server answers.
  assert.equal(store.streamMatrices.value, false);
  // What it asks for is every kind the server's vocabulary names but the matrices.
  const LIGHT_KINDS = store.streamKinds.value;
  assert.deepEqual(LIGHT_KINDS, store.server.vocabulary.value.kinds.filter((k) => k !== 'filter' && k !== 'score'));
  assert.ok(LIGHT_KINDS.includes('preemption') && !LIGHT_KINDS.includes('filter'));
  s.setKinds(LIGHT_KINDS);
  assert.deepEqual(sock.sent.at(-1), { type: 'filter', kinds: LIGHT_KINDS });
  assert.deepEqual(store.server.streamKinds.value, { kinds: LIGHT_KINDS, applied: false });
  sock.deliver({ type: 'filter' });
  deferred.shift()();
  assert.equal(store.server.streamKinds.value.applied, true);
  // A cycle now has no matrices: once it ends, the inspector loads it over REST.
  store.applyEvents([E.cycleStart('p', 1, 1, 3), E.point('p', 1, 'PreFilter', [{ plugin: 'NodeResourcesFit', code: 0 }])]);
  assert.equal(store.cycleView('default/p', 1).source, 'live', 'a running cycle shows what it has');
  assert.equal(store.cycleView('default/p', 1).detail.partial, true);
  store.applyEvents([E.cycleEnd('p', 1, { result: 'scheduled', node: 'n1', feasibleNodes: 3 })]);
  assert.equal(store.cycleView('default/p', 1).source, 'missing');
  // The next connection has the filter in its URL.
  assert.equal(streamURL({ protocol: 'http:', host: 'h' }, 7, ['queue', 'pod']), 'ws://h/api/v1/stream?since=7&kinds=queue,pod');
  // Back under the size: all kinds again, with an empty filter.
  s.setKinds(null);
  assert.deepEqual(sock.sent.at(-1), { type: 'filter' });
  // More than maxPending events waiting: dropped, and a new connection asks for a fresh snapshot.
  sock.deliver(events(Array.from({ length: 6 }, (_, i) => E.pod('added', podSummary(`x${i}`)))));
  assert.equal(Sock.all.length, 2);
  assert.doesNotMatch(Sock.all[1].url, /since=/);
  assert.match(store.page.notices.value.at(-1).text, /fresh snapshot/);
  s.close();
});

test('a mirror in words: in step or how far behind, the pods placed elsewhere, a failure, a stop (issue 13)', () => {
  assert.equal(mirrorWords({ synced: false }), 'Reading the source…');
  assert.equal(mirrorWords({ synced: true, behind: 0, lagNanos: 0, compared: 0 }), 'Mirror in step with its source.');
  assert.equal(mirrorWords({ synced: true, behind: 3, lagNanos: 1.5e9, compared: 4, differ: 1 }),
    'Mirror 3 changes behind (the oldest 1.5 s); 1 of 4 pods placed elsewhere than the real scheduler did.');
  assert.match(mirrorWords({ synced: true, behind: 1, lagNanos: 2e8, lastError: 'pod shop/web-3: forbidden' }), /failing: pod shop\/web-3: forbidden\.$/);
  assert.equal(mirrorWords({ synced: true, stopped: true }), 'The mirror has stopped: the copy no longer follows its source.');
});

test('nodeHealth: what the node card says of its kubelet, and what it offers next', () => {
  const cases = [
    { name: 'a Ready node', node: { ready: 'True' }, state: 'ready', badge: '', next: ['NotReady', 'Stopped'] },
    { name: 'a node with no condition yet', node: {}, state: 'ready', badge: '', next: ['NotReady', 'Stopped'] },
    { name: 'told NotReady, before the kubelet reports it', node: { ready: 'True', kubelet: 'NotReady' }, state: 'notReady', badge: 'NotReady', next: ['Ready', 'Stopped'] },
    { name: 'reporting Ready=False', node: { ready: 'False' }, state: 'notReady', badge: 'NotReady', next: ['NotReady', 'Stopped'] },
    { name: 'its kubelet stopped', node: { ready: 'True', kubelet: 'Stopped' }, state: 'stopped', badge: 'kubelet stopped', next: ['Ready', 'NotReady'] },
    { name: 'marked Unknown by node lifecycle', node: { ready: 'Unknown' }, state: 'unknown', badge: 'unreachable', next: ['NotReady', 'Stopped'] },
  ];
  for (const c of cases) {
    assert.deepEqual(nodeHealth(c.node), { state: c.state, badge: c.badge, next: c.next }, c.name);
  }
  assert.match(kubeletNotice('n1', 'NotReady'), /taints it/);
  assert.match(kubeletNotice('n1', 'Stopped'), /unreachable/);
  assert.equal(deletedNotice('Pod default/a', null), 'Pod default/a deleted.');
  assert.match(deletedNotice('Pod default/a', { metadata: { deletionTimestamp: '2026-12-04T12:00:00Z', finalizers: ['example.com/hold'] } }),
    /stays until its finalizers \(example.com\/hold\) are removed/);
  assert.match(kubeletNotice('n1', 'Ready'), /Ready again/);
});

test('podLife: a pod\'s life apart from its scheduling', () => {
  const cases = [
    [{}, 'waiting'],
    [{ nodeName: 'n1' }, 'bound, starting'],
    [{ nodeName: 'n1', phase: 'Pending' }, 'bound, starting'],
    [{ nodeName: 'n1', phase: 'Running' }, 'Running'],
    [{ nodeName: 'n1', phase: 'Running', ready: true }, 'Running, Ready'],
    [{ nodeName: 'n1', phase: 'Running', ready: true, terminating: true }, 'Terminating'],
    [{ nodeName: 'n1', phase: 'Succeeded' }, 'Succeeded'],
    [{ nodeName: 'n1', phase: 'Failed' }, 'Failed'],
  ];
  for (const [pod, want] of cases) assert.equal(podLife(pod), want, JSON.stringify(pod));
  assert.equal(podLife(undefined), '');
});

test('workloads: a Deployment or DaemonSet from the pod form (issue 32, dashboard)', () => {
  const form = { name: 'web', namespace: 'shop', cpu: '250m', count: '3', labels: 'tier=front', nodeSelector: 'zone=a' };
  const d = workloadManifest('Deployment', form);
  assert.equal(d.kind, 'Deployment');
  assert.deepEqual(d.metadata, { name: 'web', namespace: 'shop' });
  assert.equal(d.spec.replicas, 3);
  assert.deepEqual(d.spec.selector, { matchLabels: { app: 'web' } });
  assert.deepEqual(d.spec.template.metadata.labels, { tier: 'front', app: 'web' });
  assert.deepEqual(d.spec.template.spec.nodeSelector, { zone: 'a' });
  assert.equal(d.spec.template.spec.containers[0].resources.requests.cpu, '250m');
  const ds = workloadManifest('DaemonSet', { ...form, labels: 'app=agent' });
  assert.equal(ds.spec.replicas, undefined, 'a DaemonSet has a pod per node, no replicas');
  assert.deepEqual(ds.spec.selector.matchLabels, { app: 'agent' }, "the form's own app label selects");
  assert.throws(() => workloadManifest('Deployment', { ...form, count: '-1' }), (err) => err instanceof FormError && err.field === 'count');
  assert.throws(() => workloadManifest('StatefulSet', form), (err) => err instanceof FormError && err.field === 'kind');
});

test('workloads: pods grouped by owner, Deployment above its ReplicaSets, filtered by kind and name (issue 32, dashboard)', () => {
  const pod = (ns, name, extra = {}) => [`${ns}/${name}`, { namespace: ns, name, ...extra }];
  const pods = new Map([
    pod('default', 'web-5fc9-b', { owner: 'ReplicaSet/web-5fc9', labels: { 'pod-template-hash': '5fc9' }, nodeName: 'n1', phase: 'Running', ready: true }),
    pod('default', 'web-5fc9-a', { owner: 'ReplicaSet/web-5fc9', labels: { 'pod-template-hash': '5fc9' }, nodeName: 'n1', phase: 'Running', ready: true }),
    pod('default', 'web-77aa-x', { owner: 'ReplicaSet/web-77aa', labels: { 'pod-template-hash': '77aa' } }),
    pod('default', 'lone-rs-q', { owner: 'ReplicaSet/lone-rs' }),
    pod('default', 'agent-k', { owner: 'DaemonSet/agent', nodeName: 'n1' }),
    pod('default', 'batch-1', { owner: 'Job/batch', nodeName: 'n1', phase: 'Succeeded' }),
    pod('default', 'solo', {}),
  ]);
  assert.deepEqual(workloadOf(pods.get('default/web-77aa-x')), { kind: 'Deployment', name: 'web', child: 'web-77aa' });
  assert.deepEqual(workloadOf(pods.get('default/lone-rs-q')), { kind: 'ReplicaSet', name: 'lone-rs', child: '' }, 'a ReplicaSet of its own, no hash label');
  const tree = workloadTree(pods);
  assert.deepEqual(tree.map((w) => `${w.kind}/${w.name}`), ['Deployment/web', 'DaemonSet/agent', 'Job/batch', 'ReplicaSet/lone-rs', 'Pod/solo']);
  const web = tree[0];
  assert.deepEqual(web.children, [{ name: 'web-5fc9', pods: ['default/web-5fc9-a', 'default/web-5fc9-b'] }, { name: 'web-77aa', pods: ['default/web-77aa-x'] }]);
  assert.equal(livesText(web.lives), '2 Running, Ready, 1 waiting');
  assert.deepEqual(workloadTree(pods, { kind: 'Job' }).map((w) => w.name), ['batch']);
  assert.deepEqual(workloadTree(pods, { text: 'AGENT' }).map((w) => w.name), ['agent']);
  assert.deepEqual(workloadTree(pods, { text: '77aa-x' }).map((w) => w.name), ['web'], "a pod's name finds its workload");
  assert.deepEqual(workloadTree(pods, { kind: 'StatefulSet' }), []);
});

test('several profiles: the plugin editor edits the profile it shows, and the timeline filters by profile', () => {
  const config = {
    apiVersion: 'kubescheduler.config.k8s.io/v1',
    kind: 'KubeSchedulerConfiguration',
    profiles: [{ schedulerName: 'default-scheduler' }, { schedulerName: 'packer', pluginConfig: [{ name: 'NodeResourcesFit', args: { scoringStrategy: { type: 'MostAllocated' } } }] }],
  };
  const next = configWithPlugins(config, { ImageLocality: { enabled: false } }, 'packer');
  assert.equal(next.profiles[0].plugins, undefined, 'the other profile is left as it was');
  assert.deepEqual(next.profiles[1].plugins.multiPoint.disabled, [{ name: 'ImageLocality' }]);
  assert.deepEqual(configWithPlugins(config, { ImageLocality: { enabled: false } }).profiles[0].plugins.multiPoint.disabled, [{ name: 'ImageLocality' }], 'the first when none is named');
  assert.throws(() => configWithPlugins(config, {}, 'nobody'), /no profile nobody/);
  assert.equal(pluginArgs(config, 'NodeResourcesFit', 'packer').scoringStrategy.type, 'MostAllocated');
  assert.deepEqual(pluginArgs(config, 'NodeResourcesFit'), {}, 'the first profile has none');
  const packed = withPluginArgs(config, 'NodeResourcesFit', { scoringStrategy: { type: 'LeastAllocated' } }, 'packer');
  assert.equal(pluginArgs(packed, 'NodeResourcesFit', 'packer').scoringStrategy.type, 'LeastAllocated');
  assert.equal(configWithPlugins(config, { NodeNumber: { weight: -3 } }).profiles[0].plugins.multiPoint.enabled[0].weight, -3, 'upstream takes negative weights');

  const rows = [
    { key: 'a', pod: { schedulerName: 'packer' }, cycles: [] },
    { key: 'b', pod: { schedulerName: 'default-scheduler' }, cycles: [] },
    { key: 'gone', pod: null, cycles: [{ profile: 'packer' }] },
    { key: 'never', pod: null, cycles: [] },
  ];
  assert.deepEqual(rows.map(rowProfile), ['packer', 'default-scheduler', 'packer', '']);
  assert.deepEqual(profilesOf(rows), ['default-scheduler', 'packer']);
});

test('extender calls: nodes in and out with why (for good or not), a prioritizer\'s weight, an ignored error', () => {
  const rows = extenderRows([
    { extender: 'http://127.0.0.1:8888/', verb: 'filter', nodes: 5, passed: 2, failed: { b: 'zone avoided' }, unresolvable: { a: 'closed' }, failedCount: 2, unresolvableCount: 1, nanos: 1500000 },
    { extender: 'http://127.0.0.1:8888/', verb: 'prioritize', nodes: 2, passed: 1, weight: 5, nanos: 900000 },
    { extender: 'http://127.0.0.1:9999/', verb: 'filter', nodes: 2, passed: 0, error: 'connection refused', ignored: true, nanos: 10 },
    { extender: 'http://127.0.0.1:8888/', verb: 'bind', nodes: 1, passed: 1, node: 'c', nanos: 5 },
  ]);
  assert.equal(rows[0].inOut, '5 in, 2 kept');
  assert.deepEqual(rows[0].away, [{ node: 'a', reason: 'closed', final: true }, { node: 'b', reason: 'zone avoided', final: false }]);
  assert.equal(rows[0].more, 1, 'the event named 2 of the 3 nodes turned away');
  assert.equal(rows[1].inOut, '1 of 2 scored, weight 5');
  assert.deepEqual([rows[2].error, rows[2].ignored], ['connection refused', true]);
  assert.equal(rows[3].inOut, 'to c');
  assert.deepEqual(extenderRows(undefined), []);
});

test('why pending: the closest nodes with what each needs and whether it was tried, the groups', () => {
  const v = whyView({
    sentence: 'Fits nowhere. Closest: small needs the pod to request 500m less cpu (tried: it then fits).',
    closest: [
      { name: 'small', failures: [{ plugin: 'NodeResourcesFit', reason: 'Insufficient cpu', detail: 'cpu: requests 1500m, 1 of 1 free', usedBy: ['default/db 1'], change: { words: 'the pod to request 500m less cpu' } }], tried: { fits: true } },
      { name: 'gpu', failures: [{ plugin: 'TaintToleration', reason: 'node(s) had untolerated taint(s)', detail: 'untolerated taint a=b:NoSchedule', change: { words: 'a toleration for a=b:NoSchedule' } }, { plugin: 'Custom', reason: 'no' }] },
      { name: 'x', failures: [{ plugin: 'NodeAffinity', reason: 'r', change: { words: 'the label k=v' } }], tried: { fits: false, failures: [{ plugin: 'PodTopologySpread', reason: 'skew' }] } },
    ],
    groups: [{ count: 25, nodes: ['a', 'b'], failures: [{ plugin: 'NodeResourcesFit', reason: 'Insufficient cpu' }] }],
  });
  assert.deepEqual(v.closest.map((n) => n.tried), ['fits', 'unproven', 'not enough']);
  assert.equal(v.closest[0].needs[0].words, 'the pod to request 500m less cpu');
  assert.deepEqual(v.closest[0].needs[0].usedBy, ['default/db 1']);
  assert.deepEqual(v.closest[1].needs[0].usedBy, []);
  assert.equal(v.closest[1].needs[1].words, 'no', 'a plugin without a change gives its reason');
  assert.deepEqual(v.closest[2].still, ['PodTopologySpread: skew']);
  assert.deepEqual([v.groups[0].count, v.groups[0].more], [25, 23]);
  assert.equal(whyView({ key: 'x', error: 'no' }), null);
  assert.equal(whyView(null), null);
  // "Try it" offers every node it names, once; preemption in words.
  assert.deepEqual(v.tryNodes, ['small', 'gpu', 'x', 'a', 'b']);
  assert.equal(v.preemption, '');
  assert.equal(v.trial, null);
  const p = whyView({ sentence: 's', preemption: { helps: true, node: 'n1', victims: ['default/low'], candidates: 1 } });
  assert.equal(p.preemption, 'Preemption would make room on n1, evicting default/low (of 1 candidate node).');
  assert.equal(whyView({ sentence: 's', preemption: { helps: false, reason: 'not eligible due to preemptionPolicy=Never.' } }).preemption,
    'Preemption would not help: not eligible due to preemptionPolicy=Never.');
});

test('why pending: a node tried, in words', () => {
  assert.equal(trialView(null), null);
  assert.equal(trialView({ node: 'a', state: 'trying' }).busy, true);
  assert.equal(trialView({ node: 'a', state: 'error', error: 'no node a' }).label, 'no node a');
  assert.equal(trialView({ node: 'a', state: 'done', result: { name: 'a', failures: [] } }).label, 'fits now');
  const fits = trialView({ node: 'a', state: 'done', result: { name: 'a', failures: [{ plugin: 'TaintToleration', reason: 'r', change: { words: 'a toleration for k=v:NoSchedule' } }], tried: { fits: true } } });
  assert.deepEqual([fits.label, fits.cls, fits.needs[0].words], ['fits then', 'win', 'a toleration for k=v:NoSchedule']);
  const short = trialView({ node: 'a', state: 'done', result: { name: 'a', failures: [{ plugin: 'P', reason: 'r', change: { words: 'w' } }], tried: { fits: false, failures: [{ plugin: 'Q', reason: 'still no' }] } } });
  assert.deepEqual([short.label, short.still], ['not enough', ['Q: still no']]);
  assert.match(trialView({ node: 'a', state: 'done', result: { name: 'a', failures: [{ plugin: 'P', reason: 'r' }] } }).label, /^unproven/);
});

test('what would move a pod, in words per plugin (issue 37, 2)', async () => {
  const { wakeWords } = await import('../../web/static/js/format.js');
  const cases = [
    [['NodeAdd', 'NodeUpdateNodeAllocatable', 'NodeUpdateNodeTaint', 'AssignedPodDelete', 'AssignedPodUpdatePodScaleDown'],
      'a node added, or its allocatable or taints changed; a scheduled pod deleted or scaled down'],
    [['PersistentVolumeClaimAdd', 'PersistentVolumeAdd', 'storage.k8s.io/CSINodeAdd', 'resource.k8s.io/DeviceClassAdd', 'resource.k8s.io/DeviceClassUpdate'],
      'a PersistentVolumeClaim added; a PersistentVolume added; a CSINode added; a DeviceClass added or changed'],
    [['PodUpdatePodSchedulingGatesEliminated'], 'a pod freed of its scheduling gates'],
    // What it cannot read it names as it is.
    [['NodeUpdateSomethingNew', 'Weird'], 'a node UpdateSomethingNew; Weird'],
    [[], ''],
  ];
  for (const [events, want] of cases) assert.equal(wakeWords(events), want, events.join(','));
});

test('the queue board\'s groups by reason, and its search (issue 37, 7)', async () => {
  const { laneGroups, laneShown, reasonOf } = await import('../../web/static/js/views/lanes.js');
  const entries = {
    'default/a': { rejectedBy: ['NodeResourcesFit'], attempts: 1 },
    'default/b': { rejectedBy: ['NodeResourcesFit'], attempts: 2 },
    'team/c': { rejectedBy: ['TaintToleration', 'NodeResourcesFit'], attempts: 1 },
    'default/d': { gatingPlugin: 'SchedulingGates', rejectedBy: ['SchedulingGates'] },
    'default/e': { attempts: 0 },
  };
  const of = (k) => entries[k];
  const keys = Object.keys(entries);
  assert.deepEqual(laneGroups(keys, of), [
    { reason: 'rejected by NodeResourcesFit', count: 2 },
    { reason: 'rejected by TaintToleration, NodeResourcesFit', count: 1 },
    { reason: 'gated by SchedulingGates', count: 1 },
    { reason: 'not tried yet', count: 1 },
  ]);
  assert.equal(reasonOf({ attempts: 3 }), 'tried before, no plugin to blame');
  // A group keeps its pods, in the lane's order; the search any case, by name or reason.
  assert.deepEqual(laneShown(keys, of, { group: 'rejected by NodeResourcesFit' }), ['default/a', 'default/b']);
  assert.deepEqual(laneShown(keys, of, { search: 'TEAM/' }), ['team/c']);
  assert.deepEqual(laneShown(keys, of, { search: 'noderesourcesfit' }), ['default/a', 'default/b', 'team/c']);
  assert.deepEqual(laneShown(keys, of, { search: 'taint', group: 'rejected by NodeResourcesFit' }), []);
  // Nothing asked: the same array, so the lane does not render again.
  assert.equal(laneShown(keys, of, { search: '  ' }), keys);
});

test('a cycle in brief: the Filter counts and the best nodes\' scores, the deciding plugin marked (issue 37, 6)', async () => {
  const { briefView } = await import('../../web/static/js/views/inspector/cycle.js');
  const brief = {
    filter: { plugins: ['NodeResourcesFit'], nodes: 300, passed: 144, failures: [{ plugin: 'NodeResourcesFit', code: 2, reason: 'Insufficient cpu', nodes: 156 }] },
    score: {
      plugins: [{ name: 'NodeResourcesFit', weight: 1 }, { name: 'NodeResourcesBalancedAllocation', weight: 1 }], nodes: 144, best: 465, tied: 1,
      top: [
        { node: 'node-3', raw: [0, 0], normalized: [391, 74], weighted: [391, 74], nanos: [0, 0], total: 465 },
        { node: 'node-7', raw: [0, 0], normalized: [391, 72], weighted: [391, 72], nanos: [0, 0], total: 463 },
      ],
    },
  };
  const v = briefView(brief, { result: 'scheduled', node: 'node-3' }, VOCABULARY.codes);
  assert.deepEqual(v.filter, { nodes: 300, passed: 144, failures: [{ plugin: 'NodeResourcesFit', reason: 'Insufficient cpu', nodes: 156 }] });
  assert.equal(v.score.nodes, 144);
  assert.deepEqual(v.score.table.rows.map((r) => [r.node, r.winner]), [['node-3', true], ['node-7', false]]);
  assert.deepEqual(v.score.table.decided.lead.map((l) => l.plugin), ['NodeResourcesBalancedAllocation']);
  assert.equal(briefView(null), null);
  assert.deepEqual(briefView({ filter: brief.filter }, null, VOCABULARY.codes).score, null);
});

test('a pod larger than every node is named as such (issue 37, smaller defects)', async () => {
  const { beyondEveryNode, podManifest } = await import('../../web/static/js/manifests.js');
  const nodes = [{ allocatable: { cpu: 4000, memory: 16 * 2 ** 30 } }, { allocatable: { cpu: 32000, memory: 64 * 2 ** 30 } }];
  assert.deepEqual(beyondEveryNode(podManifest({ name: 'p', cpu: '1000', memory: '1Gi' }), nodes), [{ resource: 'cpu', asked: 1_000_000, most: 32000 }]);
  assert.deepEqual(beyondEveryNode(podManifest({ name: 'p', cpu: '500m', memory: '100Gi' }), nodes), [{ resource: 'memory', asked: 100 * 2 ** 30, most: 64 * 2 ** 30 }]);
  assert.deepEqual(beyondEveryNode(podManifest({ name: 'p', cpu: '32', memory: '64Gi' }), nodes), [], 'as large as the largest node fits');
  assert.deepEqual(beyondEveryNode(podManifest({ name: 'p', cpu: '1000' }), []), [], 'no node: nothing to compare with');
});

test('Step with nothing to take asks the server for nothing and says why (issue 37, smaller defects)', async () => {
  resetSeq(0);
  const store = createStore();
  const fetchImpl = fakeFetch(() => ({ status: 204 }));
  const actions = createActions({ api: createApi({ fetchImpl }), store });
  await actions.step();
  assert.equal(fetchImpl.calls.length, 0, 'no step granted for a pod that is not there');
  assert.match(store.page.notices.value.at(-1).text, /Nothing to step: no pod waits in activeQ or backoffQ/);
  store.applyMessage(events([E.queue('p', { action: 'add', to: 'active', event: 'PodAdd', order: 'a' })]));
  await actions.step();
  assert.deepEqual(fetchImpl.calls.map((c) => c.url).filter((u) => u.includes('/scheduler/step')).length, 1);
});

test('timeline preemption marks: where a pod was evicted, and whom it evicted, within the window (issue 37)', () => {
  const victim = { preemptedBy: { pod: 'default/high', node: 'n1', t: 1500 }, victims: [] };
  const preemptor = { preemptedBy: null, victims: [{ pod: 'default/low', node: 'n1', t: 1500 }, { pod: 'default/old', node: 'n2', t: 50 }] };
  assert.deepEqual(preemptions(victim, 1000, 2000), [{ role: 'victim', t: 1500, pod: 'default/high', words: 'evicted by default/high from n1' }]);
  assert.deepEqual(preemptions(preemptor, 1000, 2000), [{ role: 'preemptor', t: 1500, pod: 'default/low', words: 'evicted default/low from n1' }]);
  assert.deepEqual(preemptions(victim, 1600, 2000), []);
  // A pod group's victim: the mark opens the victim itself, whose story names the group.
  const ofGroup = { key: 'default/low', preemptedBy: { group: 'default/trio', node: 'n1', t: 1500 }, victims: [] };
  assert.deepEqual(preemptions(ofGroup, 1000, 2000), [{ role: 'victim', t: 1500, pod: 'default/low', words: 'evicted by pod group default/trio from n1' }]);
});

test('an error about one document names the lines of the whole paste (issue 37)', () => {
  assert.equal(linesInPaste('malformed Pod manifest: yaml: line 8: did not find expected key', 12), 'malformed Pod manifest: yaml: line 19: did not find expected key');
  assert.equal(linesInPaste('not a quantity: status.allocatable.cpu "1x" (line 5), spec.x "2y" (line 7)', 1), 'not a quantity: status.allocatable.cpu "1x" (line 5), spec.x "2y" (line 7)');
  assert.equal(linesInPaste('no line here', 4), 'no line here');
});

test('short counts for the header: exact below 10,000, then k and M, never rounded up', () => {
  assert.deepEqual([0, 9999, 10_000, 20_149, 99_999, 100_000, 123_456, 999_999, 1_000_000, 1_299_999].map(shortCount),
    ['0', '9999', '10k', '20.1k', '99.9k', '100k', '123k', '999k', '1M', '1.2M']);
});

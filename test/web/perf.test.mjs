// The Performance view's logic (web/static/js/views/performance/perf.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchCost, flame, liveCost, placedPerSecond, polyline } from '../../web/static/js/views/performance/perf.js';

const detail = (fitNanos, taintNanos, bindNanos) => ({
  points: [{ point: 'PreFilter', results: [{ plugin: 'NodeResourcesFit', code: 0, nanos: 100 }] }, { point: 'Bind', results: [{ plugin: 'DefaultBinder', code: 0, nanos: bindNanos }] }],
  filter: { plugins: ['TaintToleration', 'NodeResourcesFit'], nodes: [{ node: 'n1', codes: [0, 0], nanos: [taintNanos, fitNanos] }, { node: 'n2', codes: [2], nanos: [taintNanos] }] },
  score: null,
});

test('live cost: each plugin summed over the cycles, with per-cycle percentiles; binding points marked', () => {
  const { rows, cycles } = liveCost([detail(300, 10, 5000), detail(500, 20, 7000), null]);
  assert.equal(cycles, 2);
  const row = (point, plugin) => rows.find((r) => r.point === point && r.plugin === plugin);
  assert.deepEqual(row('Filter', 'NodeResourcesFit'), { point: 'Filter', plugin: 'NodeResourcesFit', calls: 2, nanos: 800, p50: 300, p90: 500, p99: 500, binding: false });
  assert.equal(row('Filter', 'TaintToleration').calls, 4, 'a call a node');
  assert.equal(row('Filter', 'TaintToleration').nanos, 60);
  assert.equal(row('Bind', 'DefaultBinder').binding, true);
  assert.equal(rows[0].plugin, 'DefaultBinder', 'longest first');
});

test('flame: points as wide as their plugins, plugins under them, the binding cycle left out', () => {
  const rows = [
    { point: 'Filter', plugin: 'A', nanos: 300 }, { point: 'Filter', plugin: 'B', nanos: 100 },
    { point: 'Score', plugin: 'C', nanos: 400 }, { point: 'Bind', plugin: 'D', nanos: 9000, binding: true },
  ];
  const boxes = flame(rows, 800);
  const points = boxes.filter((b) => b.row === 0);
  assert.deepEqual(points.map((b) => [b.label, b.x, b.w]), [['Filter', 0, 400], ['Score', 400, 400]]);
  assert.deepEqual(boxes.filter((b) => b.row === 1).map((b) => [b.label, b.x, b.w]), [['A', 0, 300], ['B', 300, 100], ['C', 400, 400]]);
  assert.deepEqual(flame([{ point: 'Bind', plugin: 'D', nanos: 1, binding: true }], 800), [], 'nothing to draw');
});

test('pods placed each second, the oldest first; only cycles that placed a pod', () => {
  const now = 10_500;
  const s = (endTime, result = 'scheduled') => ({ endTime, end: { result } });
  const got = placedPerSecond([s(10_100), s(10_900), s(9_000), s(9_500, 'unschedulable'), s(2_000), {}], now, 3);
  assert.deepEqual(got, [{ at: 8000, count: 0 }, { at: 9000, count: 1 }, { at: 10000, count: 2 }]);
  assert.equal(polyline([0, 5, 10], 100, 50, 10), '0.0,50.0 50.0,25.0 100.0,0.0');
});

test('a bench report: its rows in nanoseconds and each run\'s rates; anything else is refused in words', () => {
  const report = {
    workload: 'SchedulingBasic/500Nodes', cycles: 1000,
    rounds: [{ runs: [{ scheduler: 'minisched', measures: [{ name: 'SchedulingBasic', pods: 1000, placed: 1000, podsPerSecond: 512.3, rates: [480, 530] }] },
      { scheduler: 'kube-scheduler', measures: [{ name: 'SchedulingBasic', pods: 1000, placed: 1000, podsPerSecond: 550 }] }] }],
    plugins: [{ point: 'Filter', plugin: 'NodeResourcesFit', calls: 500000, p50: 800, p90: 1500, p99: 4000, total: 700000000, share: 0.4 }],
  };
  const cost = benchCost(report);
  assert.equal(cost.workload, 'SchedulingBasic/500Nodes');
  assert.deepEqual(cost.rows[0], { point: 'Filter', plugin: 'NodeResourcesFit', calls: 500000, nanos: 700000000, p50: 800, p90: 1500, p99: 4000, binding: false });
  assert.deepEqual(cost.runs.map((r) => [r.label, r.rates]), [['round 1, minisched, SchedulingBasic', [480, 530]], ['round 1, kube-scheduler, SchedulingBasic', []]]);
  assert.throws(() => benchCost({ kind: 'Recording' }), /not a report of minisched bench -o json/);
  assert.throws(() => benchCost(null), /not a report/);
});

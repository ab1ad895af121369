// The dashboard's store: snapshots, every event kind, resync, resume after a
// reconnect, the bounds on what it keeps, and who hears of a change. Over
// 400 lines: one case per event kind and bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStore, podKey, TIES_NAMED, toMillis } from '../../web/static/js/store/index.js';
import { effect } from '../../web/static/js/signals.js';
import { describeMove, waitReasons } from '../../web/static/js/format.js';
import { batchLines, filterMatrix, groupLines } from '../../web/static/js/views/inspector/cycle.js';
import { E, at, cycleSummaries, events, nodeSummary, podSummary, queued, resetSeq, snapshot, successfulCycle, VOCABULARY } from './fixtures.mjs';

const GI = 2 ** 30;

function fresh(opts) {
  resetSeq(0);
  return createStore({ now: () => Date.parse('2026-01-01T10:10:00Z'), ...opts });
}

/** Counts how often a reader of read() would render: once now, once per change. */
function renders(read) {
  let n = 0;
  effect(() => {
    read();
    n += 1;
  });
  return () => n;
}

test('a snapshot replaces nodes, pods, queue, scheduler and vocabulary, and sums requests per node', () => {
  const s = fresh();
  s.applyMessage(snapshot({
    at: 40,
    nodes: [nodeSummary('n1', { cpu: 2000 }), nodeSummary('n2')],
    pods: [
      podSummary('a', { cpu: 500, memory: GI, nodeName: 'n1' }),
      podSummary('b', { cpu: 250, nodeName: 'n1' }),
      podSummary('c', { cpu: 100 }),
      podSummary('d', { cpu: 9000, message: '0/2 nodes are available: 2 Insufficient cpu.' }),
    ],
    queue: { active: [queued('c', 'active')], unschedulable: [queued('d', 'unschedulable', { attempts: 1, plugins: ['NodeResourcesFit'] })] },
    scheduler: { state: 'paused', generation: 3, steps: 1 },
  }));
  assert.equal(s.server.seq.value, 40);
  assert.equal(s.server.snapshots.value, 1);
  assert.deepEqual(s.server.vocabulary.value, VOCABULARY);
  assert.equal(s.cluster.nodes.size, 2);
  assert.equal(s.cluster.pods.size, 4);
  const n1 = s.cluster.usage.get('n1');
  assert.deepEqual({ cpu: n1.cpu, memory: n1.memory, pods: n1.pods }, { cpu: 750, memory: GI, pods: 2 });
  assert.equal(s.cluster.usage.get('n2'), undefined);
  assert.deepEqual(s.server.scheduler.value, { state: 'paused', generation: 3, steps: 1, message: '' });
  assert.deepEqual(s.lane('active').value, ['default/c']);
  assert.deepEqual(s.lane('unschedulable').value, ['default/d']);
  assert.deepEqual(s.queue.entries.get('default/d').rejectedBy, ['NodeResourcesFit']);
  assert.deepEqual(s.cycles.podInfo.get('default/d').lastFailure.plugins, ['NodeResourcesFit'], 'the snapshot tells of the last failure');
  assert.equal(s.counts.value.bound, 2);
  assert.equal(s.counts.value.pending, 2);
  assert.deepEqual(s.counts.value.queues, { active: 1, backoff: 0, errorBackoff: 0, unschedulable: 1, inFlight: 0 });

  // A second snapshot replaces, it does not merge.
  s.applyMessage(snapshot({ at: 50, nodes: [nodeSummary('n3')], pods: [podSummary('z', { cpu: 100, nodeName: 'n3' })] }));
  assert.deepEqual(s.cluster.nodes.keys(), ['n3']);
  assert.deepEqual(s.cluster.pods.keys(), ['default/z']);
  assert.equal(s.cluster.usage.get('n1'), undefined);
  assert.equal(s.cluster.usage.get('n3').cpu, 100);
  assert.equal(s.lane('active').value.length, 0);
  assert.equal(s.cycles.podInfo.has('default/d'), false, 'what was known of vanished pods is dropped');
});

test('node and pod events keep the cluster and the per-node requests right', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0 }));
  s.applyMessage(events([
    E.node('added', nodeSummary('n1', { cpu: 2000, labels: { zone: 'a' } })),
    E.node('added', nodeSummary('n2', { taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] })),
    E.pod('added', podSummary('a', { cpu: 500, memory: GI })),
    E.pod('updated', podSummary('a', { cpu: 500, memory: GI, nodeName: 'n1' })),
    E.pod('updated', podSummary('a', { cpu: 500, memory: GI, nodeName: 'n1' })), // idempotent
    E.pod('added', podSummary('b', { cpu: 250, nodeName: 'n1' })),
  ]));
  assert.equal(s.cluster.nodes.get('n1').labels.zone, 'a');
  assert.equal(s.cluster.nodes.get('n2').taints[0].key, 'gpu');
  assert.equal(s.cluster.usage.get('n1').cpu, 750);
  assert.equal(s.cluster.usage.get('n1').pods, 2);

  const n1Card = renders(() => [s.cluster.nodes.get('n1'), s.cluster.usage.get('n1')]);
  const n2Card = renders(() => [s.cluster.nodes.get('n2'), s.cluster.usage.get('n2')]);
  s.applyMessage(events([E.pod('deleted', podSummary('b', { cpu: 250, nodeName: 'n1' }))]));
  assert.equal(s.cluster.usage.get('n1').cpu, 500);
  assert.equal(n1Card(), 2, 'the node card renders again when its pods change');
  assert.equal(n2Card(), 1, 'the other node card does not');
  assert.equal(s.cluster.pods.has('default/b'), false);
  assert.equal(s.counts.value.bound, 1);

  // A delete of an older pod with the same name (another uid) changes nothing.
  s.applyMessage(events([E.pod('deleted', podSummary('a', { uid: 'old-uid', nodeName: 'n1', cpu: 500 }))]));
  assert.equal(s.cluster.pods.has('default/a'), true);

  s.applyMessage(events([E.node('updated', nodeSummary('n1', { cpu: 2000, unschedulable: true })), E.node('deleted', nodeSummary('n2'))]));
  assert.equal(s.cluster.nodes.get('n1').unschedulable, true);
  assert.equal(s.cluster.nodes.has('n2'), false);
  assert.deepEqual(s.nodeNames.value, ['n1']);

  // Pods on a node that is gone still count, under "node gone".
  s.applyMessage(events([E.node('deleted', nodeSummary('n1'))]));
  assert.deepEqual(s.orphanNodes.value, ['n1']);
  assert.deepEqual(s.capacity.value, { cpu: 0, memory: 0, cpuUsed: 0, memoryUsed: 0 }, 'a gone node offers nothing and counts no request');
});

test('a pod card hears of its pod, its queue entry and its story at once, and of nothing else', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, pods: [podSummary('p'), podSummary('q')] }));
  s.applyMessage(events([
    E.queue('p', { action: 'add', to: 'active', event: 'PodAdd', order: 'a' }),
    E.queue('q', { action: 'add', to: 'active', event: 'PodAdd', order: 'b' }),
  ]));
  const card = (key) => renders(() => [s.queue.entries.get(key), s.cluster.pods.get(key), s.cycles.podInfo.get(key)]);
  const p = card('default/p');
  const q = card('default/q');
  const lane = renders(() => s.lane('unschedulable').value);
  s.applyMessage(events([E.pod('updated', podSummary('p', { message: '0/3 nodes are available' }))]));
  assert.equal(p(), 2, 'the pod\'s message shows as soon as it comes');
  assert.equal(q(), 1);
  assert.equal(lane(), 1, 'a lane the pod is not in does not render');
  s.applyMessage(events([
    E.queue('p', { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }),
    E.queue('p', { action: 'move', from: 'inFlight', to: 'unschedulable', event: 'ScheduleAttemptFailure', plugins: ['NodeResourcesFit'], attempts: 1, order: 'x' }),
  ]));
  assert.equal(p(), 3, 'one message, one render');
  assert.equal(lane(), 2);
  assert.deepEqual(s.lane('unschedulable').value, ['default/p']);
});

test('pods of a pod group wait in their own lanes and name their group', () => {
  const s = fresh();
  s.applyMessage(snapshot({
    at: 0,
    pods: [podSummary('g-0', { cpu: 100 }), podSummary('g-1', { cpu: 100 })],
    queue: { incompletePodGroup: [queued('g-0', 'incompletePodGroup', { podGroup: 'default/g' })] },
  }));
  assert.deepEqual(s.lane('incompletePodGroup').value, ['default/g-0']);
  assert.equal(s.queue.entries.get('default/g-0').podGroup, 'default/g');

  s.applyMessage(events([
    E.queue('g-1', { action: 'add', to: 'incompletePodGroup', event: 'PodAdd', attempts: 0, podGroup: 'default/g' }, 100),
    E.queue('g-0', { action: 'move', from: 'incompletePodGroup', to: 'active', event: 'PodGroupAdd', attempts: 0, podGroup: 'default/g' }, 200),
    E.queue('g-1', { action: 'move', from: 'incompletePodGroup', to: 'active', event: 'PodGroupAdd', attempts: 0, podGroup: 'default/g' }, 200),
  ]));
  assert.deepEqual(s.lane('incompletePodGroup').value, []);
  assert.deepEqual([...s.lane('active').value].sort(), ['default/g-0', 'default/g-1']);
  assert.equal(s.queue.entries.get('default/g-1').podGroup, 'default/g');
});

test('a pod group\'s cycle: its pods side by side, turned away or placed together, its preemptions (issue 34)', () => {
  const s = fresh();
  const trio = ['trio-0', 'trio-1', 'trio-2'];
  s.applyMessage(snapshot({ nodes: [nodeSummary('n1'), nodeSummary('n2')], pods: [...trio, 'low'].map((n) => podSummary(n, n === 'low' ? { nodeName: 'n1' } : {})) }));
  const member = (i, lead) => ({ namespace: 'default', name: 'trio', lead, member: i + 1, members: 3 });
  const gang = 'pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining';
  const group = (pod, id) => s.groupCycle(s.cycleView(`default/${pod}`, id).summary);
  // The three are tried one after another; the third fits nowhere, so the
  // two placed in the simulation fail with the gang's reason.
  s.applyMessage(events(trio.map((pod, i) => E.memberStart(pod, 11 + i, member(i, 11), 10 + i))));
  s.applyMessage(events([
    E.cycleEnd('trio-0', 11, { result: 'unschedulable', message: gang }, 20),
    E.cycleEnd('trio-1', 12, { result: 'unschedulable', message: gang }, 21),
  ]));
  assert.deepEqual(group('trio-1', 12).members.map((m) => m.pod.name), trio, 'every member, in the order tried, from any of them');
  assert.deepEqual(groupLines(group('trio-1', 12)), ['Running: 2 of 3 pods tried so far, each on the snapshot the ones before it left.']);
  s.applyMessage(events([
    E.cycleEnd('trio-2', 13, { result: 'unschedulable', message: '0/2 nodes are available: 2 Insufficient cpu.' }, 22),
    E.groupPreemption('low', 'trio', 'n1', 23),
  ]));
  assert.deepEqual(groupLines(group('trio-2', 13)), [
    'Turned away together: none of its 3 pods took a node, for minCount (3) cannot be satisfied: 2 scheduled, 0 remaining.',
    "The group's preemptions evicted default/low from n1, to make room for all its pods at once.",
  ]);
  // The victim's story names the group, with no one pod to open.
  const evicted = s.story('default/low').find((e) => e.kind === 'preempted');
  assert.deepEqual([evicted.text, evicted.pod], ['evicted from n1 by pod group default/trio, which preempted it for its pods', undefined]);
  assert.equal(s.story('default/trio-0').find((e) => e.kind === 'preempting'), undefined, 'no member took the victims as its own');
  assert.match(s.story('default/trio-0').find((e) => e.kind === 'attempt').text, /^attempt 1, cycle 11, with pod group default\/trio: unschedulable$/);

  // The next cycle places the three: each waits at Permit for the gang, then they bind.
  s.applyMessage(events(trio.flatMap((pod, i) => [
    E.memberStart(pod, 31 + i, member(i, 31), 40 + 3 * i),
    E.cycleEnd(pod, 31 + i, { result: 'scheduled', node: `n${i + 1}`, feasibleNodes: 1 }, 41 + 3 * i),
    E.permitWait(pod, 31 + i, `n${i + 1}`, 42 + 3 * i),
  ])));
  assert.deepEqual(groupLines(group('trio-0', 31)).slice(0, 2), ['Placed together: all 3 pods took their nodes.', '3 pods wait at Permit until enough of the gang are assumed (GangScheduling).']);
  s.applyMessage(events(trio.map((pod, i) => E.bindingEnd(pod, 31 + i, { bound: true, node: `n${i + 1}` }, 60 + i))));
  assert.equal(groupLines(group('trio-0', 31))[1], 'All 3 are bound.');
  assert.deepEqual(group('trio-0', 11).members.map((m) => m.id), [11, 12, 13], 'an earlier cycle keeps its own members');
  assert.equal(s.groupCycle(s.cycleView('default/trio-0', 31).summary).total, 3);

  // A reset forgets the group's preemptions.
  s.applyMessage(events([E.reset(70)]));
  assert.deepEqual(s.cycles.groupVictims.pairs(), []);
});

test('queue events move pods between the lanes with the reason and the backoff', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, pods: [podSummary('p', { cpu: 100 })] }));
  s.applyMessage(events([
    E.point('p', 0, 'PreEnqueue', [{ plugin: 'SchedulingGates', code: 0, nanos: 10 }]),
    E.queue('p', { action: 'add', to: 'active', event: 'PodAdd', attempts: 0 }, 100),
  ]));
  let e = s.queue.entries.get('default/p');
  assert.equal(e.queue, 'active');
  assert.equal(e.event, 'PodAdd');

  s.applyMessage(events([E.queue('p', { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }, 200)]));
  assert.deepEqual(s.lane('inFlight').value, ['default/p']);
  assert.equal(s.lane('active').value.length, 0);

  const until = at(5000);
  s.applyMessage(events([E.queue('p', {
    action: 'move', from: 'inFlight', to: 'backoff', event: 'NodeAdd', plugins: ['NodeResourcesFit'], attempts: 1,
    backoffUntil: until, message: '0/1 nodes are available: 1 Insufficient cpu.',
  }, 300)]));
  e = s.queue.entries.get('default/p');
  assert.equal(e.queue, 'backoff');
  assert.equal(e.backoffUntil, toMillis(until));
  assert.deepEqual(e.rejectedBy, ['NodeResourcesFit'], 'a move out of a cycle: its plugins rejected the pod');
  assert.deepEqual(e.hintedBy, []);
  assert.equal(e.message, '0/1 nodes are available: 1 Insufficient cpu.');
  assert.deepEqual(s.cycles.podInfo.get('default/p').lastFailure.plugins, ['NodeResourcesFit']);

  // An update in place keeps the message, the backoff and the time it entered.
  const entered = e.enteredAt;
  s.applyMessage(events([E.queue('p', { action: 'update', from: 'backoff', to: 'backoff', event: 'PodUpdate', attempts: 1 }, 400)]));
  e = s.queue.entries.get('default/p');
  assert.equal(e.enteredAt, entered);
  assert.equal(e.event, 'NodeAdd', 'an update in place keeps what moved the pod here');
  assert.equal(e.message, '0/1 nodes are available: 1 Insufficient cpu.');
  assert.equal(e.backoffUntil, toMillis(until));

  s.applyMessage(events([
    E.queue('p', { action: 'move', from: 'backoff', to: 'active', event: 'BackoffComplete', attempts: 1 }, 5000),
    E.queue('p', { action: 'pop', from: 'active', to: 'inFlight', attempts: 2 }, 5001),
    E.queue('p', { action: 'move', from: 'inFlight', to: 'unschedulable', event: 'ScheduleAttemptFailure', plugins: ['TaintToleration'], attempts: 2 }, 5002),
  ]));
  e = s.queue.entries.get('default/p');
  assert.equal(e.queue, 'unschedulable');
  assert.equal(e.backoffUntil, null);
  assert.equal(e.attempts, 2);

  s.applyMessage(events([E.queue('p', { action: 'move', from: 'unschedulable', to: 'active', event: 'NodeAdd', plugins: ['TaintToleration'], attempts: 2 }, 6000)]));
  e = s.queue.entries.get('default/p');
  assert.equal(e.queue, 'active');
  assert.equal(e.event, 'NodeAdd');
  // A cluster event's move: plugins are those whose QueueingHint said Queue,
  // not rejecters; the last attempt's rejecters stay known.
  assert.deepEqual(e.hintedBy, ['TaintToleration']);
  assert.deepEqual(e.rejectedBy, ['TaintToleration']);
  assert.deepEqual(waitReasons(e).map((r) => r.text), ['rejected by TaintToleration', 'TaintToleration said Queue on NodeAdd']);

  s.applyMessage(events([
    E.queue('p', { action: 'pop', from: 'active', to: 'inFlight', attempts: 3 }, 6001),
    E.queue('p', { action: 'done', from: 'inFlight', attempts: 3 }, 6002),
  ]));
  assert.equal(s.queue.entries.has('default/p'), false);
  const trail = s.cycles.podInfo.get('default/p').trail.map((t) => t.to);
  assert.deepEqual(trail, ['active', 'inFlight', 'backoff', 'active', 'inFlight', 'unschedulable', 'active', 'inFlight', null]);

  // Gated pods wait in unschedulable with their gate.
  s.applyMessage(events([E.queue('g', { action: 'add', to: 'unschedulable', event: 'PodAdd', gatingPlugin: 'SchedulingGates', message: 'gated' })]));
  assert.equal(s.queue.entries.get('default/g').gatingPlugin, 'SchedulingGates');
  s.applyMessage(events([E.queue('g', { action: 'delete', from: 'unschedulable', event: 'PodDelete' })]));
  assert.equal(s.queue.entries.has('default/g'), false);
});

test('the lanes are in the server\'s order: by order, ties by pod key; no priority sort of their own', () => {
  const s = fresh();
  s.applyMessage(snapshot({
    at: 0,
    pods: [podSummary('low'), podSummary('high', { priority: 1000 }), podSummary('low2'), podSummary('snap')],
    queue: { active: [queued('snap', 'active', { order: 'm' })] },
  }));
  s.applyMessage(events([
    E.queue('low', { action: 'add', to: 'active', event: 'PodAdd', order: 'b' }, 10),
    E.queue('low2', { action: 'add', to: 'active', event: 'PodAdd', order: 'b' }, 20),
    // The server's order puts the high-priority pod last here: the lane follows it.
    E.queue('high', { action: 'add', to: 'active', event: 'PodAdd', order: 'z' }, 30),
  ]));
  assert.deepEqual(s.lane('active').value, ['default/low', 'default/low2', 'default/snap', 'default/high']);
  s.applyMessage(events([
    E.queue('low', { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }, 40),
    E.queue('low2', { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }, 41),
    E.queue('low', { action: 'move', from: 'inFlight', to: 'backoff', attempts: 1, backoffUntil: at(9000), order: '9' }, 50),
    E.queue('low2', { action: 'move', from: 'inFlight', to: 'backoff', attempts: 1, backoffUntil: at(3000), order: '3' }, 60),
  ]));
  assert.deepEqual(s.lane('backoff').value, ['default/low2', 'default/low']);
  // A pod whose priority changes in place is ordered anew by the server.
  s.applyMessage(events([E.queue('high', { action: 'update', from: 'active', to: 'active', event: 'PodUpdate', order: 'a' }, 70)]));
  assert.deepEqual(s.lane('active').value, ['default/high', 'default/snap']);
});

test('activeQ under a QueueSort plugin that gives no key keeps arrival order, and says so', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, queueSort: { plugin: 'CustomSort', ordered: false } }));
  s.applyMessage(events([
    E.queue('b', { action: 'add', to: 'active', event: 'PodAdd' }, 10),
    E.queue('a', { action: 'add', to: 'active', event: 'PodAdd' }, 20),
    E.queue('c', { action: 'add', to: 'active', event: 'PodAdd' }, 20),
  ]));
  assert.deepEqual(s.lane('active').value, ['default/b', 'default/a', 'default/c']);
  assert.deepEqual(s.server.scheduler.value.queueSort, { plugin: 'CustomSort', ordered: false });
});

test('cycle events carry the server\'s summary; the detail the inspector shows is built from the events', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, nodes: [nodeSummary('n1'), nodeSummary('n2')], pods: [podSummary('web')] }));
  s.applyMessage(events([E.queue('web', { action: 'add', to: 'active', event: 'PodAdd' }), ...successfulCycle('web', 7, 1, ['n1', 'n2'])]));
  const c = s.cycles.summaries.get(7);
  assert.equal(c.podKey, 'default/web');
  assert.equal(c.attempt, 1);
  assert.equal(c.profile, 'default-scheduler');
  assert.equal(c.end.result, 'scheduled');
  assert.equal(c.binding.bound, true);
  assert.equal(typeof c.start, 'number', 'times are milliseconds');
  assert.ok(c.bindTime > c.endTime && c.endTime > c.start);
  const v = s.cycleView('default/web', null);
  assert.equal(v.id, 7);
  assert.equal(v.source, 'live');
  assert.deepEqual(v.detail.points.map((p) => p.point), ['PreFilter', 'PreScore', 'Reserve', 'Bind']);
  assert.equal(v.detail.filter.nodes.length, 2);
  assert.equal(v.detail.score.nodes[0].total, 390);
  assert.deepEqual(s.podCycles('default/web').map((x) => x.id), [7]);
  assert.equal(s.queue.entries.has('default/web'), false);

  // Permit waits show on the summary until the binding ends.
  s.applyMessage(events([
    E.cycleStart('web', 8, 2),
    E.point('web', 8, 'Permit', [{ plugin: 'PermitDelay', code: 4, nanos: 10, timeoutNanos: 2e9 }], 'n1'),
    E.permitWait('web', 8, 'n1'),
  ]));
  assert.equal(s.cycles.summaries.get(8).waiting, true);
  assert.equal(s.cycles.details.get(8).permitWait.node, 'n1');
  s.applyMessage(events([
    E.cycleEnd('web', 8, { result: 'scheduled', node: 'n1' }),
    E.point('web', 8, 'Unreserve', [{ plugin: 'VolumeBinding', code: 0, nanos: 3 }], 'n1'),
    E.bindingEnd('web', 8, { node: 'n1', bound: false, plugin: 'PermitDelay', message: 'rejected' }),
  ]));
  assert.equal(s.cycles.summaries.get(8).waiting, false);
  assert.equal(s.cycles.summaries.get(8).binding.bound, false);
  assert.deepEqual(s.cycles.details.get(8).points.map((p) => p.point), ['Permit', 'Unreserve'], 'in the order they ran');
  assert.deepEqual(s.podCycles('default/web').map((x) => x.id), [8, 7]);
});

test('a summary names the first few of its cycle\'s ties and counts them all', () => {
  const s = fresh();
  const many = Array.from({ length: 300 }, (_, i) => `node-${i}`);
  s.applyMessage(snapshot({ pods: [podSummary('a'), podSummary('b'), podSummary('c')] }));
  s.applyMessage(events([
    E.cycleStart('a', 1, 1, 300),
    E.cycleEnd('a', 1, { result: 'scheduled', node: 'node-0', feasibleNodes: 300, ties: many }),
    E.cycleStart('b', 2, 1, 3),
    E.cycleEnd('b', 2, { result: 'scheduled', node: 'n1', feasibleNodes: 3, ties: ['n1', 'n2'] }),
    E.cycleStart('c', 3, 1, 300),
    // A compact stream's end counts its ties and names none.
    E.cycleEnd('c', 3, { result: 'scheduled', node: 'node-9', feasibleNodes: 300, tieCount: 120 }),
  ]));
  const kept = s.cycles.summaries.get(1).end;
  assert.deepEqual(kept.ties, many.slice(0, TIES_NAMED));
  assert.equal(kept.tieCount, 300);
  assert.deepEqual(s.cycles.summaries.get(2).end.ties, ['n1', 'n2'], 'a short list is kept whole');
  assert.equal(s.cycles.summaries.get(2).end.tieCount, undefined);
  assert.deepEqual(s.cycles.summaries.get(3).end, { feasibleNodes: 300, nanos: 5000, result: 'scheduled', node: 'node-9', tieCount: 120 });
  // Summaries loaded over REST are kept the same way.
  s.addCycleSummaries([{ ...s.cycles.summaries.get(2), id: 4, start: at(5), end: { result: 'scheduled', node: 'n1', ties: many } }]);
  assert.equal(s.cycles.summaries.get(4).end.ties.length, TIES_NAMED);
  assert.equal(s.cycles.summaries.get(4).end.tieCount, 300);
});

test('a cycle that began before the page connected is known from its summary; its detail is to be loaded', () => {
  const s = fresh();
  const start = E.cycleStart('web', 99, 3);
  s.applyMessage(snapshot({ pods: [podSummary('web')] }));
  assert.ok(start.seq <= s.server.seq.value);
  s.applyMessage(events([E.cycleEnd('web', 99, { result: 'error', message: 'no nodes available' })]));
  const c = s.cycles.summaries.get(99);
  assert.equal(c.attempt, 3);
  assert.equal(c.start, toMillis(start.time));
  assert.equal(c.end.result, 'error');
  const v = s.cycleView('default/web', null);
  assert.equal(v.id, 99);
  assert.equal(v.source, 'missing');
  assert.equal(v.summary.end.message, 'no nodes available');
});

test('cycle ids are unique across scheduler restarts; a new server process starts them again', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, pods: [podSummary('a'), podSummary('b')] }));
  s.applyMessage(events([...successfulCycle('a', 1, 1, ['n1']), E.scheduler('running', 2), ...successfulCycle('b', 2, 1, ['n1'])]));
  assert.deepEqual(s.podCycles('default/a').map((c) => c.id), [1]);
  assert.deepEqual(s.podCycles('default/b').map((c) => c.id), [2]);
  assert.equal(s.server.scheduler.value.generation, 2);

  // The server restarted: its snapshot is behind what this page applied.
  resetSeq(0);
  s.applyMessage(snapshot({ at: 0, pods: [podSummary('a'), podSummary('b')] }));
  assert.equal(s.cycles.summaries.size, 0);
  assert.deepEqual(s.podCycles('default/a'), []);
  s.applyMessage(events([E.cycleStart('b', 1, 1)]));
  assert.deepEqual(s.podCycles('default/b').map((c) => c.id), [1]);
  assert.equal(s.cycleView('default/b', 1).detail.filter, null, 'a fresh detail');
});

test('scheduler, scenario and reset events', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, pods: [podSummary('a')] }));
  s.applyMessage(events([E.scheduler('paused', 1, 2)]));
  assert.equal(s.server.scheduler.value.state, 'paused');
  assert.equal(s.server.scheduler.value.steps, 2);
  s.applyMessage(events([E.scheduler('running', 1)]));
  assert.equal(s.server.scheduler.value.steps, 0, 'steps is omitted when zero');

  s.applyMessage(events([
    E.scenario({ id: 'r1', name: 'taints', step: 1, steps: 3, phase: 'running', message: 'creating nodes' }),
    E.scenario({ id: 'r1', name: 'taints', step: 3, steps: 3, phase: 'passed' }),
  ]));
  const run = (id) => s.server.scenarios.value.find((r) => r.id === id);
  assert.equal(run('r1').step, 3);
  assert.equal(run('r1').phase, 'passed');
  assert.equal(run('r1').message, 'creating nodes', 'fields a later event leaves out are kept');
  assert.equal(run('r1').state, 'passed', 'a phase that names an end state ends the run');
  s.applyMessage(events([E.scenario({ id: 'r2', name: 'x', step: 1, steps: 2, phase: 'expect' })]));
  assert.equal(run('r2').state, 'running');
  s.setScenarioRun({ id: 'r2', state: 'failed', report: { failed: 1 } });
  assert.equal(run('r2').report.failed, 1);
  assert.equal(run('r2').name, 'x');
  assert.deepEqual(s.server.scenarios.value.map((r) => r.id), ['r1', 'r2'], 'the newest run goes last');
  // News of an older run, told late, leaves it where it is: the newest run
  // keeps the lesson banner (CI saw the banner jump back to an older run).
  s.applyMessage(events([E.scenario({ id: 'r1', name: 'taints', step: 3, steps: 3, phase: 'passed', message: 'told late' })]));
  assert.deepEqual(s.server.scenarios.value.map((r) => r.id), ['r1', 'r2']);
  assert.equal(run('r1').message, 'told late');
  // A comparison's run is no lesson: the banner keeps the newest lesson
  // (issue 37, 11: a comparison turned the banner red).
  s.applyMessage(events([E.scenario({ id: 'r3', name: '17-spread-or-pack', step: 8, steps: 8, phase: 'failed', partOf: 'comparison' })]));
  assert.equal(s.server.lessonRun().id, 'r2');

  s.applyMessage(events(successfulCycle('a', 3, 1, ['n1'])));
  assert.equal(s.cycles.summaries.size, 1);
  s.selectCycle(3);
  s.applyMessage(events([E.reset()]));
  assert.equal(s.cycles.summaries.size, 0);
  assert.equal(s.cycles.details.size, 0);
  assert.equal(s.page.lessonClosed.value, 'r2', 'a reset of its own closes the ended lesson\'s banner');
  assert.equal(s.page.selectedCycle.value, null);
  assert.deepEqual(s.timelineRows.value, []);
  // The scheduler's watch tells of the pods leaving its queue after the
  // reset: the timeline gains no row for them (issue 37).
  s.applyMessage(events([E.queue('a', { action: 'delete', from: 'unschedulable' })]));
  assert.deepEqual(s.timelineRows.value, []);
});

test('events already applied are skipped, and lastSeq advances the cursor', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, pods: [podSummary('a', { cpu: 100 })] }));
  const add = E.pod('updated', podSummary('a', { cpu: 100, nodeName: 'n1' }));
  s.applyMessage(events([add]));
  s.applyMessage(events([add]));
  assert.equal(s.cluster.usage.get('n1').pods, 1);
  // A filtered batch may carry fewer events than lastSeq says.
  s.applyMessage({ type: 'events', lastSeq: 500, events: [] });
  assert.equal(s.server.seq.value, 500);
  // Events the snapshot already reflects (seq <= snapshot.seq) are skipped.
  s.applyMessage(snapshot({ at: 1000, pods: [] }));
  s.applyMessage(events([{ ...E.pod('added', podSummary('late')), seq: 999 }]));
  assert.equal(s.cluster.pods.has('default/late'), false);
});

test('resync: the next snapshot replaces the state, and the resync is shown', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, nodes: [nodeSummary('n1')], pods: [podSummary('a', { nodeName: 'n1', cpu: 10 })] }));
  s.applyMessage(events([E.pod('added', podSummary('b')), E.queue('b', { action: 'add', to: 'active', event: 'PodAdd' })]));
  s.applyMessage({ type: 'resync', reason: 'you fell 60000 events behind', dropped: 60000 });
  assert.match(s.page.notices.value.at(-1).text, /fell 60000 events behind \(60000 events skipped\)/);
  s.applyMessage(snapshot({ at: 70000, nodes: [nodeSummary('n2')], pods: [podSummary('c', { nodeName: 'n2', cpu: 20 })] }));
  assert.equal(s.server.seq.value, 70000);
  assert.equal(s.server.snapshots.value, 2);
  assert.deepEqual(s.cluster.nodes.keys(), ['n2']);
  assert.deepEqual(s.cluster.pods.keys(), ['default/c']);
  assert.equal(s.queue.entries.size, 0);
  assert.equal(s.cluster.usage.get('n1'), undefined);
  assert.equal(s.cluster.usage.get('n2').cpu, 20);
  // A reset's resync is expected: no notice (issue 37).
  const notices = s.page.notices.value.length;
  s.applyMessage({ type: 'resync', reason: 'the cluster was reset', dropped: 300, reset: true });
  assert.equal(s.page.notices.value.length, notices);
});

test('stream errors and unknown kinds do not break the store', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0 }));
  s.applyMessage({ type: 'error', reason: 'malformed message' });
  assert.match(s.page.notices.value.at(-1).text, /malformed message/);
  s.applyMessage(events([{ seq: 1, time: at(0), kind: 'somethingNew', somethingNew: {} }]));
  assert.equal(s.server.seq.value, 1);
});

test('memory stays bounded: cycles, details, trails, notices', () => {
  const s = fresh({ limits: { cycles: 50, details: 5, trail: 6, podCycles: 4, notices: 3, fetched: 2, remote: 2 } });
  s.applyMessage(snapshot({ at: 0, pods: Array.from({ length: 30 }, (_, i) => podSummary(`p${i}`)) }));
  let id = 0;
  for (let round = 0; round < 5; round++) {
    const batch = [];
    for (let i = 0; i < 30; i++) {
      id += 1;
      batch.push(...successfulCycle(`p${i}`, id, round + 1, ['n1', 'n2']));
    }
    s.applyMessage(events(batch));
  }
  assert.equal(s.cycles.summaries.size, 50);
  assert.equal(s.cycles.details.size, 5);
  assert.deepEqual(s.cycles.details.keys(), [146, 147, 148, 149, 150], 'the newest details are kept');
  for (const key of s.cycles.podInfo.keys()) {
    const info = s.cycles.podInfo.get(key);
    assert.ok(info.trail.length <= 6);
    assert.ok(info.cycleIds.length <= 4);
  }
  // An old cycle's detail must come from the server: the view says so.
  const v = s.cycleView('default/p0', 121);
  assert.equal(v.source, 'missing');
  assert.equal(v.summary.id, 121);
  // Fetched cycles and attempt lists are bounded too.
  const listed = cycleSummaries();
  for (const cid of [1, 2, 3]) s.addFetchedCycle({ ...listed.find((c) => c.id === cid), events: [], truncated: false });
  assert.deepEqual(s.cycles.fetched.keys(), [2, 3]);
  for (const pod of ['p0', 'p1', 'p2']) s.addRemoteCycles(`default/${pod}`, listed.filter((c) => c.pod.name === pod));
  assert.deepEqual(s.cycles.remote.keys(), ['default/p1', 'default/p2']);
  for (let i = 0; i < 10; i++) s.addNotice('ok', `o${i}`);
  assert.equal(s.page.notices.value.length, 3);
  // Errors do not pile up: the newest two stand for the rest, and the same
  // words again replace the older notice (issue 37).
  for (let i = 0; i < 10; i++) s.addNotice('error', `e${i}`);
  assert.deepEqual(s.page.notices.value.map((n) => n.text), ['o9', 'e8', 'e9']);
  s.addNotice('error', 'e8');
  assert.deepEqual(s.page.notices.value.map((n) => n.text), ['o9', 'e9', 'e8']);
});

test('cycles loaded over REST fill the inspector and the timeline', () => {
  const s = fresh();
  // Two attempts that ran before the page connected, as GET /api/v1/cycles lists them.
  successfulCycle('old', 3, 1, ['n1']);
  successfulCycle('old', 4, 2, ['n1']);
  const [rec4, rec3] = cycleSummaries();
  const events4 = successfulCycle('old', 4, 2, ['n1']).filter((e) => e.cycle === 4);
  s.applyMessage(snapshot({ pods: [podSummary('old', { nodeName: 'n1' }), podSummary('new')] }));
  s.addCycleSummaries([rec4, { ...rec3, end: { result: 'unschedulable', feasibleNodes: 0, nanos: 10 } }, { ...rec3, id: 2, pod: { namespace: 'default', name: 'gone' } }]);
  assert.deepEqual(s.podCycles('default/old').map((c) => c.id), [4, 3]);
  assert.equal(s.podCycles('default/old')[0].start, toMillis(rec4.start));
  const rows = s.timelineRows.value;
  assert.deepEqual(rows.map((r) => r.key), ['default/old'], 'no row for a pod that is gone');
  assert.deepEqual(rows[0].cycles.map((c) => c.attempt), [1, 2]);
  assert.equal(s.cycleView('default/old', 4).source, 'missing');
  s.addFetchedCycle({ ...rec4, events: events4, truncated: true });
  const v = s.cycleView('default/old', 4);
  assert.equal(v.source, 'fetched');
  assert.equal(v.truncated, true);
  assert.equal(v.detail.filter.nodes.length, 1);
  assert.deepEqual(v.detail.points.map((p) => p.point), ['PreFilter', 'PreScore', 'Reserve', 'Bind']);
  // Remote summaries of a pod's older attempts show in its attempt list.
  s.addRemoteCycles('default/old', [{ ...rec3, id: 1, attempt: 1 }]);
  assert.deepEqual(s.podCycles('default/old').map((c) => c.id), [4, 3, 1]);
});

test('page state changes through methods; an unknown view changes nothing', () => {
  const s = fresh();
  const view = renders(() => s.page.view.value);
  s.selectPod('default/x', null, 'cycle');
  s.setView('timeline');
  s.setView('nonsense');
  assert.equal(s.page.view.value, 'timeline');
  assert.equal(s.page.selectedPod.value, 'default/x');
  assert.equal(view(), 3);
  s.setBusy('createPod', true);
  assert.equal(s.page.isBusy('createPod'), true);
  s.setBusy('createPod', false);
  assert.equal(s.page.isBusy('createPod'), false);
  s.setConnection({ status: 'open' });
  assert.equal(s.server.conn.value.status, 'open');
  assert.equal(podKey({ namespace: 'ns', name: 'n' }), 'ns/n');
  assert.equal(toMillis('0001-01-01T00:00:00Z'), null);
});

test('the two backoffs are separate lanes, and a pop from backoffQ is named as such', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0 }));
  s.applyMessage(events([
    E.queue('rej', { action: 'add', to: 'active', event: 'PodAdd' }, 1),
    E.queue('rej', { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }, 2),
    E.queue('rej', { action: 'move', from: 'inFlight', to: 'backoff', event: 'ScheduleAttemptFailure', plugins: ['NodeResourcesFit'], attempts: 1, backoffUntil: at(1000) }, 3),
    E.queue('err', { action: 'add', to: 'active', event: 'PodAdd' }, 4),
    E.queue('err', { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }, 5),
    E.queue('err', { action: 'move', from: 'inFlight', to: 'errorBackoff', event: 'ScheduleAttemptFailure', attempts: 1, backoffUntil: at(2000) }, 6),
  ]));
  assert.deepEqual(s.lane('backoff').value, ['default/rej']);
  assert.deepEqual(s.lane('errorBackoff').value, ['default/err']);
  assert.equal(s.queue.entries.get('default/err').backoffUntil, Date.parse(at(2000)), 'an error backoff counts down too');
  assert.equal(s.counts.value.queues.errorBackoff, 1);
  assert.equal(s.cycles.podInfo.get('default/err').lastFailure.attempts, 1, 'an error is a failure the card explains');

  s.applyMessage(events([E.queue('rej', { action: 'pop', from: 'backoff', to: 'inFlight', event: 'PopFromBackoffQ', attempts: 2 }, 7)]));
  assert.equal(s.lane('backoff').value.length, 0);
  assert.deepEqual(s.lane('inFlight').value, ['default/rej']);
  const trail = s.cycles.podInfo.get('default/rej').trail;
  assert.deepEqual(trail.at(-1).from, 'backoff', 'the trail says the pod came from backoffQ');
  assert.equal(describeMove('PopFromBackoffQ'), 'popped from backoffQ (activeQ was empty)');
});

test('a Filter pass over the nominated node is kept beside the pass over all nodes', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, nodes: [nodeSummary('n1'), nodeSummary('n2')] }));
  const nominated = { plugins: ['NodeResourcesFit'], nodes: [{ node: 'n1', codes: [2], nanos: [5], reason: 'Insufficient cpu' }], nanos: 5, nominatedNode: true };
  const all = { plugins: ['NodeResourcesFit'], nodes: [{ node: 'n1', codes: [2], nanos: [5], reason: 'Insufficient cpu' }, { node: 'n2', codes: [0], nanos: [5] }], nanos: 9 };
  s.applyMessage(events([
    E.queue('p', { action: 'pop', from: 'active', to: 'inFlight', attempts: 2 }, 1),
    E.cycleStart('p', 7, 2, 2, 2),
    { ...E.filter('p', 7, [], [], 3), filter: nominated },
    { ...E.filter('p', 7, [], [], 4), filter: all },
  ]));
  const view = s.cycleView('default/p', 7);
  assert.equal(view.detail.nominatedFilter.nodes[0].node, 'n1');
  assert.equal(view.detail.filter.nodes.length, 2, 'the matrix shows the pass over all nodes');
  const codes = s.server.vocabulary.value.codes;
  assert.equal(filterMatrix(view.detail.nominatedFilter, codes).nominatedNode, true);
  assert.equal(filterMatrix(view.detail.filter, codes).nominatedNode, false);
});

test('opportunistic batching: the recheck and the rescore are kept apart from the Filter and Score of the cycle, and said in words', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, nodes: [nodeSummary('n1'), nodeSummary('n2'), nodeSummary('n3')] }));
  const recheck = { plugins: ['NodeResourcesFit'], nodes: [{ node: 'n1', codes: [2], nanos: [5], reason: 'Insufficient cpu' }], nanos: 5, batch: 'recheck' };
  const rescore = { plugins: [{ name: 'NodeResourcesFit', weight: 1 }], nodes: [
    { node: 'n2', raw: [60], normalized: [60], weighted: [60], nanos: [0], total: 60 },
    { node: 'n3', raw: [40], normalized: [40], weighted: [40], nanos: [0], total: 40 }], nanos: 9, batch: 'rescore' };
  const hinted = { plugins: ['NodeResourcesFit'], nodes: [{ node: 'n2', codes: [0], nanos: [5] }], nanos: 5, nominatedNode: true, batch: 'hint' };
  s.applyMessage(events([
    E.queue('p', { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }, 1),
    E.cycleStart('p', 8, 1, 3, 2),
    { ...E.filter('p', 8, [], [], 3), filter: recheck },
    { ...E.filter('p', 8, [], [], 4), score: rescore, filter: undefined, kind: 'score' },
    { ...E.filter('p', 8, [], [], 5), filter: hinted },
  ]));
  const view = s.cycleView('default/p', 8);
  assert.equal(view.detail.batchRecheck.nodes[0].node, 'n1');
  assert.equal(view.detail.batchScore.nodes.length, 2);
  assert.equal(view.detail.score, null, 'the rescore is not the cycle\'s Score');
  assert.equal(view.detail.filter.batch, 'hint');
  const codes = s.server.vocabulary.value.codes;
  assert.equal(filterMatrix(view.detail.filter, codes).batch, 'hint');

  const used = { signed: true, hint: 'n2', from: { name: 'web-1' }, fromCycle: 7, ageNanos: 3e6, nodesLeft: 1, used: true, kept: 1 };
  assert.deepEqual(batchLines(used, '', recheck), [
    'The node the last pod went to, n1, no longer fits (Insufficient cpu).',
    'Placed from the batch of web-1 (cycle 7, 3 ms old, 1 node left): its best node, n2, passed Filter, so nothing was scored.',
  ]);
  assert.deepEqual(batchLines({ signed: false, noHint: 'pod_incompatible', dropped: 'pod_not_batchable' }, 'PodTopologySpread'),
    ['Not batched: PodTopologySpread would not sign the pod, so it cannot share a batch.']);
  assert.deepEqual(batchLines({ signed: true, noHint: 'expired', kept: 2 }), [
    'No hint from a batch: the batch was older than 500 ms.',
    'Kept 2 other scored nodes for the next pod of its signature.',
  ]);
  assert.deepEqual(batchLines(undefined), [], 'no batch with the gate off');
});

test('rejecters and requeuers are told apart, live and from a snapshot (issue 16, 4)', () => {
  const s = fresh();
  s.applyMessage(snapshot({
    at: 0,
    pods: [podSummary('r'), podSummary('h')],
    queue: {
      unschedulable: [queued('r', 'unschedulable', { attempts: 1, plugins: ['NodeResourcesFit'], rejectedBy: ['NodeResourcesFit'], lastEvent: 'ScheduleAttemptFailure', message: '0/2 nodes are available' })],
      backoff: [queued('h', 'backoff', { attempts: 1, plugins: ['TaintToleration'], rejectedBy: ['TaintToleration'], hintedBy: ['TaintToleration'], lastEvent: 'NodeUpdate' })],
    },
  }));
  const r = s.queue.entries.get('default/r');
  assert.deepEqual([r.rejectedBy, r.hintedBy, r.event, r.message], [['NodeResourcesFit'], [], 'ScheduleAttemptFailure', '0/2 nodes are available']);
  assert.deepEqual(waitReasons(s.queue.entries.get('default/h')).map((x) => x.kind), ['rejected', 'hinted']);
  // Live, with the server's rejectedBy: a node event whose hint came from another plugin.
  s.applyMessage(events([E.queue('r', {
    action: 'move', from: 'unschedulable', to: 'backoff', event: 'NodeAdd', plugins: ['NodeAffinity'], rejectedBy: ['NodeResourcesFit'], attempts: 1,
  }, 100)]));
  const moved = s.queue.entries.get('default/r');
  assert.deepEqual(moved.rejectedBy, ['NodeResourcesFit']);
  assert.deepEqual(moved.hintedBy, ['NodeAffinity']);
  const step = s.cycles.podInfo.get('default/r').trail.at(-1);
  assert.deepEqual([step.event, step.hintedBy, step.rejectedBy, step.failed], ['NodeAdd', ['NodeAffinity'], ['NodeResourcesFit'], false]);
  // The backoff ends: no cluster event, no requeuers; the rejecters stay.
  s.applyMessage(events([E.queue('r', { action: 'move', from: 'backoff', to: 'active', event: 'BackoffComplete', attempts: 1 }, 200)]));
  assert.deepEqual(waitReasons(s.queue.entries.get('default/r')).map((x) => x.text), ['rejected by NodeResourcesFit']);
});

test('a deleted pod keeps its timeline row and its cycles; a new pod of its name starts afresh (issue 16, 6)', () => {
  const s = fresh({ limits: { deletedPods: 2 } });
  s.applyMessage(snapshot({ at: 0, nodes: [nodeSummary('n1')], pods: [podSummary('victim'), podSummary('a'), podSummary('b')] }));
  s.applyMessage(events([
    E.queue('victim', { action: 'add', to: 'active', event: 'PodAdd' }, 0),
    ...successfulCycle('victim', 1, 1, ['n1'], { ms: 10 }),
    E.pod('updated', podSummary('victim', { nodeName: 'n1' }), 30),
    E.pod('deleted', podSummary('victim', { nodeName: 'n1' }), 500),
  ]));
  assert.equal(s.cluster.pods.has('default/victim'), false);
  const row = s.timelineRows.value.find((r) => r.key === 'default/victim');
  assert.ok(row, 'the victim keeps its row');
  assert.equal(row.deletedAt, toMillis(at(500)));
  assert.deepEqual(s.podCycles('default/victim').map((c) => c.id), [1], 'and its cycles');
  // A snapshot (a reconnect) keeps what it knows of deleted pods.
  s.applyMessage(snapshot({ nodes: [nodeSummary('n1')], pods: [podSummary('a'), podSummary('b')] }));
  assert.ok(s.cycles.podInfo.get('default/victim'));
  // Another pod of the same name is another story.
  s.applyMessage(events([E.pod('added', podSummary('victim', { uid: 'uid-victim-2' }), 600)]));
  assert.equal(s.cycles.podInfo.get('default/victim'), undefined);
  // Bounded: the oldest deleted pods are forgotten.
  for (const n of ['a', 'b', 'victim']) {
    s.applyMessage(events([E.queue(n, { action: 'add', to: 'active', event: 'PodAdd' }, 700)]));
  }
  s.applyMessage(events([E.pod('deleted', podSummary('a'), 800), E.pod('deleted', podSummary('b'), 801), E.pod('deleted', podSummary('victim', { uid: 'uid-victim-2' }), 802)]));
  assert.deepEqual(['default/a', 'default/b', 'default/victim'].map((k) => !!s.cycles.podInfo.get(k)), [false, true, true]);
});

test('names sort as a person reads them: rl-2 before rl-10 (issue 16, 13)', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, nodes: ['n10', 'n2', 'n1'].map((n) => nodeSummary(n)) }));
  s.applyMessage(events(['rl-10', 'rl-2', 'rl-1', 'rl-11'].map((n) => E.queue(n, { action: 'add', to: 'unschedulable', event: 'PodAdd', order: 'same' }, 10))));
  assert.deepEqual(s.lane('unschedulable').value, ['default/rl-1', 'default/rl-2', 'default/rl-10', 'default/rl-11']);
  assert.deepEqual(s.nodeNames.value, ['n1', 'n2', 'n10']);
});

test('after a reload the history rebuilds the queue bands, and the pods deleted before it (issue 16, 7)', () => {
  const s = fresh();
  // What happened before the page connected, as GET /events serves it.
  const past = [
    E.queue('p', { action: 'add', to: 'active', event: 'PodAdd' }, 0),
    E.queue('p', { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }, 10),
    E.queue('p', { action: 'move', from: 'inFlight', to: 'unschedulable', event: 'ScheduleAttemptFailure', plugins: ['NodeResourcesFit'], attempts: 1, message: 'no room' }, 20),
    E.queue('gone', { action: 'add', to: 'active', event: 'PodAdd' }, 30),
    E.queue('gone', { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }, 40),
    E.queue('gone', { action: 'done', from: 'inFlight', attempts: 1 }, 50),
    E.pod('deleted', podSummary('gone', { nodeName: 'n1' }), 60),
  ];
  s.applyMessage(snapshot({
    pods: [podSummary('p')],
    queue: { unschedulable: [queued('p', 'unschedulable', { attempts: 1, plugins: ['NodeResourcesFit'], enteredAt: at(20) })] },
  }));
  const upTo = s.server.seq.value;
  // A live move after the snapshot, before the history arrives.
  s.applyMessage(events([E.queue('p', { action: 'move', from: 'unschedulable', to: 'backoff', event: 'NodeAdd', plugins: ['NodeResourcesFit'], attempts: 1 }, 70)]));
  s.applyHistory(past, upTo);
  assert.deepEqual(s.cycles.podInfo.get('default/p').trail.map((t) => t.to), ['active', 'inFlight', 'unschedulable', 'backoff']);
  const gone = s.timelineRows.value.find((r) => r.key === 'default/gone');
  assert.deepEqual(gone.trail.map((t) => t.to), ['active', 'inFlight', null]);
  assert.equal(gone.deletedAt, toMillis(at(60)));
  // Read twice (a second snapshot), it tells the same.
  s.applyHistory(past, upTo);
  assert.equal(s.cycles.podInfo.get('default/p').trail.length, 4);
});

test('a lesson step\'s note: the running step carries it, its log entry keeps it, the next step replaces it', () => {
  const s = fresh();
  const note = 'Watch the unschedulable lane: NodeUnschedulable\'s QueueingHint says Queue to NodeAdd.';
  const seen = renders(() => s.server.scenarios.value.at(-1)?.note);
  s.applyMessage(events([
    E.scenario({ id: 'r1', name: '07-new-node', step: 1, steps: 3, phase: 'running', message: 'create 9 nodes' }),
    E.scenario({ id: 'r1', name: '07-new-node', step: 2, steps: 3, phase: 'running', message: 'wait until waiting is scheduled', note }),
  ]));
  const run = () => s.server.scenarios.value.find((r) => r.id === 'r1');
  assert.equal(run().note, note, 'the run has the running step\'s note');
  assert.deepEqual(run().log.map((l) => [l.step, l.note]), [[1, ''], [2, note]], 'each step its own note; none for a step without');
  assert.ok(seen() >= 2, 'a reader of the run hears of the note');
  // The next step has no note: the run's note goes, step 2's entry keeps its own.
  s.applyMessage(events([E.scenario({ id: 'r1', name: '07-new-node', step: 3, steps: 3, phase: 'running', message: 'expect waiting on node-10' })]));
  assert.equal(run().note, '');
  assert.equal(run().log.find((l) => l.step === 2).note, note);
  // The end names the last step again: its message is the report's, its note stays.
  s.applyMessage(events([
    E.scenario({ id: 'r1', name: '07-new-node', step: 2, steps: 3, phase: 'running', message: 'again', note: 'other' }),
    E.scenario({ id: 'r1', name: '07-new-node', step: 2, steps: 3, phase: 'passed', message: 'all expectations held' }),
  ]));
  const last = run().log.at(-1);
  assert.deepEqual([last.step, last.message, last.note, run().state], [2, 'all expectations held', 'other', 'passed']);
  // An end that says nothing keeps the last step's entry, so Previous goes back from it.
  s.applyMessage(events([E.scenario({ id: 'r1', name: '07-new-node', step: 2, steps: 3, phase: 'passed' })]));
  assert.deepEqual(run().log.map((l) => l.step), [1, 3, 2]);
  // A running step that no longer carries a note has none (a progress event says what the step does now).
  s.applyMessage(events([E.scenario({ id: 'r2', name: 'x', step: 1, steps: 1, phase: 'running', message: 'created 1 of 2', note: 'look here' })]));
  s.applyMessage(events([E.scenario({ id: 'r2', name: 'x', step: 1, steps: 1, phase: 'running', message: 'created 2 of 2', note: 'look here' })]));
  assert.deepEqual(s.server.scenarios.value.find((r) => r.id === 'r2').log.map((l) => [l.message, l.note]), [['created 2 of 2', 'look here']]);
});

test('while disconnected the header shows no scheduler state (issue 16, 13)', () => {
  const s = fresh();
  s.applyMessage(snapshot({ scheduler: { state: 'running', generation: 1 } }));
  s.setConnection({ status: 'open' });
  assert.deepEqual([s.schedulerShown.value.state, s.schedulerShown.value.live], ['running', true]);
  s.setConnection({ status: 'reconnecting' });
  assert.deepEqual([s.schedulerShown.value.state, s.schedulerShown.value.live], ['unknown', false]);
});

test('a pod\'s story: moves with their cause, attempts linked to cycles, preemptions both ways, what would move it (issue 16, story)', () => {
  const s = fresh();
  s.applyMessage(snapshot({ nodes: [nodeSummary('n1')], pods: [podSummary('big', { priority: 1000 }), podSummary('small', { nodeName: 'n1' })] }));
  s.setPlugins({
    available: [], enabled: {},
    plugins: [{ name: 'NodeResourcesFit', extensionPoints: ['PreFilter', 'Filter', 'Score'], events: ['Node/Add', 'Node/UpdateNodeAllocatable', 'Pod/Delete'] }],
  });
  s.applyMessage(events([
    E.queue('big', { action: 'add', to: 'active', event: 'PodAdd', order: 'a' }, 0),
    E.queue('big', { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }, 10),
    E.cycleStart('big', 1, 1, 1, 11),
    E.cycleEnd('big', 1, { result: 'unschedulable', plugins: ['NodeResourcesFit'], message: '0/1 nodes are available' }, 12),
    E.preemption('small', 'big', 'n1', 13),
    E.queue('big', { action: 'move', from: 'inFlight', to: 'backoff', event: 'ScheduleAttemptFailure', plugins: ['NodeResourcesFit'], attempts: 1, backoffUntil: at(1000) }, 14),
  ]));
  const story = s.story('default/big');
  assert.deepEqual(story.map((e) => e.kind), ['queue', 'queue', 'attempt', 'preempting', 'queue']);
  assert.match(story[1].text, /popped from activeQ for attempt 1/);
  assert.deepEqual([story[2].cycle, story[2].tone], [1, 'fail']);
  assert.match(story[2].detail, /rejected by NodeResourcesFit/);
  assert.deepEqual([story[3].pod, story[3].text], ['default/small', 'preempted default/small on n1 to make room']);
  assert.match(story[4].text, /attempt 1 failed: to backoffQ/);
  assert.match(story[4].detail, /rejected by NodeResourcesFit; backoff for 2 s/);
  // It waits in backoff: its rejecting plugin's registered events would move it.
  assert.deepEqual(s.wakeUp('default/big'), [{ plugin: 'NodeResourcesFit', events: ['Node/Add', 'Node/UpdateNodeAllocatable', 'Pod/Delete'] }]);
  // The victim's story names its preemptor, even once it is deleted.
  s.applyMessage(events([E.pod('deleted', podSummary('small', { nodeName: 'n1' }), 20)]));
  const victim = s.story('default/small');
  assert.deepEqual(victim.map((e) => e.kind), ['preempted', 'deleted']);
  assert.equal(victim[0].pod, 'default/big');
  // A cluster event moves the preemptor: the plugin whose hint said Queue is named as such.
  s.applyMessage(events([E.queue('big', { action: 'move', from: 'backoff', to: 'active', event: 'AssignedPodDelete', plugins: ['NodeResourcesFit'], rejectedBy: ['NodeResourcesFit'], attempts: 1 }, 30)]));
  const moved = s.story('default/big').at(-1);
  assert.deepEqual([moved.tone, moved.detail], ['ok', 'NodeResourcesFit\'s QueueingHint said Queue']);
  assert.deepEqual(s.wakeUp('default/big'), [], 'in activeQ it waits for nothing');
  // Attempt 2 fails; a node event the plugin registered moves it to backoffQ: while it waits there, that event is marked.
  s.applyMessage(events([
    E.queue('big', { action: 'pop', from: 'active', to: 'inFlight', attempts: 2 }, 31),
    E.queue('big', { action: 'move', from: 'inFlight', to: 'unschedulable', event: 'ScheduleAttemptFailure', plugins: ['NodeResourcesFit'], attempts: 2 }, 32),
  ]));
  assert.equal(s.wakeUp('default/big')[0].moved, undefined, 'nothing moved it since');
  s.applyMessage(events([E.queue('big', { action: 'move', from: 'unschedulable', to: 'backoff', event: 'NodeAdd', plugins: ['NodeResourcesFit'], rejectedBy: ['NodeResourcesFit'], attempts: 2, backoffUntil: at(3000) }, 40)]));
  assert.equal(s.wakeUp('default/big')[0].moved, 'Node/Add');
});

test('after a step the page says where the pod went, and the inspector follows it (instructor mode)', () => {
  const s = fresh();
  s.applyMessage(snapshot({ nodes: [nodeSummary('n1'), nodeSummary('n2')], pods: [podSummary('web')] }));
  s.selectPod('default/other');
  // A cycle that ends before the step is not the step's.
  s.applyMessage(events(successfulCycle('early', 1, 1, ['n2'])));
  s.watchStep();
  assert.equal(s.page.selectedPod.value, 'default/other');
  s.applyMessage(events(successfulCycle('web', 2, 1, ['n1', 'n2'])));
  assert.deepEqual([s.page.selectedPod.value, s.page.selectedCycle.value], ['default/web', 2]);
  assert.match(s.page.notices.value.at(-1).text, /^Step: default\/web → n1$/);
  assert.equal(s.page.stepWatch.value, null, 'one step, one cycle followed');
  s.applyMessage(events(successfulCycle('later', 3, 1, ['n2'])));
  assert.equal(s.page.selectedPod.value, 'default/web');
});

test('at scale: lanes keep the server\'s order move by move, and the views hear of a lane once per message (issue 17)', () => {
  const s = fresh();
  const n = 3000;
  s.applyMessage(snapshot({ at: 0, pods: Array.from({ length: n }, (_, i) => podSummary(`p${i}`)) }));
  // Added in a scrambled order, each with its order key: the lane is sorted by key.
  const order = (i) => `k${String((i * 7919) % n).padStart(5, '0')}`;
  const adds = Array.from({ length: n }, (_, i) => E.queue(`p${i}`, { action: 'add', to: 'active', event: 'PodAdd', order: order(i) }, i));
  const heard = renders(() => s.lane('active').value);
  s.applyMessage(events(adds));
  assert.equal(heard(), 2, 'one message, one change of the lane');
  const sorted = Array.from({ length: n }, (_, i) => i).sort((a, b) => (order(a) < order(b) ? -1 : 1)).map((i) => `default/p${i}`);
  assert.deepEqual(s.lane('active').value, sorted);
  // Pops from the head, failures into backoff (ordered by the end of their backoff), pods deleted in the middle.
  const moves = [];
  for (let i = 0; i < 500; i++) {
    const pod = sorted[i].slice('default/'.length);
    moves.push(E.queue(pod, { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }, n + i));
    if (i % 2) moves.push(E.queue(pod, { action: 'move', from: 'inFlight', to: 'backoff', attempts: 1, order: `b${String(1000 - i).padStart(4, '0')}` }, n + i));
    else moves.push(E.queue(pod, { action: 'done', from: 'inFlight', attempts: 1 }, n + i));
  }
  for (const key of sorted.slice(1000, 1010)) moves.push(E.pod('deleted', podSummary(key.slice('default/'.length)), 2 * n));
  s.applyMessage(events(moves));
  assert.deepEqual(s.lane('active').value, [...sorted.slice(500, 1000), ...sorted.slice(1010)]);
  const backoff = s.lane('backoff').value;
  assert.equal(backoff.length, 250);
  assert.deepEqual(backoff.slice(0, 2), [sorted[499], sorted[497]], 'the soonest backoff first');
  assert.equal(s.lane('inFlight').value.length, 0);
  assert.equal(s.counts.value.queues.active, n - 510);
  // The lanes agree with the entries, whatever order the moves came in.
  const byQueue = {};
  for (const e of s.queue.entries.values()) (byQueue[e.queue] ||= []).push(e.key);
  for (const [q, keys] of Object.entries(byQueue)) assert.deepEqual([...s.lane(q).value].sort(), keys.sort(), q);
});

test('at scale: cycle details are bounded by their Filter and Score rows as well as by count (issue 17)', () => {
  const s = fresh({ limits: { details: 150, detailRows: 2500 } });
  const nodes = Array.from({ length: 1000 }, (_, i) => `n${i}`);
  s.applyMessage(snapshot({ at: 0, pods: Array.from({ length: 6 }, (_, i) => podSummary(`big${i}`)) }));
  // Each cycle holds 1,000 Filter rows and 1,000 Score rows: 2,000 rows, so one fits the bound.
  for (let i = 0; i < 6; i++) s.applyMessage(events(successfulCycle(`big${i}`, i + 1, 1, nodes)));
  assert.deepEqual(s.cycles.details.keys(), [6], 'the newest detail stays, over the bound or not');
  assert.equal(s.cycleView('default/big2', 3).source, 'missing', 'an older one is loaded from the server when looked at');
  assert.equal(s.cycles.summaries.size, 6, 'summaries are bounded apart');
  // Small cycles: the count bound holds.
  const t = fresh({ limits: { details: 3, detailRows: 2500 } });
  t.applyMessage(snapshot({ at: 0, pods: Array.from({ length: 5 }, (_, i) => podSummary(`s${i}`)) }));
  for (let i = 0; i < 5; i++) t.applyMessage(events(successfulCycle(`s${i}`, i + 1, 1, ['n1', 'n2'])));
  assert.deepEqual(t.cycles.details.keys(), [3, 4, 5]);
});

test('the timeline\'s rows follow any pod\'s change through one signal per map, not one per pod (issue 17)', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, pods: [podSummary('a'), podSummary('b')] }));
  s.applyMessage(events([E.queue('a', { action: 'add', to: 'active', event: 'PodAdd' }, 10), E.queue('b', { action: 'add', to: 'active', event: 'PodAdd' }, 20)]));
  const heard = renders(() => s.timelineRows.value);
  assert.deepEqual(s.timelineRows.value.map((r) => r.key), ['default/a', 'default/b']);
  s.applyMessage(events(successfulCycle('b', 1, 1, ['n1'], { ms: 30 })));
  assert.equal(heard(), 2);
  const b = s.timelineRows.value.find((r) => r.key === 'default/b');
  assert.deepEqual(b.cycles.map((c) => c.id), [1]);
  assert.equal(b.cycles[0].binding.bound, true, 'the row has the cycle as it ended');
});

test('a timeline row is made again only when its pod, its info or one of its cycles changed (issue 17)', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, pods: [podSummary('a'), podSummary('b')] }));
  s.applyMessage(events([
    ...successfulCycle('a', 1, 1, ['n1'], { ms: 10 }),
    E.queue('b', { action: 'add', to: 'active', event: 'PodAdd' }, 30),
    E.cycleStart('b', 2, 1, 1, 31),
  ]));
  const [a1, b1] = s.timelineRows.value;
  assert.deepEqual([a1.key, b1.key], ['default/a', 'default/b']);
  assert.equal(b1.cycles[0].end ?? null, null, 'the cycle has not ended');

  // Nothing changed: the same rows.
  assert.equal(s.timelineRows.value[0], a1);
  // b's cycle ends: its summary is replaced, so b's row is made again; a's is kept.
  s.applyMessage(events([E.cycleEnd('b', 2, { result: 'unschedulable', feasibleNodes: 0 }, 32)]));
  const [a2, b2] = s.timelineRows.value;
  assert.equal(a2, a1, "a's row is kept");
  assert.notEqual(b2, b1, "b's row is made again");
  assert.equal(b2.cycles[0].end.result, 'unschedulable');
  // b is bound: a new pod object, a new row.
  s.applyMessage(events([E.pod('update', podSummary('b', { nodeName: 'n1' }), 40)]));
  const [a3, b3] = s.timelineRows.value;
  assert.equal(a3, a1);
  assert.equal(b3.bound, true);
});

test('a snapshot taken before the one applied last is stale and changes nothing; a newer one from a new process applies', () => {
  const s = fresh();
  const copy = { kind: 'import', source: 'a snapshot loaded over the API', at: at(0) };
  // The page asked for this one over REST after an import: the cluster is a copy.
  s.applyMessage({ ...snapshot({ at: 20, nodes: [nodeSummary('n1')] }), time: at(2000), copy });
  // The stream's, taken earlier (right after the import's reset), arrives late.
  s.applyMessage({ ...snapshot({ at: 10 }), time: at(1000) });
  assert.deepEqual(s.server.copy.value, copy, 'still a copy');
  assert.equal(s.server.seq.value, 20);
  assert.equal(s.cluster.nodes.size, 1);
  // A later snapshot with a lower seq: a new server process. It applies.
  s.applyMessage({ ...snapshot({ at: 5 }), time: at(3000) });
  assert.equal(s.server.copy.value, null);
  assert.equal(s.server.seq.value, 5);
  assert.equal(s.cluster.nodes.size, 0);
});

test('an extender call is part of its cycle\'s detail, in the order made', () => {
  resetSeq();
  const s = createStore();
  s.applyMessage(snapshot({ nodes: [nodeSummary('a'), nodeSummary('b')], pods: [podSummary('p')] }));
  s.applyMessage(events([
    E.cycleStart('p', 1, 1, 2),
    E.extender('p', 1, { extender: 'http://x/', verb: 'filter', nodes: 2, passed: 1, failed: { a: 'no' }, failedCount: 1 }),
    E.extender('p', 1, { extender: 'http://x/', verb: 'bind', nodes: 1, passed: 1, node: 'b' }),
    E.cycleEnd('p', 1, { result: 'scheduled', node: 'b', feasibleNodes: 1 }),
  ]));
  const d = s.cycles.details.peek(1);
  assert.deepEqual(d.extenders.map((c) => c.verb), ['filter', 'bind']);
  assert.equal(d.extenders[0].failed.a, 'no');
});

test('a node tried joins the explanation it was tried for, and no other', () => {
  const store = fresh();
  store.setExplanation({ key: 'default/a', sentence: 'Fits nowhere.' });
  store.setTrial({ key: 'default/a', node: 'n1', state: 'trying' });
  assert.equal(store.server.explanation.value.trial.state, 'trying');
  assert.equal(store.server.explanation.value.sentence, 'Fits nowhere.');
  // Late news of another pod's trial, after the inspector moved on.
  store.setExplanation({ key: 'default/b', sentence: 'Fits on n2 now.' });
  store.setTrial({ key: 'default/a', node: 'n1', state: 'done', result: { name: 'n1', failures: [] } });
  assert.equal(store.server.explanation.value.trial, undefined);
});

test('a QueueSkip answer: in the pod\'s story and on its card, and the timeline band goes on (issue 37, 2)', async () => {
  const { waitReasons } = await import('../../web/static/js/format.js');
  const { segments } = await import('../../web/static/js/views/timeline/bands.js');
  const s = fresh();
  s.applyMessage(snapshot({ nodes: [nodeSummary('node-1')], pods: [podSummary('big')] }));
  s.applyMessage(events([
    E.queue('big', { action: 'add', to: 'active', event: 'PodAdd', order: 'a' }, 0),
    E.queue('big', { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }, 10),
    E.queue('big', { action: 'move', from: 'inFlight', to: 'unschedulable', event: 'ScheduleAttemptFailure', plugins: ['NodeResourcesFit'], attempts: 1 }, 12),
    E.queue('big', { action: 'skip', from: 'unschedulable', to: 'unschedulable', event: 'NodeAdd', object: 'node-2', plugins: ['NodeResourcesFit'], rejectedBy: ['NodeResourcesFit'], attempts: 1 }, 20),
  ]));
  const skip = s.story('default/big').at(-1);
  assert.deepEqual([skip.kind, skip.text, skip.detail], ['skip', 'NodeAdd (node-2) checked: stays in unschedulable', 'NodeResourcesFit\'s QueueingHint said QueueSkip']);
  const entry = s.queue.entries.get('default/big');
  assert.equal(entry.queue, 'unschedulable');
  assert.deepEqual(waitReasons(entry).map((r) => r.text), ['rejected by NodeResourcesFit', 'NodeAdd (node-2): QueueSkip']);
  assert.equal(waitReasons({ ...entry, rejectedBy: ['NodeResourcesFit', 'NodePorts'] }).at(-1).text, 'NodeAdd (node-2): NodeResourcesFit said QueueSkip', 'names them when others rejected it too');
  // The skip does not cut the unschedulable band in two.
  const trail = s.cycles.podInfo.get('default/big').trail;
  const t0 = trail[0].t;
  assert.deepEqual(segments(trail, t0, t0 + 100).map((b) => [b.queue, b.to - b.from]), [['active', 10], ['inFlight', 2], ['unschedulable', 88]]);
  // A move the hint made names the node and forgets the skip on the card.
  s.applyMessage(events([E.queue('big', { action: 'move', from: 'unschedulable', to: 'backoff', event: 'NodeUpdateNodeAllocatable', object: 'node-2', plugins: ['NodeResourcesFit'], rejectedBy: ['NodeResourcesFit'], attempts: 1 }, 30)]));
  assert.match(s.story('default/big').at(-1).text, /^moved by NodeUpdateNodeAllocatable \(node-2\): unschedulable → backoffQ/);
  assert.equal(s.queue.entries.get('default/big').skip, null);
  // The snapshot's lastSkip shows on the card of a page that connects later.
  const later = fresh();
  later.applyMessage(snapshot({
    nodes: [nodeSummary('node-1')], pods: [podSummary('big')],
    queue: { active: [], backoff: [], errorBackoff: [], inFlight: [], unschedulable: [{ pod: { namespace: 'default', name: 'big', uid: 'uid-big' }, queue: 'unschedulable', attempts: 1, rejectedBy: ['NodeResourcesFit'], lastSkip: { event: 'NodeAdd', object: 'node-2', plugins: ['NodeResourcesFit'] } }] },
  }));
  assert.match(waitReasons(later.queue.entries.get('default/big')).at(-1).text, /NodeAdd \(node-2\): QueueSkip/);
  // A pod a PreEnqueue plugin holds back says which, in its story (lesson 15's DefaultPreemption).
  s.applyMessage(snapshot({ nodes: [nodeSummary('node-1')], pods: [podSummary('big'), podSummary('pre')] }));
  s.applyMessage(events([E.queue('pre', { action: 'move', from: 'inFlight', to: 'unschedulable', event: 'ScheduleAttemptFailure', plugins: ['NodeResourcesFit'], gatingPlugin: 'DefaultPreemption', attempts: 1 }, 50)]));
  assert.match(s.story('default/pre').at(-1).detail, /rejected by NodeResourcesFit; gated by DefaultPreemption \(PreEnqueue\)/);
});

test('the pods bound lately, newest first and bounded; the inspector that follows shows each cycle as it ends (issue 37, 9)', () => {
  const s = fresh({ limits: { recentBound: 3 } });
  s.applyMessage(snapshot({ nodes: [nodeSummary('n1')], pods: ['a', 'b', 'c', 'd'].map((p) => podSummary(p)) }));
  s.applyMessage(events([...successfulCycle('a', 1, 1, ['n1']), ...successfulCycle('b', 2, 1, ['n1'], { ms: 20 })]));
  assert.deepEqual(s.cycles.recentBound.value.map((r) => [r.key, r.node, r.cycle]), [['default/b', 'n1', 2], ['default/a', 'n1', 1]]);
  assert.equal(s.page.selectedPod.value, null, 'not following: nothing selected');
  s.setFollow(true);
  s.applyMessage(events([...successfulCycle('c', 3, 1, ['n1'], { ms: 40 }), ...successfulCycle('d', 4, 1, ['n1'], { ms: 60 })]));
  assert.deepEqual([s.page.selectedPod.value, s.page.selectedCycle.value], ['default/d', null]);
  assert.deepEqual(s.cycles.recentBound.value.map((r) => r.key), ['default/d', 'default/c', 'default/b'], 'three at most');
  // A pod bound again moves to the front, once.
  s.applyMessage(events(successfulCycle('b', 5, 2, ['n1'], { ms: 80 })));
  assert.deepEqual(s.cycles.recentBound.value.map((r) => r.key), ['default/b', 'default/d', 'default/c']);
  s.applyMessage(events([E.reset(100)]));
  assert.deepEqual(s.cycles.recentBound.value, []);
});

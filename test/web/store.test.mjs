// The dashboard's store: snapshots, every event kind, resync, resume after a
// reconnect, and the bounds on what it keeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStore, podKey, toMillis } from '../../web/static/js/store.js';
import { describeMove } from '../../web/static/js/format.js';
import { filterMatrix } from '../../web/static/js/inspect.js';
import { E, at, events, nodeSummary, podSummary, queued, resetSeq, snapshot, successfulCycle } from './fixtures.mjs';

const GI = 2 ** 30;

function fresh(opts) {
  resetSeq(0);
  return createStore({ now: () => Date.parse('2026-01-01T10:10:00Z'), ...opts });
}

test('a snapshot replaces nodes, pods, queue and scheduler, and sums requests per node', () => {
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
  const st = s.state;
  assert.equal(st.seq, 40);
  assert.equal(st.snapshots, 1);
  assert.equal(st.nodes.size, 2);
  assert.equal(st.pods.size, 4);
  assert.deepEqual({ cpu: st.usage.get('n1').cpu, memory: st.usage.get('n1').memory, pods: st.usage.get('n1').pods }, { cpu: 750, memory: GI, pods: 2 });
  assert.equal(st.usage.get('n2'), undefined);
  assert.deepEqual(st.scheduler, { state: 'paused', generation: 3, steps: 1, message: '' });
  const lanes = s.lanes();
  assert.deepEqual(lanes.active.map((e) => e.key), ['default/c']);
  assert.deepEqual(lanes.unschedulable.map((e) => e.key), ['default/d']);
  assert.deepEqual(lanes.unschedulable[0].plugins, ['NodeResourcesFit']);
  assert.equal(s.counts().bound, 2);
  assert.equal(s.counts().pending, 2);

  // A second snapshot replaces, it does not merge.
  s.applyMessage(snapshot({ at: 50, nodes: [nodeSummary('n3')], pods: [podSummary('z', { cpu: 100, nodeName: 'n3' })] }));
  assert.deepEqual([...s.state.nodes.keys()], ['n3']);
  assert.deepEqual([...s.state.pods.keys()], ['default/z']);
  assert.equal(s.state.usage.get('n1'), undefined);
  assert.equal(s.state.usage.get('n3').cpu, 100);
  assert.equal(s.lanes().active.length, 0);
  assert.equal(s.state.podInfo.has('default/d'), false, 'what was known of vanished pods is dropped');
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
  let st = s.state;
  assert.equal(st.nodes.get('n1').labels.zone, 'a');
  assert.equal(st.nodes.get('n2').taints[0].key, 'gpu');
  assert.equal(st.usage.get('n1').cpu, 750);
  assert.equal(st.usage.get('n1').pods, 2);
  const revBefore = st.nodeRev.get('n1');

  s.applyMessage(events([E.pod('deleted', podSummary('b', { cpu: 250, nodeName: 'n1' }))]));
  st = s.state;
  assert.equal(st.usage.get('n1').cpu, 500);
  assert.ok(st.nodeRev.get('n1') > revBefore, 'the node card re-renders when its pods change');
  assert.equal(st.pods.has('default/b'), false);
  assert.equal(s.counts().bound, 1);

  // A delete of an older pod with the same name (another uid) changes nothing.
  s.applyMessage(events([E.pod('deleted', podSummary('a', { uid: 'old-uid', nodeName: 'n1', cpu: 500 }))]));
  assert.equal(s.state.pods.has('default/a'), true);

  s.applyMessage(events([E.node('updated', nodeSummary('n1', { cpu: 2000, unschedulable: true })), E.node('deleted', nodeSummary('n2'))]));
  assert.equal(s.state.nodes.get('n1').unschedulable, true);
  assert.equal(s.state.nodes.has('n2'), false);
  assert.deepEqual(s.nodeNames(), ['n1']);

  // Pods on a node that is gone still count, under "node gone".
  s.applyMessage(events([E.node('deleted', nodeSummary('n1'))]));
  assert.deepEqual(s.orphanNodes(), ['n1']);
});

test('queue events move pods between the lanes with the reason and the backoff', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, pods: [podSummary('p', { cpu: 100 })] }));
  s.applyMessage(events([
    E.point('p', 0, 'PreEnqueue', [{ plugin: 'SchedulingGates', code: 0, nanos: 10 }]),
    E.queue('p', { action: 'add', to: 'active', event: 'PodAdd', attempts: 0 }, 100),
  ]));
  let e = s.state.queue.get('default/p');
  assert.equal(e.queue, 'active');
  assert.equal(e.event, 'PodAdd');
  assert.equal(s.state.podInfo.get('default/p').preEnqueue.results[0].plugin, 'SchedulingGates');

  s.applyMessage(events([E.queue('p', { action: 'pop', from: 'active', to: 'inFlight', attempts: 1 }, 200)]));
  assert.equal(s.lanes().inFlight[0].key, 'default/p');
  assert.equal(s.lanes().active.length, 0);

  const until = at(5000);
  s.applyMessage(events([E.queue('p', {
    action: 'move', from: 'inFlight', to: 'backoff', event: 'NodeAdd', plugins: ['NodeResourcesFit'], attempts: 1,
    backoffUntil: until, message: '0/1 nodes are available: 1 Insufficient cpu.',
  }, 300)]));
  e = s.state.queue.get('default/p');
  assert.equal(e.queue, 'backoff');
  assert.equal(e.backoffUntil, toMillis(until));
  assert.deepEqual(e.plugins, ['NodeResourcesFit']);
  assert.equal(e.message, '0/1 nodes are available: 1 Insufficient cpu.');
  assert.deepEqual(s.state.podInfo.get('default/p').lastFailure.plugins, ['NodeResourcesFit']);

  // An update in place keeps the message and the time it entered.
  const entered = e.enteredAt;
  s.applyMessage(events([E.queue('p', { action: 'update', from: 'backoff', to: 'backoff', event: 'PodUpdate', attempts: 1 }, 400)]));
  e = s.state.queue.get('default/p');
  assert.equal(e.enteredAt, entered);
  assert.equal(e.event, 'NodeAdd', 'an update in place keeps what moved the pod here');
  assert.equal(e.message, '0/1 nodes are available: 1 Insufficient cpu.');

  s.applyMessage(events([
    E.queue('p', { action: 'move', from: 'backoff', to: 'active', event: 'BackoffComplete', attempts: 1 }, 5000),
    E.queue('p', { action: 'pop', from: 'active', to: 'inFlight', attempts: 2 }, 5001),
    E.queue('p', { action: 'move', from: 'inFlight', to: 'unschedulable', event: 'ScheduleAttemptFailure', plugins: ['TaintToleration'], attempts: 2 }, 5002),
  ]));
  e = s.state.queue.get('default/p');
  assert.equal(e.queue, 'unschedulable');
  assert.equal(e.backoffUntil, null);
  assert.equal(e.attempts, 2);

  s.applyMessage(events([E.queue('p', { action: 'move', from: 'unschedulable', to: 'active', event: 'NodeAdd', plugins: ['TaintToleration'], attempts: 2 }, 6000)]));
  e = s.state.queue.get('default/p');
  assert.equal(e.queue, 'active');
  assert.equal(e.event, 'NodeAdd');

  s.applyMessage(events([
    E.queue('p', { action: 'pop', from: 'active', to: 'inFlight', attempts: 3 }, 6001),
    E.queue('p', { action: 'done', from: 'inFlight', attempts: 3 }, 6002),
  ]));
  assert.equal(s.state.queue.has('default/p'), false);
  const trail = s.state.podInfo.get('default/p').trail.map((t) => t.to);
  assert.deepEqual(trail, ['active', 'inFlight', 'backoff', 'active', 'inFlight', 'unschedulable', 'active', 'inFlight', null]);

  // Gated pods wait in unschedulable with their gate.
  s.applyMessage(events([E.queue('g', { action: 'add', to: 'unschedulable', event: 'PodAdd', gatingPlugin: 'SchedulingGates', message: 'gated' })]));
  assert.equal(s.state.queue.get('default/g').gatingPlugin, 'SchedulingGates');
  s.applyMessage(events([E.queue('g', { action: 'delete', from: 'unschedulable', event: 'PodDelete' })]));
  assert.equal(s.state.queue.has('default/g'), false);
});

test('the lanes are ordered as the queue serves them', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, pods: [podSummary('low'), podSummary('high', { priority: 1000 }), podSummary('low2')] }));
  s.applyMessage(events([
    E.queue('low', { action: 'add', to: 'active', event: 'PodAdd' }, 10),
    E.queue('low2', { action: 'add', to: 'active', event: 'PodAdd' }, 20),
    E.queue('high', { action: 'add', to: 'active', event: 'PodAdd' }, 30),
  ]));
  assert.deepEqual(s.lanes().active.map((e) => e.pod.name), ['high', 'low', 'low2']);
  s.applyMessage(events([
    E.queue('low', { action: 'move', from: 'active', to: 'backoff', attempts: 1, backoffUntil: at(9000) }, 40),
    E.queue('low2', { action: 'move', from: 'active', to: 'backoff', attempts: 1, backoffUntil: at(3000) }, 50),
  ]));
  assert.deepEqual(s.lanes().backoff.map((e) => e.pod.name), ['low2', 'low']);
});

test('cycle events build the summary and the detail the inspector shows', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, nodes: [nodeSummary('n1'), nodeSummary('n2')], pods: [podSummary('web')] }));
  s.applyMessage(events([E.queue('web', { action: 'add', to: 'active', event: 'PodAdd' }), ...successfulCycle('web', 7, 1, ['n1', 'n2'])]));
  const c = s.state.cycles.get(7);
  assert.equal(c.podKey, 'default/web');
  assert.equal(c.attempt, 1);
  assert.equal(c.end.result, 'scheduled');
  assert.equal(c.binding.bound, true);
  const v = s.cycleView('default/web', null);
  assert.equal(v.id, 7);
  assert.equal(v.source, 'live');
  assert.deepEqual(v.detail.points.map((p) => p.point), ['PreFilter', 'PreScore', 'Reserve', 'Bind']);
  assert.equal(v.detail.filter.nodes.length, 2);
  assert.equal(v.detail.score.nodes[0].total, 390);
  assert.deepEqual(s.podCycles('default/web').map((x) => x.id), [7]);
  assert.equal(s.state.queue.has('default/web'), false);

  // Permit waits show on the summary until the binding ends.
  s.applyMessage(events([
    E.cycleStart('web', 8, 2),
    E.point('web', 8, 'Permit', [{ plugin: 'PermitDelay', code: 4, nanos: 10, timeoutNanos: 2e9 }], 'n1'),
    E.permitWait('web', 8, 'n1'),
  ]));
  assert.equal(s.state.cycles.get(8).waiting, true);
  assert.equal(s.state.details.get(8).permitWait.node, 'n1');
  s.applyMessage(events([E.cycleEnd('web', 8, { result: 'scheduled', node: 'n1' }), E.bindingEnd('web', 8, { node: 'n1', bound: false, plugin: 'PermitDelay', message: 'rejected' })]));
  assert.equal(s.state.cycles.get(8).waiting, false);
  assert.equal(s.state.cycles.get(8).binding.bound, false);
  assert.deepEqual(s.podCycles('default/web').map((x) => x.id), [8, 7]);

  // Events of a cycle whose start this store never saw are ignored.
  s.applyMessage(events([E.cycleEnd('web', 99, { result: 'error' })]));
  assert.equal(s.state.cycles.has(99), false);
});

test('a cycle id used again (a restarted scheduler) replaces the old cycle', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, pods: [podSummary('a'), podSummary('b')] }));
  s.applyMessage(events([...successfulCycle('a', 1, 1, ['n1'])]));
  s.applyMessage(events([E.scheduler('running', 2), E.cycleStart('b', 1, 1)]));
  assert.equal(s.state.cycles.get(1).podKey, 'default/b');
  assert.deepEqual(s.podCycles('default/a'), []);
  assert.deepEqual(s.podCycles('default/b').map((c) => c.id), [1]);
  assert.equal(s.state.details.get(1).filter, null);
  assert.equal(s.state.scheduler.generation, 2);
});

test('scheduler, scenario and reset events', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, pods: [podSummary('a')] }));
  s.applyMessage(events([E.scheduler('paused', 1, 2)]));
  assert.equal(s.state.scheduler.state, 'paused');
  assert.equal(s.state.scheduler.steps, 2);
  s.applyMessage(events([E.scheduler('running', 1)]));
  assert.equal(s.state.scheduler.steps, 0, 'steps is omitted when zero');

  s.applyMessage(events([
    E.scenario({ id: 'r1', name: 'taints', step: 1, steps: 3, phase: 'running', message: 'creating nodes' }),
    E.scenario({ id: 'r1', name: 'taints', step: 3, steps: 3, phase: 'passed' }),
  ]));
  const run = s.state.scenarios.get('r1');
  assert.equal(run.step, 3);
  assert.equal(run.phase, 'passed');
  assert.equal(run.message, 'creating nodes', 'fields a later event leaves out are kept');
  assert.equal(run.state, 'passed', 'a phase that names an end state ends the run');
  s.applyMessage(events([E.scenario({ id: 'r2', name: 'x', step: 1, steps: 2, phase: 'expect' })]));
  assert.equal(s.state.scenarios.get('r2').state, 'running');
  s.setScenarioRun({ id: 'r2', state: 'failed', report: { failed: 1 } });
  assert.equal(s.state.scenarios.get('r2').report.failed, 1);
  assert.equal(s.state.scenarios.get('r2').name, 'x');

  s.applyMessage(events(successfulCycle('a', 3, 1, ['n1'])));
  assert.equal(s.state.cycles.size, 1);
  s.selectCycle(3);
  s.applyMessage(events([E.reset()]));
  assert.equal(s.state.cycles.size, 0);
  assert.equal(s.state.details.size, 0);
  assert.equal(s.state.ui.selectedCycle, null);
  assert.deepEqual(s.timelineRows(), []);
});

test('events already applied are skipped, and lastSeq advances the cursor', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, pods: [podSummary('a', { cpu: 100 })] }));
  const add = E.pod('updated', podSummary('a', { cpu: 100, nodeName: 'n1' }));
  s.applyMessage(events([add]));
  s.applyMessage(events([add]));
  assert.equal(s.state.usage.get('n1').pods, 1);
  // A filtered batch may carry fewer events than lastSeq says.
  s.applyMessage({ type: 'events', lastSeq: 500, events: [] });
  assert.equal(s.state.seq, 500);
  // Events the snapshot already reflects (seq <= snapshot.seq) are skipped.
  s.applyMessage(snapshot({ at: 1000, pods: [] }));
  s.applyMessage(events([{ ...E.pod('added', podSummary('late')), seq: 999 }]));
  assert.equal(s.state.pods.has('default/late'), false);
});

test('resync: the next snapshot replaces the state, and the resync is shown', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0, nodes: [nodeSummary('n1')], pods: [podSummary('a', { nodeName: 'n1', cpu: 10 })] }));
  s.applyMessage(events([E.pod('added', podSummary('b')), E.queue('b', { action: 'add', to: 'active', event: 'PodAdd' })]));
  s.applyMessage({ type: 'resync', reason: 'you fell 60000 events behind', dropped: 60000 });
  assert.equal(s.state.awaitingSnapshot, true);
  assert.equal(s.state.conn.lastResync.dropped, 60000);
  assert.match(s.state.notices.at(-1).text, /fell 60000 events behind/);
  s.applyMessage(snapshot({ at: 70000, nodes: [nodeSummary('n2')], pods: [podSummary('c', { nodeName: 'n2', cpu: 20 })] }));
  assert.equal(s.state.awaitingSnapshot, false);
  assert.equal(s.state.seq, 70000);
  assert.deepEqual([...s.state.nodes.keys()], ['n2']);
  assert.deepEqual([...s.state.pods.keys()], ['default/c']);
  assert.equal(s.state.queue.size, 0);
  assert.equal(s.state.usage.get('n1'), undefined);
  assert.equal(s.state.usage.get('n2').cpu, 20);
});

test('stream errors and unknown kinds do not break the store', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 0 }));
  s.applyMessage({ type: 'error', reason: 'malformed message' });
  assert.match(s.state.notices.at(-1).text, /malformed message/);
  s.applyMessage(events([{ seq: 1, time: at(0), kind: 'somethingNew', somethingNew: {} }]));
  assert.equal(s.state.seq, 1);
});

test('memory stays bounded: cycles, details, trails, notices', () => {
  const s = fresh({ limits: { cycles: 50, details: 5, trail: 6, podCycles: 4, notices: 3, fetched: 2 } });
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
  const st = s.state;
  assert.equal(st.cycles.size, 50);
  assert.equal(st.details.size, 5);
  assert.deepEqual([...st.details.keys()], [146, 147, 148, 149, 150], 'the newest details are kept');
  for (const info of st.podInfo.values()) {
    assert.ok(info.trail.length <= 6);
    assert.ok(info.cycleIds.length <= 4);
  }
  // An old cycle's detail must come from the server: the view says so.
  const v = s.cycleView('default/p0', 121);
  assert.equal(v.source, 'missing');
  assert.equal(v.summary.id, 121);
  // Fetched cycles are bounded too.
  for (const cid of [1, 2, 3]) {
    s.addFetchedCycle({ id: cid, pod: { namespace: 'default', name: 'p0', uid: 'uid-p0' }, attempt: 1, start: at(0), nodes: 2,
      end: { result: 'scheduled', node: 'n1', feasibleNodes: 2, nanos: 1 }, events: successfulCycle('p0', cid, 1, ['n1']), truncated: false });
  }
  assert.deepEqual([...st.fetched.keys()], [2, 3]);
  for (let i = 0; i < 10; i++) s.addNotice('error', `e${i}`);
  assert.equal(s.state.notices.length, 3);
});

test('cycles loaded over REST fill the inspector and the timeline', () => {
  const s = fresh();
  s.applyMessage(snapshot({ at: 100, pods: [podSummary('old', { nodeName: 'n1' })] }));
  const rec = {
    id: 4, pod: { namespace: 'default', name: 'old', uid: 'uid-old' }, attempt: 2, start: at(50), nodes: 1,
    end: { result: 'scheduled', node: 'n1', feasibleNodes: 1, nanos: 10 }, binding: { node: 'n1', bound: true, nanos: 5 },
    firstSeq: 10, lastSeq: 20,
  };
  s.addCycleSummaries([rec, { ...rec, id: 3, attempt: 1, end: { result: 'unschedulable', feasibleNodes: 0, nanos: 10 } }]);
  assert.deepEqual(s.podCycles('default/old').map((c) => c.id), [4, 3]);
  const rows = s.timelineRows();
  assert.equal(rows.length, 1);
  assert.deepEqual(rows[0].cycles.map((c) => c.attempt), [1, 2]);
  assert.equal(s.cycleView('default/old', 4).source, 'missing');
  s.addFetchedCycle({ ...rec, events: successfulCycle('old', 4, 2, ['n1']).filter((e) => e.cycle === 4), truncated: true });
  const v = s.cycleView('default/old', 4);
  assert.equal(v.source, 'fetched');
  assert.equal(v.truncated, true);
  assert.equal(v.detail.filter.nodes.length, 1);
  // Remote summaries of a pod's older attempts show in its attempt list.
  s.addRemoteCycles('default/old', [{ ...rec, id: 1, attempt: 1 }]);
  assert.deepEqual(s.podCycles('default/old').map((c) => c.id), [4, 3, 1]);
});

test('listeners hear which slices changed; ui state changes through methods', () => {
  const s = fresh();
  const heard = [];
  s.subscribe((changed) => heard.push([...changed].sort().join(',')));
  s.applyMessage(snapshot({ at: 0 }));
  s.applyMessage(events([E.scheduler('paused')]));
  s.selectPod('default/x', null, 'cycle');
  s.setView('timeline');
  s.setView('nonsense');
  s.setConnection({ status: 'open' });
  assert.ok(heard[0].includes('nodes') && heard[0].includes('queue'));
  assert.equal(heard[1], 'scheduler');
  assert.equal(heard[2], 'ui');
  assert.equal(s.state.ui.view, 'timeline');
  assert.equal(s.state.ui.selectedPod, 'default/x');
  assert.equal(heard.length, 5, 'an unknown view changes nothing');
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
  let lanes = s.lanes();
  assert.deepEqual(lanes.backoff.map((e) => e.key), ['default/rej']);
  assert.deepEqual(lanes.errorBackoff.map((e) => e.key), ['default/err']);
  assert.equal(lanes.errorBackoff[0].backoffUntil, Date.parse(at(2000)), 'an error backoff counts down too');
  assert.equal(s.counts().errorBackoff, 1);
  assert.equal(s.state.podInfo.get('default/err').lastFailure.attempts, 1, 'an error is a failure the card explains');

  s.applyMessage(events([E.queue('rej', { action: 'pop', from: 'backoff', to: 'inFlight', event: 'PopFromBackoffQ', attempts: 2 }, 7)]));
  lanes = s.lanes();
  assert.equal(lanes.backoff.length, 0);
  assert.deepEqual(lanes.inFlight.map((e) => e.key), ['default/rej']);
  const trail = s.state.podInfo.get('default/rej').trail;
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
  assert.equal(filterMatrix(view.detail.nominatedFilter).nominatedNode, true);
  assert.equal(filterMatrix(view.detail.filter).nominatedNode, false);
});

// Builders of stream messages in the server's shapes (see
// event/event.go, summary.go, history/cycles.go and
// server/observe.go), for the tests. Cycle events carry the cycle's summary
// as the server's history keeps it.

let seq = 0;
const T0 = Date.parse('2026-01-01T10:00:00Z');
// Cycle id -> its summary so far, as the history builds it.
let summaries = new Map();

export function resetSeq(n = 0) {
  seq = n;
  summaries = new Map();
}

export const VOCABULARY = Object.freeze({
  codes: ['Success', 'Error', 'Unschedulable', 'UnschedulableAndUnresolvable', 'Wait', 'Skip', 'Pending'],
  extensionPoints: ['PreEnqueue', 'PreFilter', 'Filter', 'PostFilter', 'PreScore', 'Score', 'Reserve', 'Permit', 'PreBind', 'Bind', 'PostBind', 'Unreserve'],
  kinds: ['queue', 'cycleStart', 'point', 'filter', 'score', 'cycleEnd', 'permitWait', 'bindingEnd', 'node', 'pod', 'scheduler', 'scenario', 'reset', 'preemption', 'extender'],
  queues: ['active', 'backoff', 'errorBackoff', 'unschedulable', 'inFlight'],
  results: ['scheduled', 'unschedulable', 'error'],
});

export function at(ms) {
  return new Date(T0 + ms).toISOString();
}

export function ref(name, uid = `uid-${name}`, namespace = 'default') {
  return { namespace, name, uid };
}

export function nodeSummary(name, { cpu = 4000, memory = 16 * 2 ** 30, pods = 110, labels, taints, unschedulable } = {}) {
  const n = { name, uid: `uid-${name}`, allocatable: { cpu, memory, pods }, created: at(0) };
  if (labels) n.labels = labels;
  if (taints) n.taints = taints;
  if (unschedulable) n.unschedulable = true;
  return n;
}

export function podSummary(name, { cpu = 0, memory = 0, nodeName, priority = 0, uid, namespace = 'default', message } = {}) {
  const p = { namespace, name, uid: uid || `uid-${name}`, priority, phase: 'Pending', schedulerName: 'default-scheduler', created: at(0) };
  const requests = {};
  if (cpu) requests.cpu = cpu;
  if (memory) requests.memory = memory;
  if (Object.keys(requests).length) p.requests = requests;
  if (nodeName) {
    p.nodeName = nodeName;
    p.scheduled = 'True';
  }
  if (message) {
    p.scheduled = 'False';
    p.message = message;
  }
  return p;
}

function ev(kind, fields, ms) {
  seq += 1;
  return { seq, time: at(ms ?? seq * 10), kind, ...fields };
}

/**
 * A cycle's event; change updates the cycle's summary, which the event
 * carries when it is one of the kinds that do.
 */
function cycleEv(kind, pod, cycle, fields, ms, change) {
  const e = ev(kind, { pod: ref(pod), cycle, ...fields }, ms);
  const s = summaries.get(cycle) || { id: cycle, pod: ref(pod), attempt: 1, nodes: 0, profile: 'default-scheduler', start: e.time, waiting: false, firstSeq: e.seq };
  Object.assign(s, change?.(e) || {}, { lastSeq: e.seq });
  summaries.set(cycle, s);
  if (['cycleStart', 'cycleEnd', 'permitWait', 'bindingEnd'].includes(kind)) e.summary = { ...s };
  return e;
}

export const E = {
  node: (action, object, ms) => ev('node', { node: { action, object } }, ms),
  pod: (action, object, ms) => ev('pod', { pod: ref(object.name, object.uid, object.namespace), podChange: { action, object } }, ms),
  queue: (pod, q, ms) => ev('queue', { pod: ref(pod), queue: { attempts: 0, ...q } }, ms),
  cycleStart: (pod, cycle, attempt, nodes = 2, ms) => cycleEv('cycleStart', pod, cycle, { cycleStart: { attempt, nodes, profile: 'default-scheduler' } }, ms,
    (e) => ({ attempt, nodes, start: e.time, firstSeq: e.seq })),
  // A pod's cycle within its pod group's (group: the event's GroupCycle).
  memberStart: (pod, cycle, group, ms) => cycleEv('cycleStart', pod, cycle, { cycleStart: { attempt: 1, nodes: 2, profile: 'default-scheduler', group } }, ms,
    (e) => ({ attempt: 1, nodes: 2, start: e.time, firstSeq: e.seq, group })),
  point: (pod, cycle, point, results, node, ms) => (cycle
    ? cycleEv('point', pod, cycle, { point: { point, ...(node ? { node } : {}), results } }, ms)
    : ev('point', { pod: ref(pod), point: { point, results } }, ms)),
  filter: (pod, cycle, plugins, nodes, ms) => cycleEv('filter', pod, cycle, { filter: { plugins, nodes, nanos: 1000 } }, ms),
  score: (pod, cycle, plugins, nodes, ms) => cycleEv('score', pod, cycle, { score: { plugins, nodes, nanos: 2000 } }, ms),
  extender: (pod, cycle, call, ms) => cycleEv('extender', pod, cycle, { extender: { nanos: 1000, ...call } }, ms),
  cycleEnd: (pod, cycle, end, ms) => cycleEv('cycleEnd', pod, cycle, { cycleEnd: { feasibleNodes: 0, nanos: 5000, ...end } }, ms,
    (e) => ({ end: e.cycleEnd, endTime: e.time })),
  permitWait: (pod, cycle, node, ms) => cycleEv('permitWait', pod, cycle, { permitWait: { node, timeoutNanos: { PermitDelay: 2e9 } } }, ms, () => ({ waiting: true })),
  bindingEnd: (pod, cycle, b, ms) => cycleEv('bindingEnd', pod, cycle, { bindingEnd: { nanos: 100, ...b } }, ms,
    (e) => ({ binding: e.bindingEnd, bindTime: e.time, waiting: false })),
  scheduler: (state, generation = 1, steps = 0, ms) => ev('scheduler', { scheduler: { state, generation, ...(steps ? { steps } : {}) } }, ms),
  scenario: (s, ms) => ev('scenario', { scenario: s }, ms),
  reset: (ms) => ev('reset', {}, ms),
  // The scheduler evicted victim to make room for preemptor on node.
  preemption: (victim, preemptor, node, ms) => ev('preemption', { pod: ref(victim), preemption: { preemptor: ref(preemptor), node } }, ms),
  // The pod group's preemption evicted victim to make room for its pods.
  groupPreemption: (victim, group, node, ms) => ev('preemption', { pod: ref(victim), preemption: { preemptor: ref(group), group: true, node } }, ms),
};

export function events(list) {
  return { type: 'events', lastSeq: list.length ? list[list.length - 1].seq : seq, events: list };
}

export function snapshot({
  nodes = [], pods = [], queue = {}, queueSort = { plugin: 'PrioritySort', ordered: true }, scheduler = { state: 'running', generation: 1, queueSort }, at: atSeq,
} = {}) {
  return {
    type: 'snapshot', schema: 'minisched.stream/v1', seq: atSeq ?? seq, time: at(seq * 10), nodes, pods,
    queue: { active: [], backoff: [], errorBackoff: [], unschedulable: [], inFlight: [], ...queue }, scheduler,
    history: { events: seq, weight: seq, maxWeight: 500000, firstSeq: 1, lastSeq: seq, truncated: false, dropped: 0, cycles: 0 },
    vocabulary: VOCABULARY,
  };
}

/** The summaries GET /api/v1/cycles would list now, newest first. */
export function cycleSummaries() {
  return [...summaries.values()].map((s) => ({ ...s })).sort((a, b) => b.id - a.id);
}

export function queued(name, queue, extra = {}) {
  return { pod: ref(name), queue, priority: 0, attempts: 0, enteredAt: at(0), secondsInQueue: 1, ...extra };
}

/** The events of one whole successful cycle of pod on nodes[0] out of nodes. */
export function successfulCycle(pod, cycle, attempt, nodes, { ms = 0 } = {}) {
  const plugins = ['NodeName', 'NodeUnschedulable', 'TaintToleration', 'NodeResourcesFit'];
  return [
    E.queue(pod, { action: 'pop', from: 'active', to: 'inFlight', attempts: attempt }, ms + 1),
    E.cycleStart(pod, cycle, attempt, nodes.length, ms + 2),
    E.point(pod, cycle, 'PreFilter', [{ plugin: 'NodeResourcesFit', code: 0, nanos: 300 }, { plugin: 'NodeAffinity', code: 5, nanos: 20 }], undefined, ms + 3),
    E.filter(pod, cycle, plugins, nodes.map((n) => ({ node: n, codes: [0, 0, 0, 0], nanos: [10, 10, 10, 100] })), ms + 4),
    E.point(pod, cycle, 'PreScore', [{ plugin: 'NodeResourcesFit', code: 0, nanos: 50 }], undefined, ms + 5),
    E.score(pod, cycle, [{ name: 'NodeResourcesFit', weight: 1 }, { name: 'TaintToleration', weight: 3 }],
      nodes.map((n, i) => ({ node: n, raw: [90 - i * 10, 0], normalized: [90 - i * 10, 100], weighted: [90 - i * 10, 300], nanos: [40, 20], total: 390 - i * 10 })), ms + 6),
    E.point(pod, cycle, 'Reserve', [{ plugin: 'VolumeBinding', code: 0, nanos: 10 }], nodes[0], ms + 7),
    E.cycleEnd(pod, cycle, { result: 'scheduled', node: nodes[0], feasibleNodes: nodes.length }, ms + 8),
    E.point(pod, cycle, 'Bind', [{ plugin: 'DefaultBinder', code: 0, nanos: 5000 }], nodes[0], ms + 9),
    E.queue(pod, { action: 'done', from: 'inFlight', attempts: attempt }, ms + 10),
    E.bindingEnd(pod, cycle, { node: nodes[0], bound: true }, ms + 11),
  ];
}

/**
 * fakeFetch answers requests from routes(url, init): {status, body, type}
 * or an Error to throw; calls lists what was asked.
 */
export function fakeFetch(routes) {
  const calls = [];
  const fn = async (url, init) => {
    calls.push({ url, ...init });
    const r = routes(url, init);
    if (r instanceof Error) throw r;
    const body = r.body === undefined ? '' : typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
    return {
      ok: r.status < 300, status: r.status,
      headers: { get: () => r.type || (typeof r.body === 'object' ? 'application/json' : 'text/plain') },
      text: async () => body, json: async () => JSON.parse(body),
    };
  };
  fn.calls = calls;
  return fn;
}

// store.js: the dashboard's state. It applies the stream's snapshot and
// events, keeps what the views need (and only a bounded amount of it), and
// derives the lists the views render. Pure JavaScript, no DOM: tested with
// node --test. Views read `store.state` and the selectors; they never change
// the state themselves, they call the store's methods (or the actions, which
// call the API and then the store).
//
// Every slice of the state has a revision number in state.rev that grows
// when the slice changes, so views re-render only what changed.

export const SCHEMA = 'minisched.stream/v1';

/** Memory bounds. A test may pass smaller ones to createStore. */
export const DEFAULT_LIMITS = Object.freeze({
  // Cycle summaries kept for the timeline and the attempt lists.
  cycles: 5000,
  // Cycles whose full detail (filter matrix, scores, points) is kept; older
  // ones are fetched again from GET /api/v1/cycles/{id}.
  details: 150,
  // Cycles fetched over REST and kept.
  fetched: 30,
  // Queue transitions kept per pod, for the timeline.
  trail: 24,
  // Cycle ids remembered per pod.
  podCycles: 40,
  // Notices (errors, messages) shown at once.
  notices: 4,
  // Scenario runs remembered.
  scenarios: 20,
});

export const VIEWS = Object.freeze(['queue', 'cycle', 'cluster', 'timeline', 'controls']);

export const QUEUES = Object.freeze(['active', 'backoff', 'errorBackoff', 'unschedulable', 'inFlight']);
const BACKOFFS = new Set(['backoff', 'errorBackoff']);

/** The states a scenario run ends in. */
export const SCENARIO_END = new Set(['passed', 'failed', 'cancelled', 'error']);

/** podKey({namespace, name}) -> "namespace/name". */
export function podKey(ref) {
  return `${ref.namespace}/${ref.name}`;
}

/** Milliseconds since the epoch of an RFC 3339 time, or null. */
export function toMillis(t) {
  if (t == null || t === '') return null;
  if (typeof t === 'number') return t;
  const ms = Date.parse(t);
  // Go's zero time (0001-01-01) means "unset".
  return Number.isNaN(ms) || ms < 0 ? null : ms;
}

function emptyState() {
  return {
    schema: null,
    // Highest sequence number applied; the stream resumes after it.
    seq: 0,
    // Snapshots applied (the first and every resync).
    snapshots: 0,
    // Set by a resync message until its snapshot arrives.
    awaitingSnapshot: false,
    conn: { status: 'idle', attempt: 0, retryAt: null, error: '', since: null, lastResync: null, openedAt: null },
    scheduler: { state: 'unknown', generation: 0, steps: 0, message: '' },
    history: null,
    nodes: new Map(),
    pods: new Map(),
    // Requests of the pods bound to each node name, and how many are bound.
    usage: new Map(),
    bound: 0,
    queue: new Map(),
    // Per pod: its queue trail, last failure, PreEnqueue result, cycle ids.
    podInfo: new Map(),
    cycles: new Map(),
    details: new Map(),
    fetched: new Map(),
    scenarios: new Map(),
    // Per node: a revision that grows when the node or its pods change.
    nodeRev: new Map(),
    notices: [],
    ui: { view: 'queue', selectedPod: null, selectedCycle: null, cycleLoading: null },
    busy: {},
    rev: {
      nodes: 0, pods: 0, queue: 0, cycles: 0, details: 0, scheduler: 0, conn: 0, ui: 0,
      notices: 0, scenarios: 0, busy: 0, history: 0,
    },
  };
}

/**
 * createStore returns the store. options.limits overrides DEFAULT_LIMITS;
 * options.now is the clock (for tests).
 */
export function createStore(options = {}) {
  const limits = { ...DEFAULT_LIMITS, ...(options.limits || {}) };
  const now = options.now || (() => Date.now());
  let state = emptyState();
  const listeners = new Set();
  // Slices changed since the last notification.
  let dirty = new Set();
  let noticeId = 0;
  const memo = new Map();

  function touch(...slices) {
    for (const s of slices) {
      state.rev[s] = (state.rev[s] || 0) + 1;
      dirty.add(s);
    }
  }

  function bumpNode(name) {
    if (!name) return;
    state.nodeRev.set(name, (state.nodeRev.get(name) || 0) + 1);
  }

  function notify() {
    if (dirty.size === 0) return;
    const changed = dirty;
    dirty = new Set();
    for (const fn of listeners) fn(changed);
  }

  // --- cluster objects -------------------------------------------------

  function usageOf(node) {
    let u = state.usage.get(node);
    if (!u) {
      u = { cpu: 0, memory: 0, pods: 0, keys: new Set() };
      state.usage.set(node, u);
    }
    return u;
  }

  function unbind(pod) {
    if (!pod || !pod.nodeName) return;
    const u = state.usage.get(pod.nodeName);
    const key = podKey(pod);
    if (!u || !u.keys.has(key)) return;
    u.keys.delete(key);
    u.cpu -= pod.requests?.cpu || 0;
    u.memory -= pod.requests?.memory || 0;
    u.pods -= 1;
    state.bound -= 1;
    if (u.keys.size === 0) state.usage.delete(pod.nodeName);
    bumpNode(pod.nodeName);
  }

  function bind(pod) {
    if (!pod.nodeName) return;
    const u = usageOf(pod.nodeName);
    const key = podKey(pod);
    if (u.keys.has(key)) return;
    u.keys.add(key);
    u.cpu += pod.requests?.cpu || 0;
    u.memory += pod.requests?.memory || 0;
    u.pods += 1;
    state.bound += 1;
    bumpNode(pod.nodeName);
  }

  function setPod(pod) {
    const key = podKey(pod);
    const old = state.pods.get(key);
    if (old) unbind(old);
    state.pods.set(key, pod);
    bind(pod);
    const q = state.queue.get(key);
    if (q && q.priority !== pod.priority) {
      q.priority = pod.priority;
      touch('queue');
    }
    touch('pods');
  }

  function deletePod(pod) {
    const key = podKey(pod);
    const old = state.pods.get(key);
    if (!old || (pod.uid && old.uid && old.uid !== pod.uid)) return;
    unbind(old);
    state.pods.delete(key);
    state.podInfo.delete(key);
    const q = state.queue.get(key);
    if (q && (!pod.uid || !q.pod.uid || q.pod.uid === pod.uid)) {
      state.queue.delete(key);
      touch('queue');
    }
    touch('pods', 'cycles');
  }

  function setNode(node) {
    state.nodes.set(node.name, node);
    bumpNode(node.name);
    touch('nodes');
  }

  function deleteNode(node) {
    const old = state.nodes.get(node.name);
    if (!old || (node.uid && old.uid && old.uid !== node.uid)) return;
    state.nodes.delete(node.name);
    bumpNode(node.name);
    touch('nodes');
  }

  // --- per-pod information ---------------------------------------------

  function infoOf(key) {
    let info = state.podInfo.get(key);
    if (!info) {
      info = { trail: [], lastFailure: null, preEnqueue: null, cycleIds: [], firstSeen: null };
      state.podInfo.set(key, info);
    }
    return info;
  }

  function pushTrail(key, step) {
    const info = infoOf(key);
    if (info.firstSeen == null) info.firstSeen = step.t;
    info.trail.push(step);
    if (info.trail.length > limits.trail) info.trail.splice(0, info.trail.length - limits.trail);
  }

  // --- the queue ---------------------------------------------------------

  function applyQueue(e, t) {
    const key = podKey(e.pod);
    const q = e.queue;
    const existing = state.queue.get(key);
    if (q.action === 'delete' || q.action === 'done') {
      if (existing && (!existing.pod.uid || !e.pod.uid || existing.pod.uid === e.pod.uid)) {
        state.queue.delete(key);
      }
      pushTrail(key, { t, action: q.action, from: q.from || null, to: null, event: q.event || '', plugins: q.plugins || [] });
      touch('queue', 'cycles');
      return;
    }
    const to = q.to;
    if (!QUEUES.includes(to)) return;
    const moved = !existing || existing.queue !== to || existing.pod.uid !== e.pod.uid;
    const entry = existing && existing.pod.uid === e.pod.uid ? existing : {
      key, pod: e.pod, queue: to, priority: state.pods.get(key)?.priority ?? 0, attempts: 0,
      enteredAt: t, backoffUntil: null, plugins: [], gatingPlugin: '', event: '', message: '', changedAt: t,
    };
    entry.pod = e.pod;
    entry.queue = to;
    entry.attempts = q.attempts ?? entry.attempts;
    entry.changedAt = t;
    if (moved) entry.enteredAt = t;
    if (q.action === 'pop') {
      entry.event = 'Pop';
    } else if (q.event && (q.action !== 'update' || !entry.event)) {
      // An update in place (the pod object changed) keeps what moved it here.
      entry.event = q.event;
    }
    if (q.action !== 'update') {
      entry.plugins = q.plugins || [];
      entry.message = q.message || '';
    } else if (q.message) {
      entry.message = q.message;
    }
    entry.gatingPlugin = q.gatingPlugin || '';
    entry.backoffUntil = BACKOFFS.has(to) ? toMillis(q.backoffUntil) ?? entry.backoffUntil : null;
    state.queue.set(key, entry);
    if (q.action === 'move' && q.from === 'inFlight' && (BACKOFFS.has(to) || to === 'unschedulable')) {
      infoOf(key).lastFailure = { t, plugins: q.plugins || [], message: q.message || '', attempts: entry.attempts };
    }
    if (moved || q.action !== 'update') {
      pushTrail(key, { t, action: q.action, from: q.from || null, to, event: entry.event, plugins: q.plugins || [] });
      touch('cycles');
    }
    touch('queue');
  }

  function queueFromSnapshot(view, t) {
    state.queue = new Map();
    for (const name of QUEUES) {
      for (const qp of view?.[name] || []) {
        const key = podKey(qp.pod);
        const entered = toMillis(qp.enteredAt) ?? t;
        state.queue.set(key, {
          key, pod: qp.pod, queue: name, priority: qp.priority ?? 0, attempts: qp.attempts ?? 0,
          enteredAt: entered, backoffUntil: toMillis(qp.backoffUntil), plugins: qp.plugins || [],
          gatingPlugin: qp.gatingPlugin || '', event: '', message: '', changedAt: entered,
        });
        const info = infoOf(key);
        const last = info.trail[info.trail.length - 1];
        if (!last || last.to !== name) {
          pushTrail(key, { t: entered, action: 'snapshot', from: null, to: name, event: '', plugins: qp.plugins || [] });
        }
        if ((name === 'unschedulable' || BACKOFFS.has(name)) && qp.plugins?.length && !info.lastFailure) {
          info.lastFailure = { t: entered, plugins: qp.plugins, message: '', attempts: qp.attempts ?? 0 };
        }
      }
    }
  }

  // --- cycles ------------------------------------------------------------

  function evictOldest(map, limit, onEvict) {
    while (map.size > limit) {
      const oldest = map.keys().next().value;
      const v = map.get(oldest);
      map.delete(oldest);
      if (onEvict) onEvict(oldest, v);
    }
  }

  function newDetail() {
    return { points: [], filter: null, nominatedFilter: null, score: null, permitWait: null };
  }

  /** Applies one cycle event to a detail record (shared with REST loads). */
  function applyToDetail(detail, e) {
    switch (e.kind) {
      case 'point': detail.points.push(e.point); break;
      case 'filter':
        // A pass over the pod's nominated node alone may come first; the
        // pass over all nodes follows only when the pod did not fit there.
        if (e.filter.nominatedNode) detail.nominatedFilter = e.filter;
        detail.filter = e.filter;
        break;
      case 'score': detail.score = e.score; break;
      case 'permitWait': detail.permitWait = e.permitWait; break;
      default: break;
    }
  }

  function applyCycle(e, t) {
    const id = e.cycle;
    let c = state.cycles.get(id);
    if (e.kind === 'cycleStart') {
      const key = podKey(e.pod);
      if (c) {
        // The id came back (a restarted scheduler counts from 1 again): the
        // new cycle replaces the old one everywhere.
        const old = state.podInfo.get(c.podKey);
        if (old) old.cycleIds = old.cycleIds.filter((x) => x !== id);
        state.cycles.delete(id);
        state.details.delete(id);
        state.fetched.delete(id);
      }
      c = {
        id, podKey: key, pod: e.pod, attempt: e.cycleStart.attempt, nodes: e.cycleStart.nodes,
        profile: e.cycleStart.profile, start: t, end: null, endTime: null, binding: null, bindTime: null, waiting: false,
      };
      state.cycles.set(id, c);
      evictOldest(state.cycles, limits.cycles);
      state.details.set(id, newDetail());
      evictOldest(state.details, limits.details);
      const info = infoOf(key);
      if (info.firstSeen == null) info.firstSeen = t;
      info.cycleIds.push(id);
      if (info.cycleIds.length > limits.podCycles) info.cycleIds.splice(0, info.cycleIds.length - limits.podCycles);
      touch('cycles', 'details');
      return;
    }
    if (!c) return; // its start came before our snapshot or was evicted
    switch (e.kind) {
      case 'cycleEnd':
        c.end = e.cycleEnd;
        c.endTime = t;
        touch('cycles');
        break;
      case 'bindingEnd':
        c.binding = e.bindingEnd;
        c.bindTime = t;
        c.waiting = false;
        touch('cycles');
        break;
      case 'permitWait':
        c.waiting = true;
        touch('cycles');
        break;
      default:
        break;
    }
    const d = state.details.get(id);
    if (d) {
      applyToDetail(d, e);
      touch('details');
    }
  }

  // --- events --------------------------------------------------------------

  function applyEvent(e) {
    if (typeof e.seq === 'number') {
      if (e.seq <= state.seq) return false; // seen already
      state.seq = e.seq;
    }
    const t = toMillis(e.time) ?? now();
    switch (e.kind) {
      case 'queue':
        if (e.pod && e.queue) applyQueue(e, t);
        break;
      case 'cycleStart': case 'filter': case 'score': case 'cycleEnd': case 'permitWait': case 'bindingEnd':
        if (e.cycle && e.pod) applyCycle(e, t);
        break;
      case 'point':
        if (e.cycle) {
          applyCycle(e, t);
        } else if (e.pod && e.point) {
          // PreEnqueue runs before any cycle.
          infoOf(podKey(e.pod)).preEnqueue = { t, ...e.point };
          touch('queue');
        }
        break;
      case 'node':
        if (e.node?.action === 'deleted') deleteNode(e.node.object);
        else if (e.node?.object) setNode(e.node.object);
        break;
      case 'pod':
        if (e.podChange?.action === 'deleted') deletePod(e.podChange.object);
        else if (e.podChange?.object) setPod(e.podChange.object);
        break;
      case 'scheduler':
        if (e.scheduler) {
          state.scheduler = { steps: 0, message: '', ...e.scheduler };
          touch('scheduler');
        }
        break;
      case 'scenario':
        if (e.scenario) {
          const prev = state.scenarios.get(e.scenario.id);
          const run = { ...prev, ...e.scenario, t };
          // The phase names a run's end when it is one of the run states.
          if (SCENARIO_END.has(e.scenario.phase)) run.state = e.scenario.phase;
          else if (!run.state) run.state = 'running';
          state.scenarios.delete(e.scenario.id);
          state.scenarios.set(e.scenario.id, run);
          evictOldest(state.scenarios, limits.scenarios);
          touch('scenarios');
        }
        break;
      case 'reset':
        state.cycles = new Map();
        state.details = new Map();
        state.fetched = new Map();
        for (const info of state.podInfo.values()) {
          info.cycleIds = [];
          info.trail = [];
          info.lastFailure = null;
        }
        state.ui = { ...state.ui, selectedCycle: null };
        touch('cycles', 'details', 'ui');
        break;
      default:
        break; // a kind from a newer server: ignore
    }
    return true;
  }

  function applySnapshot(snap) {
    const t = toMillis(snap.time) ?? now();
    state.schema = snap.schema || null;
    state.seq = snap.seq ?? 0;
    state.snapshots += 1;
    state.awaitingSnapshot = false;
    state.nodes = new Map();
    state.pods = new Map();
    state.usage = new Map();
    state.bound = 0;
    const oldRevs = state.nodeRev;
    state.nodeRev = new Map();
    for (const n of snap.nodes || []) {
      state.nodes.set(n.name, n);
      state.nodeRev.set(n.name, (oldRevs.get(n.name) || 0) + 1);
    }
    for (const p of snap.pods || []) {
      state.pods.set(podKey(p), p);
      bind(p);
    }
    // Forget what we knew of pods that are gone.
    for (const key of [...state.podInfo.keys()]) {
      if (!state.pods.has(key)) state.podInfo.delete(key);
    }
    queueFromSnapshot(snap.queue, t);
    if (snap.scheduler) state.scheduler = { steps: 0, message: '', ...snap.scheduler };
    state.history = snap.history || null;
    touch('nodes', 'pods', 'queue', 'scheduler', 'cycles', 'history', 'conn');
  }

  /** Applies one message of the stream. Returns what it did, for logs. */
  function applyMessage(msg) {
    switch (msg?.type) {
      case 'snapshot':
        applySnapshot(msg);
        break;
      case 'events': {
        for (const e of msg.events || []) applyEvent(e);
        if (typeof msg.lastSeq === 'number' && msg.lastSeq > state.seq) state.seq = msg.lastSeq;
        break;
      }
      case 'resync':
        state.awaitingSnapshot = true;
        state.conn = { ...state.conn, lastResync: { reason: msg.reason || '', dropped: msg.dropped || 0, at: now() } };
        touch('conn');
        addNoticeRaw('info', `The stream resynchronised: ${msg.reason || 'no reason given'}${msg.dropped ? ` (${msg.dropped} events skipped)` : ''}.`);
        break;
      case 'error':
        addNoticeRaw('error', `The stream reported an error: ${msg.reason || 'no reason given'}`);
        break;
      case 'filter':
        break;
      default:
        break;
    }
    notify();
    return msg?.type;
  }

  // --- notices, connection, ui ------------------------------------------

  function addNoticeRaw(level, text) {
    noticeId += 1;
    state.notices = [...state.notices, { id: noticeId, level, text, at: now() }].slice(-limits.notices);
    touch('notices');
    return noticeId;
  }

  // --- selectors ------------------------------------------------------------

  function memoize(name, deps, compute) {
    const m = memo.get(name);
    if (m && m.deps.length === deps.length && m.deps.every((d, i) => d === deps[i])) return m.value;
    const value = compute();
    memo.set(name, { deps, value });
    return value;
  }

  /** The queue board's lanes, each in the order the queue serves them. */
  function lanes() {
    return memoize('lanes', [state.rev.queue], () => {
      const out = Object.fromEntries(QUEUES.map((q) => [q, []]));
      for (const entry of state.queue.values()) out[entry.queue].push(entry);
      out.active.sort((a, b) => b.priority - a.priority || a.enteredAt - b.enteredAt || cmp(a.key, b.key));
      out.backoff.sort((a, b) => (a.backoffUntil ?? 0) - (b.backoffUntil ?? 0) || cmp(a.key, b.key));
      out.errorBackoff.sort((a, b) => (a.backoffUntil ?? 0) - (b.backoffUntil ?? 0) || cmp(a.key, b.key));
      out.unschedulable.sort((a, b) => a.enteredAt - b.enteredAt || cmp(a.key, b.key));
      out.inFlight.sort((a, b) => a.enteredAt - b.enteredAt || cmp(a.key, b.key));
      return out;
    });
  }

  /** Node names in name order. */
  function nodeNames() {
    return memoize('nodeNames', [state.rev.nodes], () => [...state.nodes.keys()].sort(cmp));
  }

  /** Pods that name a node that does not exist (any more). */
  function orphanNodes() {
    return memoize('orphans', [state.rev.nodes, state.rev.pods], () =>
      [...state.usage.keys()].filter((n) => !state.nodes.has(n)).sort(cmp));
  }

  /** Cycle summaries of a pod, newest first. */
  function podCycles(key) {
    return memoize('podCycles', [state.rev.cycles, state.rev.details, key], () => {
      const byId = new Map();
      const info = state.podInfo.get(key);
      for (const id of info?.cycleIds || []) {
        const c = state.cycles.get(id);
        if (c) byId.set(id, c);
      }
      for (const [id, rec] of state.fetched) {
        if (rec.summary.podKey === key && !byId.has(id)) byId.set(id, rec.summary);
      }
      for (const c of info?.remote || []) if (!byId.has(c.id)) byId.set(c.id, c);
      return [...byId.values()].sort((a, b) => b.id - a.id);
    });
  }

  /**
   * The cycle the inspector shows: {summary, detail, source}. source is
   * "live" (kept from the stream), "fetched" (loaded over REST), or
   * "missing" (to be fetched). id null means the pod's newest cycle.
   */
  function cycleView(key, id) {
    const cycles = key ? podCycles(key) : [];
    const cid = id ?? cycles[0]?.id ?? null;
    if (cid == null) return { id: null, summary: null, detail: null, source: 'none' };
    const live = state.cycles.get(cid);
    const detail = state.details.get(cid);
    if (live && detail) return { id: cid, summary: live, detail, source: 'live' };
    const f = state.fetched.get(cid);
    if (f) return { id: cid, summary: live || f.summary, detail: f.detail, source: 'fetched', truncated: f.truncated };
    return { id: cid, summary: live || cycles.find((c) => c.id === cid) || null, detail: null, source: 'missing' };
  }

  /**
   * Timeline rows: one per pod that has queue history or cycles, oldest
   * first, each with its trail and its cycles in time order.
   */
  function timelineRows() {
    return memoize('timeline', [state.rev.cycles, state.rev.pods], () => {
      const rows = [];
      for (const [key, info] of state.podInfo) {
        if (!info.trail.length && !info.cycleIds.length) continue;
        const cycles = [];
        for (const id of info.cycleIds) {
          const c = state.cycles.get(id);
          if (c) cycles.push(c);
        }
        const pod = state.pods.get(key);
        rows.push({
          key, pod, trail: info.trail, cycles, firstSeen: info.firstSeen ?? cycles[0]?.start ?? 0,
          bound: !!pod?.nodeName,
        });
      }
      rows.sort((a, b) => a.firstSeen - b.firstSeen || cmp(a.key, b.key));
      return rows;
    });
  }

  /** Counts for the header. */
  function counts() {
    return memoize('counts', [state.rev.pods, state.rev.nodes, state.rev.queue], () => {
      const bound = state.bound;
      const l = lanes();
      return {
        nodes: state.nodes.size, pods: state.pods.size, bound, pending: state.pods.size - bound,
        active: l.active.length, backoff: l.backoff.length, errorBackoff: l.errorBackoff.length,
        unschedulable: l.unschedulable.length, inFlight: l.inFlight.length,
      };
    });
  }

  const store = {
    get state() { return state; },
    limits,
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    applyMessage,
    /** Applies events outside a message (tests, REST loads). */
    applyEvents(events) {
      for (const e of events) applyEvent(e);
      notify();
    },
    setConnection(patch) {
      state.conn = { ...state.conn, ...patch };
      if (patch.status === 'open') state.conn.openedAt = now();
      touch('conn');
      notify();
    },
    addNotice(level, text) {
      const id = addNoticeRaw(level, text);
      notify();
      return id;
    },
    /** Drops the notices that are not errors once they are older than ms. */
    expireNotices(ms = 8000) {
      const t = now();
      const keep = state.notices.filter((n) => n.level === 'error' || t - n.at < ms);
      if (keep.length === state.notices.length) return;
      state.notices = keep;
      touch('notices');
      notify();
    },
    dismissNotice(id) {
      state.notices = state.notices.filter((n) => n.id !== id);
      touch('notices');
      notify();
    },
    setBusy(name, on) {
      state.busy = { ...state.busy, [name]: on || undefined };
      if (!on) delete state.busy[name];
      touch('busy');
      notify();
    },
    setView(view) {
      if (!VIEWS.includes(view) || state.ui.view === view) return;
      state.ui = { ...state.ui, view };
      touch('ui');
      notify();
    },
    /** Selects a pod (and its newest cycle unless cycleId is given). */
    selectPod(key, cycleId = null, view = null) {
      state.ui = { ...state.ui, selectedPod: key, selectedCycle: cycleId, view: view && VIEWS.includes(view) ? view : state.ui.view };
      touch('ui');
      notify();
    },
    selectCycle(id) {
      state.ui = { ...state.ui, selectedCycle: id };
      touch('ui');
      notify();
    },
    setCycleLoading(id) {
      state.ui = { ...state.ui, cycleLoading: id };
      touch('ui');
      notify();
    },
    /** Keeps a cycle loaded from GET /api/v1/cycles/{id}. */
    addFetchedCycle(rec) {
      const detail = newDetail();
      for (const e of rec.events || []) applyToDetail(detail, e);
      const summary = summaryFromRecord(rec);
      state.fetched.delete(rec.id);
      state.fetched.set(rec.id, { summary, detail, truncated: !!rec.truncated });
      evictOldest(state.fetched, limits.fetched);
      touch('details', 'cycles');
      notify();
    },
    /** Merges cycle summaries from GET /api/v1/cycles?pod=... */
    addRemoteCycles(key, items) {
      const info = state.podInfo.get(key) || (state.pods.has(key) ? infoOf(key) : null);
      if (!info) return;
      info.remote = (items || []).slice(0, limits.podCycles).map(summaryFromRecord);
      touch('cycles');
      notify();
    },
    /**
     * Merges the server's recent cycle summaries (GET /api/v1/cycles) into
     * the timeline, for cycles that ran before this page connected. Cycles
     * the store knows already are left as they are.
     */
    addCycleSummaries(items) {
      const fresh = (items || []).filter((rec) => rec && !state.cycles.has(rec.id)).sort((a, b) => a.id - b.id);
      if (!fresh.length) return;
      const merged = new Map();
      const all = [...state.cycles.values(), ...fresh.map(summaryFromRecord)].sort((a, b) => a.id - b.id);
      for (const c of all.slice(-limits.cycles)) merged.set(c.id, c);
      state.cycles = merged;
      for (const rec of fresh) {
        const key = podKey(rec.pod);
        if (!merged.has(rec.id) || !state.pods.has(key)) continue;
        const info = infoOf(key);
        if (!info.cycleIds.includes(rec.id)) {
          info.cycleIds.push(rec.id);
          info.cycleIds.sort((a, b) => a - b);
          if (info.cycleIds.length > limits.podCycles) info.cycleIds.splice(0, info.cycleIds.length - limits.podCycles);
        }
        const start = toMillis(rec.start);
        if (start != null && (info.firstSeen == null || start < info.firstSeen)) info.firstSeen = start;
      }
      touch('cycles');
      notify();
    },
    setScenarioRun(run) {
      if (!run?.id) return;
      const prev = state.scenarios.get(run.id);
      state.scenarios.delete(run.id);
      state.scenarios.set(run.id, { ...prev, ...run });
      evictOldest(state.scenarios, limits.scenarios);
      touch('scenarios');
      notify();
    },
    lanes,
    nodeNames,
    orphanNodes,
    podCycles,
    cycleView,
    timelineRows,
    counts,
  };
  return store;
}

/** A cycle summary in the store's shape from the REST API's. */
export function summaryFromRecord(rec) {
  return {
    id: rec.id, podKey: podKey(rec.pod), pod: rec.pod, attempt: rec.attempt, nodes: rec.nodes, profile: '',
    start: toMillis(rec.start), end: rec.end || null, endTime: null, binding: rec.binding || null, bindTime: null,
    waiting: false,
  };
}

function cmp(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

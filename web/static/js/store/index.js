// store/index.js: the dashboard's state, made of signals, and the one place
// that applies the stream's messages (a snapshot, then events) to it. Pure
// JavaScript, no DOM: tested with node --test.
//
// Each slice holds signals: cluster (nodes, pods, usage), queue (where each
// pod waits, the lanes), cycles (summaries, details, each pod's story),
// server (connection, scheduler, vocabulary, scenario runs) and page (view,
// selection, notices, busy buttons); selectors derive what no slice holds.
// Views read them and render again when what they read changes; they never
// write: they call the store's methods below, or the actions, which call the
// API and then the store. Every write is a batch, so that the views hear of
// a whole message at once.

import { batch } from '../signals.js';
import { podKey, sameUid, toMillis } from './common.js';
import { createCluster } from './cluster.js';
import { createQueue, moveStep } from './queue.js';
import { createCycles } from './cycles.js';
import { createServer } from './server.js';
import { createPage } from './page.js';
import { createSelectors } from './selectors.js';

export { natural, podKey, toMillis } from './common.js';
export { VIEWS } from './page.js';
export { TIES_NAMED } from './cycles.js';
export { lastActivity } from './selectors.js';

/**
 * Memory bounds. A test may pass smaller ones to createStore.
 *
 * The server's history is bounded (--history, --history-bytes); the page's
 * memory must be too, whatever the stream brings: the page keeps no event,
 * only what it derives from them, and each of these has a bound below.
 * Nodes and pods are the cluster's own (the server caps them with
 * --max-nodes and --max-pods); per pod the page keeps its queue entry, its
 * trail (limits.trail steps) and its cycle ids (limits.podCycles). Cycle
 * summaries are the newest limits.cycles; cycle details, which hold a
 * Filter and a Score row per node, the newest limits.details and at most
 * limits.detailRows rows in all (a detail that went is fetched again from
 * GET /api/v1/cycles/{id} when someone looks at it). The stream's messages
 * wait to be applied for 50 ms at most, and stream.js drops them for a
 * fresh snapshot beyond 50,000 events. At 1,000 nodes and 20,000 pods
 * this is some 60 to 100 MB of JavaScript heap.
 */
export const DEFAULT_LIMITS = Object.freeze({
  // Cycle summaries kept for the timeline and the attempt lists.
  cycles: 5000,
  // Cycles whose full detail (filter matrix, scores, points) is kept; older
  // ones are fetched again from GET /api/v1/cycles/{id}.
  details: 150,
  // ...and the Filter and Score rows (one per node) those details hold at
  // most, about 200 bytes each: at 1,000 nodes a cycle holds some 850
  // rows, so about 70 details are kept; at 5,000 nodes about 15.
  detailRows: 60_000,
  // Cycles fetched over REST and kept.
  fetched: 30,
  // Pods whose attempt lists were fetched over REST and kept.
  remote: 30,
  // Queue transitions kept per pod, for the timeline.
  trail: 24,
  // Cycle ids remembered per pod.
  podCycles: 40,
  // Notices (errors, messages) shown at once.
  notices: 4,
  // Scenario runs remembered.
  scenarios: 20,
  // Steps a scenario run keeps for the lesson banner.
  lessonSteps: 100,
  // Deleted pods whose story (timeline row, cycles) is kept.
  deletedPods: 300,
  // Pods just bound, shown on the queue board once they left it.
  recentBound: 12,
  // From this many nodes on, the stream leaves out the Filter and Score
  // events (some 100 KB a pod at 1,000 nodes: gigabytes for 20,000 pods,
  // more than a page can take in); the inspector loads a cycle's over REST
  // when it shows it.
  matrixNodes: 250,
});

/**
 * createStore returns the store. options.limits overrides DEFAULT_LIMITS;
 * options.now is the clock (for tests).
 */
export function createStore(options = {}) {
  const limits = { ...DEFAULT_LIMITS, ...(options.limits || {}) };
  const now = options.now || (() => Date.now());
  const cluster = createCluster();
  const queue = createQueue();
  const cycles = createCycles(limits);
  const server = createServer(limits);
  const page = createPage(limits, now);
  const podExists = (key) => cluster.pods.has(key);

  /** writer(fn) is fn as one batch. */
  const writer = (fn) => (...args) => batch(() => fn(...args));

  /** Forgets every cycle, and the one chosen: the server's history is gone. */
  function forgetCycles() {
    cycles.reset();
    page.selectedCycle.value = null;
  }

  /** Whether the stream sends the Filter and Score events now. */
  function matricesStreamed() {
    const { kinds, applied } = server.streamKinds.peek();
    return applied && (!kinds || (kinds.includes('filter') && kinds.includes('score')));
  }

  /** When an event happened: {t, seq}. */
  const when = (e) => ({ t: toMillis(e.time) ?? now(), seq: e.seq ?? null });

  /** The cycle a step ran ended: say where the pod went, and the inspector follows it. */
  function stepDone(e) {
    page.stepWatch.value = null;
    const key = podKey(e.pod);
    const end = e.cycleEnd || {};
    page.selectPod(key, e.cycle);
    page.addNotice('info', end.result === 'scheduled' ? `Step: ${key} → ${end.node}` : `Step: ${key} is ${end.result || 'not placed'}${end.plugins?.length ? ` (rejected by ${end.plugins.join(', ')})` : ''}`);
  }

  function applyEvent(e) {
    if (typeof e.seq === 'number') {
      if (e.seq <= server.seq.peek()) return; // seen already
      server.seq.value = e.seq;
    }
    switch (e.kind) {
      case 'queue': {
        const moved = e.pod && e.queue ? queue.apply(e, toMillis(e.time) ?? now()) : null;
        if (moved?.step) cycles.queueStep(podKey(e.pod), moved.step, moved.failure);
        break;
      }
      case 'cycleStart': case 'point': case 'filter': case 'score': case 'extender': case 'cycleEnd': case 'permitWait': case 'bindingEnd':
        // Points without a cycle (PreEnqueue) are not shown.
        if (e.cycle && e.pod) cycles.apply(e, matricesStreamed());
        if (e.kind === 'cycleEnd' && e.pod && page.stepWatch.peek() != null && e.seq > page.stepWatch.peek()) stepDone(e);
        // Following: the inspector shows each cycle as it ends.
        else if (e.kind === 'cycleEnd' && e.pod && page.follow.peek()) page.selectPod(podKey(e.pod), null);
        break;
      case 'node':
        if (e.node?.action === 'deleted') cluster.deleteNode(e.node.object);
        else if (e.node?.object) cluster.setNode(e.node.object);
        break;
      case 'pod': {
        const pod = e.podChange?.object;
        if (!pod) break;
        if (e.podChange.action !== 'deleted') {
          if (!cluster.pods.peek(podKey(pod))) cycles.podAdded(podKey(pod));
          cluster.setPod(pod);
        } else if (cluster.deletePod(pod)) {
          queue.forget(pod);
          cycles.podDeleted(podKey(pod), when(e));
        }
        break;
      }
      case 'preemption':
        if (e.pod && e.preemption?.preemptor) cycles.preemption(podKey(e.pod), podKey(e.preemption.preemptor), e.preemption.node || '', when(e), !!e.preemption.group);
        break;
      case 'scheduler':
        if (e.scheduler) server.setScheduler(e.scheduler);
        break;
      case 'scenario':
        if (e.scenario) server.scenarioEvent(e.scenario, toMillis(e.time) ?? now());
        break;
      case 'reset': {
        forgetCycles();
        server.copy.value = null;
        server.interruptedImport.value = null;
        // A reset of its own (not a lesson's first step) ends what the
        // last lesson's banner had to say.
        const lesson = server.lessonRun();
        if (lesson && lesson.state !== 'running') page.lessonClosed.value = lesson.id;
        break;
      }
      default:
        break; // a kind from a newer server: ignore
    }
  }

  // When the last snapshot applied was taken, by the server's clock.
  let snapshotAt = null;

  function applySnapshot(snap) {
    // A snapshot taken before the one applied last is stale: the stream's,
    // overtaken by one the page asked for over REST (after an import).
    // Applying it would undo what the newer one said (that the cluster is
    // a copy); the events after it are applied as they come.
    const at = toMillis(snap.time);
    if (at != null && snapshotAt != null && at < snapshotAt) return;
    snapshotAt = at ?? snapshotAt;
    // A newer snapshot behind what was applied comes from a new server
    // process, whose history starts again: its cycle ids would collide with ours.
    if (server.snapshots.peek() > 0 && (snap.seq ?? 0) < server.seq.peek()) forgetCycles();
    server.fromSnapshot(snap);
    cluster.fromSnapshot(snap.nodes || [], snap.pods || []);
    cycles.keepPods(podExists);
    for (const { key, step, failure } of queue.fromSnapshot(snap.queue, toMillis(snap.time) ?? now(), snap.seq ?? 0)) {
      cycles.queueStep(key, step, failure);
    }
  }

  /**
   * Applies the events of the server's history up to seq upTo, the
   * snapshot's (GET /events): the queue moves become the trails the
   * snapshot could not tell, and the pods deleted before it keep their
   * story.
   */
  function applyHistory(list, upTo) {
    // Pod key -> {uid, steps, deleted}: a new uid under a name is another pod.
    const told = new Map();
    for (const e of list) {
      if (!e.pod || e.seq > upTo) continue;
      const key = podKey(e.pod);
      let p = told.get(key);
      if (!p || (e.pod.uid && p.uid && e.pod.uid !== p.uid)) told.set(key, p = { uid: e.pod.uid, steps: [], deleted: null });
      if (e.kind === 'queue' && e.queue && e.queue.action !== 'update') p.steps.push(moveStep(e.queue, when(e).t, e.seq));
      else if (e.kind === 'pod' && e.podChange?.action === 'deleted') p.deleted = when(e);
      else if (e.kind === 'preemption' && e.preemption?.preemptor) p.preemptions = [...(p.preemptions || []), e];
    }
    for (const [key, p] of told) {
      const pod = cluster.pods.peek(key);
      const current = pod ? sameUid(pod, p) : p.deleted != null;
      if (!current || !p.steps.length) continue;
      cycles.pastSteps(key, p.steps, upTo);
      if (!pod) cycles.podDeleted(key, p.deleted);
      for (const e of p.preemptions || []) cycles.preemption(key, podKey(e.preemption.preemptor), e.preemption.node || '', when(e), !!e.preemption.group);
    }
  }

  /** Applies one message of the stream. Returns its type, for logs. */
  function applyMessage(msg) {
    switch (msg?.type) {
      case 'snapshot':
        applySnapshot(msg);
        break;
      case 'events':
        for (const e of msg.events || []) applyEvent(e);
        if (typeof msg.lastSeq === 'number' && msg.lastSeq > server.seq.peek()) server.seq.value = msg.lastSeq;
        break;
      case 'resync':
        // A reset forgets the history: the page starts again from it, as
        // expected; any other resync lost events, and says so.
        if (!msg.reset) page.addNotice('info', `The stream resynchronised: ${msg.reason || 'no reason given'}${msg.dropped ? ` (${msg.dropped} events skipped)` : ''}.`);
        break;
      case 'error':
        page.addNotice('error', `The stream reported an error: ${msg.reason || 'no reason given'}`);
        break;
      case 'filter':
        // The server applies the filter asked for from now on.
        server.streamKinds.value = { ...server.streamKinds.peek(), applied: true };
        break;
      default:
        break;
    }
    return msg?.type;
  }

  return {
    limits,
    cluster,
    queue,
    cycles,
    server,
    page,
    lane: queue.lane,
    ...createSelectors({ cluster, queue, cycles, server, limits }),

    applyMessage: writer(applyMessage),
    /**
     * The state the stream built (cluster, queue, cycles, server; not the
     * page): a replay's keyframe. It shares the store's values, which are
     * replaced and never changed in place, so it costs an array per slice.
     */
    saveState: () => ({ cluster: cluster.save(), queue: queue.save(), cycles: cycles.save(), server: server.save() }),
    /** Changes some bounds from now on (a replay keeps fewer cycle details: it has the rest at hand). */
    setLimits: writer((patch) => { Object.assign(limits, patch); }),
    /** Adds cycle details built from their events ([{id, events}], oldest first): see cycles.putDetails. */
    putDetails: writer(cycles.putDetails),
    /** Holds a saved state from now on, in place of its own: as if its events had been applied to a new store. */
    loadState: writer((s) => {
      // A replay seeks back and forth: the next snapshot applies.
      snapshotAt = null;
      cluster.load(s.cluster);
      queue.load(s.queue);
      cycles.load(s.cycles);
      server.load(s.server);
    }),
    /** Runs fn (which applies messages) as one batch: the views hear of them all at once. */
    inBatch: (fn) => batch(fn),
    /** Applies events outside a message (tests, the console). */
    applyEvents: writer((events) => events.forEach(applyEvent)),
    setConnection: writer(server.setConnection),
    setScenarioRun: writer((run) => run?.id && server.setScenarioRun(run)),
    addNotice: writer(page.addNotice),
    expireNotices: writer((ms = 8000) => page.expireNotices(ms)),
    dismissNotice: writer(page.dismissNotice),
    setBusy: writer(page.setBusy),
    markInvalid: writer(page.markInvalid),
    /** Follows the next cycle that ends: the one a step runs. */
    watchStep: writer(() => { page.stepWatch.value = server.seq.peek(); }),
    /** Marks the page as a recording's ({name, header}): nothing on it may change a cluster. */
    setReplay: writer((r) => { page.replay.value = r; }),
    setTheme: writer((t) => { page.theme.value = t; }),
    setProjector: writer((on) => { page.projector.value = !!on; }),
    setBench: writer((b) => { page.bench.value = b; }),
    setConfirmReset: writer((on) => { page.confirmReset.value = !!on; }),
    closeLesson: writer((id) => { page.lessonClosed.value = id; }),
    editNode: writer((name) => { page.editingNode.value = name; }),
    setView: writer(page.setView),
    /** Shows a view and focuses an element of it (by id), or clears the request. */
    focusOn: writer((view, id) => { if (view) page.setView(view); page.focus.value = id; }),
    selectPod: writer((key, cycleId = null, view = null) => page.selectPod(key, cycleId, view)),
    setFollow: writer((on) => { page.follow.value = !!on; }),
    selectCycle: writer((id) => { page.selectedCycle.value = id; }),
    setCycleLoading: writer((id) => { page.cycleLoading.value = id; }),
    addFetchedCycle: writer(cycles.addFetched),
    addRemoteCycles: writer(cycles.addRemote),
    addCycleSummaries: writer((items) => cycles.addSummaries(items, podExists)),
    applyHistory: writer(applyHistory),
    setPriorityClasses: writer((items) => { cluster.priorityClasses.value = items; }),
    setPlugins: writer((view) => { server.plugins.value = view; }),
    /** The last comparison; a new one forgets the pod shown from the one before. */
    setComparison: writer((c) => {
      if (c?.id !== server.comparison.peek()?.id) server.comparedPod.value = null;
      server.comparison.value = c;
    }),
    setComparedPod: writer((d) => { server.comparedPod.value = d; }),
    setExplanation: writer((e) => { server.explanation.value = e; }),
    /** A node tried for the explanation shown ({key, node, state, result | error}); late news of another pod's is dropped. */
    setTrial: writer((t) => {
      const e = server.explanation.peek();
      if (e?.key === t.key) server.explanation.value = { ...e, trial: t };
    }),
    setMirror: writer((m) => { server.mirror.value = m; }),
    /**
     * The stream asks for these kinds (null: all); applied says whether the
     * server filters so already (a new connection's URL) or will say so.
     */
    setStreamKinds: writer((kinds, applied) => {
      const old = server.streamKinds.peek();
      const same = String(old.kinds) === String(kinds);
      if (!same) cycles.matricesChanged();
      server.streamKinds.value = { kinds, applied };
    }),
  };
}

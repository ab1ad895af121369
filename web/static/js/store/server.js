// server.js: what the page knows of the server itself: the connection, how
// far the stream got, the scheduler's state, the stream's vocabulary, and
// the scenario runs, the last comparison.

import { signal } from '../signals.js';

/** The vocabulary until the first snapshot brings the server's: no names yet. */
const NO_VOCABULARY = Object.freeze({ codes: [], extensionPoints: [], kinds: [], queues: [], results: [] });

/** The states a scenario run ends in. */
const SCENARIO_END = new Set(['passed', 'failed', 'cancelled', 'error']);

export function createServer(limits) {
  const conn = signal({ status: 'idle', attempt: 0, retryAt: null, error: '', since: null });
  // The highest sequence number applied; the stream resumes after it.
  const seq = signal(0);
  // Snapshots applied: the first and one after every resync.
  const snapshots = signal(0);
  // The oldest event the server's history held at the last snapshot, and
  // its byte cap (--history-bytes).
  const historyFirstSeq = signal(0);
  const historyMaxBytes = signal(0);
  const scheduler = signal({ state: 'unknown', generation: 0, steps: 0, message: '' });
  // The names the stream uses: status codes by number, extension points,
  // event kinds, queues, cycle results.
  const vocabulary = signal(NO_VOCABULARY);
  // Scenario runs, oldest first.
  const scenarios = signal([]);
  // GET /scheduler/plugins of the running scheduler: {available, enabled,
  // plugins: [{name, extensionPoints, events}], required}, or null.
  const plugins = signal(null);
  // The kinds of event the stream was asked for (null: all of them), and
  // whether the server applies that filter yet (it does from a
  // connection's start, and after it answers a filter message).
  const streamKinds = signal({ kinds: null, applied: true });
  // What the cluster is a copy of ({kind, source, at}), or null: the
  // snapshot says, a reset ends it.
  const copy = signal(null);
  // An import a crash cut off ({kind, source, began, nodes, pods,
  // resumable}), or null: the snapshot says, a reset or a finished import
  // ends it.
  const interruptedImport = signal(null);
  // The last comparison of two configurations (GET /compare), or null; and
  // the pod whose two cycles it shows ({pod, a, b}: GET /compare/pods/...).
  const comparison = signal(null);
  const comparedPod = signal(null);
  // A mirrored copy's state (GET /mirror), or null.
  const mirror = signal(null);
  // The last explanation asked for ({key, ...explanation} or {key, error}),
  // or null; trial is the last node tried for it (setTrial).
  const explanation = signal(null);
  // The feature gates --feature-gates set for this run ({Gate: bool}).
  const featureGates = signal({});

  function setScheduler(s) {
    scheduler.value = { steps: 0, message: '', ...s };
  }

  /**
   * Merges what is known of a scenario run. A run keeps its place: a new
   * run goes last, and news of an older one (its end, told late) updates it
   * where it is, so that it never takes the lesson banner from the newest.
   */
  function setScenarioRun(run) {
    const list = scenarios.peek();
    const at = list.findIndex((r) => r.id === run.id);
    if (at < 0) {
      scenarios.value = [...list, run].slice(-limits.scenarios);
      return;
    }
    const next = list.slice();
    next[at] = { ...list[at], ...run };
    scenarios.value = next;
  }

  return {
    conn,
    seq,
    snapshots,
    historyFirstSeq,
    historyMaxBytes,
    scheduler,
    vocabulary,
    scenarios,
    plugins,
    streamKinds,
    comparison,
    comparedPod,
    mirror,
    explanation,
    copy,
    interruptedImport,
    featureGates,
    setScheduler,
    setScenarioRun,

    /** What the events told (not the connection), to load into another store. */
    save() {
      return {
        seq: seq.peek(), snapshots: snapshots.peek(), historyFirstSeq: historyFirstSeq.peek(), historyMaxBytes: historyMaxBytes.peek(), scheduler: scheduler.peek(), vocabulary: vocabulary.peek(),
        scenarios: scenarios.peek(), plugins: plugins.peek(), streamKinds: streamKinds.peek(), copy: copy.peek(), interruptedImport: interruptedImport.peek(),
        featureGates: featureGates.peek(),
      };
    },

    load(s) {
      seq.value = s.seq;
      snapshots.value = s.snapshots;
      historyFirstSeq.value = s.historyFirstSeq;
      historyMaxBytes.value = s.historyMaxBytes ?? 0;
      scheduler.value = s.scheduler;
      vocabulary.value = s.vocabulary;
      scenarios.value = s.scenarios;
      plugins.value = s.plugins;
      streamKinds.value = s.streamKinds;
      copy.value = s.copy ?? null;
      interruptedImport.value = s.interruptedImport ?? null;
      featureGates.value = s.featureGates ?? {};
    },

    setConnection(patch) {
      conn.value = { ...conn.peek(), ...patch };
    },

    fromSnapshot(snap) {
      seq.value = snap.seq ?? 0;
      snapshots.value = snapshots.peek() + 1;
      historyFirstSeq.value = snap.history?.firstSeq ?? 0;
      historyMaxBytes.value = snap.history?.maxBytes ?? 0;
      if (snap.scheduler) setScheduler(snap.scheduler);
      vocabulary.value = snap.vocabulary || NO_VOCABULARY;
      copy.value = snap.copy || null;
      interruptedImport.value = snap.interruptedImport || null;
      featureGates.value = snap.featureGates || {};
    },

    /**
     * A scenario event: its phase names the run's end when it is one of the
     * end states. The run keeps the steps it told of ({step, message,
     * note}, one per step, the newest message), for the lesson banner: note
     * is what to look at while the step runs; the event of a running step
     * carries it, and the step keeps it once the run has moved on or ended.
     */
    /** The newest run that is a lesson of its own: not a part of a comparison. */
    lessonRun() {
      return scenarios.value.findLast((r) => !r.partOf) ?? null;
    },

    scenarioEvent(s, t) {
      const prev = scenarios.peek().find((r) => r.id === s.id);
      const old = prev?.log?.find((l) => l.step === s.step);
      const log = (prev?.log || []).filter((l) => l.step !== s.step);
      const note = s.note || (s.phase === 'running' ? '' : old?.note || '');
      if (s.message || note || old) log.push({ step: s.step, message: s.message || old?.message || '', note, t });
      setScenarioRun({ ...s, note: s.note || '', state: SCENARIO_END.has(s.phase) ? s.phase : prev?.state || 'running', log: log.slice(-limits.lessonSteps) });
    },
  };
}

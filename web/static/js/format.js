// format.js: turning the stream's numbers into words and short figures.
// Pure functions, no DOM: tested with node --test.

/** codeName(3, vocabulary.codes) -> "UnschedulableAndUnresolvable". */
export function codeName(code, codes) {
  return codes[code] ?? `code ${code}`;
}

// Colours and icons by status name.
const CODE_CLASSES = Object.freeze({
  Success: 'pass',
  Error: 'error',
  Unschedulable: 'fail',
  UnschedulableAndUnresolvable: 'fail',
  Wait: 'wait',
  Pending: 'wait',
  Skip: 'skip',
});

/** A short class name for a status name: pass, fail, wait, skip or error. */
export function codeClass(name) {
  return CODE_CLASSES[name] || 'error';
}

/** CPU in millicores -> cores: "0.5", "2", "1.25". */
export function formatCpu(milli) {
  if (milli == null || Number.isNaN(milli)) return '–';
  return trim((milli / 1000).toFixed(3));
}

/** CPU in millicores with its unit: "0.5 cores", "1 core", "2 cores". */
export function formatCores(milli) {
  const cores = formatCpu(milli);
  return cores === '–' ? cores : plural(Number(cores), 'core');
}

/** plural(1, "pod") -> "1 pod"; plural(3, "pod") -> "3 pods". */
export function plural(n, word, many = `${word}s`) {
  return `${n} ${n === 1 ? word : many}`;
}

const BINARY = [
  ['Ti', 2 ** 40],
  ['Gi', 2 ** 30],
  ['Mi', 2 ** 20],
  ['Ki', 2 ** 10],
];

/** Bytes -> "16Gi", "1.5Gi", "512Mi", "100" (bytes). */
export function formatBytes(bytes) {
  if (bytes == null || Number.isNaN(bytes)) return '–';
  if (bytes === 0) return '0';
  for (const [unit, size] of BINARY) {
    if (bytes >= size) return `${trim((bytes / size).toFixed(bytes % size === 0 ? 0 : 1))}${unit}`;
  }
  return `${bytes}B`;
}

function trim(s) {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** Nanoseconds -> "820 ns", "12.3 µs", "4.5 ms", "1.20 s". */
export function formatNanos(ns) {
  if (ns == null || Number.isNaN(ns)) return '–';
  if (ns < 1_000) return `${Math.round(ns)} ns`;
  if (ns < 1_000_000) return `${sig(ns / 1_000)} µs`;
  if (ns < 1_000_000_000) return `${sig(ns / 1_000_000)} ms`;
  return `${(ns / 1_000_000_000).toFixed(2)} s`;
}

function sig(v) {
  return v >= 100 ? String(Math.round(v)) : trim(v.toFixed(1));
}

/** Milliseconds left -> "4.2 s", "1 min 5 s"; "now" when due. */
/** A count for a narrow place: exact below 10,000, then 12.3k, 123k, 1.2M. */
export function shortCount(n) {
  if (n < 10_000) return String(n);
  if (n < 1_000_000) return `${n < 100_000 ? (Math.floor(n / 100) / 10).toFixed(1).replace(/\.0$/, '') : Math.floor(n / 1000)}k`;
  return `${(Math.floor(n / 100_000) / 10).toFixed(1).replace(/\.0$/, '')}M`;
}

export function formatCountdown(ms) {
  if (ms == null) return '';
  if (ms <= 0) return 'now';
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** How long ago, in words: "just now", "12 s ago", "3 min ago", "2 h ago". */
export function formatAgo(ms, now) {
  if (ms == null) return '';
  const d = Math.max(0, now - ms);
  if (d < 1500) return 'just now';
  const s = Math.round(d / 1000);
  if (s < 60) return `${s} s ago`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  return `${Math.round(m / 60)} h ago`;
}

/** A duration in ms -> "850 ms", "4.2 s", "3 min 5 s". */
export function formatDuration(ms) {
  if (ms == null || Number.isNaN(ms)) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${trim((ms / 1000).toFixed(1))} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** A clock time "17:27:18" in the viewer's zone. */
export function formatClock(ms) {
  if (ms == null) return '';
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** "HH:MM:SS.mmm": a time to the millisecond (a replay's events are milliseconds apart). */
export function formatClockMs(ms) {
  if (ms == null) return '';
  return `${formatClock(ms)}.${String(Math.floor(ms) % 1000).padStart(3, '0')}`;
}

/** "ns/name", or "name" for the default namespace when short is set. */
export function podLabel(ref, short = true) {
  if (!ref) return '';
  return short && ref.namespace === 'default' ? ref.name : `${ref.namespace}/${ref.name}`;
}

/** podLabel of a pod key: "default/web" -> "web", "ns/web" -> "ns/web". */
export function keyLabel(key) {
  return key.startsWith('default/') ? key.slice('default/'.length) : key;
}

/**
 * A plugin's reason as a person reads it. Upstream's messages count
 * without a plural ("preempting 1 victims"): one thing is said in the
 * singular.
 */
export function tidyReason(text) {
  return String(text || '').replace(/(^|[^\d/.])1 victims\b/g, '$11 victim');
}

/** A percentage 0..100 of used over total, clamped; with no total, 100 when anything is used. */
export function percent(used, total) {
  if (!total) return used > 0 ? 100 : 0;
  return Math.max(0, Math.min(100, (used / total) * 100));
}

/** A taint as kubectl prints it: key=value:Effect. */
export function formatTaint(t) {
  return `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`;
}

const QUEUE_TITLES = Object.freeze({
  active: 'activeQ',
  backoff: 'backoffQ',
  errorBackoff: 'error backoff',
  unschedulable: 'unschedulable',
  inFlight: 'in flight',
  incompletePodGroup: 'waiting for its PodGroup',
  pendingPodGroup: 'waiting for its group\'s cycle',
});

/** A queue's name as the dashboard shows it. */
export function queueTitle(name) {
  return QUEUE_TITLES[name] || name;
}

/**
 * What a queue card says of why the pod waits: [{kind, text}], kind
 * "gate" (a PreEnqueue plugin holds it), "rejected" (the plugins that
 * rejected its last attempt), "hinted" (the plugins whose QueueingHint
 * said Queue to the cluster event that moved it) or "skipped" (the last
 * cluster event since, which its hints answered QueueSkip to; the plugins
 * are named unless they are all that rejected it).
 */
export function waitReasons(entry) {
  if (entry.gatingPlugin) return [{ kind: 'gate', text: `gated by ${entry.gatingPlugin}` }];
  const out = [];
  if (entry.rejectedBy?.length) out.push({ kind: 'rejected', text: `rejected by ${entry.rejectedBy.join(', ')}` });
  if (entry.hintedBy?.length) out.push({ kind: 'hinted', text: `${entry.hintedBy.join(', ')} said Queue${entry.event ? ` on ${entry.event}` : ''}` });
  // The hints that answered are those of the plugins that rejected the
  // pod, most often all of them: then the words need not name them again.
  const skip = entry.skip;
  if (skip?.plugins?.length) {
    const all = skip.plugins.length === entry.rejectedBy?.length && skip.plugins.every((p) => entry.rejectedBy.includes(p));
    out.push({ kind: 'skipped', text: `${skip.event}${skip.object ? ` (${skip.object})` : ''}: ${all ? 'QueueSkip' : `${skip.plugins.join(', ')} said QueueSkip`}` });
  }
  return out;
}

/** Words for what moved a pod (the queue event's label). */
export function describeMove(event) {
  switch (event) {
    case 'PodAdd': return 'added';
    case 'Pop': return 'popped for a cycle';
    case 'BackoffComplete': return 'backoff over';
    case 'PopFromBackoffQ': return 'popped from backoffQ (activeQ was empty)';
    case 'UnschedulableTimeout': return 'waited too long in unschedulable';
    case 'ForceActivate': return 'activated';
    case 'ScheduleAttemptFailure': return 'attempt failed';
    case 'PodUpdate': return 'pod updated';
    case 'PodDelete': return 'pod deleted';
    case undefined: case null: case '': return '';
    default: return `moved by ${event}`;
  }
}

/**
 * A mirror's state in words (GET /mirror): in step or how far behind, and
 * how many pods minisched placed elsewhere than the real scheduler did.
 */
export function mirrorWords(m) {
  if (m.stopped) return 'The mirror has stopped: the copy no longer follows its source.';
  if (!m.synced) return 'Reading the source…';
  const lag = m.behind ? `${plural(m.behind, 'change')} behind (the oldest ${formatDuration(m.lagNanos / 1e6)})` : 'in step with its source';
  const placed = m.compared ? `; ${m.differ} of ${plural(m.compared, 'pod')} placed elsewhere than the real scheduler did` : '';
  const failing = m.lastError ? `; failing: ${m.lastError}` : '';
  return `Mirror ${lag}${placed}${failing}.`;
}

/**
 * podLife is a pod's life apart from its scheduling: waiting (not bound),
 * starting (bound, not yet running), Running, Ready, Terminating,
 * Succeeded or Failed, as the kubelet and the apiserver report it.
 */
export function podLife(pod) {
  if (!pod) return '';
  if (pod.terminating) return 'Terminating';
  if (pod.phase === 'Succeeded' || pod.phase === 'Failed') return pod.phase;
  if (!pod.nodeName) return 'waiting';
  if (pod.phase === 'Running') return pod.ready ? 'Running, Ready' : 'Running';
  return 'bound, starting';
}

/** Words for a cycle's outcome: "scheduled on n1", "unschedulable"... */
export function outcomeText(summary) {
  if (!summary) return '';
  const end = summary.end;
  if (!end) return summary.waiting ? 'waiting at Permit' : 'running';
  if (end.result === 'scheduled') {
    if (summary.binding && !summary.binding.bound) return `binding to ${summary.binding.node} failed`;
    if (summary.binding?.bound) return `bound to ${end.node}`;
    if (summary.waiting) return `scheduled on ${end.node}, waiting at Permit`;
    return `scheduled on ${end.node}`;
  }
  return end.result;
}

/** A class name for a cycle's outcome. */
export function outcomeClass(summary) {
  const end = summary?.end;
  if (!end) return 'running';
  if (end.result === 'scheduled') return summary.binding && !summary.binding.bound ? 'error' : 'scheduled';
  return end.result;
}

// What a cluster event's resource is, in words, longest name first so that
// PersistentVolumeClaim is not read as PersistentVolume.
const EVENT_SUBJECTS = [
  ['UnscheduledPod', 'a pending pod'], ['AssignedPod', 'a scheduled pod'], ['TargetPod', 'this pod'], ['Pod', 'a pod'],
  ['Node', 'a node'], ['PersistentVolumeClaim', 'a PersistentVolumeClaim'], ['PersistentVolume', 'a PersistentVolume'],
];
// What happened to it: a verb, or (its ...) a part that changed.
const EVENT_ACTIONS = Object.freeze({
  Add: { verb: 'added' }, Delete: { verb: 'deleted' }, Update: { verb: 'changed' }, All: { verb: 'added, changed or deleted' },
  UpdatePodScaleDown: { verb: 'scaled down' }, UpdatePodScaleUp: { verb: 'scaled up' },
  UpdatePodSchedulingGatesEliminated: { verb: 'freed of its scheduling gates' },
  UpdateNodeAllocatable: { part: 'allocatable' }, UpdateNodeLabel: { part: 'labels' }, UpdateNodeTaint: { part: 'taints' },
  UpdateNodeCondition: { part: 'conditions' }, UpdateNodeAnnotation: { part: 'annotations' },
  UpdateNodeDeclaredFeature: { part: 'declared features' }, UpdateNodePreemptionPolicy: { part: 'preemption policy' },
  UpdatePodLabel: { part: 'labels' }, UpdatePodToleration: { part: 'tolerations' },
  UpdatePodGeneratedResourceClaim: { part: 'generated ResourceClaim' },
});

/** Splits a cluster event's label (NodeUpdateNodeLabel) into {subject, action}; action null when unknown. */
function parseEvent(label) {
  let resource = '';
  let rest = label;
  const known = EVENT_SUBJECTS.find(([r]) => label.startsWith(r));
  if (known) {
    resource = known[1];
    rest = label.slice(known[0].length);
  } else {
    // group/Kind then the action: storage.k8s.io/CSINodeAdd.
    const m = /^(?:[^/]+\/)?(.*?)(Add|Delete|Update\w*|All)$/.exec(label);
    if (!m) return { subject: label, action: null, raw: '' };
    resource = `a ${m[1]}`;
    rest = m[2];
  }
  return { subject: resource, action: EVENT_ACTIONS[rest] || null, raw: rest };
}

function orList(items) {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

/**
 * wakeWords says in words what the cluster events a plugin registered
 * are: ["NodeAdd", "NodeUpdateNodeAllocatable", "AssignedPodDelete"] gives
 * "a node added, or its allocatable changed; a scheduled pod deleted".
 * An event it cannot read is named as it is.
 */
export function wakeWords(events) {
  const bySubject = new Map();
  for (const label of events || []) {
    const { subject, action, raw } = parseEvent(label);
    let g = bySubject.get(subject);
    if (!g) bySubject.set(subject, g = { verbs: [], parts: [], raw: [] });
    if (!action) {
      if (raw) g.raw.push(raw);
    } else if (action.verb) g.verbs.push(action.verb);
    else g.parts.push(action.part);
  }
  const phrases = [];
  for (const [subject, g] of bySubject) {
    const said = [];
    if (g.verbs.length) said.push(orList([...new Set(g.verbs)]));
    if (g.parts.length) said.push(`its ${orList([...new Set(g.parts)])} changed`);
    if (g.raw.length) said.push(orList(g.raw));
    phrases.push([subject, said.join(', or ')].filter(Boolean).join(' '));
  }
  return phrases.join('; ');
}

// manifests.js: node, pod, workload and PriorityClass manifests from the
// dashboard's forms (the scheduler's configuration is in schedconfig.js).
// Pure functions, no DOM: tested with node --test. Every parser throws a
// FormError whose message says in words what to fix.

export const PAUSE_IMAGE = 'pause:3.10';

export const EFFECTS = Object.freeze(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
export const OPERATORS = Object.freeze(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']);
// The built-in DRA driver publishes this many devices for a node (the Go
// devices package's CountAnnotation and MaxDevices).
export const DEVICES_ANNOTATION = 'devices.minisched.io/count';
export const MAX_DEVICES = 64;
// The DeviceClass that selects them (the Go devices package's ClassName).
export const DEVICE_CLASS = 'devices.minisched.io';

export class FormError extends Error {
  constructor(field, message) {
    super(message);
    this.field = field;
  }
}

/** at(input, fn): fn's result; a FormError it throws names the form's input. */
function at(input, fn) {
  try {
    return fn();
  } catch (err) {
    if (err instanceof FormError) err.field = input;
    throw err;
  }
}

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;
const CPU = /^(\d+(\.\d+)?|\d+m)$/;
const MEMORY = /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$/;

function split(text) {
  return String(text || '').split(/[,\n]/).map((s) => s.trim()).filter(Boolean);
}

/** checkName validates a DNS-1123 object name. */
export function checkName(field, name) {
  const n = String(name || '').trim();
  if (!n) throw new FormError(field, `${field}: give a name`);
  if (n.length > 253 || !NAME.test(n)) {
    throw new FormError(field, `${field} "${n}": use lower-case letters, digits, "-" and ".", starting and ending with a letter or digit`);
  }
  return n;
}

/** parseLabels("app=web, tier=db") -> {app: "web", tier: "db"}. */
export function parseLabels(text, field = 'labels') {
  const out = {};
  for (const part of split(text)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new FormError(field, `${field}: "${part}" is not key=value`);
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!LABEL_KEY.test(key)) throw new FormError(field, `${field}: "${key}" is not a valid label key`);
    if (value.length > 63 || !LABEL_VALUE.test(value)) throw new FormError(field, `${field}: "${value}" is not a valid label value`);
    out[key] = value;
  }
  return out;
}

/** parseTaints("gpu=true:NoSchedule, maintenance:NoExecute"). */
export function parseTaints(text, field = 'taints') {
  return split(text).map((part) => {
    const colon = part.lastIndexOf(':');
    if (colon <= 0) throw new FormError(field, `${field}: "${part}" needs an effect, as in key=value:NoSchedule`);
    const effect = part.slice(colon + 1).trim();
    if (!EFFECTS.includes(effect)) throw new FormError(field, `${field}: effect "${effect}" is not one of ${EFFECTS.join(', ')}`);
    const kv = part.slice(0, colon);
    const eq = kv.indexOf('=');
    const key = (eq < 0 ? kv : kv.slice(0, eq)).trim();
    const value = eq < 0 ? '' : kv.slice(eq + 1).trim();
    if (!LABEL_KEY.test(key)) throw new FormError(field, `${field}: "${key}" is not a valid taint key`);
    const t = { key, effect };
    if (value) t.value = value;
    return t;
  });
}

/**
 * parseTolerations: "gpu=true:NoSchedule" (Equal), "gpu:NoSchedule" or
 * "gpu" (Exists, any effect when none), "*" (tolerate everything).
 */
export function parseTolerations(text, field = 'tolerations') {
  return split(text).map((part) => {
    if (part === '*') return { operator: 'Exists' };
    let effect = '';
    let kv = part;
    const colon = part.lastIndexOf(':');
    if (colon > 0) {
      effect = part.slice(colon + 1).trim();
      kv = part.slice(0, colon);
      if (effect && !EFFECTS.includes(effect)) throw new FormError(field, `${field}: effect "${effect}" is not one of ${EFFECTS.join(', ')}`);
    }
    const eq = kv.indexOf('=');
    const key = (eq < 0 ? kv : kv.slice(0, eq)).trim();
    if (!LABEL_KEY.test(key)) throw new FormError(field, `${field}: "${key}" is not a valid key`);
    const t = eq < 0 ? { key, operator: 'Exists' } : { key, operator: 'Equal', value: kv.slice(eq + 1).trim() };
    if (effect) t.effect = effect;
    return t;
  });
}

/**
 * parseAffinity: required node affinity terms, ANDed:
 * "zone In a|b, disk Exists, gpu NotIn no".
 */
export function parseAffinity(text, field = 'node affinity') {
  return split(text).map((part) => {
    const [key, op, values = ''] = part.split(/\s+/);
    if (!key || !op) throw new FormError(field, `${field}: "${part}" is not "key Operator value|value"`);
    if (!OPERATORS.includes(op)) throw new FormError(field, `${field}: operator "${op}" is not one of ${OPERATORS.join(', ')}`);
    if (!LABEL_KEY.test(key)) throw new FormError(field, `${field}: "${key}" is not a valid label key`);
    const req = { key, operator: op };
    const vals = values.split('|').map((v) => v.trim()).filter(Boolean);
    if (op === 'Exists' || op === 'DoesNotExist') {
      if (vals.length) throw new FormError(field, `${field}: ${op} takes no values`);
    } else {
      if (!vals.length) throw new FormError(field, `${field}: ${op} needs values, as in ${key} ${op} a|b`);
      req.values = vals;
    }
    return req;
  });
}

/** checkCpu("500m") -> "500m"; "" -> null. */
export function checkCpu(text, field = 'cpu') {
  const v = String(text ?? '').trim();
  if (!v) return null;
  if (!CPU.test(v)) throw new FormError(field, `${field} "${v}": write cores (2, 0.5) or millicores (500m)`);
  return v;
}

const MEMORY_UNITS = Object.freeze({ '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 });

/**
 * beyondEveryNode names what a pod manifest of the form's (podManifest)
 * asks for beyond the largest node of the cluster (nodes: summaries, their
 * allocatable in millicores and bytes): [{resource, asked, most}] in those
 * units; empty when some node could hold each request, or with no node.
 */
export function beyondEveryNode(pod, nodes) {
  const requests = pod.spec.containers[0]?.resources?.requests || {};
  const asked = {};
  if (requests.cpu) asked.cpu = requests.cpu.endsWith('m') ? Number(requests.cpu.slice(0, -1)) : Number(requests.cpu) * 1000;
  if (requests.memory) {
    const [, n, unit = ''] = /^([\d.]+)([A-Za-z]*)$/.exec(requests.memory) || [];
    asked.memory = Number(n) * (MEMORY_UNITS[unit] ?? NaN);
  }
  const out = [];
  if (!nodes.length) return out;
  for (const [resource, value] of Object.entries(asked)) {
    const most = Math.max(...nodes.map((n) => n.allocatable?.[resource] ?? 0));
    if (Number.isFinite(value) && value > most) out.push({ resource, asked: value, most });
  }
  return out;
}

/** checkMemory("1Gi") -> "1Gi"; "" -> null. */
export function checkMemory(text, field = 'memory') {
  const v = String(text ?? '').trim();
  if (!v) return null;
  if (!MEMORY.test(v)) throw new FormError(field, `${field} "${v}": write bytes with a unit (512Mi, 4Gi)`);
  return v;
}

/** allocatableOf reads the CPU, memory and pods fields; empty ones are left out. */
function allocatableOf(form) {
  const allocatable = {};
  const cpu = at('cpu', () => checkCpu(form.cpu, 'CPU'));
  const memory = at('memory', () => checkMemory(form.memory, 'memory'));
  const pods = String(form.pods ?? '').trim();
  if (cpu) allocatable.cpu = cpu;
  if (memory) allocatable.memory = memory;
  if (pods) {
    if (!/^\d+$/.test(pods)) throw new FormError('pods', `pods "${pods}": write a whole number`);
    allocatable.pods = pods;
  }
  return allocatable;
}

/** checkDevices("2") -> 2; "" -> 0. */
export function checkDevices(text) {
  const v = String(text ?? '').trim();
  if (!v) return 0;
  if (!/^\d+$/.test(v) || Number(v) > MAX_DEVICES) throw new FormError('devices', `devices "${v}": write a whole number from 0 to ${MAX_DEVICES}`);
  return Number(v);
}

/** nodeManifest builds a Node from the node form. */
export function nodeManifest(form) {
  const name = at('name', () => checkName('node name', form.name));
  const allocatable = allocatableOf(form);
  const labels = at('labels', () => parseLabels(form.labels, 'node labels'));
  const taints = at('taints', () => parseTaints(form.taints));
  const devices = checkDevices(form.devices);
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: {}, status: { allocatable, capacity: { ...allocatable } } };
  if (devices) node.metadata.annotations = { [DEVICES_ANNOTATION]: String(devices) };
  if (Object.keys(labels).length) node.metadata.labels = { ...labels };
  if (!labels['kubernetes.io/hostname']) node.metadata.labels = { ...node.metadata.labels, 'kubernetes.io/hostname': name };
  if (taints.length) node.spec.taints = taints;
  if (form.unschedulable) node.spec.unschedulable = true;
  return node;
}

/**
 * nodeEditForm is the node editor's fields for a node as the stream
 * summarises it (CPU in millicores, memory in bytes): labels but the
 * hostname, taints, allocatable, devices.
 */
export function nodeEditForm(node) {
  const a = node.allocatable || {};
  return {
    labels: Object.entries(node.labels || {}).filter(([k]) => k !== 'kubernetes.io/hostname').map(([k, v]) => `${k}=${v}`).join(', '),
    taints: (node.taints || []).map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(', '),
    cpu: a.cpu != null ? String(a.cpu / 1000) : '',
    memory: a.memory != null ? memoryText(a.memory) : '',
    pods: a.pods != null ? String(a.pods) : '',
    devices: String(node.devices || 0),
  };
}

function memoryText(bytes) {
  for (const [unit, size] of [['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]]) if (bytes % size === 0) return `${bytes / size}${unit}`;
  return String(bytes);
}

/**
 * nodePatch builds PATCH /nodes/{name}'s body from the node editor: each
 * field replaces that part of the node; the hostname label stays.
 */
export function nodePatch(name, form) {
  const labels = at('labels', () => parseLabels(form.labels, 'node labels'));
  if (!labels['kubernetes.io/hostname']) labels['kubernetes.io/hostname'] = name;
  const allocatable = allocatableOf(form);
  return { labels, taints: at('taints', () => parseTaints(form.taints)), allocatable, devices: checkDevices(form.devices) };
}

/** podManifest builds a Pod from the pod form (one pause container). */
export function podManifest(form) {
  const name = at('name', () => checkName('pod name', form.name));
  const namespace = at('namespace', () => checkName('namespace', form.namespace || 'default'));
  const requests = {};
  const cpu = at('cpu', () => checkCpu(form.cpu, 'CPU request'));
  const memory = at('memory', () => checkMemory(form.memory, 'memory request'));
  if (cpu) requests.cpu = cpu;
  if (memory) requests.memory = memory;
  const container = { name: 'app', image: PAUSE_IMAGE };
  if (Object.keys(requests).length) container.resources = { requests };
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { containers: [container] } };
  const labels = at('labels', () => parseLabels(form.labels, 'pod labels'));
  if (Object.keys(labels).length) pod.metadata.labels = labels;
  const selector = at('nodeSelector', () => parseLabels(form.nodeSelector, 'node selector'));
  if (Object.keys(selector).length) pod.spec.nodeSelector = selector;
  const tolerations = at('tolerations', () => parseTolerations(form.tolerations));
  if (tolerations.length) pod.spec.tolerations = tolerations;
  const affinity = at('affinity', () => parseAffinity(form.affinity));
  if (affinity.length) {
    pod.spec.affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: affinity }] } } };
  }
  if (form.priorityClassName) pod.spec.priorityClassName = form.priorityClassName;
  if (form.schedulerName) pod.spec.schedulerName = form.schedulerName;
  return pod;
}

/**
 * podManifests builds count pods: name-1, name-2... when count > 1.
 */
export function podManifests(form) {
  const count = Number(form.count || 1);
  if (!Number.isInteger(count) || count < 1 || count > 500) throw new FormError('count', 'count: write a whole number from 1 to 500');
  if (count === 1) return [podManifest(form)];
  const out = [];
  for (let i = 1; i <= count; i++) out.push(podManifest({ ...form, name: `${form.name}-${i}` }));
  return out;
}

/** The workloads the pod form can make instead of pods, and the API's route for each. */
export const WORKLOADS = Object.freeze({ Deployment: 'deployments', DaemonSet: 'daemonsets' });

/**
 * workloadManifest builds a Deployment (count replicas) or a DaemonSet
 * (one pod per node) from the pod form: its pod template is the form's
 * pod, labelled app=<name> for the selector.
 */
export function workloadManifest(kind, form) {
  if (!WORKLOADS[kind]) throw new FormError('kind', `kind "${kind}": make a ${Object.keys(WORKLOADS).join(' or a ')}`);
  const pod = podManifest(form);
  const { name, namespace } = pod.metadata;
  const labels = { ...pod.metadata.labels, app: pod.metadata.labels?.app || name };
  const spec = { selector: { matchLabels: { app: labels.app } }, template: { metadata: { labels }, spec: pod.spec } };
  if (kind === 'Deployment') {
    const replicas = Number(form.count || 1);
    if (!Number.isInteger(replicas) || replicas < 0 || replicas > 500) throw new FormError('count', 'replicas: write a whole number from 0 to 500');
    spec.replicas = replicas;
  }
  return { apiVersion: 'apps/v1', kind, metadata: { name, namespace }, spec };
}

/** nextName("node", existing names) -> "node-3", the first free one. */
export function nextName(prefix, taken) {
  const has = typeof taken === 'function' ? taken : (n) => taken.has(n);
  for (let i = 1; ; i++) {
    const n = `${prefix}-${i}`;
    if (!has(n)) return n;
  }
}

/** The kinds a pasted manifest may create, and the API's route for each. */
export const MANIFEST_ROUTES = Object.freeze({ Node: 'nodes', Pod: 'pods', PriorityClass: 'priorityclasses', ...WORKLOADS });

/**
 * splitDocuments cuts a pasted YAML stream at its "---" lines: [{index,
 * line, text, kind, name}], line the first line of the document (1-based),
 * kind and name as far as they can be read without parsing; documents
 * holding only comments and blanks are left out.
 */
export function splitDocuments(text) {
  const lines = String(text || '').split('\n');
  const docs = [];
  let start = 0;
  const flush = (end) => {
    const body = lines.slice(start, end).join('\n');
    if (body.split('\n').some((l) => l.trim() && !l.trim().startsWith('#'))) {
      docs.push({ index: docs.length, line: start + 1, text: body, kind: manifestKind(body), name: manifestName(body) });
    }
  };
  lines.forEach((l, i) => {
    if (/^---(\s.*)?$/.test(l)) {
      flush(i);
      start = i + 1;
    }
  });
  flush(lines.length);
  return docs;
}

/**
 * linesInPaste turns the line numbers of an error about one document
 * ("yaml: line 8", "(line 5)", counted from the document's first line)
 * into lines of the whole paste, whose document starts at firstLine.
 */
export function linesInPaste(message, firstLine) {
  return String(message).replace(/\bline (\d+)\b/g, (_, n) => `line ${Number(n) + firstLine - 1}`);
}

/** The metadata.name of a manifest, as far as a glance can tell, or "". */
export function manifestName(text) {
  const src = String(text || '');
  const flow = /^metadata\s*:\s*\{[^}]*\bname\s*:\s*["']?([-a-z0-9.]+)/m.exec(src);
  if (flow) return flow[1];
  const block = /^metadata\s*:\s*\n((?:[ \t]+.*\n?)*)/m.exec(src);
  const name = block && /^[ \t]+name\s*:\s*["']?([-a-z0-9.]+)/m.exec(block[1]);
  if (name) return name[1];
  try {
    return JSON.parse(src)?.metadata?.name || '';
  } catch {
    return '';
  }
}

/** priorityClassManifest builds a PriorityClass from its form. */
export function priorityClassManifest(form) {
  const name = at('name', () => checkName('class name', form.name));
  const value = String(form.value ?? '').trim();
  if (!/^-?\d+$/.test(value) || Math.abs(Number(value)) > 1_000_000_000) {
    throw new FormError('value', `value "${value}": write a whole number up to 1000000000 (higher ones are for system- classes)`);
  }
  const pc = { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value: Number(value) };
  if (String(form.description || '').trim()) pc.description = form.description.trim();
  if (form.preemptionPolicy === 'Never') pc.preemptionPolicy = 'Never';
  return pc;
}

/** Guesses the kind of a pasted manifest ("Node", "Pod", "PriorityClass" or ""). */
export function manifestKind(text) {
  const src = String(text || '');
  const m = /^\s*["']?kind["']?\s*:\s*["']?([A-Za-z]+)["']?/m.exec(src);
  if (m) return m[1];
  try {
    const obj = JSON.parse(src);
    return typeof obj?.kind === 'string' ? obj.kind : '';
  } catch {
    return '';
  }
}

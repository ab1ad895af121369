// schedconfig.js: the scheduler's configuration as the page edits it: the
// plugin editor's rows and checks, a KubeSchedulerConfiguration with those
// edits and a plugin's args, a line diff of two configurations, and the
// body of a comparison of two of them. Pure JavaScript, no DOM.

import { FormError } from './manifests.js';

/**
 * pluginRows merges GET /api/v1/scheduler/plugins into one row per plugin:
 * [{name, enabled, points: [...], canRun: [...], score, weight}], enabled
 * ones first; points where it runs now, canRun where it may run (the
 * server's `plugins` list; for an older server, where it runs), each in
 * the order a pod meets them (extensionPoints, the vocabulary's).
 */
export function pluginRows(view, extensionPoints) {
  const rows = new Map();
  const row = (name) => {
    if (!rows.has(name)) rows.set(name, { name, enabled: false, points: [], canRun: [], score: false, weight: 0 });
    return rows.get(name);
  };
  for (const name of view?.available || []) row(name);
  for (const p of view?.plugins || []) row(p.name).canRun = [...(p.extensionPoints || [])];
  for (const [point, list] of Object.entries(view?.enabled || {})) {
    for (const p of list || []) {
      const r = row(p.name);
      r.enabled = true;
      r.points.push(point);
      if (!r.canRun.includes(point)) r.canRun.push(point);
      if (point === 'Score') r.weight = p.weight || 1;
    }
  }
  const rank = (point) => {
    const i = extensionPoints.indexOf(point);
    return i < 0 ? extensionPoints.length : i;
  };
  for (const r of rows.values()) {
    r.points.sort((a, b) => rank(a) - rank(b));
    r.canRun.sort((a, b) => rank(a) - rank(b));
    r.score = r.canRun.includes('Score');
  }
  return [...rows.values()].sort((a, b) => Number(b.enabled) - Number(a.enabled) || (a.name < b.name ? -1 : 1));
}

// Extension points a profile holds exactly as many plugins of as the server
// requires (kube-scheduler takes one QueueSort plugin); for the others it
// is a least.
const EXACTLY = new Set(['QueueSort']);

/**
 * pluginChecks says what the plugin edits would break, from the server's
 * `required` ({QueueSort: 1, Bind: 1}): {locked: {Name: why}, problems:
 * [words]}. A plugin is locked on when unticking it would leave a required
 * extension point short; problems name the points the edits leave wrong.
 */
export function pluginChecks(rows, edits, required) {
  const on = (r) => edits[r.name]?.enabled ?? r.enabled;
  const locked = {};
  const problems = [];
  for (const [point, n] of Object.entries(required || {})) {
    const at = rows.filter((r) => on(r) && r.canRun.includes(point));
    if (at.length < n) problems.push(`a profile needs ${n === 1 ? 'a' : n} ${point} plugin${n === 1 ? '' : 's'}`);
    else if (EXACTLY.has(point) && at.length > n) problems.push(`a profile takes ${n === 1 ? 'one' : n} ${point} plugin${n === 1 ? '' : 's'}: untick ${at.length - n} of ${at.map((r) => r.name).join(', ')}`);
    if (at.length <= n) for (const r of at) locked[r.name] = `the profile needs ${n === 1 ? 'a' : n} ${point} plugin${n === 1 ? '' : 's'}`;
  }
  return { locked, problems };
}

/**
 * profileOf returns the profile of cfg named profile (its schedulerName),
 * the first when profile is not given; a FormError when there is none.
 */
function profileOf(cfg, profile) {
  if (!cfg || !Array.isArray(cfg.profiles) || cfg.profiles.length === 0) {
    throw new FormError('config', 'the scheduler configuration has no profile to edit');
  }
  if (profile == null || profile === '') return cfg.profiles[0];
  const found = cfg.profiles.find((p) => (p.schedulerName || 'default-scheduler') === profile);
  if (!found) throw new FormError('config', `the scheduler configuration has no profile ${profile}`);
  return found;
}

/**
 * configWithPlugins returns a copy of the scheduler's configuration (GET
 * /api/v1/scheduler/config, JSON) whose profile (by scheduler name; the
 * first when none is given) enables, disables and weighs plugins as edits
 * says: {Name: {enabled: bool, weight: n}}.
 *
 * kube-scheduler merges multiPoint with its defaults: a plugin is turned
 * off by listing it under multiPoint.disabled, and a default plugin gets a
 * new weight by being listed under multiPoint.enabled with it.
 */
export function configWithPlugins(config, edits, profileName) {
  profileOf(config, profileName);
  const cfg = JSON.parse(JSON.stringify(config));
  const profile = profileOf(cfg, profileName);
  profile.plugins = profile.plugins || {};
  const mp = profile.plugins.multiPoint = profile.plugins.multiPoint || {};
  let enabled = [...(mp.enabled || [])];
  let disabled = [...(mp.disabled || [])];
  for (const [name, edit] of Object.entries(edits || {})) {
    if (edit.weight != null && edit.enabled !== false) {
      const w = Number(edit.weight);
      if (!Number.isInteger(w) || w < -100 || w > 100) throw new FormError('weight', `weight of ${name}: write a whole number from -100 to 100`);
    }
    if (edit.enabled === false) {
      enabled = enabled.filter((p) => p.name !== name);
      if (!disabled.some((p) => p.name === name)) disabled.push({ name });
      continue;
    }
    disabled = disabled.filter((p) => p.name !== name);
    const at = enabled.findIndex((p) => p.name === name);
    const entry = { name };
    if (edit.weight != null) entry.weight = Number(edit.weight);
    else if (at >= 0 && enabled[at].weight != null) entry.weight = enabled[at].weight;
    if (at >= 0) enabled[at] = entry;
    else enabled.push(entry);
  }
  mp.enabled = enabled;
  if (disabled.length) mp.disabled = disabled;
  else delete mp.disabled;
  return cfg;
}

/**
 * withPluginArgs returns a copy of the configuration (JSON) whose profile
 * (the first when none is named) has a pluginConfig that gives plugin name
 * these args, merged over the
 * args it has (NodeResourcesFit's {scoringStrategy: {type:
 * "MostAllocated"}}, say).
 */
export function withPluginArgs(config, name, args, profileName) {
  profileOf(config, profileName);
  const cfg = JSON.parse(JSON.stringify(config));
  const profile = profileOf(cfg, profileName);
  const list = profile.pluginConfig = profile.pluginConfig || [];
  const at = list.findIndex((p) => p.name === name);
  const old = at >= 0 ? list[at].args || {} : {};
  const entry = { name, args: { ...old, ...args } };
  if (at >= 0) list[at] = entry;
  else list.push(entry);
  return cfg;
}

/** The args a profile (the first when none is named) gives plugin name, or {}. */
export function pluginArgs(config, name, profileName) {
  let profile;
  try {
    profile = profileOf(config, profileName);
  } catch {
    return {};
  }
  return profile.pluginConfig?.find((p) => p.name === name)?.args || {};
}

/**
 * lineDiff compares two texts line by line (longest common subsequence):
 * [{op: " " | "-" | "+", text, a, b}], "-" a line only in from (its line
 * number a), "+" only in to (b), " " in both.
 */
export function lineDiff(from, to) {
  const a = String(from || '').split('\n');
  const b = String(to || '').split('\n');
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) out.push({ op: ' ', text: a[i++], a: i, b: ++j });
    else if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) out.push({ op: '+', text: b[j++], a: null, b: j });
    else out.push({ op: '-', text: a[i++], a: i, b: null });
  }
  return out;
}

const HEAD = 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n';
const strategy = (type, extra = '') => `${HEAD}profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: ${type}
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
${extra}`;

/**
 * CONFIG_PRESETS are configurations to compare, each only what differs
 * from kube-scheduler's defaults (the profile takes the running
 * scheduler's name): the three scoring strategies of NodeResourcesFit, and
 * a profile without topology spreading.
 */
export const CONFIG_PRESETS = [
  { id: 'defaults', label: 'kube-scheduler\'s defaults (LeastAllocated: spread)', yaml: HEAD },
  { id: 'most-allocated', label: 'MostAllocated: pack pods onto few nodes', yaml: strategy('MostAllocated') },
  {
    id: 'requested-to-capacity', label: 'RequestedToCapacityRatio: fill nodes up to 80%, then spread',
    yaml: strategy('RequestedToCapacityRatio', `        requestedToCapacityRatio:
          shape: [{utilization: 0, score: 0}, {utilization: 80, score: 10}, {utilization: 100, score: 2}]
`),
  },
  {
    id: 'no-spread', label: 'no topology spreading (PodTopologySpread off)',
    yaml: `${HEAD}profiles:
- plugins:
    multiPoint:
      disabled: [{name: PodTopologySpread}]
`,
  },
];

/**
 * SCHEDULER_GATES are the feature gates one side of a comparison may set
 * for its scheduler alone (the server's minisched.SchedulerGates): the
 * rest apply to the whole run.
 */
export const SCHEDULER_GATES = ['OpportunisticBatching', 'SchedulerAsyncAPICalls', 'SchedulerPopFromBackoffQ'];

/** The body of POST /compare for the form's fields. */
export function comparisonRequest(form) {
  if (form.mode === 'reschedule') return { reschedule: true };
  const side = (name, config, gates = '') => {
    const out = {};
    if (name.trim()) out.name = name.trim();
    if (config.trim()) out.config = config;
    if (gates.trim()) out.featureGates = gates.trim();
    return out;
  };
  const body = { a: side(form.nameA, form.configA, form.gatesA), b: side(form.nameB, form.configB, form.gatesB) };
  if (form.mode === 'scenario') body.bundled = form.bundled;
  return body;
}

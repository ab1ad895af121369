// nodes.js: the node overview's rows: use in percent, sorted and filtered
// by name or label. Pure functions, no DOM: tested with node --test.

import { natural } from '../../store/index.js';
import { percent } from '../../format.js';

const NO_USE = Object.freeze({ cpu: 0, memory: 0, pods: 0 });

/** The columns the overview sorts by, each a row's value. */
export const SORTS = Object.freeze({
  name: null,
  cpu: (r) => r.cpu,
  memory: (r) => r.memory,
  pods: (r) => r.pods,
});

/**
 * nodeRows: [{name, node, cpu, memory, pods (percent used), cordoned}]
 * for the nodes whose name or a label matches filter ("node-1", "zone=a",
 * "zone", or part of a name or key=value), sorted by sort (a SORTS key;
 * use descending, name ascending).
 */
export function nodeRows(nodes, usage, { sort = 'name', filter = '' } = {}) {
  const f = filter.trim().toLowerCase();
  const rows = [];
  for (const node of nodes) {
    const labels = Object.entries(node.labels || {}).map(([k, v]) => `${k}=${v}`.toLowerCase());
    if (f && !node.name.toLowerCase().includes(f) && !labels.some((l) => l.includes(f))) continue;
    const u = usage(node.name) || NO_USE;
    const a = node.allocatable || {};
    rows.push({
      name: node.name, node, cordoned: !!node.unschedulable,
      cpu: percent(u.cpu, a.cpu), memory: percent(u.memory, a.memory), pods: percent(u.pods, a.pods),
    });
  }
  const by = SORTS[sort];
  return rows.sort((a, b) => (by ? by(b) - by(a) : 0) || natural(a.name, b.name));
}

/**
 * nodeHealth says how a node's kubelet stands, from its summary: state
 * (ready, notReady, stopped, unknown), a badge's text ('' when ready), and
 * the kubelet states a person may switch it to next.
 */
export function nodeHealth(node) {
  const told = node?.kubelet || 'Ready';
  let state = 'ready';
  if (told === 'Stopped') state = 'stopped';
  else if (node?.ready === 'False' || told === 'NotReady') state = 'notReady';
  else if (node?.ready === 'Unknown') state = 'unknown';
  const badge = { ready: '', notReady: 'NotReady', stopped: 'kubelet stopped', unknown: 'unreachable' }[state];
  const next = ['Ready', 'NotReady', 'Stopped'].filter((s) => s !== told);
  return { state, badge, next };
}


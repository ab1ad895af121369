// Pods grouped by the workload that made them, as the stream's pod
// summaries tell it: each pod names its controller (ReplicaSet/web-5fc9f4bf66),
// and a ReplicaSet a Deployment made is named <deployment>-<hash>, the hash
// its pods carry in the pod-template-hash label.

import { podLife } from '../../format.js';
import { natural } from '../../store/index.js';

/** The kinds of the filter, in the order the view offers them. */
export const WORKLOAD_KINDS = Object.freeze(['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'ReplicaSet', 'Pod']);

const TEMPLATE_HASH = 'pod-template-hash';

/**
 * workloadOf says where a pod belongs: {kind, name, child} with child the
 * ReplicaSet between a Deployment and its pods; a pod of no controller is
 * its own workload, of kind Pod.
 */
export function workloadOf(pod) {
  const [kind, name] = pod.owner ? pod.owner.split('/') : ['', ''];
  if (!kind) return { kind: 'Pod', name: pod.name, child: '' };
  const hash = pod.labels?.[TEMPLATE_HASH];
  if (kind === 'ReplicaSet' && hash && name.endsWith(`-${hash}`)) {
    return { kind: 'Deployment', name: name.slice(0, -hash.length - 1), child: name };
  }
  return { kind, name, child: '' };
}

/**
 * workloadTree groups pods (a Map of key to summary) by workload:
 * [{key, kind, namespace, name, pods, lives, children: [{name, pods}]}],
 * pods their keys in natural order, lives a count of each podLife. The
 * filter keeps workloads of one kind, and those whose name, or one of
 * whose pods' names, contains the text.
 */
export function workloadTree(pods, { kind = '', text = '' } = {}) {
  const groups = new Map();
  const needle = text.trim().toLowerCase();
  for (const [key, pod] of pods) {
    const w = workloadOf(pod);
    if (kind && w.kind !== kind) continue;
    const id = `${w.kind}/${pod.namespace}/${w.name}`;
    let g = groups.get(id);
    if (!g) {
      g = { key: id, kind: w.kind, namespace: pod.namespace, name: w.name, pods: [], lives: {}, children: new Map(), match: false };
      groups.set(id, g);
    }
    g.pods.push(key);
    const life = podLife(pod);
    g.lives[life] = (g.lives[life] || 0) + 1;
    if (w.child) {
      if (!g.children.has(w.child)) g.children.set(w.child, []);
      g.children.get(w.child).push(key);
    }
    if (!needle || w.name.toLowerCase().includes(needle) || pod.name.toLowerCase().includes(needle)) g.match = true;
  }
  const order = (g) => WORKLOAD_KINDS.indexOf(g.kind);
  return [...groups.values()]
    .filter((g) => g.match)
    .sort((a, b) => order(a) - order(b) || natural(a.namespace, b.namespace) || natural(a.name, b.name))
    .map(({ match, children, ...g }) => ({
      ...g,
      pods: g.pods.sort(natural),
      children: [...children].sort(([a], [b]) => natural(a, b)).map(([name, keys]) => ({ name, pods: keys.sort(natural) })),
    }));
}

/** livesText({Running: 2, waiting: 1}) -> "2 Running, 1 waiting". */
export function livesText(lives) {
  return Object.entries(lives).sort(([a], [b]) => natural(a, b)).map(([life, n]) => `${n} ${life}`).join(', ');
}

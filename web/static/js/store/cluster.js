// cluster.js: the nodes and pods as the server summarises them, and what the
// pods bound to each node request of it.

import { signal } from '../signals.js';
import { keyedMap, podKey, sameUid } from './common.js';

export function createCluster() {
  const nodes = keyedMap(); // name -> NodeSummary
  const pods = keyedMap(); // "namespace/name" -> PodSummary
  // Node name -> {cpu, memory, pods, keys}: the requests of the pods bound to
  // it. A node that is gone keeps its entry while pods still name it.
  const usage = keyedMap();
  const bound = signal(0);
  // GET /priorityclasses: [{name, value, ...}], highest value first.
  const priorityClasses = signal([]);

  function unbind(pod) {
    const u = pod.nodeName ? usage.get(pod.nodeName) : null;
    const key = podKey(pod);
    if (!u || !u.keys.has(key)) return;
    const keys = new Set(u.keys);
    keys.delete(key);
    if (keys.size === 0) usage.delete(pod.nodeName);
    else usage.set(pod.nodeName, { cpu: u.cpu - (pod.requests?.cpu || 0), memory: u.memory - (pod.requests?.memory || 0), pods: u.pods - 1, keys });
    bound.value = bound.peek() - 1;
  }

  function bind(pod) {
    if (!pod.nodeName) return;
    const u = usage.get(pod.nodeName) || { cpu: 0, memory: 0, pods: 0, keys: new Set() };
    const key = podKey(pod);
    if (u.keys.has(key)) return;
    usage.set(pod.nodeName, {
      cpu: u.cpu + (pod.requests?.cpu || 0), memory: u.memory + (pod.requests?.memory || 0), pods: u.pods + 1, keys: new Set(u.keys).add(key),
    });
    bound.value = bound.peek() + 1;
  }

  return {
    nodes,
    pods,
    usage,
    bound,
    priorityClasses,

    setNode(node) {
      nodes.set(node.name, node);
    },

    deleteNode(node) {
      const old = nodes.get(node.name);
      if (old && sameUid(old, node)) nodes.delete(node.name);
    },

    setPod(pod) {
      const old = pods.get(podKey(pod));
      if (old) unbind(old);
      pods.set(podKey(pod), pod);
      bind(pod);
    },

    /** Deletes the pod unless its name now belongs to another; true when it did. */
    deletePod(pod) {
      const key = podKey(pod);
      const old = pods.get(key);
      if (!old || !sameUid(old, pod)) return false;
      unbind(old);
      pods.delete(key);
      return true;
    },

    /** What it holds, to load into another store (values are shared: they are replaced, never changed). */
    save() {
      return { nodes: nodes.pairs(), pods: pods.pairs(), usage: usage.pairs(), bound: bound.peek(), priorityClasses: priorityClasses.peek() };
    },

    load(s) {
      nodes.assign(s.nodes);
      pods.assign(s.pods);
      usage.assign(s.usage);
      bound.value = s.bound;
      priorityClasses.value = s.priorityClasses;
    },

    /** Holds a snapshot's nodes and pods, and nothing else. */
    fromSnapshot(nodeList, podList) {
      nodes.assign(nodeList.map((n) => [n.name, n]));
      pods.assign(podList.map((p) => [podKey(p), p]));
      usage.assign([]);
      bound.value = 0;
      for (const p of podList) bind(p);
    },
  };
}

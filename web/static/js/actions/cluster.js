// actions/cluster.js: what changes the cluster: nodes (create, edit,
// cordon, their kubelets, delete), pods and workloads, manifests pasted as
// YAML, PriorityClasses, a reset, an imported snapshot, and a mirror's lag.

import { describeError } from '../net/api.js';
import { formatBytes, formatCores, plural } from '../format.js';
import {
  beyondEveryNode, linesInPaste, MANIFEST_ROUTES, nodeManifest, nodePatch, podManifests, priorityClassManifest, splitDocuments, workloadManifest, WORKLOADS, FormError,
} from '../manifests.js';

/** kubeletNotice is what the page says once a node's kubelet was told state. */
export function kubeletNotice(name, state) {
  switch (state) {
    case 'NotReady': return `Node ${name}'s kubelet reports NotReady: node lifecycle taints it, and evicts its pods after their tolerationSeconds.`;
    case 'Stopped': return `Node ${name}'s kubelet stopped: its Lease goes stale, and node lifecycle marks it unreachable after 50 s.`;
    default: return `Node ${name}'s kubelet reports Ready again.`;
  }
}

/**
 * deletedNotice is what the page says once what was deleted: gone, or,
 * when the server answers with the object, waiting on its finalizers.
 */
export function deletedNotice(what, answer) {
  const finalizers = answer?.metadata?.finalizers ?? [];
  if (!answer?.metadata?.deletionTimestamp || !finalizers.length) return `${what} deleted.`;
  return `${what} is being deleted: it stays until its finalizers (${finalizers.join(', ')}) are removed. A reset clears them.`;
}

/** clusterActions are the cluster actions; see actions/index.js for ctx. */
export function clusterActions({ api, store, run, actions }) {
  return {
    async createNode(form) {
      return run('createNode', 'Could not create the node', async () => {
        const manifest = nodeManifest(form);
        await api.createNode(manifest);
        store.addNotice('ok', `Node ${manifest.metadata.name} created.`);
        return manifest.metadata.name;
      });
    },

    async createPods(form) {
      return run('createPod', 'Could not create the pod', async () => {
        const manifests = podManifests(form);
        // A few at a time: many pods arrive quickly without flooding the apiserver.
        let made = 0;
        let next = 0;
        let failure = null;
        const worker = async () => {
          while (next < manifests.length && !failure) {
            const m = manifests[next++];
            try {
              await api.createPod(m);
              made += 1;
            } catch (err) {
              failure = failure || new Error(describeError(err, `${m.metadata.name}${made ? ` (${made} created before it)` : ''}`));
            }
          }
        };
        await Promise.all(Array.from({ length: Math.min(4, manifests.length) }, worker));
        if (failure) throw failure;
        const first = manifests[0].metadata;
        const created = made === 1 ? `Pod ${first.name} created` : `${made} pods created`;
        // A pod larger than every node is legal, and waits forever: say so.
        const beyond = beyondEveryNode(manifests[0], store.cluster.nodes.values());
        if (beyond.length) {
          const what = beyond.map((b) => (b.resource === 'cpu' ? `${formatCores(b.asked)} of CPU (the largest node has ${formatCores(b.most)})`
            : `${formatBytes(b.asked)} of memory (the largest node has ${formatBytes(b.most)})`));
          store.addNotice('info', `${created}, but ${made === 1 ? 'it asks' : 'each asks'} for ${what.join(' and ')}: no node can hold ${made === 1 ? 'it' : 'them'}, so ${made === 1 ? 'it waits' : 'they wait'} unschedulable until a larger node comes.`);
        } else {
          store.addNotice('ok', `${created}.`);
        }
        return manifests.map((m) => `${m.metadata.namespace}/${m.metadata.name}`);
      });
    },

    /** Creates a Deployment or DaemonSet from the pod form; its controller makes the pods. */
    async createWorkload(kind, form) {
      return run('createPod', `Could not create the ${kind}`, async () => {
        const manifest = workloadManifest(kind, form);
        await api.create(WORKLOADS[kind], manifest);
        store.addNotice('ok', `${kind} ${manifest.metadata.name} created: its controller makes the pods.`);
        return manifest.metadata.name;
      });
    },

    async deleteWorkload(kind, namespace, name) {
      return run(`delete:${kind}:${namespace}/${name}`, `Could not delete ${kind} ${namespace}/${name}`, async () => {
        await api.deleteWorkload(WORKLOADS[kind], namespace, name);
        store.addNotice('ok', `${kind} ${namespace}/${name} deleted; the garbage collector takes its pods.`);
        return true;
      });
    },

    /**
     * Creates every document of a pasted YAML stream (JSON is YAML too) at
     * the route for its kind, one after the other, and reports on each:
     * [{index, line, kind, name, ok, error}].
     */
    async createFromYaml(text) {
      return run('createYaml', 'Could not create from the manifest', async () => {
        const docs = splitDocuments(text);
        if (!docs.length) throw new FormError('manifest', `Paste a ${Object.keys(MANIFEST_ROUTES).join(', ')} manifest first.`);
        const results = [];
        for (const d of docs) {
          const route = MANIFEST_ROUTES[d.kind];
          if (!route) {
            results.push({ ...d, ok: false, error: `kind "${d.kind || 'missing'}": paste a ${Object.keys(MANIFEST_ROUTES).join(', a ')}` });
            continue;
          }
          try {
            await api.create(route, d.text, 'application/yaml');
            results.push({ ...d, ok: true, error: '' });
          } catch (err) {
            // The server counts lines from the document's start; the
            // person reads the whole paste.
            results.push({ ...d, ok: false, error: linesInPaste(describeError(err), d.line) });
          }
        }
        const made = results.filter((r) => r.ok);
        if (made.some((r) => r.kind === 'PriorityClass')) await actions.loadPriorityClasses();
        const names = made.map((r) => `${r.kind} ${r.name || `#${r.index + 1}`}`).join(', ');
        if (made.length === results.length) store.addNotice('ok', `Created from the manifest: ${names}.`);
        // Each document's error stands beside the manifest (#yaml-results);
        // the notice only counts them.
        else store.addNotice('error', `${made.length} of ${plural(results.length, 'document')} created${names ? ` (${names})` : ''}: the list under the manifest says what is wrong with the others.`);
        return results;
      });
    },

    /** Loads the PriorityClasses for the pod form. */
    async loadPriorityClasses() {
      try {
        const res = await api.priorityClasses();
        store.setPriorityClasses(res?.items || []);
      } catch (err) {
        store.addNotice('error', describeError(err, 'Could not list the PriorityClasses'));
      }
    },

    async createPriorityClass(form) {
      return run('createPriorityClass', 'Could not create the PriorityClass', async () => {
        const manifest = priorityClassManifest(form);
        await api.create('priorityclasses', manifest);
        store.addNotice('ok', `PriorityClass ${manifest.metadata.name} (${manifest.value}) created.`);
        await actions.loadPriorityClasses();
        return manifest.metadata.name;
      });
    },

    /** Cordons (on) or uncordons a node. */
    async cordon(name, on) {
      return run(`node:${name}`, `Could not ${on ? 'cordon' : 'uncordon'} node ${name}`, async () => {
        await api.patchNode(name, { unschedulable: on });
        store.addNotice('ok', `Node ${name} ${on ? 'cordoned: new pods are not placed there' : 'uncordoned'}.`);
        return true;
      });
    },

    /**
     * Tells a node's simulated kubelet what to do: Ready, NotReady (it
     * reports Ready=False) or Stopped (it stops reporting, as a node cut off).
     */
    async setKubelet(name, state) {
      if (!state) return false;
      return run(`node:${name}`, `Could not make node ${name} ${state}`, async () => {
        await api.patchNode(name, { kubelet: state });
        store.addNotice('ok', kubeletNotice(name, state));
        return true;
      });
    },

    /** Opens or closes (null) the editor of a node's labels, taints and allocatable. */
    editNode(name) { store.editNode(name); },
    /** Replaces a node's labels, taints and allocatable with the editor's. */
    async saveNode(name, form) {
      return run('saveNode', `Could not change node ${name}`, async () => {
        await api.patchNode(name, nodePatch(name, form));
        store.addNotice('ok', `Node ${name} changed.`);
        store.editNode(null);
        return true;
      });
    },

    async deleteNode(name) {
      return run(`delete:node:${name}`, `Could not delete node ${name}`, async () => {
        store.addNotice('ok', deletedNotice(`Node ${name}`, await api.deleteNode(name)));
        return true;
      });
    },

    async deletePod(key) {
      const [ns, name] = key.split('/');
      return run(`delete:pod:${key}`, `Could not delete pod ${key}`, async () => {
        store.addNotice('ok', deletedNotice(`Pod ${key}`, await api.deletePod(ns, name)));
        return true;
      });
    },

    async reset() {
      return run('reset', 'Could not reset', async () => {
        await api.reset();
        store.addNotice('ok', 'The cluster and the history were cleared.');
        return true;
      });
    },

    /** Loads a snapshot file into the cluster; replace empties the cluster first. */
    async importSnapshot(file, { replace = false } = {}) {
      if (!file) return undefined;
      return run('import', `Could not import ${file.name}`, async () => {
        const c = await api.importSnapshot(await file.text(), replace);
        // The stream tells what the import created; a snapshot tells that
        // the cluster is now a copy.
        store.applyMessage(await api.snapshot());
        store.addNotice('ok', `Imported ${plural(c.nodes, 'node')} and ${plural(c.pods, 'pod')} `
          + `(${c.boundPods} bound, ${c.pendingPods} pending)${c.schedulerConfiguration ? ' and the scheduler configuration' : ''}.`);
        return c;
      });
    },

    /** Finishes the import a crash cut off, loading its document again in full. */
    async resumeImport() {
      return run('import', 'Could not finish the import', async () => {
        const c = await api.resumeImport();
        store.applyMessage(await api.snapshot());
        store.addNotice('ok', `The import is finished: ${plural(c.nodes, 'node')} and ${plural(c.pods, 'pod')}.`);
        return c;
      });
    },

    /** Asks a mirror how far behind it is; a failed question leaves the last answer. */
    async loadMirror() {
      try {
        store.setMirror(await api.mirror());
      } catch (err) {
        if (err?.status === 404) store.setMirror(null);
      }
    },
  };
}

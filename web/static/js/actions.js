// actions.js: what the buttons and forms do. Each action calls the API and
// tells the store; errors become notices in words. Views call these and
// nothing else (no logic in DOM handlers).

import { describeError } from './api.js';
import { comparisonRequest } from './compare.js';
import { plural } from './format.js';
import { kubeletNotice } from './nodes.js';
import { THEMES } from './route.js';
import { podKey } from './store/index.js';
import {
  configWithPlugins, MANIFEST_ROUTES, nodeManifest, nodePatch, podManifests, priorityClassManifest, splitDocuments, withPluginArgs, workloadManifest, WORKLOADS, FormError,
} from './manifests.js';

// How far back a page that connects reads the server's history, in events,
// and how many the server reads for each page; the page asks only for the
// kinds the timeline rebuilds from (HISTORY_KINDS), never the Filter and
// Score matrices, so that a big cluster's history costs as little as a
// small one's.
const HISTORY_EVENTS = 50_000;
const HISTORY_PAGE = 5000;
const HISTORY_KINDS = 'queue,pod,preemption';

// How often a comparison under way is asked how far it got.
const COMPARE_POLL = 500;

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/**
 * createActions returns what the views may do; delay(ms) waits between two
 * questions to the server about a comparison under way (tests pass one
 * that does not wait).
 */
export function createActions({ api, store, delay = sleep }) {
  // The configuration check under way, which a newer one cancels.
  let checking = null;
  /** Tells the store of comparison c, and asks after it until it is over. */
  async function follow(c) {
    store.setComparison(c);
    while (c?.state === 'running') {
      await delay(COMPARE_POLL);
      c = await api.comparison();
      store.setComparison(c);
    }
    if (c?.state === 'error') store.addNotice('error', `The comparison failed: ${c.error}`);
    return c;
  }

  async function run(name, doing, fn) {
    store.setBusy(name, true);
    store.markInvalid(name, null);
    try {
      return await fn();
    } catch (err) {
      if (err?.name === 'AbortError') return undefined;
      // A form's bad input is marked where it is, as well as said.
      if (err instanceof FormError) store.markInvalid(name, err.field);
      store.addNotice('error', err instanceof FormError ? err.message : describeError(err, doing));
      return undefined;
    } finally {
      store.setBusy(name, false);
    }
  }

  const actions = {
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
        store.addNotice('ok', made === 1 ? `Pod ${first.name} created.` : `${made} pods created.`);
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
          const what = `${d.kind || 'document'} ${d.name || `#${d.index + 1}`}`;
          if (!route) {
            results.push({ ...d, ok: false, error: `kind "${d.kind || 'missing'}": paste a ${Object.keys(MANIFEST_ROUTES).join(', a ')}` });
            continue;
          }
          try {
            await api.create(route, d.text, 'application/yaml');
            results.push({ ...d, ok: true, error: '' });
          } catch (err) {
            results.push({ ...d, ok: false, error: describeError(err, `${what} (line ${d.line})`) });
          }
        }
        const made = results.filter((r) => r.ok);
        if (made.some((r) => r.kind === 'PriorityClass')) await actions.loadPriorityClasses();
        const names = made.map((r) => `${r.kind} ${r.name || `#${r.index + 1}`}`).join(', ');
        if (made.length === results.length) store.addNotice('ok', `Created from the manifest: ${names}.`);
        else store.addNotice('error', `${made.length} of ${plural(results.length, 'document')} created${names ? ` (${names})` : ''}; ${results.filter((r) => !r.ok).map((r) => r.error).join('; ')}`);
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
        await api.deleteNode(name);
        store.addNotice('ok', `Node ${name} deleted.`);
        return true;
      });
    },

    async deletePod(key) {
      const [ns, name] = key.split('/');
      return run(`delete:pod:${key}`, `Could not delete pod ${key}`, async () => {
        await api.deletePod(ns, name);
        store.addNotice('ok', `Pod ${key} deleted.`);
        return true;
      });
    },

    async pause() { return run('scheduler', 'Could not pause the scheduler', () => api.pause()); },
    async resume() { return run('scheduler', 'Could not resume the scheduler', () => api.resume()); },
    /** Schedules one pod; when its cycle ends the page says where it went, and the inspector follows it. */
    async step() {
      store.watchStep();
      return run('scheduler', 'Could not step the scheduler', () => api.step());
    },

    async togglePause() {
      const s = store.schedulerShown.peek();
      if (!s.live) return undefined;
      return s.state === 'paused' ? actions.resume() : actions.pause();
    },

    /** R: a reset asks first; Enter or the button confirms, Escape cancels. */
    askReset() { store.setConfirmReset(true); },
    cancelShortcut() { store.setConfirmReset(false); },
    async confirmReset() {
      store.setConfirmReset(false);
      return actions.reset();
    },

    toggleProjector() { store.setProjector(!store.page.projector.peek()); },
    nextTheme() { store.setTheme(THEMES[(THEMES.indexOf(store.page.theme.peek()) + 1) % THEMES.length]); },
    closeLesson(id) { store.closeLesson(id); },

    /** Opens what an address's #fragment names (route.js's parseHash). */
    openRoute(route) {
      if (!route) return;
      if (route.pod) actions.inspectPod(route.pod);
      else if (route.cycle != null) actions.openCycle(route.cycle);
      else store.setView(route.view);
    },

    /** Opens a cycle by id in the inspector, with its pod. */
    async openCycle(id) {
      await actions.ensureCycle(id);
      const summary = store.cycles.summaries.peek(id) || store.cycles.fetched.peek(id)?.summary;
      if (summary?.pod) actions.inspectPod(podKey(summary.pod), id);
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

    /** Loads what the running scheduler's plugins are (GET /scheduler/plugins) into the store. */
    async loadPluginView() {
      return run('pluginView', 'Could not load the scheduler\'s plugins', async () => {
        const view = await api.plugins();
        store.setPlugins(view);
        return view;
      });
    },

    /** Loads the running configuration (JSON) for the plugin editor. */
    async loadConfig() {
      return run('plugins', 'Could not load the scheduler\'s configuration', () => api.config());
    },

    /**
     * Applies plugin edits ({Name: {enabled, weight}}) to config; returns
     * the configuration the scheduler restarted with.
     */
    async applyPlugins(config, edits) {
      return run('plugins', 'The scheduler refused the configuration', async () => {
        const next = configWithPlugins(config, edits);
        const cfg = await api.putConfig(next);
        store.addNotice('ok', 'The scheduler restarted with the new plugins.');
        await actions.loadPluginView();
        return cfg;
      });
    },

    /** Sends a whole configuration typed by hand (YAML or JSON); true when the scheduler restarted with it. */
    async applyConfigText(text) {
      return run('config', 'The scheduler refused the configuration', async () => {
        await api.putConfig(text, 'application/yaml');
        store.addNotice('ok', 'The scheduler restarted with the new configuration.');
        return true;
      });
    },

    /** The running configuration and the defaults, as YAML: {running, defaults}. */
    async loadConfigYaml() {
      return run('config', 'Could not load the configuration', async () => {
        const [running, defaults] = await Promise.all([api.configYaml(), api.configYaml(true)]);
        return { running, defaults };
      });
    },

    /**
     * Checks a configuration as it is typed (the server's dry run):
     * {ok: true} or {ok: false, message, line}; null when a newer check
     * replaced this one.
     */
    async checkConfig(text) {
      checking?.abort();
      const mine = new AbortController();
      checking = mine;
      try {
        await api.checkConfig(text, mine.signal);
        return { ok: true, message: '', line: null };
      } catch (err) {
        if (err?.name === 'AbortError') return null;
        return { ok: false, message: describeError(err), line: err?.line ?? null };
      } finally {
        if (checking === mine) checking = null;
      }
    },

    /** Gives a plugin args in the running configuration and restarts the scheduler with it. */
    async applyPluginArgs(name, args) {
      return run('config', `The scheduler refused ${name}'s arguments`, async () => {
        const cfg = withPluginArgs(await api.config(), name, args);
        await api.putConfig(cfg);
        store.addNotice('ok', `The scheduler restarted with ${name}'s new arguments.`);
        return cfg;
      });
    },

    /** Lists bundled scenarios and runs; {unavailable: words} on 404. */
    async loadScenarios() {
      store.setBusy('scenarios', true);
      try {
        const res = await api.scenarios();
        // The server lists the newest first; the store keeps the newest last.
        for (const r of [...(res?.runs || [])].reverse()) store.setScenarioRun(r);
        return { bundled: res?.bundled || [], runs: res?.runs || [] };
      } catch (err) {
        if (err?.status === 404) {
          return { unavailable: `This server has no scenario API yet (GET /api/v1/scenarios answered 404: ${err.message}).` };
        }
        return { unavailable: describeError(err, 'Could not list the scenarios') };
      } finally {
        store.setBusy('scenarios', false);
      }
    },

    /**
     * Runs a bundled scenario; with reset (the default for lessons) the
     * server empties the cluster first, in the same request.
     */
    async runScenario(name, { reset = true } = {}) {
      return run('scenarioRun', `Could not start scenario ${name}`, async () => {
        // A 409's message names what is under way (a lesson, an import, a
        // comparison) and what to do about it.
        const res = await api.runScenario(name, reset);
        store.setScenarioRun({ name, state: 'running', ...res });
        store.addNotice('ok', `Scenario ${name} started${reset ? ' on an empty cluster' : ''}.`);
        return res;
      });
    },

    async refreshScenario(id) {
      return run(`scenario:${id}`, `Could not read scenario run ${id}`, async () => {
        const res = await api.scenario(id);
        store.setScenarioRun(res);
        return res;
      });
    },

    async cancelScenario(id) {
      return run(`scenario:${id}`, `Could not cancel scenario run ${id}`, async () => {
        await api.cancelScenario(id);
        store.setScenarioRun({ id, state: 'cancelled' });
        return true;
      });
    },

    /** Selects a pod and shows its newest cycle in the inspector. */
    inspectPod(key, cycleId = null) {
      store.selectPod(key, cycleId, 'cycle');
      actions.loadPodCycles(key);
    },

    /** Fetches a pod's cycle summaries (older attempts too). */
    async loadPodCycles(key) {
      if (!key) return;
      try {
        const res = await api.cycles(key, 40);
        store.addRemoteCycles(key, res?.items || []);
      } catch (err) {
        store.addNotice('error', describeError(err, `Could not list the cycles of ${key}`));
      }
    },

    /** Makes sure a cycle's detail is at hand; fetches it when it is not. */
    async ensureCycle(id) {
      const { cycles, page } = store;
      const live = id == null ? null : cycles.details.peek(id);
      // A detail that lacks its matrices (left out of the stream) is loaded too.
      if (id == null || (live && !live.partial) || cycles.fetched.peek(id) || page.cycleLoading.peek() === id) return;
      store.setCycleLoading(id);
      try {
        const rec = await api.cycle(id);
        store.addFetchedCycle(rec);
      } catch (err) {
        store.addNotice('error', describeError(err, `Could not load cycle ${id}`));
        // An empty record, marked truncated, so that the inspector says so and does not ask again.
        store.addFetchedCycle({ id, pod: cycles.summaries.peek(id)?.pod || { namespace: '', name: '' }, events: [], truncated: true });
      } finally {
        store.setCycleLoading(null);
      }
    },

    /**
     * Fills the timeline with what happened before this page connected:
     * the queue moves and deletions of the server's history up to the
     * snapshot (its newest HISTORY_EVENTS events at most), then the cycles.
     */
    async loadHistory() {
      const upTo = store.server.seq.peek();
      let since = Math.max(store.server.historyFirstSeq.peek() - 1, upTo - HISTORY_EVENTS, 0);
      const past = [];
      try {
        while (since < upTo) {
          // A page holds the events of those kinds among the next
          // HISTORY_PAGE: it may hold none and still say more.
          const res = await api.events(since, HISTORY_PAGE, HISTORY_KINDS);
          past.push(...(res?.events || []));
          if (!res || res.lastSeq <= since) break;
          since = res.lastSeq;
          if (!res.more) break;
        }
        store.applyHistory(past, upTo);
        const cycles = await api.cycles('', 1000);
        store.addCycleSummaries(cycles?.items || []);
      } catch (err) {
        // 410: the history moved on while it was read; the live view goes on.
        if (err?.status !== 410) store.addNotice('error', describeError(err, 'Could not load the recent history'));
      }
    },

    /** Loads the last comparison (GET /compare), and follows it while it runs; none yet is no error. */
    async loadComparison() {
      try {
        await follow(await api.comparison());
      } catch (err) {
        if (err?.status !== 404) store.addNotice('error', describeError(err, 'Could not load the last comparison'));
      }
    },

    /** Starts a comparison from the Compare form's fields, and follows it until it is over. */
    async compare(form) {
      return run('compare', 'The comparison failed', async () => follow(await api.compare(comparisonRequest(form))));
    },

    /** Asks a mirror how far behind it is; a failed question leaves the last answer. */
    async loadMirror() {
      try {
        store.setMirror(await api.mirror());
      } catch (err) {
        if (err?.status === 404) store.setMirror(null);
      }
    },

    /** Shows one pod's two cycles from the last comparison. */
    async inspectCompared(key) {
      const [ns, name] = key.split('/');
      return run('comparedPod', `Could not load ${key} from the comparison`, async () => {
        store.setComparedPod(await api.comparedPod(ns, name));
      });
    },

    /** The running configuration as YAML, to start a side of a comparison from. */
    async runningConfigYaml() {
      return run('compareConfig', 'Could not load the running configuration', () => api.configYaml());
    },

    goAddNode() { store.focusOn('controls', 'node-name'); },
    goLessons() { store.focusOn('controls', 'scen-h'); },
    focused() { store.focusOn(null, null); },
    selectCycle(id) { store.selectCycle(id); },
    setView(view) { store.setView(view); },
    dismiss(id) { store.dismissNotice(id); },
  };
  return actions;
}

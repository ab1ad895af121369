// actions/inspector.js: what the cycle inspector opens: a pod, a cycle,
// what an address's #fragment names, and the details and attempts it loads
// over REST when the stream no longer holds them.

import { describeError } from '../net/api.js';
import { podKey } from '../store/index.js';

/** inspectorActions are the inspector actions; see actions/index.js for ctx. */
export function inspectorActions({ api, store, actions }) {
  return {
    /**
     * Asks why a pending pod fits no node (GET /pods/{ns}/{name}/explain);
     * a refusal (the pod is bound, gone) is kept as the explanation's error,
     * said where the explanation would be.
     */
    async explainPod(key) {
      const [ns, name] = key.split('/');
      try {
        store.setExplanation({ key, ...(await api.explain(ns, name)) });
      } catch (err) {
        store.setExplanation({ key, error: describeError(err, `Could not explain ${key}`) });
      }
    },

    /**
     * "Try it": the changes that would let the pod fit on a node, applied on
     * copies and run through the real plugins there
     * (GET .../explain/nodes/{node}). The answer joins the explanation.
     */
    async tryOnNode(key, node) {
      const [ns, name] = key.split('/');
      store.setTrial({ key, node, state: 'trying' });
      try {
        store.setTrial({ key, node, state: 'done', result: await api.explainNode(ns, name, node) });
      } catch (err) {
        store.setTrial({ key, node, state: 'error', error: describeError(err, `Could not try ${node}`) });
      }
    },

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

    /** Selects a pod and shows its newest cycle in the inspector; the inspector stops following. */
    inspectPod(key, cycleId = null) {
      store.setFollow(false);
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

    selectCycle(id) { store.selectCycle(id); },

    /** The inspector follows each cycle as it ends, whatever its pod, from the newest one already ended. */
    follow(on) {
      store.setFollow(on);
      if (!on) return;
      const { summaries } = store.cycles;
      const ended = summaries.keys().reverse().map((id) => summaries.peek(id)).find((c) => c?.end);
      if (ended) store.selectPod(ended.podKey, null);
    },
  };
}

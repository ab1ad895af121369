// actions/compare.js: two configurations compared (POST /compare),
// followed while the comparison runs, and one pod's two cycles shown.

import { describeError } from '../net/api.js';
import { comparisonRequest } from '../schedconfig.js';

// How often a comparison under way is asked how far it got.
const COMPARE_POLL = 500;

/** compareActions are the compare actions; see actions/index.js for ctx. */
export function compareActions({ api, store, run, delay }) {
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

  return {
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
  };
}

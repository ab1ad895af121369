// actions/scenarios.js: the bundled scenarios (lessons): listed, run,
// followed, cancelled, and a lesson's banner closed.

import { describeError } from '../net/api.js';

/** scenarioActions are the scenarios actions; see actions/index.js for ctx. */
export function scenarioActions({ api, store, run }) {
  return {
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
    async runScenario(name, { reset = true, pace = '' } = {}) {
      return run('scenarioRun', `Could not start scenario ${name}`, async () => {
        // A 409's message names what is under way (a lesson, an import, a
        // comparison) and what to do about it.
        const res = await api.runScenario(name, reset, pace);
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

    /** A paced run takes its next step. */
    async nextStep(id) {
      return run(`scenario:${id}`, `Could not go on with scenario run ${id}`, () => api.nextStep(id));
    },

    async cancelScenario(id) {
      return run(`scenario:${id}`, `Could not cancel scenario run ${id}`, async () => {
        await api.cancelScenario(id);
        store.setScenarioRun({ id, state: 'cancelled' });
        return true;
      });
    },

    closeLesson(id) { store.closeLesson(id); },
  };
}

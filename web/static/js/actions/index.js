// actions/index.js: what the buttons and forms do. Each action calls the
// API and tells the store; errors become notices in words. Views call these
// and nothing else (no logic in DOM handlers).
//
// Each area's actions live in a file of their own (cluster, scheduler,
// inspector, timeline, scenarios, compare, page), as the store's slices do,
// and are combined here into one object. Every area is given the same ctx:
// the api, the store, run (below), delay, and the combined actions, so that
// one area's action may call another's.

import { describeError } from '../net/api.js';
import { FormError } from '../manifests.js';
import { clusterActions } from './cluster.js';
import { compareActions } from './compare.js';
import { inspectorActions } from './inspector.js';
import { pageActions } from './page.js';
import { scenarioActions } from './scenarios.js';
import { schedulerActions } from './scheduler.js';
import { timelineActions } from './timeline.js';

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/**
 * createActions returns what the views may do; delay(ms) waits between two
 * questions to the server about a comparison under way (tests pass one
 * that does not wait).
 */
export function createActions({ api, store, delay = sleep }) {
  /**
   * run marks the button name busy while fn runs, and turns its failure
   * into a notice that says what was being done; a form's bad input is
   * also marked on its field. It returns fn's result, or undefined.
   */
  async function run(name, doing, fn) {
    store.setBusy(name, true);
    store.markInvalid(name, null);
    try {
      return await fn();
    } catch (err) {
      if (err?.name === 'AbortError') return undefined;
      if (err instanceof FormError) store.markInvalid(name, err.field);
      store.addNotice('error', err instanceof FormError ? err.message : describeError(err, doing));
      return undefined;
    } finally {
      store.setBusy(name, false);
    }
  }

  const actions = {};
  const ctx = { api, store, run, delay, actions };
  for (const area of [clusterActions, schedulerActions, inspectorActions, timelineActions, scenarioActions, compareActions, pageActions]) {
    Object.assign(actions, area(ctx));
  }
  return actions;
}

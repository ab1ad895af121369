// actions/timeline.js: the timeline's past, read from the server's
// history once the page connects.

import { describeError } from '../net/api.js';

// How far back a page that connects reads the server's history, in events,
// and how many the server reads for each page; the page asks only for the
// kinds the timeline rebuilds from (HISTORY_KINDS), never the Filter and
// Score matrices, so that a big cluster's history costs as little as a
// small one's.
const HISTORY_EVENTS = 50_000;
const HISTORY_PAGE = 5000;
const HISTORY_KINDS = 'queue,pod,preemption';

/** timelineActions are the timeline actions; see actions/index.js for ctx. */
export function timelineActions({ api, store }) {
  return {
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
  };
}

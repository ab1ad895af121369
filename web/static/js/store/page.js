// page.js: what the person does on the page: the view, the pod and cycle
// chosen, the messages shown, and the buttons whose action is under way.

import { signal } from '../signals.js';
import { keyedMap } from './common.js';

export const VIEWS = Object.freeze(['queue', 'cycle', 'cluster', 'timeline', 'controls', 'compare', 'performance']);

/** The most error notices shown at once. */
const MAX_ERRORS = 2;

export function createPage(limits, now) {
  const view = signal('queue');
  const selectedPod = signal(null);
  // null follows the selected pod's newest cycle.
  const selectedCycle = signal(null);
  // The cycle being loaded over REST, if any.
  const cycleLoading = signal(null);
  const notices = signal([]);
  // The id of the element to focus once the view shows it.
  const focus = signal(null);
  // Instructor mode: the theme ("auto" follows the system), the projector
  // layout, whether a reset waits for its confirmation, the stream seq
  // after which the next cycle's end is a step's (null when no step is
  // followed), and the lesson run whose banner was closed.
  const theme = signal('auto');
  const projector = signal(false);
  const confirmReset = signal(false);
  const stepWatch = signal(null);
  const lessonClosed = signal(null);
  // The inspector follows the newest cycle to end, whatever its pod.
  const follow = signal(false);
  // The node whose editor is open in the cluster view, or null.
  const editingNode = signal(null);
  // The recording the page replays ({name, header}), or null when live:
  // then nothing on the page may change a cluster.
  const replay = signal(null);
  // The bench report the Performance view shows ({name, cost}: perf.js's
  // benchCost), or null.
  const bench = signal(null);
  // Action name -> true while it runs.
  const busy = keyedMap();
  // Action name -> the input its last run found wrong.
  const invalid = keyedMap();
  let noticeId = 0;

  function setView(v) {
    if (VIEWS.includes(v)) view.value = v;
  }

  return {
    view,
    selectedPod,
    selectedCycle,
    cycleLoading,
    notices,
    focus,
    theme,
    projector,
    confirmReset,
    stepWatch,
    lessonClosed,
    editingNode,
    follow,
    replay,
    bench,

    isBusy(name) {
      return !!busy.get(name);
    },

    /** The input of the form behind action name that its last run found wrong, or null. */
    invalidInput(name) {
      return invalid.get(name) || null;
    },

    markInvalid(name, input) {
      if (input) invalid.set(name, input);
      else invalid.delete(name);
    },

    setBusy(name, on) {
      if (on) busy.set(name, true);
      else busy.delete(name);
    },

    setView,

    /** Selects a pod, and its newest cycle unless cycleId is given. */
    selectPod(key, cycleId, v) {
      selectedPod.value = key;
      selectedCycle.value = cycleId;
      if (v) setView(v);
    },

    /**
     * Adds a notice. The same words again replace the older notice, and
     * the newest two errors stand for the rest: errors do not pile up.
     */
    addNotice(level, text) {
      noticeId += 1;
      let list = [...notices.peek().filter((n) => n.level !== level || n.text !== text), { id: noticeId, level, text, at: now() }];
      const errors = list.filter((n) => n.level === 'error');
      if (errors.length > MAX_ERRORS) {
        const drop = new Set(errors.slice(0, errors.length - MAX_ERRORS).map((n) => n.id));
        list = list.filter((n) => !drop.has(n.id));
      }
      notices.value = list.slice(-limits.notices);
      return noticeId;
    },

    /** Drops the notices that are not errors once they are older than ms. */
    expireNotices(ms) {
      const t = now();
      const list = notices.peek();
      const keep = list.filter((n) => n.level === 'error' || t - n.at < ms);
      if (keep.length !== list.length) notices.value = keep;
    },

    dismissNotice(id) {
      notices.value = notices.peek().filter((n) => n.id !== id);
    },
  };
}

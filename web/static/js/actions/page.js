// actions/page.js: the page itself: views, focus, notices, the theme and
// the projector layout, and the reset dialog's questions.

import { THEMES } from '../route.js';
import { benchCost } from '../views/performance/perf.js';

// The largest bench report the Performance view reads: a report's plugin
// rows and per-second rates are a few KB; this is far more.
const MAX_BENCH_BYTES = 8 << 20;

/** pageActions are the page actions; see actions/index.js for ctx. */
export function pageActions({ store, actions }) {
  return {
    /** R: a reset asks first; Enter or the button confirms, Escape cancels. */
    askReset() { store.setConfirmReset(true); },
    cancelShortcut() { store.setConfirmReset(false); },
    async confirmReset() {
      store.setConfirmReset(false);
      return actions.reset();
    },

    toggleProjector() { store.setProjector(!store.page.projector.peek()); },
    nextTheme() { store.setTheme(THEMES[(THEMES.indexOf(store.page.theme.peek()) + 1) % THEMES.length]); },
    goAddNode() { store.focusOn('controls', 'node-name'); },
    goLessons() { store.focusOn('controls', 'scen-h'); },
    focused() { store.focusOn(null, null); },
    setView(view) { store.setView(view); },

    /** Reads a `minisched bench -o json` file for the Performance view; a file that is not one is said in words. */
    async loadBench(file) {
      if (!file) return;
      try {
        if (file.size > MAX_BENCH_BYTES) throw new Error(`It is ${Math.round(file.size / 1048576)} MB; a bench report is a few KB.`);
        store.setBench({ name: file.name, cost: benchCost(JSON.parse(await file.text())) });
      } catch (err) {
        store.addNotice('error', `Could not read ${file.name}: ${err.message}`);
      }
    },
    clearBench() { store.setBench(null); },
    dismiss(id) { store.dismissNotice(id); },
  };
}

// actions/page.js: the page itself: views, focus, notices, the theme and
// the projector layout, and the reset dialog's questions.

import { THEMES } from '../route.js';

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
    dismiss(id) { store.dismissNotice(id); },
  };
}

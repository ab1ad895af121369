// route.js: the address's #fragment and the keyboard's shortcuts, as data.
// Pure functions, no DOM: tested with node --test.
//
//   #queue, #cluster ...       a view
//   #/cycle/12                 the inspector on cycle 12
//   #/pod/default/web-1        the inspector on a pod (its newest cycle)

/**
 * parseHash("#/pod/default/web-1") -> {view: "cycle", pod: "default/web-1"};
 * {view, cycle} for a cycle; {view} for a view; null for anything else.
 */
export function parseHash(hash, views) {
  const h = decodeURIComponent(String(hash || '').replace(/^#/, ''));
  let m = /^\/cycle\/(\d+)$/.exec(h);
  if (m) return { view: 'cycle', cycle: Number(m[1]) };
  m = /^\/pod\/([^/]+)\/([^/]+)$/.exec(h);
  if (m) return { view: 'cycle', pod: `${m[1]}/${m[2]}` };
  return views.includes(h) ? { view: h } : null;
}

/** The fragment for what the page shows: the inspector's pod or cycle, or the view. */
export function hashFor(view, pod, cycle) {
  if (view === 'cycle' && cycle != null) return `#/cycle/${cycle}`;
  if (view === 'cycle' && pod) return `#/pod/${pod.split('/').map(encodeURIComponent).join('/')}`;
  return `#${view}`;
}

/**
 * The action a key press asks for, or null: Space pauses or resumes, S
 * steps, R resets (after a confirmation), 1-6 show a view, P the
 * projector layout, T the next theme, Escape closes what is open. Keys
 * typed into a field, with Ctrl, Alt or Meta, and Space on a button are
 * the page's own. In a replay ({action: "player", arg: method}) Space plays
 * or pauses, S steps one event, C one cycle, B back one event, and R does
 * nothing: a recording changes nothing.
 */
export function shortcut(ev, views, replay = false) {
  if (ev.ctrlKey || ev.altKey || ev.metaKey) return null;
  if (ev.inField) return ev.key === 'Escape' ? { action: 'cancelShortcut' } : null;
  if (ev.onButton && ev.key === ' ') return null;
  if (replay) {
    const method = { ' ': 'toggle', s: 'stepEvent', S: 'stepEvent', c: 'stepCycle', C: 'stepCycle', b: 'stepBack', B: 'stepBack' }[ev.key];
    if (method) return { action: 'player', arg: method };
    if (ev.key === 'r' || ev.key === 'R') return null;
  }
  switch (ev.key) {
    case ' ': return { action: 'togglePause' };
    case 's': case 'S': return { action: 'step' };
    case 'r': case 'R': return { action: 'askReset' };
    case 'p': case 'P': return { action: 'toggleProjector' };
    case 't': case 'T': return { action: 'nextTheme' };
    case 'Escape': return { action: 'cancelShortcut' };
    default: {
      const i = Number(ev.key) - 1;
      return Number.isInteger(i) && i >= 0 && i < views.length ? { action: 'setView', arg: views[i] } : null;
    }
  }
}

/** The themes the toggle goes through, in order. */
export const THEMES = Object.freeze(['auto', 'light', 'dark']);

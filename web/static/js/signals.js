// signals.js: the reactive values the store is made of, from the vendored
// @preact/signals-core. Imported by path rather than by the import map's
// name so that node --test, which has no import map, loads the very file the
// browser does; the browser resolves this path and the map's
// "@preact/signals-core" (which @preact/signals imports) to one URL, so the
// store and Preact's bindings share one runtime.
export { batch, computed, effect, signal, untracked } from '../vendor/@preact/signals-core/signals-core.mjs';

// ui.js: what every view shares: htm bound to Preact, a virtualised list,
// grid and table body, and a meter.

import { h } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { percent } from './format.js';
import { columnsFor, gridRange, visibleRange } from './windowing.js';

export const html = htm.bind(h);

// Measuring: every size the views need (a scrolling box's, a table row's,
// what 1rem is) is read in a ResizeObserver's callback, which the browser
// runs just after layout. Read there, it costs nothing; read while a view
// renders or in a layout effect (getBoundingClientRect, getComputedStyle),
// it makes the browser style and lay out the page then and there, in the
// middle of the task, once for every reader.

// One observer for the page: its one callback reads every size that changed
// before any view renders again (Preact renders in a microtask, after it),
// so that no read follows a write. A hidden probe 1rem wide tells it when
// the root's font size changes (a small screen, the projector layout): then
// every box measures again, whether or not its own size changed.
let observer = null;
let probe = null;
const resized = new Map(); // element -> what to do when it resizes

function observe(elements, onResize) {
  if (!observer) {
    observer = new ResizeObserver((entries) => {
      const due = entries.some((e) => e.target === probe)
        ? new Set(resized.values())
        : new Set(entries.map((e) => resized.get(e.target)).filter(Boolean));
      for (const f of due) f();
    });
    probe = document.createElement('div');
    probe.setAttribute('aria-hidden', 'true');
    probe.style.cssText = 'position:absolute;top:0;left:0;width:1rem;height:0;visibility:hidden;pointer-events:none';
    document.body.append(probe);
    observer.observe(probe);
  }
  for (const el of elements) {
    resized.set(el, onResize);
    observer.observe(el);
  }
  return () => {
    for (const el of elements) {
      resized.delete(el);
      observer.unobserve(el);
    }
  };
}

const same = (a, b) => Object.keys(b).every((k) => Math.abs(a[k] - b[k]) < 0.5);

/** What 1rem is now, in pixels: smaller on small screens, larger for a projector. */
function rootRem() {
  return probe.getBoundingClientRect().width || 16;
}

// The last size measured of each kind of box (by name). A view shown again
// renders first at the size its box had: when the measure agrees, nothing
// renders twice and the browser lays the view out once. A guess renders
// what fits it, and then again what fits the box: at a thousand nodes the
// cluster's cards cost a second render and two more layouts.
const remembered = new Map();

/**
 * useBox follows a scrolling box: { width, height } inside it (without its
 * scrollbar) and rem, in pixels. more(), if given, measures more in the
 * same callback (a table's rows); refs are further elements whose resizing
 * also calls for a new measure. Until the first measure it is the last
 * measure of a box of the same name, or guess.
 */
function useBox(ref, guess, { more = null, refs = [], name = '' } = {}) {
  const [box, setBox] = useState(() => remembered.get(name) ?? guess);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    const measure = () => {
      const next = { width: el.clientWidth, height: el.clientHeight, rem: rootRem(), ...more?.() };
      remembered.set(name, next);
      setBox((b) => (same(b, next) ? b : next));
    };
    return observe([el, ...refs.map((r) => r.current).filter(Boolean)], measure);
  }, []);
  return box;
}

/**
 * useScroll follows an element's scrollTop, at most once a frame: [ref,
 * scrollTop, onScroll]. The handler only records where the box is; what to
 * render follows from it (windowing.js).
 */
export function useScroll() {
  const ref = useRef(null);
  const [top, setTop] = useState(0);
  const frame = useRef(0);
  useEffect(() => () => cancelAnimationFrame(frame.current), []);
  const onScroll = (ev) => {
    const el = ev.currentTarget;
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      setTop(el.scrollTop);
    });
  };
  return [ref, top, onScroll];
}

/**
 * VirtualList renders only the rows in view (plus a few), each rowHeight
 * pixels (or rowRem rem) high, in a scrolling box that fills its parent.
 * items are keyed by keyOf. Scroll events update at most once per frame.
 */
export function VirtualList({ items, rowHeight, rowRem, renderRow, keyOf, label, className = '', overscan = 4, empty = null }) {
  const [ref, top, onScroll] = useScroll();
  const size = useBox(ref, { width: 400, height: 600, rem: 16 }, { name: `list ${className}` });
  if (rowRem) rowHeight = rowRem * size.rem;
  const n = items.length;
  const { first, last, total } = visibleRange({ count: n, rowHeight, scrollTop: top, height: size.height, overscan });
  const rows = [];
  for (let i = first; i < last; i++) {
    const it = items[i];
    rows.push(html`<div class="vrow" role="listitem" key=${keyOf(it)} style=${`top:${i * rowHeight}px;height:${rowHeight}px`}>${renderRow(it, i)}</div>`);
  }
  return html`<div class=${`vlist ${className}`} ref=${ref} onScroll=${onScroll} role="list" aria-label=${label}>
    ${n === 0 && empty ? html`<div class="empty">${empty}</div>` : null}
    <div class="vspace" style=${`height:${total}px`}>${rows}</div>
  </div>`;
}

/**
 * VirtualGrid lays items out as cards of at least widthRem wide and
 * heightRem high (gapRem apart), as many columns as fit, and renders only
 * the rows of cards in view, in a scrolling box that fills its parent.
 */
export function VirtualGrid({ items, widthRem, heightRem, gapRem = 0, renderItem, keyOf, label, className = '', overscan = 1 }) {
  const [ref, top, onScroll] = useScroll();
  const size = useBox(ref, { width: 1200, height: 800, rem: 16 }, { name: `grid ${className}` });
  const [minWidth, rowHeight, gap] = [widthRem, heightRem, gapRem].map((n) => Math.round(n * size.rem));
  const columns = columnsFor(size.width, minWidth, gap);
  const r = gridRange({ count: items.length, columns, rowHeight: rowHeight + gap, scrollTop: top, height: size.height, overscan });
  const shown = items.slice(r.first, r.last);
  return html`<div class=${`vgrid ${className}`} ref=${ref} onScroll=${onScroll} aria-label=${label} role="list">
    <div class="vspace" style=${`height:${r.total}px`}>
      <div class="vgrid-cells" style=${`top:${r.offset}px;gap:${gap}px;grid-template-columns:repeat(${columns}, minmax(0, 1fr));grid-auto-rows:${rowHeight}px`}>
        ${shown.map((it, i) => html`<div class="vcell" role="listitem" key=${keyOf(it)}>${renderItem(it, r.first + i)}</div>`)}
      </div>
    </div>
  </div>`;
}

/**
 * virtualRows: the rows of a table's body that show in its scrolling box
 * (scrolled to scrollTop, height pixels high, under a head headHeight
 * pixels high), each rowHeight pixels high, with a spacer row above and
 * below for the others; cols is the number of columns (for the spacers).
 */
function virtualRows({ rows, rowHeight, scrollTop, height, headHeight = 0, overscan = 4, cols, renderRow }) {
  const r = visibleRange({ count: rows.length, rowHeight, scrollTop: Math.max(0, scrollTop - headHeight), height, overscan });
  const out = [];
  if (r.first > 0) out.push(html`<tr class="vpad" aria-hidden="true" key="vpad-top" style=${`height:${r.first * rowHeight}px`}><td colspan=${cols}></td></tr>`);
  for (let i = r.first; i < r.last; i++) out.push(renderRow(rows[i], i));
  if (r.last < rows.length) out.push(html`<tr class="vpad" aria-hidden="true" key="vpad-end" style=${`height:${(rows.length - r.last) * rowHeight}px`}><td colspan=${cols}></td></tr>`);
  return out;
}

/**
 * ScrollTable is a table in a scrolling box (at most its CSS max-height
 * high) whose body renders only the rows in view: a Filter matrix of 5,000
 * nodes costs what a screenful does. Rows are one line high (the CSS keeps
 * them so); the height of a rendered row is measured, rowRem is the first
 * guess. head is the <thead>; renderRow(row, i) returns a <tr> with a key.
 */
export function ScrollTable({ rows, rowRem = 2, head, renderRow, cols, className = '', id, describedBy, boxClass = '' }) {
  const [ref, top, onScroll] = useScroll();
  const tableRef = useRef(null);
  // A rendered row's height and the head's, measured whenever the table
  // resizes (as it does when they change); until then, rowRem each.
  const rowsOf = () => {
    const table = tableRef.current;
    const tr = table?.querySelector('tbody > tr:not(.vpad)');
    return tr ? { row: tr.getBoundingClientRect().height, head: table.tHead?.getBoundingClientRect().height ?? 0 } : {};
  };
  const box = useBox(ref, { width: 800, height: 480, rem: 16 }, { more: rowsOf, refs: [tableRef], name: `table ${className}` });
  const row = box.row || rowRem * box.rem;
  const headHeight = box.row ? box.head : row;
  return html`<div class=${`vtable ${boxClass}`} ref=${ref} onScroll=${onScroll} tabindex="0">
    <table class=${className} id=${id} aria-describedby=${describedBy} aria-rowcount=${rows.length + 1} ref=${tableRef}>
      ${head}
      <tbody>${virtualRows({ rows, rowHeight: row, scrollTop: top, height: box.height, headHeight, cols, renderRow })}</tbody>
    </table>
  </div>`;
}

/** A small labelled bar: used/total as a meter. */
export function Meter({ label, used, total, text }) {
  const pct = percent(used, total);
  const level = pct >= 100 ? 'full' : pct >= 80 ? 'high' : 'ok';
  return html`<div class="meter">
    <span class="meter-label">${label}</span>
    <span class="meter-bar" role="meter" aria-label=${label} aria-valuemin="0" aria-valuemax=${total} aria-valuenow=${used} aria-valuetext=${text}>
      <span class=${`meter-fill ${level}`} style=${`width:${pct}%`}></span>
    </span>
    <span class="meter-text">${text}</span>
  </div>`;
}

/**
 * A button that asks to be clicked twice: the first click arms it (its
 * label asks for confirmation) for five seconds, the second runs onConfirm.
 */
export function ConfirmButton({ label, confirm, onConfirm, disabled, className = 'danger', id, ariaLabel }) {
  const [armed, setArmed] = useState(false);
  useEffect(() => {
    if (!armed) return undefined;
    const t = setTimeout(() => setArmed(false), 5000);
    return () => clearTimeout(t);
  }, [armed]);
  const click = () => {
    if (!armed) setArmed(true);
    else {
      setArmed(false);
      onConfirm();
    }
  };
  return html`<button type="button" class=${`${className}${armed ? ' armed' : ''}`} id=${id} aria-label=${armed ? confirm : ariaLabel}
    data-armed=${armed ? 'true' : 'false'} disabled=${disabled} onClick=${click}>${armed ? confirm : label}</button>`;
}

export function Field({ id, label, hint, children }) {
  return html`<div class="field">
    <label for=${id}>${label}</label>
    ${children}
    ${hint ? html`<small id=${`${id}-hint`} class="hint">${hint}</small>` : null}
  </div>`;
}

/**
 * A form's fields; bind(name) gives an input its value and its handler,
 * and marks it invalid when the last run of action (the form's submit)
 * found it wrong.
 */
export function useForm(initial, store, action) {
  const [form, setForm] = useState(initial);
  // Changes merge into the newest state, not this render's: two fields may
  // change before the next render.
  const update = (patch) => setForm((f) => ({ ...f, ...patch }));
  const bad = store.page.invalidInput(action);
  const bind = (name) => ({
    id: `f-${name}`,
    name,
    value: form[name],
    'aria-invalid': bad === name ? 'true' : null,
    onInput: (e) => update({ [name]: e.currentTarget.value }),
  });
  return [form, update, bind];
}

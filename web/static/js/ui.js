// ui.js: what every view shares: htm bound to Preact, a virtualised list
// and a meter.

import { h } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { percent } from './format.js';

export const html = htm.bind(h);

/** n rem in pixels, at the root's font size now (smaller on small screens). */
export function remPx(n) {
  return Math.round(n * parseFloat(getComputedStyle(document.documentElement).fontSize || '16'));
}

/** useSize follows an element's content size. */
export function useSize(ref, fallback = { width: 800, height: 600 }) {
  const [size, setSize] = useState(fallback);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    const measure = () => {
      const r = el.getBoundingClientRect();
      setSize((s) => (Math.abs(s.width - r.width) < 1 && Math.abs(s.height - r.height) < 1 ? s : { width: r.width, height: r.height }));
    };
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return size;
}

/**
 * VirtualList renders only the rows in view (plus a few), each rowHeight
 * pixels high, in a scrolling box that fills its parent. items are keyed by
 * keyOf. Scroll events update at most once per frame.
 */
export function VirtualList({ items, rowHeight, renderRow, keyOf, label, className = '', overscan = 4, empty = null }) {
  const ref = useRef(null);
  const size = useSize(ref, { width: 400, height: 600 });
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
  const n = items.length;
  const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
  const last = Math.min(n, Math.ceil((top + size.height) / rowHeight) + overscan);
  const rows = [];
  for (let i = first; i < last; i++) {
    const it = items[i];
    rows.push(html`<div class="vrow" role="listitem" key=${keyOf(it)} style=${`top:${i * rowHeight}px;height:${rowHeight}px`}>${renderRow(it, i)}</div>`);
  }
  return html`<div class=${`vlist ${className}`} ref=${ref} onScroll=${onScroll} role="list" aria-label=${label}>
    ${n === 0 && empty ? html`<div class="empty">${empty}</div>` : null}
    <div class="vspace" style=${`height:${n * rowHeight}px`}>${rows}</div>
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

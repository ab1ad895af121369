// windowing.js: which rows of a long list are in view. Pure functions, no
// DOM: tested with node --test. The views (ui.js's VirtualList and
// VirtualGrid, the inspector's matrices, the node table) render only the
// rows these return, so that a lane of 20,000 pods or a Filter matrix of
// 5,000 nodes costs what a screenful costs.

/**
 * visibleRange: the rows [first, last) of count rows, each rowHeight pixels
 * high, that show in a viewport of height pixels scrolled to scrollTop
 * (relative to the first row), plus overscan rows on either side. offset is
 * where row first starts and total the height of all rows, in pixels.
 */
export function visibleRange({ count, rowHeight, scrollTop = 0, height = 0, overscan = 4 }) {
  const n = Math.max(0, Math.floor(count || 0));
  const h = Math.max(1, rowHeight || 1);
  const total = n * h;
  if (n === 0) return { first: 0, last: 0, offset: 0, total };
  const top = Math.max(0, Math.min(scrollTop || 0, total));
  const first = Math.max(0, Math.min(n - 1, Math.floor(top / h)) - overscan);
  const last = Math.min(n, Math.ceil((top + Math.max(0, height || 0)) / h) + overscan);
  return { first, last: Math.max(first, last), offset: first * h, total };
}

/**
 * gridRange: the same for count cards laid out in rows of columns cards:
 * the cards [first, last) to render, the row the first starts (row), the
 * rows in all (rows) and the pixels above the first row rendered (offset).
 */
export function gridRange({ count, columns, rowHeight, scrollTop = 0, height = 0, overscan = 1 }) {
  const cols = Math.max(1, Math.floor(columns || 1));
  const rows = Math.ceil(Math.max(0, count || 0) / cols);
  const r = visibleRange({ count: rows, rowHeight, scrollTop, height, overscan });
  return { first: r.first * cols, last: Math.min(count, r.last * cols), row: r.first, rows, offset: r.offset, total: r.total };
}

/** How many columns of at least minWidth pixels, gap apart, fit in width. */
export function columnsFor(width, minWidth, gap = 0) {
  if (!(width > 0) || !(minWidth > 0)) return 1;
  return Math.max(1, Math.floor((width + gap) / (minWidth + gap)));
}


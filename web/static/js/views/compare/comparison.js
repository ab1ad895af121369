// comparison.js: two scheduler configurations side by side, as data for the
// Compare view (POST /compare's report and one pod's two Score tables).
// Pure functions, no DOM: tested with node --test.

import { plural } from '../../format.js';

/** The comparison's totals in words. */
export function summary(report) {
  if (!report) return '';
  const pods = report.pods || [];
  const parts = [`${report.moved} of ${plural(pods.length, 'pod')} placed differently`];
  const onlyA = report.unschedulableOnlyA || [];
  const onlyB = report.unschedulableOnlyB || [];
  if (onlyA.length) parts.push(`${onlyA.length} unschedulable under ${report.a} only`);
  if (onlyB.length) parts.push(`${onlyB.length} unschedulable under ${report.b} only`);
  return parts.join('; ');
}

/**
 * The feature gates each side's scheduler set of its own, in words; '' when
 * neither set any.
 */
export function gatesLine(comparison) {
  const [a = '', b = ''] = comparison?.featureGates || [];
  if (!a && !b) return '';
  const side = (name, gates) => `${name}: ${gates ? gates.replaceAll(',', ', ') : 'the run\'s'}`;
  return `Feature gates of each side's scheduler: ${side(comparison.a, a)}; ${side(comparison.b, b)}.`;
}

/**
 * The pods table: one row per pod, those placed differently first, then
 * by name; lead names the plugin that changed its mind most.
 */
export function podRows(report) {
  const rows = (report?.pods || []).map((p) => ({
    pod: p.pod,
    nodeA: p.nodeA || '',
    nodeB: p.nodeB || '',
    moved: !p.same,
    lead: p.plugins?.[0]?.plugin || '',
    notes: p.notes || [],
  }));
  return rows.sort((x, y) => Number(y.moved) - Number(x.moved) || x.pod.localeCompare(y.pod));
}

/** The nodes table: utilisation under A and under B; changed when they differ. */
export function nodeRows(report) {
  return (report?.nodes || []).map((n) => ({
    node: n.node,
    a: n.a,
    b: n.b,
    changed: n.a.pods !== n.b.pods || Math.round(n.a.cpu) !== Math.round(n.b.cpu) || Math.round(n.a.memory) !== Math.round(n.b.memory),
  }));
}

/**
 * One pod's two Score tables ({a, b}: GET /compare/pods/...), on shared
 * rows and columns: every node either side scored or filtered out, every
 * plugin either side ran. A cell is a weighted score, or null where that
 * side did not score the node; differs marks the cells (and totals) whose
 * two sides are not equal. Rows go best first, by the better of the two
 * totals; a side's chosen node is the one its pod is bound to. zero names
 * the plugins that scored every node 0 under both, which get no column.
 */
export function scoreTables(detail) {
  const sides = [detail?.a, detail?.b];
  const plugins = new Set();
  const nodes = new Set();
  for (const s of sides) {
    for (const [node, scores] of Object.entries(s?.scores || {})) {
      nodes.add(node);
      for (const p of Object.keys(scores)) plugins.add(p);
    }
    for (const node of Object.keys(s?.filtered || {})) nodes.add(node);
  }
  const names = [...plugins].sort();
  const cellsOf = (s, node) => {
    const scores = s?.scores?.[node];
    const cells = names.map((p) => (scores && p in scores ? scores[p] : null));
    return {
      cells,
      total: scores ? cells.reduce((sum, v) => sum + (v ?? 0), 0) : null,
      chosen: !!s && s.node === node,
      filtered: s?.filtered?.[node] || '',
    };
  };
  const rows = [...nodes].map((node) => {
    const [a, b] = sides.map((s) => cellsOf(s, node));
    return {
      node,
      a,
      b,
      differs: names.map((_, i) => a.cells[i] !== b.cells[i]),
      totalDiffers: a.total !== b.total,
    };
  });
  const best = (r) => Math.max(r.a.total ?? -Infinity, r.b.total ?? -Infinity);
  rows.sort((x, y) => best(y) - best(x) || x.node.localeCompare(y.node));
  // Plugins that gave every node 0 under both say nothing here: they are
  // named, not given a column each.
  const shown = names.map((_, i) => rows.some((r) => r.a.cells[i] || r.b.cells[i]));
  const keep = (list) => list.filter((_, i) => shown[i]);
  return {
    plugins: keep(names),
    zero: names.filter((_, i) => !shown[i]),
    rows: rows.map((r) => ({ ...r, a: { ...r.a, cells: keep(r.a.cells) }, b: { ...r.b, cells: keep(r.b.cells) }, differs: keep(r.differs) })),
  };
}


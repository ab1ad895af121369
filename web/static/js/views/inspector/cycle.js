// cycle.js: what the cycle inspector shows, derived from one cycle's
// events. Pure functions, no DOM: tested with node --test. Status codes are
// numbers in the events; codes (the vocabulary's, index = code) names them.

import { codeClass, codeName, formatNanos, plural, tidyReason } from '../../format.js';

/** A status code's name, and its class: pass, fail, wait, skip or error. */
function status(code, codes) {
  const name = codeName(code, codes);
  return { name, state: codeClass(name) };
}

/**
 * filterMatrix turns a filter event into rows of cells. Filter stops at the
 * first plugin that does not succeed, so a row's codes may be shorter than
 * the plugins: the cells after it are "notrun".
 *
 * Returns {plugins, rows: [{node, feasible, failedAt, failedPlugin, reason,
 * nanos, cells: [{plugin, state, code, name, label, reason, nanos}]}],
 * feasible, total, columnNanos, columns}. columns orders the plugins for a
 * table: those that failed on some node first, most failures first, then
 * the rest as Filter ran them, so the column that decided is in sight
 * however many plugins run.
 */
export function filterMatrix(filter, codes, opts = {}) {
  if (!filter) return null;
  const plugins = filter.plugins || [];
  const columnNanos = plugins.map(() => 0);
  let feasible = 0;
  const rows = (filter.nodes || []).map((n) => {
    const codesRun = n.codes || [];
    const nanos = n.nanos || [];
    let failedAt = -1;
    const cells = plugins.map((plugin, i) => {
      if (i >= codesRun.length) return { plugin, state: 'notrun', code: null, name: '', label: 'not run', reason: '', nanos: null };
      const code = codesRun[i];
      const { name, state } = status(code, codes);
      columnNanos[i] += nanos[i] || 0;
      if (state === 'pass' || state === 'skip') return { plugin, state, code, name, label: state, reason: '', nanos: nanos[i] ?? null };
      if (failedAt < 0) failedAt = i;
      const reason = i === codesRun.length - 1 ? n.reason || '' : '';
      return { plugin, state, code, name, label: reason || name, reason, nanos: nanos[i] ?? null };
    });
    const ok = failedAt < 0 && codesRun.length === plugins.length;
    if (ok) feasible += 1;
    const total = nanos.reduce((a, b) => a + (b || 0), 0);
    return { node: n.node, feasible: ok, failedAt, failedPlugin: failedAt >= 0 ? plugins[failedAt] : '', reason: n.reason || '', nanos: total, nominated: !!n.nominated, cells };
  });
  if (opts.failingFirst) rows.sort((a, b) => Number(a.feasible) - Number(b.feasible));
  const failures = plugins.map(() => 0);
  for (const r of rows) if (r.failedAt >= 0) failures[r.failedAt] += 1;
  const columns = plugins.map((_, i) => i).sort((a, b) => (failures[b] > 0 || failures[a] > 0 ? failures[b] - failures[a] : 0) || a - b);
  return { plugins, rows, feasible, total: rows.length, columnNanos, columns, failures, nanos: filter.nanos || 0, nominatedNode: !!filter.nominatedNode, batch: filter.batch || '' };
}

/**
 * reasonSummary counts the filter's failure reasons: [{reason, plugin,
 * count}], most frequent first (like "3 Insufficient cpu").
 */
export function reasonSummary(matrix) {
  if (!matrix) return [];
  const counts = new Map();
  for (const r of matrix.rows) {
    if (r.feasible) continue;
    const k = `${r.failedPlugin}\u0000${r.reason}`;
    const c = counts.get(k) || { plugin: r.failedPlugin, reason: r.reason || r.cells[r.failedAt]?.name || '', count: 0 };
    c.count += 1;
    counts.set(k, c);
  }
  return [...counts.values()].sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1));
}

/**
 * scoreTable turns a score event (and the cycle's end) into rows sorted by
 * total, best first: [{node, raw, normalized, weighted, nanos, total,
 * winner, tie, rank}]. winner is the node the cycle chose; tie marks the
 * nodes that shared the best total with it, read from the totals (a
 * compact stream's cycle end counts its ties and names none); bar the
 * length of its bar in percent, from floor (where the bars start) to max.
 * failed lists the plugins that did not succeed, with their status's name.
 */
export function scoreTable(score, end, codes) {
  if (!score) return null;
  const plugins = (score.plugins || []).map((p) => ({ ...p, nanos: 0 }));
  const winner = end?.result === 'scheduled' ? end.node : '';
  const rows = (score.nodes || []).map((n) => {
    (n.nanos || []).forEach((ns, i) => { if (plugins[i]) plugins[i].nanos += ns || 0; });
    return {
      node: n.node, raw: n.raw || [], normalized: n.normalized || [], weighted: n.weighted || [], nanos: n.nanos || [],
      total: n.total ?? 0, winner: n.node === winner,
    };
  });
  rows.sort((a, b) => b.total - a.total || (a.node < b.node ? -1 : 1));
  const best = rows.length ? rows[0].total : 0;
  const tied = winner !== '' && rows.length > 1 && rows[1].total === best;
  rows.forEach((r, i) => { r.rank = i + 1; r.best = r.total === best; r.tie = tied && r.best; });
  const failed = plugins.filter((p) => p.code != null && status(p.code, codes).state !== 'pass').map((p) => ({ ...p, codeName: codeName(p.code, codes) }));
  // The bars start a little below the lowest total, not at 0: totals of
  // 442 and 436 would look the same from 0. A negative weight makes
  // negative totals: the bars then start below the lowest of them.
  const top = rows.length ? Math.max(...rows.map((r) => r.total)) : 0;
  const min = rows.length ? Math.min(...rows.map((r) => r.total)) : 0;
  const below = Math.floor(min - Math.max(1, (top - min) / 4));
  let floor = 0;
  if (min < 0) floor = below;
  else if (rows.length > 1 && min > 0) floor = Math.max(0, below);
  const max = Math.max(floor + 1, top);
  rows.forEach((r) => { r.bar = ((r.total - floor) / (max - floor)) * 100; });
  // Plugins that gave every node 0 are named, not drawn: they said nothing.
  const drawn = [];
  const zero = [];
  plugins.forEach((p, i) => {
    if (rows.length && rows.every((r) => !r.weighted[i]) && !p.code) zero.push(`${p.name} (weight ${p.weight})`);
    else drawn.push(i);
  });
  return { plugins, rows, best, max, floor, nanos: score.nanos || 0, failed, drawn, zero, decided: decidedBy(plugins, rows) };
}

/**
 * briefView is what the inspector shows of a cycle whose Filter and Score
 * events have left the server's history, from the brief the server kept
 * (GET /cycles/{id}'s brief): {filter: {nodes, passed, failures: [{plugin,
 * reason, nodes}]}, score: {nodes, table}} (either may be null), table the
 * scoreTable of the best few nodes, so that the deciding plugin is marked
 * as for a whole cycle. null without a brief.
 */
export function briefView(brief, end, codes) {
  if (!brief) return null;
  const f = brief.filter;
  const s = brief.score;
  return {
    filter: f ? {
      nodes: f.nodes, passed: f.passed,
      failures: (f.failures || []).map((x) => ({ plugin: x.plugin || 'an extender', reason: tidyReason(x.reason || codeName(x.code, codes)), nodes: x.nodes })),
    } : null,
    score: s ? { nodes: s.nodes, table: scoreTable({ plugins: s.plugins, nodes: s.top, nanos: s.nanos }, end, codes) } : null,
  };
}

/**
 * decidedBy names the plugins whose weighted scores put the chosen node
 * ahead of the runner-up: each one that, left out, would have let the
 * runner-up tie or win; when no one plugin would, the fewest whose lead
 * together does, largest first. {winner, runnerUp, by, margin, columns:
 * [plugin index], lead: [{plugin, winner, runnerUp}]}; null without a
 * winner ahead of another node.
 */
export function decidedBy(plugins, rows) {
  const w = rows.find((r) => r.winner);
  const r = rows.find((x) => !x.winner);
  if (!w || !r || w.total <= r.total) return null;
  const margin = w.total - r.total;
  const diffs = plugins.map((p, i) => ({ i, d: (w.weighted[i] || 0) - (r.weighted[i] || 0) }));
  let columns = diffs.filter((x) => x.d >= margin).map((x) => x.i);
  if (!columns.length) {
    let sum = 0;
    columns = [];
    for (const x of diffs.filter((y) => y.d > 0).sort((a, b) => b.d - a.d)) {
      columns.push(x.i);
      sum += x.d;
      if (sum >= margin) break;
    }
  }
  return {
    winner: w.node, runnerUp: r.node, margin, winnerTotal: w.total, runnerUpTotal: r.total, columns,
    lead: columns.map((i) => ({ plugin: plugins[i].name, winner: w.weighted[i] || 0, runnerUp: r.weighted[i] || 0 })),
  };
}

/** The sentence above the Score table: who decided between the two best nodes. */
export function decidedWords(d) {
  if (!d) return '';
  const lead = d.lead.map((l) => `${l.plugin} (${l.winner} against ${l.runnerUp})`);
  const names = lead.length > 1 ? `${lead.slice(0, -1).join(', ')} and ${lead.at(-1)}` : lead[0];
  return `${d.winner} beat ${d.runnerUp} ${d.winnerTotal} to ${d.runnerUpTotal}: decided by ${names}.`;
}

/**
 * partialSearch says, when Filter stopped before it checked every node,
 * how many it checked of how many: kube-scheduler stops once it has found
 * enough feasible nodes (percentageOfNodesToScore). '' when it checked
 * them all, or checked one node alone (a nominated node, a batch's hint).
 */
export function partialSearch(matrix, nodes) {
  if (!matrix || matrix.nominatedNode || !nodes || matrix.total >= nodes) return '';
  return `Filter checked ${matrix.total} of the ${plural(nodes, 'node')}: it stops once it has found enough feasible ones (${matrix.feasible} here), as kube-scheduler does with percentageOfNodesToScore. The other ${nodes - matrix.total} were not checked.`;
}

/**
 * pointRows lists a cycle's pod-level point results in the order they ran
 * (an Unreserve after a failed Bind comes after it): [{point, node, index,
 * results: [{plugin, code, state, label, reason, nanos, extra}]}].
 */
export function pointRows(points, codes) {
  return (points || []).map((p, i) => ({
    point: p.point, node: p.node || '', index: i,
    results: (p.results || []).map((r) => {
      const { name, state } = status(r.code, codes);
      return { plugin: r.plugin, code: r.code, state, label: name, reason: tidyReason(r.reason), nanos: r.nanos ?? null, extra: resultExtra(r) };
    }),
  }));
}

function resultExtra(r) {
  const parts = [];
  if (r.nodeNames?.length) parts.push(`narrowed to ${r.nodeNames.length} node(s): ${r.nodeNames.slice(0, 5).join(', ')}${r.nodeNames.length > 5 ? '…' : ''}`);
  if (r.timeoutNanos) parts.push(`wait up to ${(r.timeoutNanos / 1e9).toFixed(1)} s`);
  if (r.nominated) parts.push(`nominated ${r.nominated}`);
  return parts.join('; ');
}

/**
 * pluginTimes lists how long every plugin took in the cycle, longest first:
 * [{point, plugin, nanos, calls}]. Filter and Score add up their per-node
 * calls (which run in parallel, so the sum can exceed the wall time).
 */
export function pluginTimes(detail) {
  if (!detail) return [];
  const out = [];
  for (const p of detail.points || []) {
    for (const r of p.results || []) out.push({ point: p.point, plugin: r.plugin, nanos: r.nanos || 0, calls: 1 });
  }
  if (detail.filter) {
    const nodes = detail.filter.nodes || [];
    (detail.filter.plugins || []).forEach((plugin, i) => {
      // A node's codes stop at its first failure: the plugins after it did not run there.
      const ran = nodes.filter((n) => (n.codes || []).length > i);
      out.push({ point: 'Filter', plugin, nanos: ran.reduce((a, n) => a + ((n.nanos || [])[i] || 0), 0), calls: ran.length });
    });
  }
  if (detail.score) {
    const nodes = detail.score.nodes || [];
    (detail.score.plugins || []).forEach((p, i) => {
      const nanos = nodes.reduce((a, n) => a + ((n.nanos || [])[i] || 0), 0);
      out.push({ point: 'Score', plugin: p.name, nanos, calls: nodes.length });
      if (p.normalizeNanos) out.push({ point: 'NormalizeScore', plugin: p.name, nanos: p.normalizeNanos, calls: 1 });
    });
  }
  out.sort((a, b) => b.nanos - a.nanos);
  return out;
}


/** The words for an extender's verb. */
const VERBS = Object.freeze({ filter: 'filter', prioritize: 'prioritize', bind: 'bind', preempt: 'preempt' });

/**
 * extenderRows turns a cycle's extender calls into rows for the inspector:
 * [{extender, verb, inOut, away: [{node, reason, final}], more, weight,
 * error, ignored, nanos}]. away lists the nodes a filter turned away (final:
 * UnschedulableAndUnresolvable), more how many the event left out.
 */
export function extenderRows(calls) {
  return (calls || []).map((c) => {
    const away = [
      ...Object.entries(c.unresolvable || {}).map(([node, reason]) => ({ node, reason, final: true })),
      ...Object.entries(c.failed || {}).map(([node, reason]) => ({ node, reason, final: false })),
    ].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
    const counted = (c.failedCount || 0) + (c.unresolvableCount || 0);
    let inOut = '';
    if (c.verb === 'filter') inOut = `${c.nodes} in, ${c.passed} kept`;
    else if (c.verb === 'prioritize') inOut = `${c.passed} of ${c.nodes} scored, weight ${c.weight}`;
    else if (c.verb === 'preempt') inOut = `${c.nodes} candidate nodes in, ${c.passed} back`;
    else if (c.verb === 'bind') inOut = `to ${c.node}`;
    return {
      extender: c.extender, verb: VERBS[c.verb] || c.verb, inOut, away, more: Math.max(0, counted - away.length),
      weight: c.weight || 0, error: c.error || '', ignored: !!c.ignored, nanos: c.nanos || 0,
    };
  });
}

// Why a cycle had no hint from the batch, in upstream's metric words.
const NO_HINT = {
  none: 'the last cycle left no batch',
  pod_skipped: 'another pod was popped since the batch was kept',
  pod_failed: 'the pod that kept the batch failed',
  pod_nominated: 'the pod has a nominated node, which goes first',
  pod_incompatible: "the pod's signature is not the batch's",
  expired: 'the batch was older than 500 ms',
  node_missing: 'a node of the batch is gone',
  filter_error: 'Filter erred on the last chosen node',
  prescore_error: 'PreScore erred in the rescore',
  rescore_error: 'Score erred in the rescore',
  normalize_error: 'NormalizeScore erred in the rescore',
};

const DROPPED = {
  pod_not_batchable: 'the pod has no signature',
  empty_list: 'no other node was scored',
};

/**
 * batchLines says in words what opportunistic batching (upstream's
 * OpportunisticBatching) made of a cycle, from its end's batch: whether
 * the pod was placed from the batch an earlier pod left (and which), or why
 * not, and what the cycle left for the next pod. [] when the cycle carries
 * no batch (the gate is off).
 */
export function batchLines(batch, refusedBy = '', recheck = null) {
  if (!batch) return [];
  const lines = [];
  if (!batch.signed) lines.push(`Not batched: ${refusedBy || 'a plugin'} would not sign the pod${refusedBy ? '' : ' (see Sign below)'}, so it cannot share a batch.`);
  const last = recheck?.nodes?.[0];
  if (last) {
    const fits = (last.codes || []).every((c) => c === 0) && (last.codes || []).length === (recheck.plugins || []).length;
    lines.push(fits
      ? `The node the last pod went to, ${last.node}, still fits: it was rescored to compete again.`
      : `The node the last pod went to, ${last.node}, no longer fits${last.reason ? ` (${last.reason})` : ''}.`);
  }
  if (batch.hint) {
    const of = `the batch of ${batch.from?.name || 'an earlier pod'} (cycle ${batch.fromCycle}, ${formatNanos(batch.ageNanos || 0)} old, ${batch.nodesLeft || 0} node${batch.nodesLeft === 1 ? '' : 's'} left)`;
    lines.push(batch.used
      ? `Placed from ${of}: its best node, ${batch.hint}, passed Filter, so nothing was scored.`
      : `Offered ${batch.hint} from ${of}; it did not pass Filter, so every node was filtered and scored.`);
  } else if (batch.noHint && batch.signed) {
    lines.push(`No hint from a batch: ${NO_HINT[batch.noHint] || batch.noHint}.`);
  }
  if (batch.kept && !batch.used) lines.push(`Kept ${batch.kept} other scored node${batch.kept === 1 ? '' : 's'} for the next pod of its signature.`);
  else if (batch.dropped && batch.signed) lines.push(`Kept no batch: ${DROPPED[batch.dropped] || batch.dropped}.`);
  return lines;
}

const GROUP_PREFIX = 'pod group is unschedulable, ';

/**
 * groupLines says in words what a pod group's cycle (the store's
 * groupCycle) came to. Its pods are tried one after another on one
 * snapshot, then placed together, each waiting at Permit until enough of
 * the gang are assumed (GangScheduling), or turned away together; a
 * group's minimum may also place some and leave the others for another
 * try. [] without a group.
 */
export function groupLines(g) {
  if (!g) return [];
  const ended = g.members.filter((m) => m.end);
  const placed = ended.filter((m) => m.end.result === 'scheduled');
  const lines = [];
  if (g.members.length < g.total) lines.push(`${g.members.length} of its ${plural(g.total, 'pod')}' cycles are still in memory.`);
  if (ended.length < g.members.length) {
    lines.push(`Running: ${ended.length} of ${plural(g.members.length, 'pod')} tried so far, each on the snapshot the ones before it left.`);
  } else if (!placed.length) {
    const why = ended.map((m) => m.end.message || '').find((msg) => msg.startsWith(GROUP_PREFIX));
    lines.push(`Turned away together: none of its ${plural(ended.length, 'pod')} took a node${why ? `, for ${why.slice(GROUP_PREFIX.length)}` : ''}.`);
  } else if (placed.length < ended.length) {
    lines.push(`${placed.length} of ${plural(ended.length, 'pod')} placed, enough for the group's minimum; the others wait for another try.`);
  } else {
    lines.push(placed.length === 1 ? 'Placed: its pod took its node.' : `Placed together: all ${placed.length} pods took their nodes.`);
  }
  const waiting = placed.filter((m) => m.waiting && !m.binding);
  const bound = placed.filter((m) => m.binding?.bound);
  if (waiting.length) lines.push(`${plural(waiting.length, 'pod')} ${waiting.length === 1 ? 'waits' : 'wait'} at Permit until enough of the gang are assumed (GangScheduling).`);
  else if (placed.length && bound.length === placed.length) lines.push(`${bound.length === 1 ? 'It is' : `All ${bound.length} are`} bound.`);
  if (g.victims.length) lines.push(`The group's preemptions evicted ${g.victims.map((v) => `${v.pod} from ${v.node}`).join(', ')}, to make room for all its pods at once.`);
  return lines;
}

// lanes.js: the queue board's groups and search. A lane of 300 pods that
// all wait for the same reason is one line with a count, not 300 cards to
// read. Pure functions, no DOM: tested with node --test.

/** Why a queued pod waits, in the words its group is named by. */
export function reasonOf(entry) {
  if (!entry) return '';
  if (entry.gatingPlugin) return `gated by ${entry.gatingPlugin}`;
  if (entry.rejectedBy?.length) return `rejected by ${entry.rejectedBy.join(', ')}`;
  return entry.attempts ? 'tried before, no plugin to blame' : 'not tried yet';
}

/**
 * laneGroups counts a lane's pods (keys, in the lane's order) by reason:
 * [{reason, count}], the largest first, ties in the order met.
 */
export function laneGroups(keys, entryOf) {
  const counts = new Map();
  for (const k of keys) {
    const r = reasonOf(entryOf(k));
    counts.set(r, (counts.get(r) || 0) + 1);
  }
  return [...counts].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count);
}

/**
 * laneShown keeps the keys whose pod matches search (a part of its
 * namespace/name or of its reason, any case) and, when group is set,
 * whose reason is group. The lane's order is kept.
 */
export function laneShown(keys, entryOf, { search = '', group = null } = {}) {
  const q = search.trim().toLowerCase();
  if (!q && !group) return keys;
  return keys.filter((k) => {
    const reason = reasonOf(entryOf(k));
    if (group && reason !== group) return false;
    return !q || k.toLowerCase().includes(q) || reason.toLowerCase().includes(q);
  });
}

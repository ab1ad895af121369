// views/inspector/why.js: an explanation (GET /pods/{ns}/{name}/explain) as
// the inspector shows it: the closest nodes with what each needs and whether
// that was tried, and the groups of nodes that fail alike. Pure logic.

/** The words for what a failure asks for: its change, else its detail, else the plugin's reason. */
function need(f) {
  return f.change?.words || f.detail || f.reason;
}

const needs = (fs) => (fs || []).map((f) => ({ plugin: f.plugin, words: need(f), detail: f.detail || f.reason, usedBy: f.usedBy || [] }));

/** A node's tried result: 'fits', 'not enough' (with still) or 'unproven'. */
function triedOf(n) {
  let tried = 'unproven';
  if (n.tried?.fits) tried = 'fits';
  else if (n.tried) tried = 'not enough';
  return { tried, still: (n.tried?.failures || []).map((f) => `${f.plugin}: ${f.reason}`) };
}

/**
 * whyView turns an explanation into rows: {sentence, closest: [{name,
 * needs: [{plugin, words, detail}], tried: 'fits' | 'not enough' |
 * 'unproven', still}], groups: [{count, nodes, more, needs}], preemption:
 * words or '', tryNodes: the nodes it names, for "Try it", trial: the last
 * node tried (trialView)}; null for none.
 */
export function whyView(e) {
  if (!e || e.error) return null;
  const closest = (e.closest || []).map((n) => ({ name: n.name, needs: needs(n.failures), ...triedOf(n) }));
  const groups = (e.groups || []).map((g) => ({ count: g.count, nodes: g.nodes || [], more: Math.max(0, g.count - (g.nodes || []).length), needs: needs(g.failures) }));
  const tryNodes = [...new Set([...closest.map((n) => n.name), ...groups.flatMap((g) => g.nodes)])];
  return {
    sentence: e.sentence,
    podReason: e.podReason ? need(e.podReason) : '',
    fits: e.fits || [],
    closest,
    groups,
    preemption: preemptionWords(e.preemption),
    tryNodes,
    trial: trialView(e.trial),
  };
}

/** What preemption's dry run says, in words; '' when it did not run. */
function preemptionWords(p) {
  if (!p) return '';
  if (!p.helps) return `Preemption would not help: ${p.reason}.`.replace('..', '.');
  return `Preemption would make room on ${p.node}, evicting ${p.victims.join(', ')} (of ${p.candidates} candidate node${p.candidates === 1 ? '' : 's'}).`;
}

/**
 * trialView says how "Try it" went on a node: {node, label, cls, still,
 * needs, busy}; null before any.
 */
export function trialView(t) {
  if (!t) return null;
  if (t.state === 'trying') return { node: t.node, label: 'trying…', cls: '', still: [], needs: [], busy: true };
  if (t.state === 'error') return { node: t.node, label: t.error, cls: 'warn', still: [], needs: [] };
  const n = t.result;
  if (!n.failures?.length) return { node: t.node, label: 'fits now', cls: 'win', still: [], needs: [] };
  const { tried, still } = triedOf(n);
  const label = { fits: 'fits then', 'not enough': 'not enough', unproven: 'unproven: a failure has no change to make' }[tried];
  return { node: t.node, label, cls: tried === 'fits' ? 'win' : tried === 'not enough' ? 'warn' : '', still, needs: needs(n.failures) };
}

// views/inspector/why.js: an explanation (GET /pods/{ns}/{name}/explain) as
// the inspector shows it: the closest nodes with what each needs and whether
// that was tried, and the groups of nodes that fail alike. Pure logic.

/** The words for what a failure asks for: its change, else its detail, else the plugin's reason. */
function need(f) {
  return f.change?.words || f.detail || f.reason;
}

/**
 * whyView turns an explanation into rows: {sentence, closest: [{name,
 * needs: [{plugin, words, detail}], tried: 'fits' | 'not enough' |
 * 'unproven', still}], groups: [{count, nodes, more, needs}]}; null for
 * none.
 */
export function whyView(e) {
  if (!e || e.error) return null;
  const needs = (fs) => (fs || []).map((f) => ({ plugin: f.plugin, words: need(f), detail: f.detail || f.reason }));
  return {
    sentence: e.sentence,
    podReason: e.podReason ? need(e.podReason) : '',
    fits: e.fits || [],
    closest: (e.closest || []).map((n) => {
      let tried = 'unproven';
      if (n.tried?.fits) tried = 'fits';
      else if (n.tried) tried = 'not enough';
      return { name: n.name, needs: needs(n.failures), tried, still: (n.tried?.failures || []).map((f) => `${f.plugin}: ${f.reason}`) };
    }),
    groups: (e.groups || []).map((g) => ({ count: g.count, nodes: g.nodes || [], more: Math.max(0, g.count - (g.nodes || []).length), needs: needs(g.failures) })),
  };
}

// The cluster view: one card per node with what it offers and what the pods
// bound to it request, its taints and labels, and its pods.

import { useEffect, useState } from 'preact/hooks';
import { ConfirmButton, html, Meter } from '../ui.js';
import { formatBytes, formatCores, formatCpu, formatTaint, keyLabel, plural } from '../format.js';
import { natural } from '../store/index.js';

const PODS_PER_CARD = 12;
const PAGE = 40;
const FIRST = 12;
const NO_USAGE = Object.freeze({ cpu: 0, memory: 0, pods: 0, keys: new Set() });

function NodeCard({ store, actions, name }) {
  const node = store.cluster.nodes.get(name);
  const u = store.cluster.usage.get(name) || NO_USAGE;
  const busy = store.page.isBusy(`delete:node:${name}`);
  const alloc = node?.allocatable || {};
  const [allPods, setAllPods] = useState(false);
  const keys = [...u.keys].sort(natural);
  const chips = allPods ? keys : keys.slice(0, PODS_PER_CARD);
  const labels = Object.entries(node?.labels || {}).filter(([k]) => k !== 'kubernetes.io/hostname');
  return html`<article class=${`card node-card${node?.unschedulable ? ' cordoned' : ''}${node ? '' : ' missing'}`} aria-labelledby=${`node-${name}`} data-node=${name}>
    <header class="card-head">
      <h3 id=${`node-${name}`}>${name}</h3>
      ${node?.unschedulable ? html`<span class="badge warn" title="spec.unschedulable: new pods are not placed here">unschedulable</span>` : null}
      ${!node ? html`<span class="badge warn">node gone</span>` : null}
      ${node ? html`<${ConfirmButton} className="small danger" ariaLabel=${`Delete node ${name}`} label="Delete" confirm=${`Delete ${name}?`} disabled=${busy} onConfirm=${() => actions.deleteNode(name)} />` : null}
    </header>
    ${node ? html`
      <${Meter} label="CPU" used=${u.cpu} total=${alloc.cpu || 0} text=${`${formatCpu(u.cpu)} / ${formatCores(alloc.cpu || 0)}`} />
      <${Meter} label="Memory" used=${u.memory} total=${alloc.memory || 0} text=${`${formatBytes(u.memory)} / ${formatBytes(alloc.memory || 0)}`} />
      <${Meter} label="Pods" used=${u.pods} total=${alloc.pods || 0} text=${`${u.pods} / ${alloc.pods ?? '–'}`} />` : null}
    ${node?.taints?.length ? html`<p class="tags"><span class="tags-label">taints</span>${node.taints.map((t) => html`<span class="tag taint">${formatTaint(t)}</span>`)}</p>` : null}
    ${labels.length ? html`<p class="tags"><span class="tags-label">labels</span>${labels.map(([k, v]) => html`<span class="tag">${k}=${v}</span>`)}</p>` : null}
    <div class="node-pods" aria-label=${`pods on ${name}`}>
      ${chips.map((k) => html`<button type="button" class="chip" key=${k} data-pod=${k} onClick=${() => actions.inspectPod(k)}>${keyLabel(k)}</button>`)}
      ${keys.length > chips.length ? html`<button type="button" class="small more-pods" onClick=${() => setAllPods(true)}>+${keys.length - chips.length} more</button>` : null}
      ${keys.length === 0 ? html`<span class="muted">no pods</span>` : null}
    </div>
  </article>`;
}

/** The words of the button that shows more node cards. */
function moreNodes(hidden) {
  return hidden <= PAGE * 2 ? `Show the other ${plural(hidden, 'node')}` : `Show ${PAGE * 2} more (${hidden} not shown)`;
}

function Summary({ store }) {
  const c = store.counts.value;
  const cap = store.capacity.value;
  return html`<span><strong>${c.nodes}</strong> nodes</span>
    <span><strong>${c.bound}</strong> ${c.bound === 1 ? 'pod' : 'pods'} bound, <strong>${c.pending}</strong> pending</span>
    <span>CPU requested <strong>${formatCores(cap.cpuUsed)}</strong> of ${formatCores(cap.cpu)}</span>
    <span>memory requested <strong>${formatBytes(cap.memoryUsed)}</strong> of ${formatBytes(cap.memory)}</span>`;
}

export default function Cluster({ store, actions }) {
  // The first frame draws a dozen cards and the next ones the rest of the
  // page: two short tasks instead of one long one on a big cluster.
  const [limit, setLimit] = useState(FIRST);
  useEffect(() => {
    const id = requestAnimationFrame(() => setTimeout(() => setLimit((l) => Math.max(l, PAGE)), 0));
    return () => cancelAnimationFrame(id);
  }, []);
  const [filter, setFilter] = useState('');
  let names = store.nodeNames.value;
  const orphans = store.orphanNodes.value;
  const f = filter.trim().toLowerCase();
  if (f) names = names.filter((n) => n.toLowerCase().includes(f));
  const shown = names.slice(0, limit);
  return html`<div class="cluster">
    <div class="cluster-summary">
      <${Summary} store=${store} />
      <label class="filter-box">Find node <input type="search" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} /></label>
    </div>
    ${names.length === 0 && !orphans.length ? html`<p class="hint">No nodes${f ? ' match' : ' yet'}. ${f ? '' : 'Create one under Controls.'}</p>` : null}
    <div class="node-grid">
      ${shown.map((name) => html`<${NodeCard} key=${name} store=${store} actions=${actions} name=${name} />`)}
      ${!f ? orphans.map((name) => html`<${NodeCard} key=${`gone-${name}`} store=${store} actions=${actions} name=${name} />`) : null}
    </div>
    ${names.length > shown.length ? html`<button type="button" class="more" onClick=${() => setLimit((l) => l + PAGE * 2)}>${moreNodes(names.length - shown.length)}</button>` : null}
  </div>`;
}

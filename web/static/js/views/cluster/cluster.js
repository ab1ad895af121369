// The cluster view: one card per node with what it offers and what the pods
// bound to it request, its taints and labels, and its pods; or the same as
// a compact table, sortable by use and filtered by label. Both render only
// what is in view (a grid of cards, a table's rows): a thousand nodes cost
// what a screenful does. Nodes are cordoned and edited (labels, taints,
// allocatable) from here, but in a replay, which changes nothing.

import { useState } from 'preact/hooks';
import { ConfirmButton, Field, html, Meter, ScrollTable, useForm, VirtualGrid } from '../../ui.js';
import { formatBytes, formatCores, formatCpu, formatTaint, keyLabel, plural, podLife } from '../../format.js';
import { natural } from '../../store/index.js';
import { DEVICE_CLASS, MAX_DEVICES, nodeEditForm, WORKLOADS } from '../../manifests.js';
import { livesText, WORKLOAD_KINDS, workloadTree } from './workloads.js';
import { nodeHealth, nodeRows, SORTS } from './nodes.js';

const PODS_PER_CARD = 12;
// What the node card's kubelet menu offers, by the state it sets.
const KUBELET_CHOICES = Object.freeze({ Ready: 'make Ready', NotReady: 'make NotReady', Stopped: 'stop the kubelet' });
// A card's size and the grid's gap, in rem (the CSS's .node-card and .node-grid).
const CARD_REM = Object.freeze({ width: 20, height: 15.5, gap: 0.8 });
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
  const writable = node && !store.page.replay.value;
  const health = nodeHealth(node);
  return html`<article class=${`card node-card${node?.unschedulable ? ' cordoned' : ''}${node ? '' : ' missing'}`} aria-labelledby=${`node-${name}`} data-node=${name}>
    <header class="card-head">
      <h3 id=${`node-${name}`}>${name}</h3>
      ${node?.unschedulable ? html`<span class="badge warn" title="spec.unschedulable: new pods are not placed here">unschedulable</span>` : null}
      ${!node ? html`<span class="badge warn">node gone</span>` : null}
      ${health.badge ? html`<span class="badge warn node-health" title="the node's Ready condition, as its kubelet and node lifecycle report it">${health.badge}</span>` : null}
      ${writable ? html`<button type="button" class="small" aria-label=${`${node.unschedulable ? 'Uncordon' : 'Cordon'} node ${name}`} disabled=${store.page.isBusy(`node:${name}`)}
        onClick=${() => actions.cordon(name, !node.unschedulable)}>${node.unschedulable ? 'Uncordon' : 'Cordon'}</button>
        <button type="button" class="small" aria-label=${`Edit node ${name}`} onClick=${() => actions.editNode(name)}>Edit</button>` : null}
      ${writable ? html`<${ConfirmButton} className="small danger" ariaLabel=${`Delete node ${name}`} label="Delete" confirm=${`Delete ${name}?`} disabled=${busy} onConfirm=${() => actions.deleteNode(name)} />` : null}
    </header>
    ${node ? html`
      <${Meter} label="CPU" used=${u.cpu} total=${alloc.cpu || 0} text=${`${formatCpu(u.cpu)} / ${formatCores(alloc.cpu || 0)}`} />
      <${Meter} label="Memory" used=${u.memory} total=${alloc.memory || 0} text=${`${formatBytes(u.memory)} / ${formatBytes(alloc.memory || 0)}`} />
      <${Meter} label="Pods" used=${u.pods} total=${alloc.pods || 0} text=${`${u.pods} / ${alloc.pods ?? '–'}`} />` : null}
    ${writable ? html`<p class="kubelet-row"><span class="tags-label">kubelet</span>
      <select class="small kubelet-state" aria-label=${`Kubelet of node ${name}`} value="" disabled=${store.page.isBusy(`node:${name}`)}
        onChange=${(e) => actions.setKubelet(name, e.currentTarget.value)}>
        <option value="">${health.state === 'ready' ? 'Ready' : health.badge}…</option>
        ${health.next.map((s) => html`<option value=${s}>${KUBELET_CHOICES[s]}</option>`)}
      </select></p>` : null}
    ${node?.taints?.length ? html`<p class="tags"><span class="tags-label">taints</span>${node.taints.map((t) => html`<span class="tag taint">${formatTaint(t)}</span>`)}</p>` : null}
    ${node?.devices ? html`<p class="tags"><span class="tags-label">devices</span><span class="tag" title=${`published in a ResourceSlice; DeviceClass ${DEVICE_CLASS} selects them`}>${node.devices} × ${DEVICE_CLASS}</span></p>` : null}
    ${labels.length ? html`<p class="tags"><span class="tags-label">labels</span>${labels.map(([k, v]) => html`<span class="tag">${k}=${v}</span>`)}</p>` : null}
    <div class="node-pods" aria-label=${`pods on ${name}`}>
      ${chips.map((k) => html`<button type="button" class="chip" key=${k} data-pod=${k} onClick=${() => actions.inspectPod(k)}>${keyLabel(k)}</button>`)}
      ${keys.length > chips.length ? html`<button type="button" class="small more-pods" onClick=${() => setAllPods(true)}>+${keys.length - chips.length} more</button>` : null}
      ${keys.length === 0 ? html`<span class="muted">no pods</span>` : null}
    </div>
  </article>`;
}

function Summary({ store }) {
  const c = store.counts.value;
  const cap = store.capacity.value;
  return html`<span><strong>${c.nodes}</strong> nodes</span>
    <span><strong>${c.bound}</strong> ${c.bound === 1 ? 'pod' : 'pods'} bound, <strong>${c.pending}</strong> pending</span>
    <span>CPU requested <strong>${formatCores(cap.cpuUsed)}</strong> of ${formatCores(cap.cpu)}</span>
    <span>memory requested <strong>${formatBytes(cap.memoryUsed)}</strong> of ${formatBytes(cap.memory)}</span>
    ${store.page.replay.value ? html`<span class="muted" id="cluster-read-only">a recording: nodes are not cordoned, edited or deleted here</span>` : null}`;
}

/** The editor of one node's labels, taints and allocatable (PATCH /nodes/{name}). */
function NodeEditor({ store, actions, name }) {
  const node = store.cluster.nodes.peek(name);
  const [form, , bind] = useForm(node ? nodeEditForm(node) : {}, store, 'saveNode');
  if (!node) return null;
  const submit = (ev) => {
    ev.preventDefault();
    actions.saveNode(name, form);
  };
  return html`<form class="panel form node-editor" id="node-editor" onSubmit=${submit} aria-labelledby="node-editor-h">
    <h2 id="node-editor-h">Edit node ${name}</h2>
    <div class="row3">
      <${Field} id="ne-cpu" label="CPU (cores)"><input ...${bind('cpu')} id="ne-cpu" /></${Field}>
      <${Field} id="ne-memory" label="Memory"><input ...${bind('memory')} id="ne-memory" /></${Field}>
      <${Field} id="ne-pods" label="Max pods"><input ...${bind('pods')} id="ne-pods" /></${Field}>
    </div>
    <${Field} id="ne-labels" label="Labels" hint="key=value, comma separated; they replace the node's"><input ...${bind('labels')} id="ne-labels" /></${Field}>
    <${Field} id="ne-taints" label="Taints" hint="key=value:Effect; they replace the node's"><input ...${bind('taints')} id="ne-taints" /></${Field}>
    <${Field} id="ne-devices" label="Devices" hint=${`DRA devices the built-in driver publishes, 0 to ${MAX_DEVICES}`}><input ...${bind('devices')} id="ne-devices" inputmode="numeric" /></${Field}>
    <div class="form-actions">
      <button type="submit" class="primary" disabled=${store.page.isBusy('saveNode')}>Save</button>
      <button type="button" onClick=${() => actions.editNode(null)}>Cancel</button>
    </div>
  </form>`;
}

const COLUMNS = Object.freeze([['name', 'node'], ['cpu', 'CPU'], ['memory', 'memory'], ['pods', 'pods']]);

/** The node overview: one row per node, its use as a heat colour; sortable, filtered by name or label. Only the rows in view render. */
function NodeTable({ store, actions }) {
  const [sort, setSort] = useState('cpu');
  const [filter, setFilter] = useState('');
  const rows = nodeRows(store.cluster.nodes.values(), (n) => store.cluster.usage.get(n), { sort, filter });
  const heat = (pct) => `--heat:${Math.round(pct)}%`;
  const head = html`<thead><tr>${COLUMNS.map(([id, label]) => html`<th scope="col" aria-sort=${sort === id ? (SORTS[id] ? 'descending' : 'ascending') : 'none'}>
    <button type="button" class="link" onClick=${() => setSort(id)}>${label}${sort === id ? (SORTS[id] ? ' ▼' : ' ▲') : ''}</button></th>`)}<th scope="col">labels</th></tr></thead>`;
  const row = (r) => html`<tr key=${r.name} data-node=${r.name} class=${r.cordoned ? 'cordoned' : ''}>
    <th scope="row">${store.page.replay.value ? r.name : html`<button type="button" class="link" onClick=${() => actions.editNode(r.name)}>${r.name}</button>`}${r.cordoned ? html` <span class="badge warn">cordoned</span>` : null}</th>
    <td class="num heat" style=${heat(r.cpu)}>${Math.round(r.cpu)}%</td>
    <td class="num heat" style=${heat(r.memory)}>${Math.round(r.memory)}%</td>
    <td class="num heat" style=${heat(r.pods)}>${Math.round(r.pods)}%</td>
    <td class="small">${Object.entries(r.node.labels || {}).filter(([k]) => k !== 'kubernetes.io/hostname').map(([k, v]) => `${k}=${v}`).join(', ')}</td>
  </tr>`;
  return html`<div class="node-table-wrap">
    <label class="filter-box">Name or label <input type="search" id="node-label-filter" placeholder="node-1 or zone=a" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} /></label>
    <${ScrollTable} className="node-table" id="node-table" rows=${rows} rowRem=${2.1} cols=${COLUMNS.length + 1} head=${head} renderRow=${row} />
    ${rows.length === 0 ? html`<p class="hint">No node${filter ? ' has such a name or label' : ' yet'}.</p>` : null}
  </div>`;
}

// The cluster view's three ways to show it, by the radio that picks each.
const SHOWS = Object.freeze({ cards: NodeCards, table: NodeTable, workloads: Workloads });

export default function Cluster({ store, actions }) {
  const [show, setShow] = useState('cards');
  const editing = store.page.replay.value ? null : store.page.editingNode.value;
  const View = SHOWS[show];
  return html`<div class="cluster">
    <div class="cluster-summary">
      <${Summary} store=${store} />
      <fieldset class="segmented"><legend>Show</legend>
        ${Object.keys(SHOWS).map((s) => html`<label key=${s}><input type="radio" name="cluster-show" id=${`show-${s}`} checked=${show === s} onChange=${() => setShow(s)} /> ${s}</label>`)}
      </fieldset>
    </div>
    ${editing ? html`<${NodeEditor} key=${editing} store=${store} actions=${actions} name=${editing} />` : null}
    <${View} store=${store} actions=${actions} />
  </div>`;
}

/**
 * The pods by the workload that made them: Deployment, its ReplicaSets,
 * their pods; StatefulSets, DaemonSets, Jobs; pods of their own last. Each
 * pod says where it is in its life; filtered by kind and by name.
 */
function Workloads({ store, actions }) {
  const [kind, setKind] = useState('');
  const [text, setText] = useState('');
  const tree = workloadTree(store.cluster.pods.entriesAll(), { kind, text });
  const writable = !store.page.replay.value;
  const chip = (key) => {
    const pod = store.cluster.pods.peek(key);
    return html`<button type="button" class="chip" key=${key} data-pod=${key} title=${pod?.nodeName ? `on ${pod.nodeName}` : 'not bound'}
      onClick=${() => actions.inspectPod(key)}>${keyLabel(key)} <span class="muted">${podLife(pod)}</span></button>`;
  };
  return html`<div class="workloads" id="workloads">
    <div class="filter-row">
      <label class="filter-box">Kind <select id="workload-kind" value=${kind} onChange=${(e) => setKind(e.currentTarget.value)}>
        <option value="">all</option>
        ${WORKLOAD_KINDS.map((k) => html`<option key=${k} value=${k}>${k === 'Pod' ? 'pods of their own' : k}</option>`)}
      </select></label>
      <label class="filter-box">Find <input type="search" id="workload-filter" value=${text} onInput=${(e) => setText(e.currentTarget.value)} /></label>
    </div>
    ${tree.length === 0 ? html`<p class="hint">No pods${kind || text ? ' match' : ' yet'}.</p>` : null}
    ${tree.map((w) => html`<section class="card workload" key=${w.key} data-workload=${w.key} aria-label=${`${w.kind} ${w.namespace}/${w.name}`}>
      <header class="card-head">
        <h3>${w.kind === 'Pod' ? 'Pod' : w.kind} ${w.namespace}/${w.name}</h3>
        <span class="muted">${livesText(w.lives)}</span>
        ${writable && WORKLOADS[w.kind] ? html`<${ConfirmButton} className="small danger" ariaLabel=${`Delete ${w.kind} ${w.name}`} label="Delete"
          confirm=${`Delete ${w.kind} ${w.name} and its pods?`} disabled=${store.page.isBusy(`delete:${w.kind}:${w.namespace}/${w.name}`)}
          onConfirm=${() => actions.deleteWorkload(w.kind, w.namespace, w.name)} />` : null}
      </header>
      ${w.children.length
        ? w.children.map((rs) => html`<div class="workload-child" key=${rs.name}><span class="tags-label">ReplicaSet ${rs.name}</span><div class="node-pods">${rs.pods.map(chip)}</div></div>`)
        : html`<div class="node-pods">${w.pods.map(chip)}</div>`}
    </section>`)}
  </div>`;
}

/** The node cards: a grid that renders only the rows of cards in view. */
function NodeCards({ store, actions }) {
  const [filter, setFilter] = useState('');
  let names = store.nodeNames.value;
  const orphans = store.orphanNodes.value;
  const f = filter.trim().toLowerCase();
  if (f) names = names.filter((n) => n.toLowerCase().includes(f));
  // Nodes that are gone while pods still name them come last, as cards of their own.
  const items = f || !orphans.length ? names : [...names, ...orphans.map((name) => ({ gone: name }))];
  return html`<div class="node-cards">
    <label class="filter-box">Find node <input type="search" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} /></label>
    ${items.length === 0 ? html`<p class="hint">No nodes${f ? ' match' : ' yet'}. ${f ? '' : 'Create one under Controls.'}</p>` : null}
    <${VirtualGrid} items=${items} widthRem=${CARD_REM.width} heightRem=${CARD_REM.height} gapRem=${CARD_REM.gap}
      className="node-grid" label=${plural(names.length, 'node')} keyOf=${(it) => (typeof it === 'string' ? it : `gone-${it.gone}`)}
      renderItem=${(it) => html`<${NodeCard} store=${store} actions=${actions} name=${typeof it === 'string' ? it : it.gone} />`} />
  </div>`;
}

// The cycle inspector: one pod's attempt in full. The pod-level points, the
// Filter matrix (node x plugin), the Score table, the final scores as bars
// and the time every plugin took. The matrices scroll, and render only the
// rows in view: a cycle over thousands of nodes opens as fast as a small one.

import { useEffect, useMemo, useState } from 'preact/hooks';
import { ConfirmButton, html, ScrollTable } from '../../ui.js';
import { formatBytes, formatClock, formatCores, formatNanos, outcomeClass, outcomeText, plural, podLife, wakeWords } from '../../format.js';
import { whyView } from './why.js';
import { batchLines, briefView, decidedWords, extenderRows, filterMatrix, groupLines, partialSearch, pluginTimes, pointRows, reasonSummary, scoreTable } from './cycle.js';
import { TIES_NAMED } from '../../store/index.js';
import { RecentlyBound } from '../queue.js';

// The matrices render only the rows in view (ScrollTable); the bars and
// the reasons show the best few, a pod group's table its first members.
const BARS = 20;
const REASONS = 8;
const MEMBERS_SHOWN = 20;

function PodPicker({ store, actions }) {
  const [text, setText] = useState('');
  const selected = store.page.selectedPod.value;
  const submit = (ev) => {
    ev.preventDefault();
    const v = text.trim();
    const key = v.includes('/') ? v : `default/${v}`;
    if (v) actions.inspectPod(key);
  };
  // Offer at most 200 names: a datalist of thousands is no help.
  const options = store.cluster.pods.keys().slice(0, 200);
  return html`<form class="picker" onSubmit=${submit} role="search">
    <label for="pod-pick">Pod</label>
    <input id="pod-pick" list="pod-names" value=${text} placeholder=${selected || 'namespace/name'} onInput=${(e) => setText(e.currentTarget.value)} />
    <datalist id="pod-names">${options.map((k) => html`<option value=${k} />`)}</datalist>
    <button type="submit">Inspect</button>
  </form>`;
}

function PodHeader({ store, actions, podKey: key }) {
  const pod = store.cluster.pods.get(key);
  const busy = store.page.isBusy(`delete:pod:${key}`);
  if (!pod) return html`<div class="pod-header"><h2>${key}</h2><p class="muted">This pod does not exist (any more); its recorded cycles are below.</p></div>`;
  const req = pod.requests || {};
  return html`<div class="pod-header">
    <h2>${key}</h2>
    <dl class="facts">
      <div><dt>node</dt><dd>${pod.nodeName || html`<span class="muted">not bound</span>`}</dd></div>
      <div id="pod-life"><dt>state</dt><dd>${podLife(pod)}</dd></div>
      ${pod.owner ? html`<div><dt>owner</dt><dd>${pod.owner}</dd></div>` : null}
      <div><dt>requests</dt><dd>CPU ${formatCores(req.cpu || 0)}, memory ${formatBytes(req.memory || 0)}</dd></div>
      <div><dt>priority</dt><dd>${pod.priority}</dd></div>
      ${pod.nominatedNodeName ? html`<div><dt>nominated</dt><dd>${pod.nominatedNodeName}</dd></div>` : null}
      ${pod.realNode ? html`<div id="real-node"><dt>real scheduler</dt><dd>${pod.realNode}${pod.nodeName && pod.nodeName !== pod.realNode
        ? html` <span class="badge warn">elsewhere than minisched</span>` : pod.nodeName ? html` <span class="badge win">same</span>` : null}</dd></div>` : null}
      ${pod.scheduled ? html`<div><dt>PodScheduled</dt><dd>${pod.scheduled}</dd></div>` : null}
    </dl>
    ${store.page.replay.value ? html`<span class="muted small" id="delete-pod-ro">a recording: the pod is not deleted here</span>`
      : html`<${ConfirmButton} id="delete-pod" label="Delete pod" confirm=${`Delete ${key}?`} disabled=${busy} onConfirm=${() => actions.deletePod(key)} />`}
  </div>`;
}

/**
 * Why a pending pod fits no node: the explanation's sentence, the closest
 * nodes with what each needs (and whether the real plugins, tried with the
 * change, then pass), and the nodes grouped by how they fail. Asked again
 * after each attempt.
 */
function WhyPending({ store, actions, podKey: key }) {
  const pod = store.cluster.pods.get(key);
  const pending = !!pod && !pod.nodeName && !pod.terminating;
  const last = store.podCycles(key)[0]?.id;
  const live = !store.page.replay.value;
  useEffect(() => {
    if (pending && live && last != null) actions.explainPod(key);
  }, [key, pending, live, last]);
  const e = store.server.explanation.value;
  if (!pending || !live || last == null || e?.key !== key) return null;
  if (e.error) return html`<section class="why" id="why" aria-label="why pending"><p class="muted">${e.error}</p></section>`;
  const v = whyView(e);
  return html`<section class="why" id="why" aria-labelledby="why-h">
    <h3 id="why-h">Why pending</h3>
    <p class="why-sentence" id="why-sentence">${v.sentence}</p>
    ${v.closest.length ? html`<table class="points" id="why-closest">
      <thead><tr><th scope="col">closest node</th><th scope="col">needs</th><th scope="col">tried</th></tr></thead>
      <tbody>${v.closest.map((n) => html`<tr key=${n.name}>
        <th scope="row">${n.name}</th>
        <td>${n.needs.map((x) => html`<div key=${x.plugin}><strong>${x.plugin}</strong>: ${x.words}${x.words !== x.detail ? html`<div class="muted small">${x.detail}</div>` : null}${x.usedBy.length ? html`<div class="muted small">used by ${x.usedBy.join(', ')}</div>` : null}</div>`)}</td>
        <td><span class=${`badge ${n.tried === 'fits' ? 'win' : n.tried === 'not enough' ? 'warn' : ''}`} title=${n.tried === 'fits'
          ? 'the real plugins, run again with these changes on copies of the pod and the node, pass it'
          : n.tried === 'not enough' ? `still: ${n.still.join('; ')}` : 'not tried: a failure has no change to make'}>${n.tried === 'fits' ? 'fits then' : n.tried}</span></td>
      </tr>`)}</tbody>
    </table>` : null}
    ${v.groups.length > 1 ? html`<details class="why-groups"><summary>${v.groups.length} ways nodes fail</summary><ul>
      ${v.groups.map((g, i) => html`<li key=${i}><strong>${g.count}</strong> node${g.count === 1 ? '' : 's'} (${g.nodes.slice(0, 5).join(', ')}${g.count > 5 ? ', …' : ''}): ${g.needs.map((x) => `${x.plugin}: ${x.words}`).join('; ')}</li>`)}
    </ul></details>` : null}
    ${v.preemption ? html`<p class="small" id="why-preemption">${v.preemption}</p>` : null}
    ${v.tryNodes.length ? html`<${TryIt} actions=${actions} podKey=${key} nodes=${v.tryNodes} trial=${v.trial} />` : null}
  </section>`;
}

/**
 * "Try it" on any node the explanation names: its changes applied on copies
 * and run through the real plugins there (the closest are tried already).
 */
function TryIt({ actions, podKey: key, nodes, trial }) {
  const onSubmit = (ev) => {
    ev.preventDefault();
    actions.tryOnNode(key, ev.currentTarget.elements.node.value);
  };
  return html`<form class="why-try" id="why-try" onSubmit=${onSubmit}>
    <label>Try it on <select name="node" aria-label="node to try">${nodes.map((n) => html`<option key=${n} value=${n}>${n}</option>`)}</select></label>
    <button type="submit" disabled=${!!trial?.busy}>Try it</button>
    ${trial ? html`<div id="why-trial" role="status">
      <strong>${trial.node}</strong>: <span class=${`badge ${trial.cls}`}>${trial.label}</span>
      ${trial.needs.map((x) => html`<div key=${x.plugin} class="small"><strong>${x.plugin}</strong>: ${x.words}</div>`)}
      ${trial.still.length ? html`<div class="muted small">still: ${trial.still.join('; ')}</div>` : null}
    </div>` : null}
  </form>`;
}

const STORY_SHOWN = 6;

/**
 * The pod's story, oldest first: queue moves, the cluster events its hints
 * answered QueueSkip to, attempts (each opens its cycle below), preemptions
 * (each opens the other pod) and, for a pod that waits, the cluster events
 * that would move it, in words (the labels in each line's title).
 */
function Story({ store, actions, podKey: key, current }) {
  const [all, setAll] = useState(false);
  const entries = store.story(key);
  const wake = store.wakeUp(key);
  if (!entries.length && !wake.length) return null;
  const shown = all ? entries : entries.slice(-STORY_SHOWN);
  return html`<section class="story" aria-labelledby="story-h" id="story">
    <h3 id="story-h">What happened to ${key}</h3>
    ${entries.length > shown.length ? html`<button type="button" class="small" onClick=${() => setAll(true)}>Show the ${entries.length - shown.length} earlier</button>` : null}
    <ol class="story-list">
      ${shown.map((e, i) => html`<li key=${`${e.t}-${i}`} class=${`story-${e.kind} tone-${e.tone}${e.cycle != null && e.cycle === current ? ' current' : ''}`} data-kind=${e.kind}>
        <time class="muted">${formatClock(e.t)}</time>
        ${e.cycle != null ? html`<button type="button" class="link" data-cycle=${e.cycle} onClick=${() => actions.selectCycle(e.cycle)}>${e.text}</button>`
          : e.pod ? html`<span>${e.text} <button type="button" class="link" data-pod=${e.pod} onClick=${() => actions.inspectPod(e.pod)}>open ${e.pod}</button></span>`
          : html`<span>${e.text}</span>`}
        ${e.detail ? html`<span class="story-detail">${e.detail}</span>` : null}
      </li>`)}
    </ol>
    ${wake.length ? html`<div class="wake" id="wake">
      <strong>What would move it:</strong> a cluster event one of its rejecting plugins registered for, if that plugin's QueueingHint then says Queue
      <ul>${wake.map((w) => html`<li key=${w.plugin} title=${w.events.join(', ')}><strong>${w.plugin}</strong>: ${w.events.length ? wakeWords(w.events) : html`<span class="muted">registers no event (the pod waits for its timeout)</span>`}${w.moved ? html` <mark class="moved" title="a queue move named this event: it moved the pod">${w.moved} moved it</mark>` : null}</li>`)}</ul>
    </div>` : null}
  </section>`;
}

function Attempts({ cycles, current, actions }) {
  if (!cycles.length) return html`<p class="muted">No scheduling cycle of this pod is recorded yet.</p>`;
  return html`<div class="attempts" role="group" aria-label="attempts">
    <span class="attempts-label">Attempts</span>
    ${cycles.slice(0, 30).map((c) => html`<button type="button" key=${c.id} class=${`attempt o-${outcomeClass(c)}`}
        aria-pressed=${c.id === current ? 'true' : 'false'} onClick=${() => actions.selectCycle(c.id)}
        title=${`cycle ${c.id}: ${outcomeText(c)}`}>
      #${c.attempt || '?'} <span class="attempt-outcome">${c.end ? c.end.result : 'running'}</span>
    </button>`)}
    <button type="button" class="attempt latest" aria-pressed="false" onClick=${() => actions.selectCycle(null)} title="follow the newest attempt">newest</button>
  </div>`;
}

// The nodes that tied with the chosen one: named when the cycle's end names
// them, the first few of a long list (a summary keeps no more); counted when
// it came from a compact stream.
function tieWords(end) {
  const names = end.ties || [];
  const count = end.tieCount ?? names.length;
  if (!names.length) return `${count} other node${count === 1 ? '' : 's'} with the same total`;
  const shown = names.slice(0, TIES_NAMED).map((n, i) => html`${i ? ', ' : ''}<span class="nowrap">${n}</span>`);
  return count > shown.length ? html`${shown} and ${count - shown.length} more` : shown;
}

/**
 * A cycle whose Filter and Score events left the server's history, in
 * brief: how many nodes passed and what stopped the others; the best
 * nodes' scores, with the deciding plugin marked.
 */
function Brief({ store, view }) {
  const codes = store.server.vocabulary.value.codes;
  const b = useMemo(() => briefView(view.brief, view.summary?.end, codes), [view.brief, view.summary?.end, codes]);
  const bytes = store.server.historyMaxBytes.value;
  const more = `Start minisched with a larger --history-bytes${bytes ? ` (now ${formatBytes(bytes)})` : ''} to keep every event of more cycles.`;
  if (!b) return html`<p class="muted history-left">Part of this cycle's events have left the server's history. ${more}</p>`;
  const s = b.score;
  return html`<section class="brief" aria-labelledby="brief-h" id="brief">
    <h3 id="brief-h">In brief</h3>
    <p class="muted history-left">This cycle's Filter and Score tables have left the server's history; this is what they came to. ${more}</p>
    ${b.filter ? html`<p class="brief-filter"><strong>Filter:</strong> ${b.filter.passed} of ${plural(b.filter.nodes, 'node')} passed.${b.filter.failures.length ? ' The others: ' : ''}${b.filter.failures.map((f, i) => html`${i ? '; ' : ''}${f.nodes} × ${f.plugin}${f.reason ? `: ${f.reason}` : ''}`)}</p>` : null}
    ${s?.table ? html`<${ScoreTable} table=${s.table} id="brief-score-h" title=${`Score: the ${s.table.rows.length} best of ${plural(s.nodes, 'node')}`} />` : null}
  </section>`;
}

function Outcome({ summary, matrix, permitWait }) {
  const end = summary.end;
  const b = summary.binding;
  return html`<section class=${`outcome o-${outcomeClass(summary)}`} aria-label="outcome">
    <h3>Cycle ${summary.id} · attempt ${summary.attempt}${summary.profile && summary.profile !== 'default-scheduler' ? html` · profile <span class="profile">${summary.profile}</span>` : null} · <span class="result">${outcomeText(summary)}</span></h3>
    <dl class="facts">
      ${summary.start ? html`<div><dt>started</dt><dd>${formatClock(summary.start)}</dd></div>` : null}
      <div><dt>nodes</dt><dd>${summary.nodes}</dd></div>
      ${end ? html`<div><dt>feasible</dt><dd>${end.feasibleNodes} of ${matrix ? matrix.total : summary.nodes}</dd></div>` : null}
      ${end?.simulatedNode ? html`<div id="simulated-node"><dt>simulation</dt><dd>placed on ${end.simulatedNode}, undone with its group</dd></div>` : null}
      ${end ? html`<div><dt>took</dt><dd>${formatNanos(end.nanos)}</dd></div>` : null}
      ${end?.tieCount || end?.ties?.length ? html`<div><dt>ties</dt><dd class="wrap">${tieWords(end)}</dd></div>` : null}
      ${b ? html`<div><dt>binding</dt><dd>${b.bound ? `bound to ${b.node}` : `failed${b.plugin ? ` in ${b.plugin}` : ''}`} in ${formatNanos(b.nanos)}${b.permitNanos ? `, ${formatNanos(b.permitNanos)} at Permit` : ''}</dd></div>` : null}
    </dl>
    ${permitWait ? html`<p class="message">${summary.binding ? 'Waited' : 'Waiting'} at Permit on ${permitWait.node}: ${Object.entries(permitWait.timeoutNanos || {}).map(([p, ns]) => `${p} for up to ${formatNanos(ns)}`).join(', ')}</p>` : null}
    ${partialSearch(matrix, summary.nodes) ? html`<p class="partial-search">${partialSearch(matrix, summary.nodes)}</p>` : null}
    ${end?.message ? html`<p class="message">${end.message}</p>` : null}
    ${end?.plugins?.length ? html`<p class="reason">Rejected by ${end.plugins.join(', ')}</p>` : null}
    ${b?.message ? html`<p class="message">${b.message}</p>` : null}
  </section>`;
}

// What a member's row adds to its outcome: where the group's simulation
// had placed a pod turned away with its group, or how long a placed one
// waited at Permit for the gang.
function memberNote(m) {
  if (m.end?.simulatedNode) return `placed on ${m.end.simulatedNode} in the simulation, then undone`;
  if (m.binding?.permitNanos) return `waited ${formatNanos(m.binding.permitNanos)} at Permit`;
  return '';
}

/**
 * The pod group's cycle this one was part of (GenericWorkload): its pods
 * side by side, in the order they were tried, each opening its own cycle,
 * and what the group came to.
 */
function GroupCycle({ store, actions, summary }) {
  const g = store.groupCycle(summary);
  if (!g) return null;
  // A gang of a thousand: the first few rows, and this pod's.
  const shown = g.members.filter((m, i) => i < MEMBERS_SHOWN || m.id === summary.id);
  return html`<section class="group-cycle" id="group-cycle" aria-labelledby="group-h">
    <h3 id="group-h">Pod group ${g.key} <span class="muted">pod ${summary.group.member} of ${g.total} in the group's cycle</span></h3>
    ${groupLines(g).map((l) => html`<p class="group-line">${l}</p>`)}
    <div class="scroll-x">
    <table class="points" id="group-members">
      <thead><tr><th scope="col">tried</th><th scope="col">pod</th><th scope="col">cycle</th></tr></thead>
      <tbody>${shown.map((m) => html`<tr key=${m.id} class=${m.id === summary.id ? 'current' : null}>
        <td class="num">${m.group.member}</td>
        <th scope="row">${m.id === summary.id ? m.pod.name : html`<button type="button" class="link" data-cycle=${m.id} onClick=${() => actions.inspectPod(m.podKey, m.id)}>${m.pod.name}</button>`}</th>
        <td><span class=${`badge o-${outcomeClass(m)}`}>${outcomeText(m)}</span>${memberNote(m) ? html` <span class="muted small">${memberNote(m)}</span>` : null}
          ${m.end?.message ? html`<div class="muted small">${m.end.message}</div>` : null}</td>
      </tr>`)}</tbody>
    </table></div>
    ${g.members.length > shown.length ? html`<p class="muted small">and ${plural(g.members.length - shown.length, 'other pod')} of the group's cycle</p>` : null}
  </section>`;
}

function Points({ points, codes }) {
  const rows = pointRows(points, codes);
  if (!rows.length) return null;
  return html`<section aria-labelledby="points-h">
    <h3 id="points-h">Extension points</h3>
    <div class="scroll-x">
    <table class="points">
      <thead><tr><th scope="col">point</th><th scope="col">plugin</th><th scope="col">result</th><th scope="col" class="num">time</th></tr></thead>
      <tbody>
        ${rows.map((p) => {
          // Skipped plugins take one line: most PreFilter results are Skip.
          const ran = p.results.filter((r) => r.state !== 'skip');
          const skipped = p.results.filter((r) => r.state === 'skip');
          const lines = ran.length + (skipped.length ? 1 : 0);
          return html`
          ${ran.map((r, i) => html`<tr key=${`${p.index}-${i}`}>
            ${i === 0 ? html`<th scope="row" rowspan=${lines}>${p.point}${p.node ? html`<div class="muted small">on ${p.node}</div>` : null}</th>` : null}
            <td>${r.plugin}</td>
            <td><span class=${`code c-${r.state}`}>${r.label}</span>${r.reason ? html`<div class=${`why why-${r.state}`}>${r.reason}</div>` : null}${r.extra ? html`<div class="muted small">${r.extra}</div>` : null}</td>
            <td class="num">${formatNanos(r.nanos)}</td>
          </tr>`)}
          ${skipped.length ? html`<tr key=${`${p.index}-skip`}>
            ${ran.length === 0 ? html`<th scope="row">${p.point}${p.node ? html`<div class="muted small">on ${p.node}</div>` : null}</th>` : null}
            <td colspan="2" class="c-skip">skipped: ${skipped.map((r) => r.plugin).join(', ')}</td>
            <td class="num">${formatNanos(skipped.reduce((a, r) => a + (r.nanos || 0), 0))}</td>
          </tr>` : null}`;
        })}
      </tbody>
    </table>
    </div>
  </section>`;
}

function FilterMatrix({ matrix }) {
  const [onlyFailing, setOnlyFailing] = useState(false);
  const [times, setTimes] = useState(false);
  const reasons = useMemo(() => reasonSummary(matrix), [matrix]);
  const rows = useMemo(() => (matrix && onlyFailing ? matrix.rows.filter((r) => !r.feasible) : matrix?.rows || []), [matrix, onlyFailing]);
  if (!matrix) return null;
  const head = html`<thead><tr><th scope="col">node</th>${matrix.columns.map((i) => html`<th scope="col" class=${matrix.failures[i] ? 'failing' : null}>${matrix.plugins[i]}</th>`)}</tr></thead>`;
  const reordered = matrix.columns.some((c, i) => c !== i);
  const row = (r) => html`<tr key=${r.node} class=${r.feasible ? 'feasible' : 'infeasible'}>
    <th scope="row">${r.node}${r.nominated ? html` <span class="badge" title="checked with nominated pods">nominated</span>` : null}</th>
    ${matrix.columns.map((i) => r.cells[i]).map((c) => html`<td class=${`cell c-${c.state}`} title=${`${c.plugin} on ${r.node}: ${c.state === 'notrun' ? 'not run (Filter stopped at the first failure)' : c.name}${c.reason ? ` (${c.reason})` : ''}${c.nanos != null ? `, ${formatNanos(c.nanos)}` : ''}`}>
      ${c.state === 'pass' ? html`<span aria-label="pass">✓</span>` : c.state === 'notrun' ? html`<span class="notrun">not run</span>` : c.label}
      ${times && c.nanos != null ? html`<div class="muted small">${formatNanos(c.nanos)}</div>` : null}
    </td>`)}
  </tr>`;
  return html`<section aria-labelledby="filter-h" class="filter">
    <h3 id="filter-h">${matrix.batch === 'hint' ? "Filter on the batch's hint" : matrix.nominatedNode ? 'Filter on the nominated node' : 'Filter'} <span class="muted">${matrix.feasible} of ${plural(matrix.total, 'node')} feasible · ${formatNanos(matrix.nanos)}</span></h3>
    ${matrix.batch === 'hint' ? html`<p class="muted">Opportunistic batching offered this node: the best one an earlier pod of the same signature left. It is tried first, alone; the pod fits, so no other node is filtered or scored.</p>`
      : matrix.nominatedNode ? html`<p class="muted">An earlier preemption nominated this node. It is tried first, alone; the pod fits, so no other node is filtered or scored.</p>` : null}
    ${reasons.length ? html`<ul class="reasons">${reasons.slice(0, REASONS).map((r) => html`<li><strong>${r.count}</strong> ${r.reason} <span class="muted">(${r.plugin})</span></li>`)}${reasons.length > REASONS ? html`<li class="muted">and ${reasons.length - REASONS} other reasons</li>` : null}</ul>` : null}
    <div class="table-tools">
      <label><input type="checkbox" checked=${onlyFailing} onChange=${(e) => setOnlyFailing(e.currentTarget.checked)} /> only nodes that failed</label>
      <label><input type="checkbox" checked=${times} onChange=${(e) => setTimes(e.currentTarget.checked)} /> show times</label>
      ${rows.length > 12 ? html`<span class="muted">${rows.length} nodes: scroll the table for the rest</span>` : null}
    </div>
    ${reordered ? html`<p class="muted small" id="filter-columns">Columns: the plugins that rejected a node first, then the others in the order Filter runs them.</p>` : null}
    <${ScrollTable} key=${times ? 'times' : 'codes'} className=${`matrix${times ? ' with-times' : ''}`} describedBy="filter-h" rows=${rows} rowRem=${times ? 3.2 : 2}
      cols=${matrix.plugins.length + 1} head=${head} renderRow=${row} />
  </section>`;
}

/** A cycle's calls to scheduler extenders: nodes in and out, with why, and scores. */
function Extenders({ calls }) {
  const rows = extenderRows(calls);
  if (!rows.length) return null;
  return html`<section aria-labelledby="extenders-h" class="extenders">
    <h3 id="extenders-h">Extenders</h3>
    <p class="muted small">Webhooks outside the framework, called after Filter, beside Score, instead of Bind, and within preemption; a prioritizer's scores are its column in the Score table.</p>
    <div class="scroll-x">
    <table class="points" id="extender-calls">
      <thead><tr><th scope="col">call</th><th scope="col">extender</th><th scope="col">result</th><th scope="col" class="num">time</th></tr></thead>
      <tbody>${rows.map((r, i) => html`<tr key=${i}>
        <th scope="row">${r.verb}</th>
        <td class="wrap">${r.extender}</td>
        <td>${r.error ? html`<span class=${`code c-${r.ignored ? 'skip' : 'fail'}`}>${r.ignored ? 'error, ignored' : 'error'}</span><div class="why why-fail">${r.error}</div>` : r.inOut}
          ${r.away.length ? html`<ul class="away">${r.away.map((a) => html`<li key=${a.node}><strong>${a.node}</strong>: ${a.reason}${a.final ? html` <span class="muted small">(for good)</span>` : null}</li>`)}</ul>` : null}
          ${r.more ? html`<div class="muted small">and ${r.more} more nodes</div>` : null}</td>
        <td class="num">${formatNanos(r.nanos)}</td>
      </tr>`)}</tbody>
    </table></div>
  </section>`;
}

function ScoreTable({ table, id = 'score-h', title = 'Score' }) {
  if (!table) return null;
  const deciding = new Set(table.decided?.columns || []);
  const cols = table.drawn;
  const head = html`<thead><tr><th scope="col">node</th>${cols.map((i) => {
    const p = table.plugins[i];
    return html`<th scope="col" class=${`${p.extender ? 'extender' : ''}${deciding.has(i) ? ' deciding' : ''}`}>${p.extender ? html`<span class="badge">extender</span> ` : null}${p.name}<div class="muted small">weight ${p.weight}${deciding.has(i) ? html` <span class="badge decided" title="this plugin's scores put the chosen node ahead of the runner-up">decided</span>` : null}</div></th>`;
  })}<th scope="col" class="num">total</th></tr></thead>`;
  const row = (r) => html`<tr key=${r.node} class=${`${r.winner ? 'winner' : ''} ${r.tie ? 'tie' : ''}`}>
    <th scope="row">${r.node}${r.winner ? html` <span class="badge win">chosen</span>` : null}${r.tie ? html` <span class="badge tie">tie</span>` : null}</th>
    ${cols.map((i) => {
      const p = table.plugins[i];
      return html`<td class=${`num${deciding.has(i) ? ' deciding' : ''}`} title=${`${p.name}: raw ${r.raw[i]}, normalized ${r.normalized[i]}, weighted ${r.weighted[i]}, ${formatNanos(r.nanos[i])}`}>
      <strong class="weighted">${r.weighted[i]}</strong><div class="muted small">${`${r.raw[i]} → ${r.normalized[i]} × ${p.weight}`}</div></td>`;
    })}
    <td class="num total"><strong>${r.total}</strong></td>
  </tr>`;
  const decided = decidedWords(table.decided);
  return html`<section aria-labelledby=${id} class="score">
    <h3 id=${id}>${title} <span class="muted">${plural(table.rows.length, 'node')} · ${formatNanos(table.nanos)}</span></h3>
    ${decided ? html`<p class="decided-by">${decided}</p>` : null}
    ${table.failed.length ? html`<p class="reason">${table.failed.map((p) => `${p.name}: ${p.codeName} ${p.reason || ''}`).join('; ')}</p>` : null}
    <p class="muted small">Each cell: the weighted score, and below it raw → normalized × weight.${table.zero.length ? ` 0 on every node, so not drawn: ${table.zero.join(', ')}.` : ''}${table.rows.length > 12 ? ` ${table.rows.length} nodes, best first: scroll the table for the rest.` : ''}</p>
    <${ScrollTable} className="scores" rows=${table.rows} rowRem=${3} cols=${cols.length + 2} head=${head} renderRow=${row} />
  </section>`;
}

function ScoreBars({ table }) {
  if (!table || !table.rows.length) return null;
  const rows = table.rows.slice(0, BARS);
  return html`<section aria-labelledby="bars-h" class="bars">
    <h3 id="bars-h">Final scores${table.rows.length > BARS ? html` <span class="muted">(best ${BARS})</span>` : null}</h3>
    ${table.floor > 0 ? html`<p class="muted small" id="bars-floor">The bars start at ${table.floor}, so that close totals look apart.</p>` : null}
    <div class="barchart" role="list">
      ${rows.map((r) => html`<div class=${`bar-row ${r.winner ? 'winner' : ''} ${r.tie ? 'tie' : ''}`} role="listitem" key=${r.node}>
        <span class="bar-label">${r.node}</span>
        <span class="bar-track"><span class="bar-fill" style=${`width:${r.bar}%`}></span></span>
        <span class="bar-value">${r.total}${r.winner ? ' ★' : ''}${r.tie ? ' (tie)' : ''}</span>
      </div>`)}
    </div>
  </section>`;
}

function Timings({ detail }) {
  const [all, setAll] = useState(false);
  const list = pluginTimes(detail);
  if (!list.length) return null;
  const shown = all ? list : list.slice(0, 12);
  const max = Math.max(1, list[0].nanos);
  return html`<section aria-labelledby="time-h" class="timings">
    <h3 id="time-h">Time per plugin</h3>
    <table class="times">
      <thead><tr><th scope="col">point</th><th scope="col">plugin</th><th scope="col" class="num">calls</th><th scope="col" class="num">time</th><th scope="col"><span class="sr-only">share</span></th></tr></thead>
      <tbody>${shown.map((t) => html`<tr><td>${t.point}</td><td>${t.plugin}</td><td class="num">${t.calls}</td><td class="num">${formatNanos(t.nanos)}</td>
        <td class="time-bar"><span style=${`width:${(t.nanos / max) * 100}%`}></span></td></tr>`)}</tbody>
    </table>
    ${list.length > shown.length ? html`<button type="button" onClick=${() => setAll(true)}>Show all ${list.length}</button>` : null}
  </section>`;
}

/**
 * Staged renders children(stage) with stage 0, then 1, 2 ... up to last,
 * one frame apart, so that opening a cycle is a few short tasks (the
 * outcome, the Filter matrix, the Score table, the rest) rather than one
 * long one: at a thousand nodes each is a few hundred table cells.
 */
function Staged({ last, children }) {
  const [stage, setStage] = useState(0);
  useEffect(() => {
    if (stage >= last) return undefined;
    let timer = 0;
    const frame = requestAnimationFrame(() => { timer = setTimeout(() => setStage((n) => n + 1), 0); });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [stage]);
  return children(stage);
}

const LOADING_SCORES = html`<p class="muted" role="status">Loading the scores…</p>`;

/**
 * Opportunistic batching in this cycle: placed from an earlier pod's batch
 * or why not, the recheck of the last chosen node, and the batch's rescore
 * (its cached rows were not scored again).
 */
function Batch({ detail, end, codes }) {
  const sign = detail.points.find((p) => p.point === 'Sign');
  const refused = sign?.results?.find((r) => r.code !== 0);
  const lines = batchLines(end?.batch, refused?.plugin, detail.batchRecheck);
  const hint = end?.batch?.hint;
  const rescore = useMemo(() => scoreTable(detail.batchScore, hint ? { result: 'scheduled', node: hint } : null, codes), [detail.batchScore, hint, codes]);
  if (!lines.length) return null;
  return html`<section class=${`batch${end?.batch?.used ? '' : ' muted'}`} aria-label="opportunistic batching">
    ${lines.map((l) => html`<p>${l}</p>`)}
    ${rescore ? html`<details><summary>The batch's rescore: ${plural(rescore.rows.length, 'node')}, only the last chosen one scored again (the others keep their cached raw scores)</summary>
      <${ScoreTable} table=${rescore} id="rescore-h" title="The batch's rescore" /></details>` : null}
  </section>`;
}

function CycleBody({ store, actions, view }) {
  const loading = store.page.cycleLoading.value === view.id;
  const codes = store.server.vocabulary.value.codes;
  // Worked out once per cycle shown, not on every render.
  const matrix = useMemo(() => filterMatrix(view.detail?.filter, codes), [view.detail?.filter, codes]);
  const table = useMemo(() => scoreTable(view.detail?.score, view.summary?.end, codes), [view.detail?.score, view.summary?.end, codes]);
  if (!view.summary && view.source === 'none') return null;
  if (view.source === 'missing' || !view.detail) {
    return html`<p class="muted" role="status">${loading ? 'Loading this cycle from the server…' : 'This cycle is not in memory; loading it from the server…'}</p>`;
  }
  const nominated = view.detail.nominatedFilter !== view.detail.filter ? view.detail.nominatedFilter?.nodes?.[0] : null;
  const hinted = view.detail.nominatedFilter?.batch === 'hint';
  return html`<div class="cycle-body">
    ${view.summary ? html`<${Outcome} summary=${view.summary} matrix=${matrix} permitWait=${view.detail.permitWait} />` : null}
    ${view.summary?.group ? html`<${GroupCycle} store=${store} actions=${actions} summary=${view.summary} />` : null}
    ${view.truncated ? html`<${Brief} store=${store} view=${view} />` : null}
    ${view.detail.partial ? html`<p class="muted" role="status">On a cluster this big the stream leaves out the Filter and Score tables: they load from the server once the cycle ends.</p>` : null}
    <${Batch} detail=${view.detail} end=${view.summary?.end} codes=${codes} />
    ${nominated ? html`<p class="nominated-first">Tried first: ${hinted ? "the batch's hint" : 'the nominated node'} <strong>${nominated.node}</strong>, alone. It did not fit${nominated.reason ? html` (${nominated.reason})` : null}, so every node was filtered.</p>` : null}
    <${Staged} key=${view.id} last=${3}>${(stage) => html`
      ${stage >= 1 ? html`<${FilterMatrix} matrix=${matrix} />` : null}
      <${Extenders} calls=${view.detail.extenders} />
      <${ScoreBars} table=${table} />
      ${stage < 2 ? LOADING_SCORES
        : table ? html`<${ScoreTable} table=${table} />`
        : view.detail.filter && view.summary?.end?.feasibleNodes === 1 ? html`<p class="muted">Score did not run: only one node passed Filter.</p>` : null}
      ${stage >= 3 ? html`<div class="cycle-grid">
        <div class="col-main"><${Points} points=${view.detail.points} codes=${codes} /></div>
        <div class="col-side"><${Timings} detail=${view.detail} /></div>
      </div>` : null}`}</${Staged}>
  </div>`;
}

export default function Inspector({ store, actions }) {
  const key = store.page.selectedPod.value;
  const id = store.page.selectedCycle.value;
  const view = key ? store.cycleView(key, id) : null;
  const cycles = key ? store.podCycles(key) : [];
  useEffect(() => {
    if (view && view.source === 'missing' && view.id != null) actions.ensureCycle(view.id);
  }, [view?.id, view?.source]);
  const follow = store.page.follow.value;
  return html`<div class="inspector">
    <div class="inspector-bar">
      <${PodPicker} store=${store} actions=${actions} />
      <button type="button" id="follow" aria-pressed=${follow ? 'true' : 'false'} onClick=${() => actions.follow(!follow)}
        title="show each scheduling cycle as it ends, whatever its pod">${follow ? 'Following the newest cycle' : 'Follow the newest cycle'}</button>
    </div>
    ${!key ? html`<p class="hint">Choose a pod: click one on the queue board, the timeline or a node, or type its name above; or follow the newest cycle.</p>
      <${RecentlyBound} store=${store} actions=${actions} />` : html`
      <${PodHeader} store=${store} actions=${actions} podKey=${key} />
      <${WhyPending} store=${store} actions=${actions} podKey=${key} />
      <${Story} store=${store} actions=${actions} podKey=${key} current=${view?.id} />
      <${Attempts} cycles=${cycles} current=${view?.id} actions=${actions} />
      ${view ? html`<${CycleBody} store=${store} actions=${actions} view=${view} />` : null}`}
  </div>`;
}

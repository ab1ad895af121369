// Compare: two scheduler configurations side by side. A bundled scenario
// runs under A, then under B (each on an emptied cluster), or this
// cluster's own workload (a copy) is scheduled again under each. The view
// shows the two placements, the nodes' utilisation under each, and for a
// pod its two Score tables next to each other, the differing cells marked.

import { useEffect, useState } from 'preact/hooks';
import { Field, html, useForm } from '../../ui.js';
import { gatesLine, podRows, nodeRows, scoreTables, summary } from './comparison.js';
import { CONFIG_PRESETS, SCHEDULER_GATES, lineDiff } from '../../schedconfig.js';

const DEFAULTS = { mode: 'scenario', bundled: '17-spread-or-pack', nameA: '', configA: '', gatesA: '', nameB: '', configB: '', gatesB: '' };

function Side({ which, bind, update, actions, busy }) {
  const fill = async () => {
    const text = await actions.runningConfigYaml();
    if (text) update({ [`config${which}`]: text });
  };
  return html`<fieldset class="compare-side">
    <legend>Configuration ${which}</legend>
    <${Field} id=${`f-name${which}`} label="Name" hint="what the report calls it"><input ...${bind(`name${which}`)} placeholder=${which} autocomplete="off" /></${Field}>
    <label class="preset">Preset <select id=${`f-preset${which}`} value="" disabled=${busy}
      onChange=${(e) => { const p = CONFIG_PRESETS.find((x) => x.id === e.currentTarget.value); if (p) update({ [`config${which}`]: p.yaml, [`name${which}`]: p.id }); }}>
      <option value="">choose one to start from…</option>
      ${CONFIG_PRESETS.map((p) => html`<option key=${p.id} value=${p.id}>${p.label}</option>`)}
    </select></label>
    <${Field} id=${`f-config${which}`} label="KubeSchedulerConfiguration (YAML or JSON)" hint="empty: the scenario's own, or the running one; a preset holds only what differs from the defaults">
      <textarea ...${bind(`config${which}`)} rows="8" spellcheck="false"></textarea>
    </${Field}>
    <button type="button" class="small" onClick=${fill} disabled=${busy}>Start from the running configuration</button>
    <${Field} id=${`f-gates${which}`} label="Feature gates of this side's scheduler" hint=${`as kube-scheduler's --feature-gates, only ${SCHEDULER_GATES.join(', ')}; empty: the run's`}>
      <input ...${bind(`gates${which}`)} list="scheduler-gates" placeholder="OpportunisticBatching=false" autocomplete="off" spellcheck="false" />
    </${Field}>
  </fieldset>`;
}

function CompareForm({ store, actions }) {
  const [form, update, bind] = useForm(DEFAULTS, store, 'compare');
  const [bundled, setBundled] = useState([]);
  useEffect(() => { actions.loadScenarios().then((d) => setBundled(d?.bundled || [])); }, []);
  const running = store.server.comparison.value?.state === 'running';
  const busy = store.page.isBusy('compare') || running;
  const copy = store.server.copy.value;
  const submit = (ev) => {
    ev.preventDefault();
    actions.compare(form);
  };
  const mode = (m) => html`<input type="radio" name="compare-mode" id=${`compare-mode-${m}`} value=${m} checked=${form.mode === m} onChange=${() => update({ mode: m })} />`;
  return html`<form class="panel form" id="compare-form" aria-labelledby="compare-h" onSubmit=${submit}>
    <h2 id="compare-h">Compare two configurations</h2>
    <fieldset class="compare-mode">
      <legend>What runs under each</legend>
      <label class="check">${mode('scenario')} a bundled scenario, on an emptied cluster each time</label>
      <select id="compare-scenario" aria-label="the scenario" value=${form.bundled} disabled=${form.mode !== 'scenario'} onChange=${(e) => update({ bundled: e.currentTarget.value })}>
        ${bundled.map((b) => html`<option key=${b.name} value=${b.name}>${b.title || b.name}</option>`)}
      </select>
      <label class="check">${mode('cluster')} this cluster's workload, every pod scheduled again under A, then under B${copy ? '' : ' (minisched\'s own cluster only)'}</label>
      <label class="check">${mode('reschedule')} what if: this cluster's workload scheduled again under the running configuration, before against after</label>
    </fieldset>
    <datalist id="scheduler-gates">${SCHEDULER_GATES.flatMap((g) => [`${g}=false`, `${g}=true`]).map((v) => html`<option key=${v} value=${v} />`)}</datalist>
    ${form.mode !== 'reschedule' ? html`<div class="row2">
      <${Side} which="A" bind=${bind} update=${update} actions=${actions} busy=${busy} />
      <${Side} which="B" bind=${bind} update=${update} actions=${actions} busy=${busy} />
    </div>
    <${ConfigDiff} a=${form.configA} b=${form.configB} />` : null}
    <div class="form-actions">
      <button type="submit" class="primary" id="compare-run" disabled=${busy}>${form.mode === 'reschedule' ? 'Reschedule everything' : 'Compare'}</button>
      <span class="hint">${{
        scenario: 'The cluster is reset before each run, and holds the run under B afterwards.',
        cluster: 'Every pod of the scheduler\'s profiles is deleted and created again under each; the running configuration comes back afterwards.',
        reschedule: 'Every pod of the scheduler\'s profiles is deleted and created again, unbound, and placed anew.',
      }[form.mode]}</span>
    </div>
  </form>`;
}

/** ConfigDiff shows what B changes of A, line by line, when both are given. */
function ConfigDiff({ a, b }) {
  if (!a.trim() || !b.trim()) return null;
  const lines = lineDiff(a.trimEnd(), b.trimEnd());
  const changed = lines.filter((l) => l.op !== ' ').length;
  return html`<details class="config-diff" id="compare-diff" open=${changed > 0 && changed <= 40}>
    <summary>${changed ? `B against A: ${changed} line${changed === 1 ? '' : 's'} differ` : 'A and B are the same text'}</summary>
    <pre class="diff" aria-label="configuration B against A">${lines.map((l, i) => html`<span key=${i} class=${l.op === '+' ? 'add' : l.op === '-' ? 'del' : 'same'}>${l.op} ${l.text}\n</span>`)}</pre>
  </details>`;
}

function usage(u) {
  return `${Math.round(u.cpu)}% · ${Math.round(u.memory)}% · ${u.pods}`;
}

function Result({ store, actions }) {
  const c = store.server.comparison.value;
  if (!c) return html`<p class="muted" id="compare-none">No comparison has run yet: choose what to run and two configurations below.</p>`;
  if (c.state === 'running') return html`<p class="panel" id="compare-progress" role="status">Comparing ${c.a} with ${c.b}${c.scenario ? ` on ${c.scenario}` : ''}: ${c.progress || 'starting'}…</p>`;
  if (c.state === 'error') return html`<p class="panel reason" id="compare-error" role="alert">The comparison of ${c.a} with ${c.b} failed: ${c.error}</p>`;
  const r = c.report;
  const selected = store.server.comparedPod.value?.pod;
  return html`<section class="panel" id="compare-result" aria-labelledby="compare-result-h">
    <h2 id="compare-result-h">${c.a} against ${c.b}${c.scenario ? html` <span class="muted">on ${c.scenario}</span>` : c.kind === 'reschedule' ? html` <span class="muted">(the whole workload scheduled again)</span>` : null}</h2>
    <p id="compare-summary"><strong>${summary(r)}</strong></p>
    ${gatesLine(c) ? html`<p class="muted" id="compare-gates">${gatesLine(c)}</p>` : null}
    ${c.notes?.length ? html`<ul class="compare-notes">${c.notes.map((n) => html`<li key=${n}>${n}</li>`)}</ul>` : null}
    <div class="row2">
      <table class="compare-pods" aria-label="pods under each">
        <thead><tr><th scope="col">pod</th><th scope="col">${r.a}</th><th scope="col">${r.b}</th><th scope="col">moved by</th></tr></thead>
        <tbody>${podRows(r).map((p) => html`<tr key=${p.pod} class=${`${p.moved ? 'moved' : ''}${p.pod === selected ? ' current' : ''}`} data-pod=${p.pod}>
          <th scope="row"><button type="button" class="link" onClick=${() => actions.inspectCompared(p.pod)}>${p.pod}</button></th>
          <td>${p.nodeA || html`<span class="muted">unscheduled</span>`}</td>
          <td>${p.nodeB || html`<span class="muted">unscheduled</span>`}</td>
          <td>${p.moved ? p.lead || p.notes[0] || '' : html`<span class="muted">same node</span>`}</td>
        </tr>`)}</tbody>
      </table>
      <table class="compare-nodes" aria-label="node utilisation under each">
        <thead><tr><th scope="col">node</th><th scope="col" title="CPU · memory · pods">${r.a}</th><th scope="col" title="CPU · memory · pods">${r.b}</th></tr></thead>
        <tbody>${nodeRows(r).map((n) => html`<tr key=${n.node} class=${n.changed ? 'moved' : ''}>
          <th scope="row">${n.node}</th><td class="num">${usage(n.a)}</td><td class="num">${usage(n.b)}</td>
        </tr>`)}</tbody>
      </table>
    </div>
    <p class="muted small">Utilisation: CPU and memory requested over allocatable, then pods. Click a pod for its two Score tables.</p>
  </section>`;
}

function ScoreSide({ title, side, plugins, rows }) {
  return html`<div class=${`compare-scores compare-scores-${side}`}>
    <h4>${title}</h4>
    <table class="scores">
      <thead><tr><th scope="col">node</th>${plugins.map((p) => html`<th scope="col" key=${p}>${camelBreaks(p)}</th>`)}<th scope="col" class="num">total</th></tr></thead>
      <tbody>${rows.map((r) => {
        const s = r[side];
        return html`<tr key=${r.node}>
          <th scope="row">${r.node}${s.chosen ? html` <span class="badge win">chosen</span>` : null}</th>
          ${s.filtered && s.total === null ? html`<td colspan=${plugins.length + 1} class="muted">filtered out: ${s.filtered}</td>`
            : html`${s.cells.map((v, i) => html`<td class=${`num${r.differs[i] ? ' differs' : ''}`} key=${plugins[i]}>${v ?? '—'}</td>`)}
              <td class=${`num total${r.totalDiffers ? ' differs' : ''}`}><strong>${s.total ?? '—'}</strong></td>`}
        </tr>`;
      })}</tbody>
    </table>
  </div>`;
}

function PodScores({ store }) {
  const c = store.server.comparison.value;
  const detail = store.server.comparedPod.value;
  if (!c || c.state !== 'done' || !detail) return null;
  const { plugins, zero, rows } = scoreTables(detail);
  return html`<section class="panel" id="compare-pod" aria-labelledby="compare-pod-h">
    <h3 id="compare-pod-h">${detail.pod}: its last Score under each</h3>
    <p class="muted small">Weighted scores; marked cells differ between the two.${rows.length ? '' : ' Neither run scored a node for this pod.'}${zero.length ? ` ${zero.join(', ')} gave every node 0 under both.` : ''}</p>
    <div class="row2">
      <${ScoreSide} title=${`${c.a}: ${detail.a?.node || 'not scheduled'}`} side="a" plugins=${plugins} rows=${rows} />
      <${ScoreSide} title=${`${c.b}: ${detail.b?.node || 'not scheduled'}`} side="b" plugins=${plugins} rows=${rows} />
    </div>
  </section>`;
}

export default function Compare({ store, actions }) {
  useEffect(() => { actions.loadComparison(); }, []);
  // The answer goes first: the form stays below it, to try again.
  return html`<div class="compare">
    <${Result} store=${store} actions=${actions} />
    <${PodScores} store=${store} />
    <${CompareForm} store=${store} actions=${actions} />
  </div>`;
}

/**
 * camelBreaks lets a plugin's name break between its words only
 * (NodeResources|Balanced|Allocation), never inside one.
 */
function camelBreaks(name) {
  return name.split(/(?<=[a-z])(?=[A-Z])/).flatMap((part, i) => (i ? [html`<wbr />`, part] : [part]));
}

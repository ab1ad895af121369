// The scheduler configuration editor: the running KubeSchedulerConfiguration
// as YAML, checked by the server as it is typed (a dry run; a 422 that
// names a line is shown on that line), a diff against kube-scheduler's
// defaults, reset to the defaults, and NodeResourcesFit's scoring strategy.

import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../ui.js';
import { lineDiff, pluginArgs } from '../schedconfig.js';

// How long typing pauses before the server checks the text.
const CHECK_AFTER_MS = 400;
const STRATEGIES = Object.freeze(['LeastAllocated', 'MostAllocated']);

function Gutter({ lines, bad, message, top }) {
  return html`<div class="gutter" aria-hidden="true"><div style=${`transform:translateY(${-top}px)`}>
    ${Array.from({ length: lines }, (_, i) => html`<div key=${i} class=${i + 1 === bad ? 'bad' : ''} title=${i + 1 === bad ? message : ''}>${i + 1}</div>`)}
  </div></div>`;
}

function Diff({ from, to }) {
  const changes = lineDiff(from, to).filter((d) => d.op !== ' ');
  if (!changes.length) return html`<p class="muted" id="config-diff">The same as kube-scheduler's defaults.</p>`;
  return html`<pre class="diff" id="config-diff" aria-label="changes from the defaults">${changes.map((d, i) => html`<span key=${i} class=${d.op === '+' ? 'add' : 'del'}>${d.op} ${d.text}\n</span>`)}</pre>`;
}

export function ConfigEditor({ store, actions }) {
  const [base, setBase] = useState(null);
  const [text, setText] = useState('');
  const [check, setCheck] = useState(null);
  const [diff, setDiff] = useState(false);
  const [top, setTop] = useState(0);
  const generation = store.server.scheduler.value.generation;
  useEffect(() => {
    let live = true;
    actions.loadConfigYaml().then((c) => { if (live && c) { setBase(c); setText(c.running); setCheck(null); } });
    return () => { live = false; };
  }, [generation]);
  // The server checks what is typed once typing pauses.
  const first = useRef(true);
  useEffect(() => {
    if (!base) return undefined;
    if (first.current) { first.current = false; return undefined; }
    const t = setTimeout(() => actions.checkConfig(text).then((r) => { if (r) setCheck(r); }), CHECK_AFTER_MS);
    return () => clearTimeout(t);
  }, [text]);
  const busy = store.page.isBusy('config');
  const apply = async (ev) => {
    ev.preventDefault();
    await actions.applyConfigText(text);
  };
  const lines = text.split('\n').length;
  return html`<form class="panel form" onSubmit=${apply} aria-labelledby="config-h" id="config-form">
    <h2 id="config-h">Scheduler configuration</h2>
    ${!base ? html`<p class="muted" role="status">${busy ? 'Loading…' : 'Not loaded.'}</p>` : html`
    <div class=${`editor${check && !check.ok ? ' invalid' : ''}`}>
      <${Gutter} lines=${lines} bad=${check?.line} message=${check?.message} top=${top} />
      <textarea id="config-text" rows="16" spellcheck="false" aria-label="KubeSchedulerConfiguration (YAML)" aria-invalid=${check && !check.ok ? 'true' : null}
        aria-describedby="config-check" value=${text} onInput=${(e) => setText(e.currentTarget.value)} onScroll=${(e) => setTop(e.currentTarget.scrollTop)}></textarea>
    </div>
    <p id="config-check" role="status" class=${check ? (check.ok ? 'check-ok' : 'why-rejected') : 'muted'}>
      ${!check ? 'Checked by the server as you type.' : check.ok ? 'Valid: the scheduler would run this.' : `${check.line ? `line ${check.line}: ` : ''}${check.message}`}
    </p>
    <div class="form-actions">
      <button type="submit" class="primary" disabled=${busy || text === base.running || (check && !check.ok)}>Apply and restart</button>
      <button type="button" disabled=${text === base.running} onClick=${() => setText(base.running)}>Undo changes</button>
      <button type="button" id="config-defaults" onClick=${() => setText(base.defaults)}>Reset to defaults</button>
      <label class="check"><input type="checkbox" id="config-show-diff" checked=${diff} onChange=${(e) => setDiff(e.currentTarget.checked)} /> diff against the defaults</label>
    </div>
    ${diff ? html`<${Diff} from=${base.defaults} to=${text} />` : null}`}
  </form>`;
}

/** NodeResourcesFit's scoring strategy: spread pods out, or pack them. */
export function ScoringStrategy({ store, actions }) {
  const [current, setCurrent] = useState('');
  // The profile the plugin editor shows.
  const profile = store.server.plugins.value?.profile;
  const generation = store.server.scheduler.value.generation;
  useEffect(() => {
    let live = true;
    actions.loadConfig().then((c) => { if (live && c) setCurrent(pluginArgs(c, 'NodeResourcesFit', profile).scoringStrategy?.type || 'LeastAllocated'); });
    return () => { live = false; };
  }, [generation, profile]);
  return html`<div class="panel form" id="strategy-form" aria-labelledby="strategy-h">
    <h2 id="strategy-h">NodeResourcesFit's scoring${(store.server.plugins.value?.profiles?.length || 0) > 1 ? html` <span class="muted small">(profile ${profile})</span>` : null}</h2>
    <label class="field" for="strategy">Scoring strategy
      <select id="strategy" value=${current} disabled=${!current || store.page.isBusy('config')}
        onChange=${(e) => actions.applyPluginArgs('NodeResourcesFit', { scoringStrategy: { type: e.currentTarget.value } }, profile)}>
        ${STRATEGIES.map((s) => html`<option key=${s} value=${s}>${s === 'LeastAllocated' ? 'LeastAllocated: spread, the emptiest node scores best' : 'MostAllocated: pack, the fullest node scores best'}</option>`)}
      </select>
    </label>
  </div>`;
}

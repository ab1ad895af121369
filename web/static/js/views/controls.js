// Controls: create nodes and pods from forms or a pasted manifest, edit the
// scheduler's plugins, run a bundled scenario, reset, export and import a
// snapshot of the cluster. The forms keep their
// own field values; submitting calls an action and nothing more.

import { useEffect, useRef, useState } from 'preact/hooks';
import { ConfirmButton, Field, html, useForm } from '../ui.js';
import { plural } from '../format.js';
import { DEVICE_CLASS, MAX_DEVICES, nextName } from '../manifests.js';
import { pluginChecks, pluginRows } from '../schedconfig.js';
import { ConfigEditor, ScoringStrategy } from './config.js';

const NODE_DEFAULTS = { name: '', cpu: '4', memory: '16Gi', pods: '110', devices: '0', labels: '', taints: '', unschedulable: false };

function NodeForm({ store, actions }) {
  const [form, update, bind] = useForm(NODE_DEFAULTS, store, 'createNode');
  const suggested = nextName('node', (n) => store.cluster.nodes.has(n));
  const submit = async (ev) => {
    ev.preventDefault();
    const made = await actions.createNode({ ...form, name: form.name.trim() || suggested });
    if (made) update({ name: '' });
  };
  return html`<form class="panel form" onSubmit=${submit} aria-labelledby="node-form-h" id="node-form">
    <h2 id="node-form-h">Create a node</h2>
    <${Field} id="node-name" label="Name"><input ...${bind('name')} id="node-name" placeholder=${suggested} autocomplete="off" /></${Field}>
    <div class="row3">
      <${Field} id="node-cpu" label="CPU (cores)"><input ...${bind('cpu')} id="node-cpu" inputmode="decimal" /></${Field}>
      <${Field} id="node-memory" label="Memory"><input ...${bind('memory')} id="node-memory" /></${Field}>
      <${Field} id="node-pods" label="Max pods"><input ...${bind('pods')} id="node-pods" inputmode="numeric" /></${Field}>
    </div>
    <${Field} id="node-labels" label="Labels" hint="key=value, comma separated: zone=a, disk=ssd"><input ...${bind('labels')} id="node-labels" /></${Field}>
    <${Field} id="node-taints" label="Taints" hint="key=value:Effect, e.g. gpu=true:NoSchedule"><input ...${bind('taints')} id="node-taints" /></${Field}>
    <${Field} id="node-devices" label="Devices" hint=${`DRA devices the built-in driver publishes (DeviceClass ${DEVICE_CLASS}), 0 to ${MAX_DEVICES}`}><input ...${bind('devices')} id="node-devices" inputmode="numeric" /></${Field}>
    <label class="check"><input type="checkbox" id="node-unschedulable" checked=${form.unschedulable} onChange=${(e) => update({ unschedulable: e.currentTarget.checked })} /> unschedulable (cordoned)</label>
    <div class="form-actions"><button type="submit" class="primary" disabled=${store.page.isBusy('createNode')}>Create node</button></div>
  </form>`;
}

// What the pod form makes: pods, or a workload whose controller makes them.
const MAKES = Object.freeze({ Pod: 'pods', Deployment: 'a Deployment', DaemonSet: 'a DaemonSet (one pod per node)' });

const POD_DEFAULTS = {
  make: 'Pod', name: '', namespace: 'default', cpu: '500m', memory: '512Mi', count: '1', labels: '', nodeSelector: '', tolerations: '', affinity: '', priorityClassName: '',
};

function PodForm({ store, actions }) {
  const [form, update, bind] = useForm(POD_DEFAULTS, store, 'createPod');
  useEffect(() => { actions.loadPriorityClasses(); }, []);
  const classes = store.cluster.priorityClasses.value;
  const pods = store.cluster.pods;
  const suggested = nextName('pod', (n) => pods.has(`${form.namespace || 'default'}/${n}`) || pods.has(`${form.namespace || 'default'}/${n}-1`));
  const submit = async (ev) => {
    ev.preventDefault();
    const named = { ...form, name: form.name.trim() || suggested };
    const made = form.make === 'Pod' ? await actions.createPods(named) : await actions.createWorkload(form.make, named);
    if (made) update({ name: '' });
  };
  return html`<form class="panel form" onSubmit=${submit} aria-labelledby="pod-form-h" id="pod-form">
    <h2 id="pod-form-h">Create pods</h2>
    <${Field} id="pod-make" label="Make" hint=${form.make === 'Pod' ? 'pods of their own' : "a workload: the embedded cluster's controller makes its pods from this template, labelled app=<name>"}>
      <select id="pod-make" value=${form.make} onChange=${(e) => update({ make: e.currentTarget.value })}>
        ${Object.entries(MAKES).map(([kind, label]) => html`<option key=${kind} value=${kind}>${label}</option>`)}
      </select>
    </${Field}>
    <div class="row2">
      <${Field} id="pod-name" label="Name"><input ...${bind('name')} id="pod-name" placeholder=${suggested} autocomplete="off" /></${Field}>
      <${Field} id="pod-namespace" label="Namespace"><input ...${bind('namespace')} id="pod-namespace" /></${Field}>
    </div>
    <div class="row3">
      <${Field} id="pod-cpu" label="CPU request"><input ...${bind('cpu')} id="pod-cpu" /></${Field}>
      <${Field} id="pod-memory" label="Memory request"><input ...${bind('memory')} id="pod-memory" /></${Field}>
      <${Field} id="pod-count" label=${form.make === 'Deployment' ? 'Replicas' : 'How many'}><input ...${bind('count')} id="pod-count" inputmode="numeric" disabled=${form.make === 'DaemonSet'} /></${Field}>
    </div>
    <${Field} id="pod-priority" label="Priority class">
      <select id="pod-priority" value=${form.priorityClassName} onChange=${(e) => update({ priorityClassName: e.currentTarget.value })}>
        <option value="">none (priority 0)</option>
        ${classes.map((p) => html`<option key=${p.metadata?.name} value=${p.metadata?.name}>${p.metadata?.name} (${p.value})</option>`)}
      </select>
    </${Field}>
    <${Field} id="pod-labels" label="Labels" hint="app=web, tier=front"><input ...${bind('labels')} id="pod-labels" /></${Field}>
    <${Field} id="pod-selector" label="Node selector" hint="labels the node must have: zone=a"><input ...${bind('nodeSelector')} id="pod-selector" /></${Field}>
    <${Field} id="pod-affinity" label="Required node affinity" hint="key Operator values: zone In a|b, disk Exists"><input ...${bind('affinity')} id="pod-affinity" /></${Field}>
    <${Field} id="pod-tolerations" label="Tolerations" hint="gpu=true:NoSchedule, gpu:NoSchedule (any value), * (everything)"><input ...${bind('tolerations')} id="pod-tolerations" /></${Field}>
    <div class="form-actions"><button type="submit" class="primary" disabled=${store.page.isBusy('createPod')}>Create</button>
      <span class="hint">Each pod runs one container, ${'pause:3.10'}; nothing runs it here.</span></div>
  </form>`;
}

const YAML_TEMPLATES = {
  Pod: `apiVersion: v1
kind: Pod
metadata:
  name: web-1
  labels: {app: web}
spec:
  containers:
  - name: app
    image: pause:3.10
    resources:
      requests: {cpu: 250m, memory: 256Mi}
`,
  Node: `apiVersion: v1
kind: Node
metadata:
  name: big-node
  labels: {zone: b}
spec:
  taints:
  - {key: dedicated, value: batch, effect: NoSchedule}
status:
  allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
`,
  PriorityClass: `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 100000
description: pods that may preempt others
`,
};

function YamlForm({ store, actions }) {
  const [text, setText] = useState('');
  const [results, setResults] = useState(null);
  const submit = async (ev) => {
    ev.preventDefault();
    setResults(await actions.createFromYaml(text) || null);
  };
  return html`<form class="panel form" onSubmit=${submit} aria-labelledby="yaml-h" id="yaml-form">
    <h2 id="yaml-h">Paste manifests</h2>
    <${Field} id="yaml-text" label="Nodes, Pods and PriorityClasses (YAML or JSON); separate documents with ---">
      <textarea id="yaml-text" rows="12" spellcheck="false" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
    </${Field}>
    <div class="form-actions">
      <button type="submit" class="primary" disabled=${store.page.isBusy('createYaml')}>Create from manifests</button>
      ${Object.keys(YAML_TEMPLATES).map((k) => html`<button type="button" key=${k} onClick=${() => setText(YAML_TEMPLATES[k])}>${k} template</button>`)}
    </div>
    ${results ? html`<ul class="doc-results" aria-label="documents" id="yaml-results">${results.map((r) => html`<li key=${r.index} class=${r.ok ? 'ok' : 'failed'}>
      <span aria-hidden="true">${r.ok ? '✓' : '✗'}</span> line ${r.line}: ${r.kind || 'no kind'} ${r.name}${r.ok ? ' created' : html` <span class="why-rejected">${r.error}</span>`}
    </li>`)}</ul>` : null}
  </form>`;
}

const CLASS_DEFAULTS = { name: '', value: '1000', description: '', preemptionPolicy: 'PreemptLowerPriority' };

function PriorityClassForm({ store, actions }) {
  const [form, update, bind] = useForm(CLASS_DEFAULTS, store, 'createPriorityClass');
  const submit = async (ev) => {
    ev.preventDefault();
    if (await actions.createPriorityClass(form)) update({ name: '' });
  };
  return html`<form class="panel form" onSubmit=${submit} aria-labelledby="pc-form-h" id="pc-form">
    <h2 id="pc-form-h">Create a PriorityClass</h2>
    <div class="row2">
      <${Field} id="pc-name" label="Name"><input ...${bind('name')} id="pc-name" placeholder="high" autocomplete="off" /></${Field}>
      <${Field} id="pc-value" label="Value"><input ...${bind('value')} id="pc-value" inputmode="numeric" /></${Field}>
    </div>
    <${Field} id="pc-preemption" label="Preemption">
      <select id="pc-preemption" value=${form.preemptionPolicy} onChange=${(e) => update({ preemptionPolicy: e.currentTarget.value })}>
        <option value="PreemptLowerPriority">may preempt lower priority pods</option>
        <option value="Never">never preempts</option>
      </select>
    </${Field}>
    <div class="form-actions"><button type="submit" class="primary" disabled=${store.page.isBusy('createPriorityClass')}>Create class</button>
      <span class="hint">${store.cluster.priorityClasses.value.length} classes; the pod form lists them all.</span></div>
  </form>`;
}

function Plugins({ store, actions }) {
  const [config, setConfig] = useState(null);
  const [edits, setEdits] = useState({});
  const busy = store.page.isBusy('plugins');
  const view = store.server.plugins.value;
  // Loaded again whenever the scheduler restarts (a new generation).
  const generation = store.server.scheduler.value.generation;
  useEffect(() => {
    let live = true;
    actions.loadConfig().then((c) => { if (live && c) { setConfig(c); setEdits({}); } });
    return () => { live = false; };
  }, [generation]);
  const data = config && view ? { config, view } : null;
  const rows = data ? pluginRows(view, store.server.vocabulary.value.extensionPoints) : [];
  const edit = (name, patch) => setEdits((all) => ({ ...all, [name]: { ...all[name], ...patch } }));
  const apply = async (ev) => {
    ev.preventDefault();
    const next = await actions.applyPlugins(config, edits, view.profile);
    if (next) { setConfig(next); setEdits({}); }
  };
  const profiles = view?.profiles || [];
  const choose = (ev) => { setEdits({}); actions.loadPluginView(ev.currentTarget.value); };
  const changed = Object.keys(edits).length;
  const checks = pluginChecks(rows, edits, data?.view?.required);
  return html`<form class="panel form plugins" onSubmit=${apply} aria-labelledby="plugins-h" id="plugins-form">
    <h2 id="plugins-h">Scheduler plugins</h2>
    ${!data ? html`<p class="muted" role="status">${busy ? 'Loading…' : 'Not loaded.'}</p>` : html`
    ${profiles.length > 1 ? html`<label class="field" for="plugins-profile">Profile
      <select id="plugins-profile" value=${view.profile} disabled=${busy} onChange=${choose}>
        ${profiles.map((p) => html`<option key=${p} value=${p}>${p}</option>`)}
      </select></label>` : null}
    <p class="hint">Applying restarts the scheduler with a configuration whose profile ${view.profile} lists these plugins under multiPoint. Weights count for Score plugins.</p>
    <div class="plugin-table-wrap">
    <table class="plugin-table">
      <thead><tr><th scope="col">plugin <span class="muted small">(extension points)</span></th><th scope="col">on</th><th scope="col">weight</th></tr></thead>
      <tbody>${rows.map((r) => {
        const e = edits[r.name] || {};
        const enabled = e.enabled ?? r.enabled;
        const weight = e.weight ?? r.weight ?? '';
        return html`<tr key=${r.name} class=${e.enabled != null || e.weight != null ? 'edited' : ''}>
          <th scope="row">${r.name}<div class="muted small">${r.enabled ? r.points.join(', ') : `off${r.canRun.length ? `; runs at ${r.canRun.join(', ')}` : ''}`}</div></th>
          <td><input type="checkbox" aria-label=${`enable ${r.name}`} checked=${enabled} disabled=${!!checks.locked[r.name]} title=${checks.locked[r.name] || ''}
            onChange=${(ev) => edit(r.name, { enabled: ev.currentTarget.checked })} /></td>
          <td>${r.score ? html`<input type="number" min="-100" max="100" class="weight" aria-label=${`weight of ${r.name}`} value=${weight || (enabled ? 1 : '')} disabled=${!enabled}
              onInput=${(ev) => edit(r.name, { weight: ev.currentTarget.value, enabled })} />` : html`<span class="muted">–</span>`}</td>
        </tr>`;
      })}</tbody>
    </table></div>
    ${checks.problems.length ? html`<p class="why-rejected" role="alert" id="plugins-problems">${checks.problems.join('; ')}</p>` : null}
    <div class="form-actions">
      <button type="submit" class="primary" disabled=${!changed || busy || checks.problems.length > 0}>Apply ${changed ? `${changed} change${changed > 1 ? 's' : ''}` : ''}</button>
      <button type="button" disabled=${!changed} onClick=${() => setEdits({})}>Undo changes</button>
    </div>`}
  </form>`;
}

/** A run's report in words: its steps, its expectations and its pods. */
function Report({ report }) {
  return html`<div class="report">
    ${report.message ? html`<p>${report.message}</p>` : null}
    ${report.recordingSince ? html`<p><a class="recording-link" href=${`/api/v1/recording?since=${report.recordingSince}`} download>Save this run as a recording</a>
      <span class="muted small">to replay it here (Open recording…) or with <code>minisched replay FILE</code></span></p>` : null}
    ${report.steps?.length ? html`<table class="report-steps"><caption>Steps${report.seconds != null ? ` · ${report.seconds.toFixed(1)} s` : ''}</caption>
      <tbody>${report.steps.map((st) => html`<tr key=${st.index} class=${`o-${st.outcome}`}><td class="num">${st.index + 1}</td><td>${st.name}${st.message ? html`<div class="muted small">${st.message}</div>` : null}</td>
        <td><span class=${`badge s-${st.outcome === 'ok' ? 'passed' : st.outcome}`}>${st.outcome}</span></td></tr>`)}</tbody></table>` : null}
    ${report.expectations?.length ? html`<table class="report-expect"><caption>Expectations</caption>
      <tbody>${report.expectations.map((x, i) => html`<tr key=${i}><td aria-label=${x.passed ? 'held' : 'did not hold'}>${x.passed ? '✓' : '✗'}</td><td>${x.expectation}<div class="muted small">saw: ${x.saw}</div></td></tr>`)}</tbody></table>` : null}
    ${report.pods?.length ? html`<table class="report-pods"><caption>Pods</caption>
      <tbody>${report.pods.map((p) => html`<tr key=${p.pod}><td>${p.pod}</td><td>${p.node ? `on ${p.node}` : html`<span class="muted">${p.deleted ? 'deleted: ' : ''}${p.reason || 'not bound'}</span>`}</td>
        <td class="num">${plural(p.attempts, 'attempt')}</td></tr>`)}</tbody></table>` : null}
  </div>`;
}

function ScenarioRun({ run, actions }) {
  const state = run.state || 'running';
  const pct = run.steps ? Math.min(100, (run.step / run.steps) * 100) : 0;
  return html`<li class="scenario-run" data-run=${run.id}>
    <div class="run-head">
      <strong>${run.name || run.id}</strong>
      <span class=${`badge s-${state}`}>${state}</span>
      ${run.steps ? html`<span class="muted">step ${run.step} of ${run.steps}</span>` : null}
      ${state === 'running' ? html`<button type="button" class="small" onClick=${() => actions.cancelScenario(run.id)}>Cancel</button>`
        : html`<button type="button" class="small" onClick=${() => actions.refreshScenario(run.id)}>Reload report</button>`}
    </div>
    ${run.steps ? html`<span class="meter-bar run-progress" role="progressbar" aria-label=${`${run.name} progress`} aria-valuemin="0" aria-valuemax=${run.steps} aria-valuenow=${run.step}><span class=${`meter-fill s-${state}`} style=${`width:${pct}%`}></span></span>` : null}
    ${run.phase || run.message ? html`<div class="muted">${run.phase && run.phase !== state ? `${run.phase}: ` : ''}${run.message || ''}</div>` : null}
    ${run.report ? html`<details open=${state !== 'passed'}><summary>Report</summary><${Report} report=${run.report} /></details>` : null}
  </li>`;
}

function Scenarios({ store, actions }) {
  const [data, setData] = useState(null);
  const [reset, setReset] = useState(true);
  // A lesson in the dashboard goes one step per Next by default, so that
  // the class sees each step; '' runs it at once, as the headless runner.
  const [pace, setPace] = useState('step');
  const asked = useRef(new Set());
  useEffect(() => {
    let live = true;
    actions.loadScenarios().then((d) => { if (live) setData(d); });
    return () => { live = false; };
  }, []);
  const list = store.server.scenarios.value;
  const runs = [...list].reverse();
  const running = list.some((r) => r.state === 'running');
  const blocked = store.page.isBusy('scenarioRun') || store.page.isBusy('reset') || running;
  // A run that ended gets its report once.
  useEffect(() => {
    for (const r of list) {
      if (r.state && r.state !== 'running' && !r.report && !asked.current.has(r.id)) {
        asked.current.add(r.id);
        actions.refreshScenario(r.id);
      }
    }
  }, [list]);
  return html`<section class="panel" aria-labelledby="scen-h" id="scenarios">
    <h2 id="scen-h">Lessons</h2>
    <${Reset} store=${store} actions=${actions} />
    <${Snapshot} store=${store} actions=${actions} />
    ${!data ? html`<p class="muted" role="status">Loading…</p>` : data.unavailable ? html`<p class="notice-inline" role="status">${data.unavailable}</p>` : html`
      <label class="check"><input type="checkbox" id="scen-reset" checked=${reset} onChange=${(e) => setReset(e.currentTarget.checked)} /> empty the cluster first (reset and run)</label>
      <label class="pace">Pace <select id="scen-pace" value=${pace} onChange=${(e) => setPace(e.currentTarget.value)}>
        <option value="step">one step per Next (the banner's)</option>
        <option value="3s">a step every 3 s</option>
        <option value="10s">a step every 10 s</option>
        <option value="">at once</option>
      </select></label>
      ${!reset ? html`<p class="hint">A lesson creates its own nodes and pods: on a cluster that is not empty they may already exist.</p>` : null}
      ${data.bundled.length === 0 ? html`<p class="muted">No bundled scenario.</p>` : null}
      ${runs.length ? html`<h3>Runs</h3><ul class="scenario-runs">${runs.map((r) => html`<${ScenarioRun} key=${r.id} run=${r} actions=${actions} />`)}</ul>` : null}
      <ul class="scenario-list">${data.bundled.map((s) => html`<li key=${s.name}>
        <div><strong>${s.title || s.name}</strong><div class="muted clamp" title=${s.description}>${s.description}</div></div>
        <button type="button" disabled=${blocked} aria-label=${`Run scenario ${s.title || s.name}`} onClick=${() => actions.runScenario(s.name, { reset, pace })}>${reset ? 'Reset and run' : 'Run'}</button>
      </li>`)}</ul>`}
  </section>`;
}

function Reset({ store, actions }) {
  const busy = store.page.isBusy('reset');
  // The stream tells each deletion: the counts fall as the reset goes.
  const left = busy ? `Resetting: ${plural(store.cluster.pods.size, 'pod')} and ${plural(store.cluster.nodes.size, 'node')} left; the scheduler is held meanwhile.` : '';
  return html`<div class="reset-row">
    <${ConfirmButton} id="reset" label="Reset the cluster" confirm="Click again to reset everything" disabled=${busy} onConfirm=${actions.reset} />
    ${busy ? html`<span class="hint" role="status" id="reset-progress">${left}</span>`
      : html`<span class="hint">Deletes every pod and node and clears the history; the scheduler's configuration stays.</span>`}
  </div>`;
}

/** Export saves the cluster and the configuration as one file; Import loads such a file. */
function Snapshot({ store, actions }) {
  const [replace, setReplace] = useState(false);
  const busy = store.page.isBusy('import') || store.page.isBusy('reset');
  return html`<div class="reset-row" id="snapshot">
    <a class="button" id="export" href="api/v1/export?format=yaml" download="minisched-snapshot.yaml">Export</a>
    <input type="file" id="import-file" class="sr-only" accept=".yaml,.yml,.json" disabled=${busy}
      onChange=${(e) => actions.importSnapshot(e.currentTarget.files[0], { replace })} />
    <label class="button" for="import-file">Import…</label>
    <label class="check"><input type="checkbox" id="import-replace" checked=${replace} onChange=${(e) => setReplace(e.currentTarget.checked)} /> replace what is there</label>
    <span class="hint">A snapshot holds the nodes, pods, classes, storage and the scheduler's configuration (docs/your-cluster.md).</span>
  </div>`;
}

export default function Controls({ store, actions }) {
  return html`<div class="controls">
    <div class="col"><${Scenarios} store=${store} actions=${actions} /></div>
    <div class="col"><${NodeForm} store=${store} actions=${actions} /><${PodForm} store=${store} actions=${actions} /><${PriorityClassForm} store=${store} actions=${actions} /></div>
    <div class="col"><${Plugins} store=${store} actions=${actions} /><${ScoringStrategy} store=${store} actions=${actions} /><${ConfigEditor} store=${store} actions=${actions} /><${YamlForm} store=${store} actions=${actions} /></div>
  </div>`;
}

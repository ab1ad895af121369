// api.js: the REST API under /api/v1. Every failure becomes an ApiError
// whose message says in words what went wrong, from the server's error JSON
// ({"error", "reason"?, "causes"?}) when there is one.

export class ApiError extends Error {
  /** line: where in the body sent the server found the problem (1-based), or null. */
  constructor(status, message, reason = '', causes = [], line = null) {
    super(message);
    this.status = status;
    this.reason = reason;
    this.causes = causes;
    this.line = line;
  }
}

/** The words a person reads for an error, with what was being done. */
export function describeError(err, doing = '') {
  const prefix = doing ? `${doing}: ` : '';
  if (err instanceof ApiError) {
    let msg = err.message;
    if (err.causes?.length) msg += ` (${err.causes.join('; ')})`;
    return `${prefix}${msg}`;
  }
  return `${prefix}${err?.message || String(err)}`;
}

async function errorFrom(res) {
  let body = null;
  let text = '';
  try {
    text = await res.text();
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (body && typeof body.error === 'string') {
    return new ApiError(res.status, body.error, body.reason || '', body.causes || [], body.line ?? null);
  }
  const words = {
    400: 'the server refused the request as malformed',
    404: 'the server has no such route or object',
    409: 'the request conflicts with the current state',
    413: 'the request is too large',
    415: 'the server does not accept that content type',
    422: 'the server could not accept the content',
    500: 'the server failed',
    502: 'the server could not be reached through the proxy',
    503: 'the server is not ready',
  };
  const detail = text && text.length < 200 ? `: ${text.trim()}` : '';
  return new ApiError(res.status, `${words[res.status] || 'the request failed'} (HTTP ${res.status})${detail}`);
}

/** createApi returns the client. fetchImpl is injectable for tests. */
export function createApi({ base = '', fetchImpl = globalThis.fetch?.bind(globalThis) } = {}) {
  async function request(method, path, { body, type, accept = 'application/json', signal } = {}) {
    const headers = { Accept: accept };
    let payload;
    if (body !== undefined) {
      if (typeof body === 'string') {
        payload = body;
        headers['Content-Type'] = type || 'application/yaml';
      } else {
        payload = JSON.stringify(body);
        headers['Content-Type'] = 'application/json';
      }
    }
    let res;
    try {
      res = await fetchImpl(`${base}/api/v1${path}`, { method, headers, body: payload, signal });
    } catch (err) {
      if (err?.name === 'AbortError') throw err;
      throw new ApiError(0, 'the server did not answer (is minisched still running?)');
    }
    if (!res.ok) throw await errorFrom(res);
    if (res.status === 204) return null;
    const ct = res.headers.get('Content-Type') || '';
    if (ct.includes('json')) return res.json();
    return res.text();
  }
  const enc = encodeURIComponent;
  const api = {
    request,
    listNodes: () => request('GET', '/nodes'),
    /** Creates an object at one of the routes that take manifests (nodes, pods, priorityclasses). */
    create: (route, manifest, type) => request('POST', `/${route}`, { body: manifest, type }),
    createNode: (manifest, type) => api.create('nodes', manifest, type),
    patchNode: (name, patch) => request('PATCH', `/nodes/${enc(name)}`, { body: patch }),
    priorityClasses: () => request('GET', '/priorityclasses'),
    deleteNode: (name) => request('DELETE', `/nodes/${enc(name)}`),
    createPod: (manifest, type) => api.create('pods', manifest, type),
    deletePod: (ns, name) => request('DELETE', `/pods/${enc(ns)}/${enc(name)}`),
    /** Deletes a workload at its route (deployments, daemonsets); its pods go with it. */
    deleteWorkload: (route, ns, name) => request('DELETE', `/${route}/${enc(ns)}/${enc(name)}`),
    queue: () => request('GET', '/queue'),
    cycles: (pod, limit = 50) => request('GET', `/cycles?${pod ? `pod=${enc(pod)}&` : ''}limit=${limit}`),
    cycle: (id) => request('GET', `/cycles/${enc(id)}`),
    /** Why a pending pod fits no node (the explanation's schema: docs/API.md). */
    explain: (ns, name) => request('GET', `/pods/${enc(ns)}/${enc(name)}/explain`),
    /** One node of it, its changes tried. */
    explainNode: (ns, name, node) => request('GET', `/pods/${enc(ns)}/${enc(name)}/explain/nodes/${enc(node)}`),
    snapshot: () => request('GET', '/snapshot'),
    events: (since, limit, kinds = '') => request('GET', `/events?since=${since}&limit=${limit}${kinds ? `&kinds=${kinds}` : ''}`),
    pause: () => request('POST', '/scheduler/pause'),
    resume: () => request('POST', '/scheduler/resume'),
    step: () => request('POST', '/scheduler/step'),
    /** One profile's plugins (the first, unless profile names another). */
    plugins: (profile) => request('GET', `/scheduler/plugins${profile ? `?profile=${encodeURIComponent(profile)}` : ''}`),
    config: () => request('GET', '/scheduler/config'),
    /** The running configuration as YAML, or with defaults kube-scheduler's defaults for its name. */
    configYaml: (defaults = false) => request('GET', `/scheduler/config${defaults ? '?defaults=true' : ''}`, { accept: 'application/yaml' }),
    putConfig: (cfg, type) => request('PUT', '/scheduler/config', { body: cfg, type }),
    /** Checks a configuration without applying it (dry run). */
    checkConfig: (text, signal) => request('PUT', '/scheduler/config?dryRun=true', { body: text, type: 'application/yaml', signal }),
    reset: () => request('POST', '/reset'),
    /** Loads a snapshot (GET /export's document, YAML or JSON); replace empties the cluster first. */
    /** Finishes an import a crash cut off (the server kept its document). */
    resumeImport: () => request('POST', '/import/resume'),
    importSnapshot: (text, replace = false) => request('POST', `/import${replace ? '?replace=true' : ''}`,
      { body: text, type: text.trimStart().startsWith('{') ? 'application/json' : 'application/yaml' }),
    scenarios: () => request('GET', '/scenarios'),
    runScenario: (name, reset = false, pace = '') => request('POST', `/scenarios?bundled=${enc(name)}${reset ? '&reset=true' : ''}${pace ? `&pace=${enc(pace)}` : ''}`),
    /** Lets a paced run take its next step. */
    nextStep: (id) => request('POST', `/scenarios/${enc(id)}/next`),
    scenario: (id) => request('GET', `/scenarios/${enc(id)}`),
    cancelScenario: (id) => request('DELETE', `/scenarios/${enc(id)}`),
    /** Starts a comparison of two configurations ({bundled?, a: {name, config}, b}). */
    compare: (body) => request('POST', '/compare', { body }),
    comparison: () => request('GET', '/compare'),
    comparedPod: (ns, name) => request('GET', `/compare/pods/${enc(ns)}/${enc(name)}`),
    mirror: () => request('GET', '/mirror'),
  };
  return api;
}

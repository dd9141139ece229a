// Small DOM helpers. Every value from the API reaches the page as text
// (textContent or attribute values), never as HTML.

const SVG_NS = 'http://www.w3.org/2000/svg';

// h builds an element: h('div', {class: 'x', onclick: fn, dataset: {testid: 'y'}}, 'text', child...).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

// s builds an SVG element.
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), v);
    } else if (k === 'testid') {
      el.setAttribute('data-testid', v);
    } else if (k === 'dataset') {
      for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = dv;
    } else if (k === 'style' && typeof v === 'object') {
      Object.assign(el.style, v); // CSSOM: allowed by the CSP
    } else if (k === 'value' || k === 'checked' || k === 'disabled' || k === 'selected') {
      el[k] = v;
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// clear empties el and appends the children.
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const ICONS = {
  heart: 'M12 20.5s-7.5-4.6-9.6-9.3C1 8 2.9 4.5 6.5 4.5c2.2 0 3.9 1.3 5.5 3.2 1.6-1.9 3.3-3.2 5.5-3.2 3.6 0 5.5 3.5 4.1 6.7-2.1 4.7-9.6 9.3-9.6 9.3z',
  broken: 'M12 20.5s-7.5-4.6-9.6-9.3C1 8 2.9 4.5 6.5 4.5c2.2 0 3.9 1.3 5.5 3.2l-2 3.3 3 2-1.5 3.5 3.5-4.5-3-2 1.7-2.5c1.1-.9 2.3-1.5 3.8-1.5 3.6 0 5.5 3.5 4.1 6.7-2.1 4.7-9.6 9.3-9.6 9.3z',
  check: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm-1.5 14.5-4.5-4.5 1.4-1.4 3.1 3.1 6.1-6.1L18 9z',
  up: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm1 15h-2v-7.2l-3.3 3.3-1.4-1.4L12 6l5.7 5.7-1.4 1.4L13 9.8z',
  spin: 'M12 3a9 9 0 1 0 9 9h-2.5A6.5 6.5 0 1 1 12 5.5z',
  pause: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zM9 7h2v10H9zm4 0h2v10h-2z',
  question: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm1 16h-2v-2h2zm1.9-6.9-.9.9c-.7.7-1 1.3-1 2.5h-2v-.5c0-1.1.4-2.1 1.2-2.8l1.2-1.3c.4-.3.6-.8.6-1.4a2 2 0 0 0-4 0H8a4 4 0 0 1 8 0c0 .9-.4 1.7-1.1 2.6z',
  ghost: 'M12 2a8 8 0 0 0-8 8v12l2.7-2 2.6 2 2.7-2 2.7 2 2.6-2 2.7 2V10a8 8 0 0 0-8-8zm-3 7a1.5 1.5 0 1 1 0 3 1.5 1.5 0 0 1 0-3zm6 0a1.5 1.5 0 1 1 0 3 1.5 1.5 0 0 1 0-3z',
  cross: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm4.2 12.8-1.4 1.4L12 13.4l-2.8 2.8-1.4-1.4 2.8-2.8-2.8-2.8 1.4-1.4 2.8 2.8 2.8-2.8 1.4 1.4-2.8 2.8z',
  dot: 'M12 7a5 5 0 1 0 0 10 5 5 0 0 0 0-10z',
};

// icon returns a 24-unit SVG icon of the given name.
export function icon(name, cls) {
  const path = ICONS[name] || ICONS.question;
  return s('svg', {viewBox: '0 0 24 24', class: 'icon ' + (cls || ''), 'aria-hidden': 'true'},
    s('path', {d: path}));
}

const HEALTH = {
  Healthy: ['heart', 'healthy'],
  Progressing: ['spin', 'progressing'],
  Degraded: ['broken', 'degraded'],
  Suspended: ['pause', 'suspended'],
  Paused: ['pause', 'suspended'],
  Missing: ['ghost', 'missing'],
  Unknown: ['question', 'unknown'],
};

const SYNC = {
  Synced: ['check', 'synced'],
  OutOfSync: ['up', 'outofsync'],
  Unknown: ['question', 'unknown'],
};

// healthIcon and syncIcon are status icons with a tooltip.
export function healthIcon(status) {
  const [name, cls] = HEALTH[status] || HEALTH.Unknown;
  const el = icon(name, 'status-' + cls + (name === 'spin' ? ' spinning' : ''));
  el.append(s('title', null, 'Health: ' + (status || 'Unknown')));
  return el;
}

export function syncIcon(status) {
  const [name, cls] = SYNC[status] || SYNC.Unknown;
  const el = icon(name, 'status-' + cls);
  el.append(s('title', null, 'Sync: ' + (status || 'Unknown')));
  return el;
}

// badge is a status pill: icon and label, coloured by the status.
export function healthBadge(status, testid) {
  const st = status || 'Unknown';
  const cls = (HEALTH[st] || HEALTH.Unknown)[1];
  return h('span', {class: 'badge badge-' + cls, testid, dataset: {status: st}}, healthIcon(st), h('span', null, st));
}

export function syncBadge(status, testid) {
  const st = status || 'Unknown';
  const cls = (SYNC[st] || SYNC.Unknown)[1];
  return h('span', {class: 'badge badge-' + cls, testid, dataset: {status: st}}, syncIcon(st), h('span', null, st));
}

const PHASES = {
  Succeeded: 'healthy', Successful: 'healthy', Running: 'progressing', Pending: 'unknown', Terminating: 'suspended',
  Failed: 'degraded', Error: 'degraded', Inconclusive: 'outofsync',
};

// phaseBadge shows an operation's or an analysis run's phase.
export function phaseBadge(phase, testid) {
  const st = phase || 'Unknown';
  return h('span', {class: 'badge badge-' + (PHASES[st] || HEALTH[st]?.[1] || 'unknown'), testid, dataset: {status: st}}, st);
}

// Kind abbreviations, as Argo CD's resource icons show them.
const KINDS = {
  Application: 'app', Deployment: 'deploy', ReplicaSet: 'rs', Pod: 'pod', Service: 'svc', ConfigMap: 'cm',
  Secret: 'sec', StatefulSet: 'sts', DaemonSet: 'ds', Job: 'job', CronJob: 'cj', Ingress: 'ing',
  Rollout: 'ro', AnalysisRun: 'ar', AnalysisTemplate: 'at', EndpointSlice: 'eps', Endpoints: 'ep',
  ServiceAccount: 'sa', Role: 'role', RoleBinding: 'rb', ClusterRole: 'crole', ClusterRoleBinding: 'crb',
  PersistentVolumeClaim: 'pvc', HorizontalPodAutoscaler: 'hpa', Namespace: 'ns', NetworkPolicy: 'netpol',
};

export function kindAbbrev(kind) {
  return KINDS[kind] || (kind || '?').replace(/[a-z]/g, '').toLowerCase() || kind.slice(0, 3).toLowerCase();
}

export function kindIcon(kind) {
  return h('span', {class: 'kind-icon kind-' + kindAbbrev(kind)}, kindAbbrev(kind));
}

// ago formats a timestamp relative to now.
export function ago(ts) {
  if (!ts) return '';
  const t = new Date(ts).getTime();
  if (Number.isNaN(t)) return String(ts);
  const sec = Math.round((Date.now() - t) / 1000);
  if (sec < 5) return 'just now';
  if (sec < 60) return sec + 's ago';
  if (sec < 3600) return Math.floor(sec / 60) + 'm ago';
  if (sec < 86400) return Math.floor(sec / 3600) + 'h ago';
  return Math.floor(sec / 86400) + 'd ago';
}

export function shortRev(rev) {
  return /^[0-9a-f]{40}$/.test(rev || '') ? rev.slice(0, 7) : (rev || '');
}

// toYAML renders a JSON value as YAML, for manifests.
export function toYAML(v, indent = '') {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return v.map((item) => {
      const inner = toYAML(item, indent + '  ');
      if (item && typeof item === 'object' && !(Array.isArray(item) && item.length === 0) && Object.keys(item).length) {
        return indent + '- ' + inner.replace(/^\s+/, '');
      }
      return indent + '- ' + inner;
    }).join('\n');
  }
  if (typeof v === 'object') {
    const keys = Object.keys(v);
    if (keys.length === 0) return '{}';
    return keys.map((k) => {
      const val = v[k];
      const key = indent + yamlScalar(k);
      if (val && typeof val === 'object' && (Array.isArray(val) ? val.length : Object.keys(val).length)) {
        return key + ':\n' + toYAML(val, Array.isArray(val) ? indent : indent + '  ');
      }
      return key + ': ' + toYAML(val, indent + '  ');
    }).join('\n');
  }
  if (typeof v === 'string') {
    if (v.includes('\n')) {
      return '|\n' + v.replace(/\n$/, '').split('\n').map((l) => indent + l).join('\n');
    }
    return yamlScalar(v);
  }
  return String(v);
}

function yamlScalar(str) {
  if (str === '' || /^[\s-?:,[\]{}#&*!|>'"%@`]|: |\s#|\s$|^(true|false|null|yes|no|on|off|~)$|^[-+]?[0-9.]+$/i.test(str)) {
    return JSON.stringify(str);
  }
  return str;
}

// manifestText turns a JSON manifest string into YAML, or returns it as is.
export function manifestText(json) {
  if (!json) return '';
  try {
    return toYAML(JSON.parse(json));
  } catch {
    return json;
  }
}

// diffView colours a unified diff line by line.
export function diffView(text, testid) {
  const pre = h('pre', {class: 'diff', testid});
  if (!text) {
    pre.append(h('span', {class: 'muted'}, 'No differences.'));
    return pre;
  }
  for (const line of text.split('\n')) {
    let cls = '';
    if (line.startsWith('+++') || line.startsWith('---')) cls = 'diff-file';
    else if (line.startsWith('+')) cls = 'diff-add';
    else if (line.startsWith('-')) cls = 'diff-del';
    else if (line.startsWith('@@')) cls = 'diff-hunk';
    pre.append(h('span', {class: 'diff-line ' + cls}, line), '\n');
  }
  return pre;
}

// The applications list's filters: by sync and health status, project,
// destination namespace, labels and a search text.
import {h, mount, healthBadge, syncBadge} from './dom.js';
import {sourceOf, destOf, syncOf, healthOf, projectOf} from './appinfo.js';

const SYNC_STATES = ['Synced', 'OutOfSync', 'Unknown'];
const HEALTH_STATES = ['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown'];

// parseLabels reads "k=v, k2" into [[k, v|null]].
function parseLabels(text) {
  return text.split(',').map((s) => s.trim()).filter(Boolean).map((s) => {
    const i = s.indexOf('=');
    return i < 0 ? [s, null] : [s.slice(0, i).trim(), s.slice(i + 1).trim()];
  });
}

// matches reports whether app passes the filters f.
export function matches(app, f) {
  const labels = app.metadata?.labels || {};
  if (f.sync.length && !f.sync.includes(syncOf(app))) return false;
  if (f.health.length && !f.health.includes(healthOf(app))) return false;
  if (f.projects.length && !f.projects.includes(projectOf(app))) return false;
  if (f.namespaces.length && !f.namespaces.includes(destOf(app).namespace)) return false;
  for (const [k, v] of parseLabels(f.labels)) {
    if (!(k in labels) || (v !== null && labels[k] !== v)) return false;
  }
  if (f.search) {
    const src = sourceOf(app);
    const hay = [app.metadata?.name, app.spec?.project, src.repoURL, src.path, src.chart, destOf(app).namespace].join(' ').toLowerCase();
    if (!hay.includes(f.search.toLowerCase())) return false;
  }
  return true;
}

// filterPanel keeps the filters in el: the user's choices go into prefs,
// and onChange hears of each. It returns draw(list, projects), which
// updates the panel for the apps in list and the projects the server knows.
export function filterPanel(el, prefs, onChange) {
  let filterSig = '';
  let clearButton = null;
  const countEls = new Map();

  function checkboxGroup(title, key, values, render) {
    return h('div', {class: 'filter-group'},
      h('h3', null, title),
      values.length === 0 ? h('div', {class: 'muted small'}, 'None') : null,
      values.map((v) => {
        const count = h('span', {class: 'check-count'});
        countEls.set(key + '\u0000' + v, count);
        return h('label', {class: 'check'},
          h('input', {type: 'checkbox', checked: prefs[key].includes(v), testid: 'filter-' + key + '-' + v,
            onchange: (e) => {
              prefs[key] = e.target.checked ? [...prefs[key], v] : prefs[key].filter((x) => x !== v);
              onChange();
            }}),
          render ? render(v) : h('span', null, v || '(none)'),
          count);
      }));
  }

  // draw rebuilds the panel only when its options change, so that a live
  // update never swaps a checkbox under the pointer or the focus.
  return function draw(list, projects) {
    const projectNames = [...new Set([...projects, ...list.map((a) => projectOf(a)), ...prefs.projects])].sort();
    const namespaces = [...new Set([...list.map((a) => destOf(a).namespace), ...prefs.namespaces])].sort();
    const active = prefs.sync.length + prefs.health.length + prefs.projects.length + prefs.namespaces.length + (prefs.labels ? 1 : 0);
    // The checkboxes show the user's clicks themselves; rebuilding on a
    // click would swap the next checkbox while a fast second click is
    // between press and release, and lose it.
    const sig = JSON.stringify([projectNames, namespaces]);
    if (sig !== filterSig) {
      filterSig = sig;
      countEls.clear();
      const labels = h('input', {type: 'text', value: prefs.labels, placeholder: 'key=value, key', testid: 'filter-labels',
        'aria-label': 'Label selector',
        onchange: (e) => {
          prefs.labels = e.target.value;
          onChange();
        }});
      mount(el,
        h('div', {class: 'filter-head'}, h('h2', null, 'Filters'),
          clearButton = h('button', {class: 'btn btn-ghost btn-small', testid: 'filter-clear', onclick: () => {
            Object.assign(prefs, {sync: [], health: [], projects: [], namespaces: [], labels: ''});
            filterSig = ''; // uncheck every box
            onChange();
          }}, 'Clear')),
        checkboxGroup('Sync status', 'sync', SYNC_STATES, (v) => syncBadge(v)),
        checkboxGroup('Health status', 'health', HEALTH_STATES, (v) => healthBadge(v)),
        h('div', {class: 'filter-group'}, h('h3', null, 'Labels'), labels),
        checkboxGroup('Projects', 'projects', projectNames),
        checkboxGroup('Namespaces', 'namespaces', namespaces));
    }
    clearButton.classList.toggle('hidden', active === 0);
    const tally = {sync: {}, health: {}, projects: {}, namespaces: {}};
    for (const a of list) {
      for (const [k, v] of [['sync', syncOf(a)], ['health', healthOf(a)], ['projects', projectOf(a)], ['namespaces', destOf(a).namespace]]) {
        tally[k][v] = (tally[k][v] || 0) + 1;
      }
    }
    for (const [key, countEl] of countEls) {
      const [group, value] = key.split('\u0000');
      const n = String(tally[group][value] || 0);
      if (countEl.textContent !== n) countEl.textContent = n;
    }
  };
}

// Applications list: tiles or rows, filters, search, live updates.
import {h, mount, healthBadge, syncBadge, kindIcon, shortRev} from './dom.js';
import {get, post, watch} from './api.js';
import {link, navigate} from './nav.js';
import {modal, canI} from './ui.js';
import {sourceOf, destOf, syncOf, healthOf, projectOf} from './appinfo.js';
import {filterPanel, matches} from './appfilters.js';

const PREFS = 'skiff.apps.prefs';

function loadPrefs() {
  try {
    const p = JSON.parse(localStorage.getItem(PREFS) || '{}');
    return {
      view: p.view === 'list' ? 'list' : 'tiles',
      sync: Array.isArray(p.sync) ? p.sync : [],
      health: Array.isArray(p.health) ? p.health : [],
      projects: Array.isArray(p.projects) ? p.projects : [],
      namespaces: Array.isArray(p.namespaces) ? p.namespaces : [],
      labels: typeof p.labels === 'string' ? p.labels : '',
      search: '',
    };
  } catch {
    return {view: 'tiles', sync: [], health: [], projects: [], namespaces: [], labels: '', search: ''};
  }
}

function savePrefs(p) {
  try {
    const {search: _search, ...keep} = p;
    localStorage.setItem(PREFS, JSON.stringify(keep));
  } catch {
    // private mode: preferences just do not persist
  }
}

export function appsView(main) {
  const apps = new Map();
  const prefs = loadPrefs();
  let projects = [];
  let loaded = false;
  let loadError = null;

  const results = h('div', {class: 'results', id: 'app-results'});
  const filters = h('aside', {class: 'filters', id: 'app-filters', testid: 'app-filters'});
  const count = h('span', {class: 'count', testid: 'app-count'});
  const search = h('input', {type: 'search', class: 'search', id: 'app-search', testid: 'app-search',
    placeholder: 'Search applications…', 'aria-label': 'Search applications',
    oninput: () => {
      prefs.search = search.value;
      schedule();
    }});
  const viewBtn = (mode, label) => h('button', {
    class: 'btn btn-small seg' + (prefs.view === mode ? ' active' : ''), testid: 'view-' + mode, dataset: {mode},
    'aria-pressed': String(prefs.view === mode),
    onclick: (e) => {
      prefs.view = mode;
      savePrefs(prefs);
      for (const b of e.currentTarget.parentNode.children) {
        b.classList.toggle('active', b.dataset.mode === mode);
        b.setAttribute('aria-pressed', String(b.dataset.mode === mode));
      }
      schedule();
    },
  }, label);
  const filterToggle = h('button', {class: 'btn btn-small filter-toggle', testid: 'filter-toggle',
    onclick: () => filters.classList.toggle('open')}, 'Filters');
  const newApp = h('button', {class: 'btn btn-primary btn-small hidden', testid: 'new-app-button', onclick: () => openCreate(projects)}, 'New app');
  canI('applications', 'create', 'default/*').then((ok) => {
    newApp.classList.toggle('hidden', !ok);
    newApp.dataset.perms = 'loaded';
  });

  mount(main,
    h('header', {class: 'topbar'},
      h('div', {class: 'topbar-title'}, h('h1', null, 'Applications'), count),
      h('div', {class: 'topbar-actions'}, search, h('div', {class: 'segmented'}, viewBtn('tiles', 'Tiles'), viewBtn('list', 'List')), filterToggle, newApp)),
    h('div', {class: 'with-filters'}, filters, results));

  let pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      draw();
    });
  }

  const drawFilters = filterPanel(filters, prefs, () => {
    savePrefs(prefs);
    schedule();
  });

  // Elements per app, reused while the app (its resourceVersion) and the
  // view are unchanged, so live updates only touch what changed.
  const cache = new Map();
  function cached(app, make) {
    const key = prefs.view + '/' + app.metadata.name;
    const rv = app.metadata.resourceVersion || JSON.stringify(app.status || {});
    if (cache.size > 2 * apps.size + 20) cache.clear(); // forget deleted apps now and then
    const hit = cache.get(key);
    if (hit && hit.rv === rv) return hit.el;
    const el = make(app);
    cache.set(key, {rv, el});
    return el;
  }

  // show puts the elements in container unless it holds exactly them already.
  function show(container, els) {
    const cur = container.children;
    if (cur.length === els.length && els.every((el, i) => cur[i] === el)) return;
    mount(container, els);
  }

  const tilesEl = h('div', {class: 'tiles', testid: 'app-tiles'});
  const rowsEl = h('tbody');
  const tableEl = h('div', {class: 'table-wrap'}, h('table', {class: 'table', testid: 'app-list'},
    h('thead', null, h('tr', null, h('th', null, 'Name'), h('th', {class: 'hide-sm'}, 'Project'), h('th', null, 'Status'),
      h('th', {class: 'hide-sm'}, 'Source'), h('th', {class: 'hide-sm'}, 'Revision'), h('th', {class: 'hide-sm'}, 'Destination'))),
    rowsEl));

  function draw() {
    const list = [...apps.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    drawFilters(list, projects);
    const shown = list.filter((a) => matches(a, prefs));
    count.textContent = loaded ? (shown.length === list.length ? String(list.length) : shown.length + ' of ' + list.length) : '';
    if (loadError && !loaded) {
      mount(results, h('div', {class: 'alert alert-error', testid: 'apps-error'}, loadError));
      return;
    }
    if (!loaded) {
      mount(results, h('div', {class: 'loading'}, 'Loading…'));
      return;
    }
    if (list.length === 0) {
      mount(results, h('div', {class: 'empty', testid: 'apps-empty'}, h('h2', null, 'No applications yet'),
        h('p', {class: 'muted'}, 'Create an Application with skiff app create or kubectl apply, and it shows here.')));
      return;
    }
    if (shown.length === 0) {
      mount(results, h('div', {class: 'empty', testid: 'apps-none-match'}, h('h2', null, 'No applications match the filters')));
      return;
    }
    if (prefs.view === 'list') {
      show(rowsEl, shown.map((a) => cached(a, appRow)));
      show(results, [tableEl]);
    } else {
      show(tilesEl, shown.map((a) => cached(a, appTile)));
      show(results, [tilesEl]);
    }
  }

  async function fetchAll() {
    try {
      const data = await get('/api/v1/applications');
      apps.clear();
      for (const a of data?.items || []) apps.set(a.metadata.name, a);
      loaded = true;
      loadError = null;
    } catch (e) {
      loadError = e.message;
    }
    schedule();
  }

  get('/api/v1/projects').then((d) => {
    projects = (d?.items || []).map((p) => p.metadata.name);
    schedule();
  }).catch(() => {});
  draw();
  fetchAll();
  const stop = watch('/api/v1/stream/applications', (ev) => {
    const app = ev.application;
    if (!app?.metadata?.name) return;
    if (ev.type === 'DELETED') apps.delete(app.metadata.name);
    else apps.set(app.metadata.name, app);
    loaded = true;
    schedule();
  }, fetchAll, 5000);
  return stop;
}

// appTile is app as a tile of the tiles view.
function appTile(app) {
  const name = app.metadata.name;
  const src = sourceOf(app);
  const dest = destOf(app);
  const labels = Object.entries(app.metadata.labels || {});
  const row = (k, ...v) => h('div', {class: 'tile-row'}, h('span', {class: 'tile-key'}, k), h('span', {class: 'tile-val'}, ...v));
  return link('/applications/' + encodeURIComponent(name), {
    class: 'tile app-tile health-' + healthOf(app).toLowerCase(), testid: 'app-tile-' + name, dataset: {name},
  },
  h('div', {class: 'tile-head'}, kindIcon('Application'), h('span', {class: 'tile-name'}, name)),
  row('Project', projectOf(app)),
  labels.length ? row('Labels', labels.map(([k, v]) => h('span', {class: 'chip'}, k + '=' + v))) : null,
  row('Status', healthBadge(healthOf(app), 'app-health'), ' ', syncBadge(syncOf(app), 'app-sync')),
  row('Repository', h('span', {class: 'mono'}, src.repoURL || '')),
  row('Target', h('span', {class: 'mono'}, src.targetRevision || 'HEAD')),
  src.chart ? row('Chart', src.chart) : row('Path', h('span', {class: 'mono'}, src.path || '.')),
  row('Destination', dest.cluster),
  row('Namespace', dest.namespace),
  app.status?.operationState?.phase === 'Running' ? row('Operation', h('span', {class: 'badge badge-progressing'}, 'Syncing')) : null);
}

// appRow is app as a row of the list view.
function appRow(app) {
  const name = app.metadata.name;
  const src = sourceOf(app);
  const dest = destOf(app);
  return h('tr', {class: 'app-row', testid: 'app-row-' + name},
    h('td', null, link('/applications/' + encodeURIComponent(name), {class: 'strong'}, name)),
    h('td', {class: 'hide-sm'}, projectOf(app)),
    h('td', null, healthBadge(healthOf(app)), ' ', syncBadge(syncOf(app))),
    h('td', {class: 'hide-sm mono wrap'}, (src.repoURL || '') + (src.path ? ' · ' + src.path : '') + ' @ ' + (src.targetRevision || 'HEAD')),
    h('td', {class: 'hide-sm mono'}, shortRev(app.status?.sync?.revision)),
    h('td', {class: 'hide-sm wrap'}, dest.cluster + '/' + dest.namespace));
}

// openCreate asks for a new Application's source and destination and
// creates it (POST /api/v1/applications), then opens it.
function openCreate(projects) {
  const field = (id, label, attrs) => [h('label', {for: id}, label), h('input', {id, testid: id, type: 'text', autocomplete: 'off', ...attrs})];
  const projectSel = h('select', {id: 'new-app-project', testid: 'new-app-project'},
    (projects.length ? projects : ['default']).map((p) => h('option', {value: p, selected: p === 'default'}, p)));
  const auto = h('input', {type: 'checkbox', testid: 'new-app-auto'});
  const prune = h('input', {type: 'checkbox', testid: 'new-app-prune'});
  const selfHeal = h('input', {type: 'checkbox', testid: 'new-app-self-heal'});
  const createNs = h('input', {type: 'checkbox', testid: 'new-app-create-namespace'});
  const box = modal({
    title: 'New application', testid: 'new-app-dialog', confirm: 'Create', confirmTestid: 'new-app-create',
    body: [
      field('new-app-name', 'Application name', {required: true, pattern: '[a-z0-9]([a-z0-9.\\-]*[a-z0-9])?', title: 'lower case letters, digits, - and .'}),
      h('label', {for: 'new-app-project'}, 'Project'), projectSel,
      h('div', {class: 'options'},
        h('label', {class: 'check'}, auto, 'Automatic sync'),
        h('label', {class: 'check'}, prune, 'Prune'),
        h('label', {class: 'check'}, selfHeal, 'Self heal')),
      h('h3', {class: 'form-section'}, 'Source'),
      field('new-app-repo', 'Repository URL', {required: true, placeholder: 'https://github.com/argoproj/argocd-example-apps.git'}),
      field('new-app-revision', 'Revision', {value: 'HEAD'}),
      field('new-app-path', 'Path', {placeholder: 'guestbook'}),
      h('h3', {class: 'form-section'}, 'Destination'),
      field('new-app-server', 'Cluster URL', {value: 'https://kubernetes.default.svc'}),
      field('new-app-namespace', 'Namespace', {placeholder: 'default'}),
      h('label', {class: 'check'}, createNs, 'Create the namespace if missing'),
    ],
    async onConfirm(form) {
      const val = (id) => form.querySelector('#' + id).value.trim();
      const name = val('new-app-name');
      if (!name) throw new Error('The application needs a name.');
      const syncPolicy = {};
      if (auto.checked) syncPolicy.automated = {prune: prune.checked, selfHeal: selfHeal.checked};
      if (createNs.checked) syncPolicy.syncOptions = ['CreateNamespace=true'];
      const app = {
        apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: {name},
        spec: {
          project: projectSel.value,
          source: {repoURL: val('new-app-repo'), targetRevision: val('new-app-revision') || 'HEAD', path: val('new-app-path') || '.'},
          destination: {server: val('new-app-server'), namespace: val('new-app-namespace')},
          syncPolicy: Object.keys(syncPolicy).length ? syncPolicy : undefined,
        },
      };
      await post('/api/v1/applications', app);
      navigate('/applications/' + encodeURIComponent(name));
    },
  });
  box.querySelector('#new-app-name').focus();
}

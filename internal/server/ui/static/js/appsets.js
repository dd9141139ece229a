// ApplicationSets: each set with its generators, policy and conditions, and
// links to the Applications it owns (by owner reference, so apps show
// before the set's status lists them).
import {h, mount, healthBadge, syncBadge} from './dom.js';
import {get, polling} from './api.js';
import {link} from './nav.js';

const POLL_MS = 5000;

const GENERATORS = ['list', 'clusters', 'git', 'matrix', 'merge', 'clusterDecisionResource', 'scmProvider', 'pullRequest', 'plugin'];

function generatorKinds(set) {
  return (set.spec?.generators || []).map((g) => GENERATORS.find((k) => g[k]) || '?').join(', ');
}

// ownedBy maps a set's name to the Applications whose controller owner it is.
function ownedBy(apps) {
  const out = new Map();
  for (const app of apps) {
    const owner = (app.metadata?.ownerReferences || []).find((r) => r.kind === 'ApplicationSet' && r.controller);
    if (!owner) continue;
    if (!out.has(owner.name)) out.set(owner.name, []);
    out.get(owner.name).push(app);
  }
  for (const list of out.values()) list.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  return out;
}

function appLink(app) {
  const name = app.metadata.name;
  return h('li', {class: 'appset-app', testid: 'appset-app-' + name},
    link('/applications/' + encodeURIComponent(name), {class: 'strong'}, name), ' ',
    healthBadge(app.status?.health?.status), ' ', syncBadge(app.status?.sync?.status));
}

function setRow(set, apps) {
  const name = set.metadata.name;
  const errors = (set.status?.conditions || []).filter((c) => c.type === 'ErrorOccurred' && c.status === 'True');
  const policy = set.spec?.syncPolicy?.applicationsSync || 'sync';
  const strategy = set.spec?.strategy?.type || '';
  return h('tr', {class: 'appset-row', testid: 'appset-row-' + name},
    h('td', null, h('span', {class: 'strong'}, name),
      errors.map((c) => h('div', {class: 'small alert-error wrap', testid: 'appset-error'}, c.message || c.reason || 'error'))),
    h('td', {class: 'hide-sm'}, set.spec?.template?.spec?.project || ''),
    h('td', {testid: 'appset-generators'}, generatorKinds(set)),
    h('td', {class: 'hide-sm'}, policy + (strategy ? ', ' + strategy : '')),
    h('td', {testid: 'appset-apps', dataset: {count: String(apps.length)}},
      apps.length ? h('ul', {class: 'plain-list'}, apps.map(appLink)) : h('span', {class: 'muted'}, 'none')));
}

export function appSetsView(main) {
  const count = h('span', {class: 'count', testid: 'appset-count'});
  const results = h('div', {class: 'results'}, h('div', {class: 'loading'}, 'Loading…'));
  mount(main, h('header', {class: 'topbar'}, h('div', {class: 'topbar-title'}, h('h1', null, 'ApplicationSets'), count)), results);

  async function fetchAll() {
    let sets;
    let apps;
    try {
      [sets, apps] = await Promise.all([get('/api/v1/applicationsets'), get('/api/v1/applications')]);
    } catch (e) {
      mount(results, h('div', {class: 'alert alert-error', testid: 'appsets-error'}, e.message));
      return;
    }
    const items = (sets?.items || []).slice().sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    count.textContent = String(items.length);
    if (items.length === 0) {
      mount(results, h('div', {class: 'empty', testid: 'appsets-empty'}, h('h2', null, 'No ApplicationSets'),
        h('p', {class: 'muted'}, 'Create one with `skiff appset create FILE` or kubectl.')));
      return;
    }
    const owned = ownedBy(apps?.items || []);
    mount(results, h('div', {class: 'table-wrap'}, h('table', {class: 'table', testid: 'appset-list'},
      h('thead', null, h('tr', null, h('th', null, 'Name'), h('th', {class: 'hide-sm'}, 'Project'), h('th', null, 'Generators'),
        h('th', {class: 'hide-sm'}, 'Policy'), h('th', null, 'Applications'))),
      h('tbody', null, items.map((set) => setRow(set, owned.get(set.metadata.name) || []))))));
  }
  polling();
  fetchAll();
  const timer = setInterval(fetchAll, POLL_MS);
  return () => clearInterval(timer);
}

// Clusters: the clusters Skiff deploys to, with the state the Application
// controller sees (connection, version, cache, apps), as Argo CD's
// Settings → Clusters lists them.
import {h, mount, phaseBadge, ago} from './dom.js';
import {get, polling} from './api.js';

const POLL_MS = 10000;

function clusterRow(c) {
  const info = c.info || {};
  const cache = info.cacheInfo || {};
  const state = c.connectionState || info.connectionState || {};
  const apps = (c.applications || []).length;
  return h('tr', {class: 'cluster-row', testid: 'cluster-row-' + c.name, dataset: {server: c.server}},
    h('td', null, h('span', {class: 'strong'}, c.name), h('div', {class: 'small muted mono wrap'}, c.server)),
    h('td', {testid: 'cluster-version'}, c.serverVersion || info.serverVersion || ''),
    h('td', null, phaseBadge(state.status || 'Unknown', 'cluster-status'),
      state.message ? h('div', {class: 'small muted wrap', testid: 'cluster-message'}, state.message) : null),
    h('td', {class: 'hide-sm'}, c.project || ''),
    h('td', {testid: 'cluster-apps', title: apps + ' application(s) target this cluster; the controller compares ' + (info.applicationsCount || 0)}, String(apps)),
    h('td', {class: 'hide-sm', testid: 'cluster-resources'}, cache.resourcesCount ? String(cache.resourcesCount) : ''),
    h('td', {class: 'hide-sm', title: cache.lastCacheSyncTime || ''}, ago(cache.lastCacheSyncTime)));
}

export function clustersView(main) {
  const count = h('span', {class: 'count', testid: 'cluster-count'});
  const results = h('div', {class: 'results'}, h('div', {class: 'loading'}, 'Loading…'));
  mount(main, h('header', {class: 'topbar'}, h('div', {class: 'topbar-title'}, h('h1', null, 'Clusters'), count)), results);

  async function fetchAll() {
    let data;
    try {
      data = await get('/api/v1/clusters');
    } catch (e) {
      mount(results, h('div', {class: 'alert alert-error', testid: 'clusters-error'}, e.message));
      return;
    }
    const items = (data?.items || []).slice().sort((a, b) => (a.name || '').localeCompare(b.name || ''));
    count.textContent = String(items.length);
    const invalid = (data?.invalid || []).map((msg) => h('div', {class: 'alert alert-warn', testid: 'cluster-invalid'}, msg));
    if (items.length === 0) {
      mount(results, invalid, h('div', {class: 'empty', testid: 'clusters-empty'}, h('h2', null, 'No clusters')));
      return;
    }
    mount(results, invalid, h('div', {class: 'table-wrap'}, h('table', {class: 'table', testid: 'cluster-list'},
      h('thead', null, h('tr', null, h('th', null, 'Name'), h('th', null, 'Version'), h('th', null, 'Status'),
        h('th', {class: 'hide-sm'}, 'Project'), h('th', null, 'Apps'), h('th', {class: 'hide-sm'}, 'Resources'),
        h('th', {class: 'hide-sm'}, 'Cache synced'))),
      h('tbody', null, items.map(clusterRow)))));
  }
  polling();
  fetchAll();
  const timer = setInterval(fetchAll, POLL_MS);
  return () => clearInterval(timer);
}

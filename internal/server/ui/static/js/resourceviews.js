// A resource's live manifest, diffs and events, drawn into an element: the
// application page's tabs and its resource panel share them.
import {h, mount, kindIcon, ago, manifestText, diffView} from './dom.js';
import {get, missing} from './api.js';

// drawManifest shows node n's live manifest, read through the app at base.
export async function drawManifest(el, base, n) {
  if (n.missing) {
    mount(el, h('div', {class: 'muted', testid: 'manifest-missing'}, 'This resource does not exist in the cluster yet.'));
    return;
  }
  mount(el, h('div', {class: 'loading'}, 'Loading…'));
  const q = new URLSearchParams({group: n.group || '', version: n.version || '', kind: n.kind, namespace: n.namespace || '', resourceName: n.name});
  try {
    const data = await get(base + '/resource?' + q);
    mount(el, h('pre', {class: 'code', testid: 'live-manifest'}, manifestText(data?.manifest)));
  } catch (e) {
    mount(el, h('div', {class: missing(e) ? 'muted' : 'alert alert-error', testid: 'live-manifest-error'}, missing(e) ? 'Live manifests are not available on this server.' : e.message));
  }
}

// drawDiff shows every resource's diff, or only node's.
export async function drawDiff(el, path, node) {
  mount(el, h('div', {class: 'loading'}, 'Loading…'));
  let items;
  try {
    items = (await get(path))?.items || [];
  } catch (e) {
    mount(el, h('div', {class: missing(e) ? 'muted' : 'alert alert-error', testid: 'diff-error'}, missing(e) ? 'Diffs are not available on this server.' : e.message));
    return;
  }
  if (node) items = items.filter((i) => i.kind === node.kind && i.name === node.name && (i.namespace || '') === (node.namespace || '') && (i.group || '') === (node.group || ''));
  if (items.length === 0) {
    mount(el, h('div', {class: 'muted', testid: 'diff-empty'}, node ? 'This resource is not managed by the application (no desired state).' : 'No managed resources.'));
    return;
  }
  const modified = items.filter((i) => i.modified || !i.liveState || !i.targetState);
  const compact = h('label', {class: 'check'}, h('input', {type: 'checkbox', checked: !node, testid: 'diff-only-changed',
    onchange: (e) => list(e.target.checked)}), 'Only changed resources');
  const listEl = h('div', {class: 'diff-list'});
  const list = (onlyChanged) => mount(listEl, (onlyChanged ? modified : items).map((i) => h('section', {class: 'diff-item', testid: 'diff-' + i.kind + '-' + i.name},
    h('h3', null, kindIcon(i.kind), ' ', i.kind, ' ', h('span', {class: 'strong'}, i.name),
      !i.liveState ? h('span', {class: 'chip chip-warn'}, 'missing live') : !i.targetState ? h('span', {class: 'chip chip-warn'}, 'not in git (prune)') : i.modified ? h('span', {class: 'chip chip-warn'}, 'modified') : h('span', {class: 'chip'}, 'in sync')),
    diffView(i.diff, 'diff-text'))), (onlyChanged && modified.length === 0) ? h('div', {class: 'muted', testid: 'diff-none'}, 'Every resource matches git.') : null);
  mount(el, node ? null : compact, listEl);
  list(!node);
}

// drawEvents shows the events path lists, newest first.
export async function drawEvents(el, path, testid) {
  mount(el, h('div', {class: 'loading'}, 'Loading…'));
  let items;
  try {
    items = (await get(path))?.items || [];
  } catch (e) {
    mount(el, h('div', {class: missing(e) ? 'muted' : 'alert alert-error', testid: testid + '-error'}, missing(e) ? 'Events are not available on this server.' : e.message));
    return;
  }
  if (items.length === 0) {
    mount(el, h('div', {class: 'muted', testid: testid + '-empty'}, 'No events.'));
    return;
  }
  const when = (e) => e.lastTimestamp || e.eventTime || e.firstTimestamp || e.metadata?.creationTimestamp;
  mount(el, h('div', {class: 'table-wrap'}, h('table', {class: 'table', testid},
    h('thead', null, h('tr', null, h('th', null, 'Type'), h('th', null, 'Reason'), h('th', null, 'Message'), h('th', {class: 'hide-sm'}, 'Count'), h('th', null, 'Last seen'))),
    h('tbody', null, [...items].reverse().map((e) => h('tr', {class: e.type === 'Warning' ? 'row-warn' : ''},
      h('td', null, e.type || ''), h('td', null, e.reason || ''), h('td', {class: 'wrap'}, e.message || ''),
      h('td', {class: 'hide-sm'}, String(e.count || 1)), h('td', {title: when(e) || ''}, ago(when(e)))))))));
}

// The resource panel: a drawer with one resource's live manifest, diff and
// events, and its actions.
import {h, mount, healthBadge, syncBadge, kindIcon} from './dom.js';
import {drawManifest, drawDiff, drawEvents} from './resourceviews.js';
import {actionsMenu} from './resourceactions.js';

// openResourcePanel opens the panel of tree node n of the application at
// base on tab; onTab hears of each tab shown, onClosed(quiet) of the panel's
// closing. It returns close(quiet): quiet (another panel opens, the page
// ends) tells onClosed to skip the redraw.
export function openResourcePanel(n, base, tab, onTab, onClosed) {
  let panel = null;
  const content = h('div', {class: 'drawer-body', testid: 'panel-content'});
  const ptabs = h('nav', {class: 'tabs'});
  const show = (id) => {
    onTab(id);
    mount(ptabs, [['manifest', 'Live manifest'], ['diff', 'Diff'], ['events', 'Events']].map(([t, label]) =>
      h('button', {class: 'tab' + (t === id ? ' active' : ''), testid: 'panel-tab-' + t, onclick: () => show(t)}, label)));
    if (id === 'manifest') drawManifest(content, base, n);
    else if (id === 'diff') drawDiff(content, base + '/managed-resources', n);
    else {
      const q = new URLSearchParams();
      if (n.namespace) q.set('resourceNamespace', n.namespace);
      q.set('resourceName', n.name);
      if (n.ref?.uid) q.set('resourceUID', n.ref.uid);
      drawEvents(content, base + '/events?' + q, 'resource-events');
    }
  };
  const onKey = (e) => e.key === 'Escape' && !document.querySelector('.modal-overlay') && close();
  const close = (quiet) => {
    document.removeEventListener('keydown', onKey);
    if (panel) panel.remove();
    panel = null;
    onClosed(quiet);
  };
  document.addEventListener('keydown', onKey);
  panel = h('div', {class: 'overlay drawer-overlay', onclick: (e) => e.target === panel && close()},
    h('aside', {class: 'drawer', testid: 'resource-panel', role: 'dialog', 'aria-label': n.kind + ' ' + n.name},
      h('header', {class: 'drawer-head'},
        kindIcon(n.kind),
        h('div', {class: 'drawer-title'}, h('div', {class: 'small muted'}, n.kind + (n.namespace ? ' · ' + n.namespace : '')), h('h2', null, n.name)),
        h('div', {class: 'drawer-status'}, n.health?.status ? healthBadge(n.health.status) : null, ' ', n.sync ? syncBadge(n.sync) : null),
        n.missing ? null : actionsMenu(n, base),
        h('button', {class: 'btn btn-ghost', testid: 'panel-close', 'aria-label': 'Close', onclick: () => close()}, '✕')),
      n.images.length ? h('div', {class: 'drawer-meta small'}, 'Images: ', n.images.map((i) => h('span', {class: 'chip mono'}, i))) : null,
      ptabs, content));
  document.body.append(panel);
  show(tab);
  return close;
}

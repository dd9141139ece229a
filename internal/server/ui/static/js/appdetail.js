// Application page: status, resource tree, diff, events, history, and the
// sync, rollback and delete operations. Live through the app stream.
import {h, s, mount, healthBadge, syncBadge, phaseBadge, healthIcon, syncIcon, kindIcon, ago, shortRev, manifestText, diffView} from './dom.js';
import {get, post, del, watch, missing, enc} from './api.js';
import {link, navigate} from './nav.js';
import {sourceOf, destOf} from './apps.js';
import {modal, confirmDialog, canI, toast} from './ui.js';

const NODE_W = 230;
const NODE_H = 56;
const COL_GAP = 64;
const ROW_GAP = 14;
const KIND_ORDER = ['Namespace', 'ServiceAccount', 'ConfigMap', 'Secret', 'Service', 'Deployment', 'StatefulSet', 'DaemonSet',
  'Rollout', 'ReplicaSet', 'Job', 'CronJob', 'Pod', 'Ingress', 'EndpointSlice'];

const resKey = (r) => [r.group || '', r.kind, r.namespace || '', r.name].join('/');

export function appView(main, [name]) {
  const st = {
    app: null, tree: null, treeError: null, tab: 'tree', node: null, panelTab: 'manifest',
    perms: {sync: false, delete: false}, permsLoaded: false, stopped: false, deleted: false, error: null,
  };
  const base = '/api/v1/applications/' + enc(name);

  const header = h('header', {class: 'topbar'});
  const summary = h('section', {class: 'summary', id: 'app-summary'});
  const tabs = h('nav', {class: 'tabs', role: 'tablist'});
  const body = h('section', {class: 'tab-body', id: 'app-tab-body'});
  mount(main, header, summary, tabs, body);
  // Signatures of what header, tabs and body show: live updates redraw a
  // part only when it changes, so a button is never swapped mid-click.
  let headerSig = '';
  let tabsSig = '';
  let bodySig = '';

  // --- header and summary ---------------------------------------------------
  function drawHeader() {
    const app = st.app;
    const running = app?.status?.operationState?.phase === 'Running' || (app?.operation && !app?.status?.operationState?.finishedAt);
    const sig = JSON.stringify([!!app, st.deleted, !!running, st.perms, st.permsLoaded]);
    if (sig === headerSig) return;
    headerSig = sig;
    const actions = h('div', {class: 'topbar-actions', testid: 'app-actions', dataset: {perms: st.permsLoaded ? 'loaded' : 'pending'}},
      st.perms.sync ? h('button', {class: 'btn btn-primary', id: 'app-sync', testid: 'sync-button', disabled: !app || st.deleted, onclick: openSync}, 'Sync') : null,
      h('button', {class: 'btn', id: 'app-refresh', testid: 'refresh-button', disabled: !app || st.deleted, onclick: refresh}, 'Refresh'),
      h('button', {class: 'btn', id: 'app-history', testid: 'history-button', disabled: !app, onclick: () => selectTab('history')}, 'History and rollback'),
      running && st.perms.sync ? h('button', {class: 'btn btn-warn', testid: 'terminate-button', onclick: terminate}, 'Terminate') : null,
      st.perms.delete ? h('button', {class: 'btn btn-danger', id: 'app-delete', testid: 'delete-button', disabled: !app || st.deleted, onclick: openDelete}, 'Delete') : null);
    mount(header,
      h('div', {class: 'topbar-title'},
        h('div', {class: 'crumbs'}, link('/applications', null, 'Applications'), h('span', null, ' / ')),
        h('h1', {testid: 'app-name'}, name)),
      actions);
  }

  function drawSummary() {
    const app = st.app;
    if (!app) {
      mount(summary, st.error ? h('div', {class: 'alert alert-error', testid: 'app-error'}, st.error) : h('div', {class: 'loading'}, 'Loading…'));
      return;
    }
    const status = app.status || {};
    const src = sourceOf(app);
    const dest = destOf(app);
    const op = status.operationState;
    const auto = app.spec?.syncPolicy?.automated;
    mount(summary,
      st.deleted ? h('div', {class: 'alert alert-error', testid: 'app-deleted'}, 'This application was deleted.') : null,
      h('div', {class: 'cards'},
        h('div', {class: 'card'},
          h('div', {class: 'card-label'}, 'App health'),
          healthBadge(status.health?.status, 'app-health'),
          status.health?.message && status.health.status !== 'Healthy' ? h('div', {class: 'card-note'}, status.health.message) : null),
        h('div', {class: 'card'},
          h('div', {class: 'card-label'}, 'Sync status'),
          syncBadge(status.sync?.status, 'app-sync-status'),
          h('div', {class: 'card-note'}, 'to ', h('span', {class: 'mono'}, src.targetRevision || 'HEAD'),
            status.sync?.revision ? [' (', h('span', {class: 'mono', testid: 'app-revision', title: status.sync.revision}, shortRev(status.sync.revision)), ')'] : null),
          h('div', {class: 'card-note'}, auto ? 'Auto-sync enabled' + (auto.prune ? ', prune' : '') + (auto.selfHeal ? ', self-heal' : '') : 'Auto-sync off')),
        h('div', {class: 'card'},
          h('div', {class: 'card-label'}, 'Last operation'),
          op ? [
            phaseBadge(op.phase, 'operation-phase'),
            h('div', {class: 'card-note', testid: 'operation-message'}, op.message || ''),
            h('div', {class: 'card-note'},
              op.syncResult?.revision ? ['revision ', h('span', {class: 'mono', testid: 'operation-revision', title: op.syncResult.revision}, shortRev(op.syncResult.revision)), ' · '] : null,
              op.operation?.initiatedBy?.username ? 'by ' + op.operation.initiatedBy.username + ' · ' : null,
              ago(op.finishedAt || op.startedAt)),
          ] : h('div', {class: 'muted', testid: 'operation-phase'}, 'Never synced')),
        h('div', {class: 'card card-wide'},
          h('div', {class: 'card-label'}, 'Source → destination'),
          h('div', {class: 'mono small wrap'}, src.repoURL || ''),
          h('div', {class: 'small'}, src.chart ? 'chart ' + src.chart : 'path ' + (src.path || '.'), ' · project ', app.spec?.project || 'default'),
          h('div', {class: 'small'}, dest.cluster, ' / ', dest.namespace || '(none)'))),
      (status.conditions || []).map((c) => h('div', {class: 'alert alert-warn', testid: 'app-condition'}, c.type + ': ' + c.message)));
  }

  // --- tabs -------------------------------------------------------------------
  const TABS = [['tree', 'Resources'], ['diff', 'Diff'], ['events', 'Events'], ['history', 'History']];
  function drawTabs() {
    if (tabsSig === st.tab) return;
    tabsSig = st.tab;
    mount(tabs, TABS.map(([id, label]) => h('button', {
      class: 'tab' + (st.tab === id ? ' active' : ''), role: 'tab', 'aria-selected': String(st.tab === id),
      id: 'tab-' + id, testid: 'tab-' + id, onclick: () => selectTab(id),
    }, label)));
  }

  function selectTab(id) {
    st.tab = id;
    bodySig = '';
    drawTabs();
    drawBody();
  }

  function drawBody() {
    if (st.tab === 'tree') drawTree();
    else if (st.tab === 'diff') drawDiff(body, base + '/managed-resources', null);
    else if (st.tab === 'events') drawEvents(body, base + '/events', 'app-events');
    else drawHistory();
  }

  // --- resource tree ----------------------------------------------------------
  function treeModel() {
    const app = st.app;
    const managed = app?.status?.resources || [];
    const statusByKey = new Map(managed.map((r) => [resKey(r), r]));
    const live = st.tree?.nodes || [];
    const byUID = new Map(live.map((n) => [n.uid, n]));
    const root = {id: 'app', kind: 'Application', name, health: app?.status?.health, sync: app?.status?.sync?.status, info: [], images: [], children: [], app: true};
    const nodes = new Map([['app', root]]);
    for (const n of live) {
      const m = statusByKey.get(resKey(n));
      nodes.set(n.uid, {id: n.uid, kind: n.kind, name: n.name, namespace: n.namespace, group: n.group, version: n.version,
        health: n.health || m?.health, sync: m?.status, info: n.info || [], images: n.images || [], ref: n, children: []});
    }
    // Managed resources not live yet (before the first sync, or pruned) show as missing.
    const liveKeys = new Set(live.map(resKey));
    for (const r of managed) {
      if (liveKeys.has(resKey(r))) continue;
      const id = 'missing:' + resKey(r);
      nodes.set(id, {id, kind: r.kind, name: r.name, namespace: r.namespace, group: r.group, version: r.version,
        health: r.health || {status: 'Missing'}, sync: r.status, info: [], images: [], children: [], missing: true});
    }
    for (const [id, n] of nodes) {
      if (id === 'app') continue;
      const parents = (n.ref?.parentRefs || []).map((p) => byUID.get(p.uid) ? p.uid : null).filter(Boolean);
      const parent = parents.length ? nodes.get(parents[0]) : root;
      parent.children.push(n);
    }
    const order = (k) => {
      const i = KIND_ORDER.indexOf(k);
      return i < 0 ? KIND_ORDER.length : i;
    };
    for (const n of nodes.values()) n.children.sort((a, b) => order(a.kind) - order(b.kind) || a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
    // Columns by depth; leaves take the next row, parents centre on their children.
    let row = 0;
    let maxDepth = 0;
    const place = (n, depth) => {
      n.depth = depth;
      maxDepth = Math.max(maxDepth, depth);
      if (n.children.length === 0) {
        n.row = row++;
        return;
      }
      for (const c of n.children) place(c, depth + 1);
      n.row = (n.children[0].row + n.children[n.children.length - 1].row) / 2;
    };
    place(root, 0);
    return {root, nodes: [...nodes.values()], rows: Math.max(row, 1), cols: maxDepth + 1};
  }

  function drawTree() {
    if (st.tab !== 'tree') return;
    if (!st.app) {
      mount(body, h('div', {class: 'loading'}, 'Loading…'));
      return;
    }
    const model = treeModel();
    const sig = 'tree:' + JSON.stringify([st.treeError, st.node?.id, model.nodes.map((n) => [n.id, n.kind, n.name, n.depth, n.row, n.health?.status, n.sync, n.info, !!n.missing])]);
    if (sig === bodySig) return;
    bodySig = sig;
    const width = model.cols * (NODE_W + COL_GAP);
    const height = model.rows * (NODE_H + ROW_GAP);
    const pos = (n) => ({x: n.depth * (NODE_W + COL_GAP), y: n.row * (NODE_H + ROW_GAP)});
    const svg = s('svg', {class: 'tree-edges', width, height, viewBox: `0 0 ${width} ${height}`});
    const canvas = h('div', {class: 'tree-canvas', testid: 'resource-tree', style: {width: width + 'px', height: height + 'px'}}, svg);
    for (const n of model.nodes) {
      const p = pos(n);
      for (const c of n.children) {
        const q = pos(c);
        const x1 = p.x + NODE_W;
        const y1 = p.y + NODE_H / 2;
        const x2 = q.x;
        const y2 = q.y + NODE_H / 2;
        const mx = (x1 + x2) / 2;
        svg.append(s('path', {d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, class: 'edge'}));
      }
      canvas.append(treeNode(n, p));
    }
    const notes = [];
    if (st.treeError) notes.push(h('div', {class: 'alert alert-warn', testid: 'tree-unavailable'}, st.treeError));
    mount(body, notes, h('div', {class: 'tree-scroll'}, canvas),
      h('div', {class: 'legend muted small'}, 'Click a resource for its live manifest, diff and events.'));
  }

  function treeNode(n, p) {
    const status = n.info.find((i) => i.name === 'Status')?.value;
    const containers = n.info.find((i) => i.name === 'Containers')?.value;
    const el = h(n.app ? 'div' : 'button', {
      class: 'tree-node' + (n.app ? ' tree-root' : '') + (n.missing ? ' tree-missing' : '') + (st.node && st.node.id === n.id ? ' selected' : ''),
      testid: 'tree-node-' + n.kind + '-' + n.name, dataset: {kind: n.kind, name: n.name, health: n.health?.status || '', sync: n.sync || ''},
      style: {left: p.x + 'px', top: p.y + 'px', width: NODE_W + 'px', height: NODE_H + 'px'},
      title: n.kind + ' ' + (n.namespace ? n.namespace + '/' : '') + n.name,
      onclick: n.app ? undefined : () => openPanel(n),
    },
    kindIcon(n.kind),
    h('div', {class: 'tree-node-text'},
      h('div', {class: 'tree-node-name'}, n.name),
      h('div', {class: 'tree-node-kind'}, n.kind, status ? ' · ' + status : '', containers ? ' · ' + containers : '')),
    h('div', {class: 'tree-node-icons'}, n.health?.status ? healthIcon(n.health.status) : null, n.sync ? syncIcon(n.sync) : null));
    return el;
  }

  // --- resource side panel ----------------------------------------------------
  let panel = null;
  let closePanel = null;
  function openPanel(n) {
    if (closePanel) closePanel(true);
    st.node = n;
    const content = h('div', {class: 'drawer-body', testid: 'panel-content'});
    const ptabs = h('nav', {class: 'tabs'});
    const show = (id) => {
      st.panelTab = id;
      mount(ptabs, [['manifest', 'Live manifest'], ['diff', 'Diff'], ['events', 'Events']].map(([t, label]) =>
        h('button', {class: 'tab' + (t === id ? ' active' : ''), testid: 'panel-tab-' + t, onclick: () => show(t)}, label)));
      if (id === 'manifest') drawManifest(content, n);
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
    // close removes the panel; quiet (another panel opens, the page ends) skips the redraw.
    const close = (quiet) => {
      document.removeEventListener('keydown', onKey);
      if (panel) panel.remove();
      panel = null;
      closePanel = null;
      st.node = null;
      if (quiet !== true) drawTree();
    };
    closePanel = close;
    document.addEventListener('keydown', onKey);
    panel = h('div', {class: 'overlay drawer-overlay', onclick: (e) => e.target === panel && close()},
      h('aside', {class: 'drawer', testid: 'resource-panel', role: 'dialog', 'aria-label': n.kind + ' ' + n.name},
        h('header', {class: 'drawer-head'},
          kindIcon(n.kind),
          h('div', {class: 'drawer-title'}, h('div', {class: 'small muted'}, n.kind + (n.namespace ? ' · ' + n.namespace : '')), h('h2', null, n.name)),
          h('div', {class: 'drawer-status'}, n.health?.status ? healthBadge(n.health.status) : null, ' ', n.sync ? syncBadge(n.sync) : null),
          h('button', {class: 'btn btn-ghost', testid: 'panel-close', 'aria-label': 'Close', onclick: () => close()}, '✕')),
        n.images.length ? h('div', {class: 'drawer-meta small'}, 'Images: ', n.images.map((i) => h('span', {class: 'chip mono'}, i))) : null,
        ptabs, content));
    document.body.append(panel);
    show(st.panelTab);
    drawTree();
  }

  async function drawManifest(el, n) {
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
  async function drawDiff(el, path, node) {
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

  async function drawEvents(el, path, testid) {
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

  // --- history and rollback -------------------------------------------------
  function drawHistory() {
    if (st.tab !== 'history') return;
    const app = st.app;
    const hist = [...(app?.status?.history || [])].reverse();
    const auto = !!app?.spec?.syncPolicy?.automated;
    const sig = 'history:' + JSON.stringify([hist, auto, st.perms.sync, st.deleted]);
    if (sig === bodySig) return;
    bodySig = sig;
    if (hist.length === 0) {
      mount(body, h('div', {class: 'empty', testid: 'history-empty'}, h('h2', null, 'No history yet'), h('p', {class: 'muted'}, 'Each successful sync is recorded here.')));
      return;
    }
    mount(body,
      auto ? h('div', {class: 'alert alert-warn'}, 'Rollback is not allowed while auto-sync is enabled: turn it off first.') : null,
      h('div', {class: 'history', testid: 'history-list'}, hist.map((e, i) => {
        const src = e.source || (e.sources && e.sources[0]) || {};
        return h('div', {class: 'history-entry' + (i === 0 ? ' current' : ''), testid: 'history-entry-' + e.id, dataset: {id: String(e.id), revision: e.revision || ''}},
          h('div', {class: 'history-main'},
            h('div', null, h('span', {class: 'strong'}, 'ID ' + e.id), i === 0 ? h('span', {class: 'chip chip-ok'}, 'current') : null),
            h('div', {class: 'mono', title: e.revision || ''}, 'Revision ' + shortRev(e.revision || (e.revisions || []).join(', '))),
            h('div', {class: 'small muted'}, (src.path ? 'path ' + src.path + ' · ' : '') + 'deployed ' + ago(e.deployedAt) + (e.initiatedBy?.username ? ' by ' + e.initiatedBy.username : ''))),
          st.perms.sync ? h('button', {class: 'btn', testid: 'rollback-' + e.id, disabled: auto || st.deleted, onclick: () => rollback(e)}, 'Rollback') : null);
      })));
  }

  async function rollback(entry) {
    const ok = await confirmDialog('Roll back ' + name + '?',
      'Sync the application to revision ' + shortRev(entry.revision) + ' (history ID ' + entry.id + ').', 'Rollback', 'rollback-dialog');
    if (!ok) return;
    try {
      st.app = await post(base + '/rollback', {id: entry.id, prune: false});
      toast('Rollback to ' + shortRev(entry.revision) + ' started');
      redraw();
    } catch (e) {
      toast(e.message, true);
    }
  }

  // --- operations ---------------------------------------------------------------
  function openSync() {
    const app = st.app;
    const resources = (app.status?.resources || []).filter((r) => !r.hook);
    const revision = h('input', {type: 'text', id: 'sync-revision', testid: 'sync-revision', value: sourceOf(app).targetRevision || 'HEAD'});
    const prune = h('input', {type: 'checkbox', id: 'sync-prune', testid: 'sync-prune'});
    const dryRun = h('input', {type: 'checkbox', id: 'sync-dry-run', testid: 'sync-dry-run'});
    const boxes = resources.map((r) => ({r, box: h('input', {type: 'checkbox', checked: true, testid: 'sync-resource-' + r.kind + '-' + r.name})}));
    const all = h('input', {type: 'checkbox', checked: true, testid: 'sync-all', onchange: (e) => boxes.forEach((b) => (b.box.checked = e.target.checked))});
    modal({
      title: 'Synchronize ' + name, testid: 'sync-dialog', confirm: 'Synchronize', confirmTestid: 'sync-confirm',
      body: [
        h('label', {for: 'sync-revision'}, 'Revision'), revision,
        h('div', {class: 'options'},
          h('label', {class: 'check'}, prune, 'Prune'),
          h('label', {class: 'check'}, dryRun, 'Dry run')),
        h('div', {class: 'sync-resources'},
          h('label', {class: 'check strong'}, all, 'Resources (' + resources.length + ')'),
          boxes.map(({r, box}) => h('label', {class: 'check'}, box, kindIcon(r.kind), ' ', r.kind + ' ' + (r.namespace ? r.namespace + '/' : '') + r.name,
            h('span', {class: 'check-count'}, syncIcon(r.status))))),
      ],
      async onConfirm() {
        const chosen = boxes.filter((b) => b.box.checked).map(({r}) => ({group: r.group || '', kind: r.kind, name: r.name, namespace: r.namespace || ''}));
        if (boxes.length && chosen.length === 0) throw new Error('Select at least one resource.');
        const req = {revision: revision.value.trim(), prune: prune.checked, dryRun: dryRun.checked};
        if (chosen.length !== boxes.length) req.resources = chosen;
        st.app = await post(base + '/sync', req);
        toast(dryRun.checked ? 'Dry run started' : 'Sync started');
        redraw();
      },
    });
  }

  function openDelete() {
    const confirmName = h('input', {type: 'text', id: 'delete-confirm-name', testid: 'delete-confirm-name', autocomplete: 'off'});
    const radio = (value, label, checked, note) => h('label', {class: 'check'}, h('input', {type: 'radio', name: 'propagation', value, checked, testid: 'delete-' + value}), h('span', null, label, h('div', {class: 'small muted'}, note)));
    const dlg = modal({
      title: 'Delete ' + name, testid: 'delete-dialog', confirm: 'Delete', confirmTestid: 'delete-confirm', danger: true,
      body: [
        h('p', null, 'Deleting the application removes it from Skiff.'),
        radio('foreground', 'Foreground (cascade)', true, 'Delete the app\'s resources first, then the app.'),
        radio('background', 'Background (cascade)', false, 'Delete the app now and its resources after.'),
        radio('non-cascading', 'Non-cascading', false, 'Keep the resources in the cluster.'),
        h('label', {for: 'delete-confirm-name'}, 'Type ', h('span', {class: 'strong mono'}, name), ' to confirm'), confirmName,
      ],
      async onConfirm(box) {
        if (confirmName.value !== name) throw new Error('Type the application name to confirm.');
        const policy = box.querySelector('input[name=propagation]:checked')?.value || 'foreground';
        const q = policy === 'non-cascading' ? 'cascade=false' : 'cascade=true&propagationPolicy=' + policy;
        await del(base + '?' + q);
        toast('Deleting ' + name);
        navigate('/applications');
      },
    });
    const btn = dlg.querySelector('[data-testid=delete-confirm]');
    btn.disabled = true;
    confirmName.addEventListener('input', () => (btn.disabled = confirmName.value !== name));
  }

  async function refresh() {
    try {
      st.app = await get(base + '?refresh=normal');
      toast('Refreshing');
      redraw();
      fetchTree();
    } catch (e) {
      toast(e.message, true);
    }
  }

  async function terminate() {
    if (!await confirmDialog('Terminate the operation?', 'The running sync stops; resources already applied stay.', 'Terminate', 'terminate-dialog')) return;
    try {
      await del(base + '/operation');
      toast('Terminating');
    } catch (e) {
      toast(e.message, true);
    }
  }

  // --- data -----------------------------------------------------------------------
  function redraw() {
    drawHeader();
    drawSummary();
    drawTabs();
    if (st.tab === 'tree') drawTree();
    else if (st.tab === 'history') drawHistory();
  }

  async function fetchApp() {
    try {
      st.app = await get(base);
      st.error = null;
    } catch (e) {
      if (e.status === 404 && st.app) st.deleted = true;
      else st.error = e.message;
    }
    redraw();
  }

  async function fetchTree() {
    try {
      st.tree = await get(base + '/resource-tree');
      st.treeError = null;
    } catch (e) {
      st.treeError = missing(e) ? 'The live resource tree is not available on this server: showing the managed resources only.' : e.message;
    }
    if (!st.stopped) drawTree();
  }

  let treeTimer = null;
  function scheduleTree() {
    clearTimeout(treeTimer);
    treeTimer = setTimeout(fetchTree, 400);
  }

  async function loadPerms(app) {
    const obj = enc(app.spec?.project || 'default') + '/' + enc(name);
    const [sync, remove] = await Promise.all([canI('applications', 'sync', obj), canI('applications', 'delete', obj)]);
    st.perms = {sync, delete: remove};
    st.permsLoaded = true;
    redraw();
  }

  redraw();
  fetchApp().then(() => st.app && loadPerms(st.app));
  fetchTree();
  let lastVersion = '';
  const stopWatch = watch('/api/v1/stream/applications?name=' + enc(name), (ev) => {
    const app = ev.application;
    if (app?.metadata?.name !== name) return;
    if (ev.type === 'DELETED') {
      st.deleted = true;
      redraw();
      return;
    }
    st.app = app;
    st.deleted = false;
    redraw();
    if (app.metadata.resourceVersion !== lastVersion) {
      lastVersion = app.metadata.resourceVersion;
      scheduleTree();
    }
  }, async () => {
    await fetchApp();
    await fetchTree();
  }, 3000);
  // Pods change without the app changing: refresh the tree now and then.
  const treePoll = setInterval(() => st.tab === 'tree' && fetchTree(), 10000);
  return () => {
    st.stopped = true;
    stopWatch();
    clearInterval(treePoll);
    clearTimeout(treeTimer);
    if (closePanel) closePanel(true);
  };
}

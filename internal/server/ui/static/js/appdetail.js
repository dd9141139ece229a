// Application page: status, resource tree, diff, events, history, and the
// sync, rollback and delete operations. Live through the app stream. The
// tree, the resource panel, the resource views and the operations' dialogs
// are modules of their own.
import {h, mount, healthBadge, syncBadge, phaseBadge, ago, shortRev} from './dom.js';
import {get, watch, missing, enc} from './api.js';
import {link} from './nav.js';
import {sourceOf, destOf, projectOf, automatedOf} from './appinfo.js';
import {canI, toast} from './ui.js';
import {treeModel, treeCanvas, sameResource} from './apptree.js';
import {openResourcePanel} from './resourcepanel.js';
import {drawDiff, drawEvents} from './resourceviews.js';
import {openSync, openDelete, rollback, terminate, awaitingConfirmation, confirmDeletion} from './appactions.js';

const TABS = [['tree', 'Resources'], ['diff', 'Diff'], ['events', 'Events'], ['history', 'History']];

export function appView(main, [name]) {
  const st = {
    app: null, tree: null, treeError: null, tab: 'tree', node: null, panelTab: 'manifest',
    perms: {sync: false, delete: false, update: false}, permsLoaded: false, stopped: false, deleted: false, error: null,
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
    const waiting = awaitingConfirmation(app);
    const sig = JSON.stringify([!!app, st.deleted, !!running, waiting, st.perms, st.permsLoaded]);
    if (sig === headerSig) return;
    headerSig = sig;
    const actions = h('div', {class: 'topbar-actions', testid: 'app-actions', dataset: {perms: st.permsLoaded ? 'loaded' : 'pending'}},
      st.perms.sync ? h('button', {class: 'btn btn-primary', id: 'app-sync', testid: 'sync-button', disabled: !app || st.deleted, onclick: () => openSync(st.app, name, base, started)}, 'Sync') : null,
      h('button', {class: 'btn', id: 'app-refresh', testid: 'refresh-button', disabled: !app || st.deleted, onclick: refresh}, 'Refresh'),
      h('button', {class: 'btn', id: 'app-history', testid: 'history-button', disabled: !app, onclick: () => selectTab('history')}, 'History and rollback'),
      running && st.perms.sync ? h('button', {class: 'btn btn-warn', testid: 'terminate-button', onclick: () => terminate(base)}, 'Terminate') : null,
      waiting && st.perms.update ? h('button', {class: 'btn btn-warn', testid: 'confirm-deletion-button', dataset: {what: waiting}, onclick: () => confirmDeletion(base, waiting)},
        waiting === 'deletion' ? 'Confirm deletion' : 'Confirm pruning') : null,
      st.perms.delete ? h('button', {class: 'btn btn-danger', id: 'app-delete', testid: 'delete-button', disabled: !app || st.deleted, onclick: () => openDelete(name, base)}, 'Delete') : null);
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
    mount(summary, summaryView(app, st.deleted));
  }

  // --- tabs -------------------------------------------------------------------
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

  // --- resource tree and panel ------------------------------------------------
  function drawTree() {
    if (st.tab !== 'tree') return;
    if (!st.app) {
      mount(body, h('div', {class: 'loading'}, 'Loading…'));
      return;
    }
    const model = treeModel(st.app, st.tree, name);
    // A panel opened on a resource before it was live (the app's status
    // can tell its health before the tree is fetched again) moves to the
    // live object once the tree has it, which offers its actions and logs.
    const live = st.node?.missing && model.nodes.find((n) => !n.missing && !n.app && sameResource(n, st.node));
    if (live) {
      openPanel(live);
      return;
    }
    const sig = 'tree:' + JSON.stringify([st.treeError, st.node?.id, model.nodes.map((n) => [n.id, n.kind, n.name, n.depth, n.row, n.health?.status, n.sync, n.info, !!n.missing])]);
    if (sig === bodySig) return;
    bodySig = sig;
    const notes = [];
    if (st.treeError) notes.push(h('div', {class: 'alert alert-warn', testid: 'tree-unavailable'}, st.treeError));
    mount(body, notes, h('div', {class: 'tree-scroll'}, treeCanvas(model, st.node, openPanel)),
      h('div', {class: 'legend muted small'}, 'Click a resource for its live manifest, diff and events.'));
  }

  let closePanel = null;
  function openPanel(n) {
    if (closePanel) closePanel(true);
    st.node = n;
    closePanel = openResourcePanel(n, base, st.panelTab, (tab) => (st.panelTab = tab), (quiet) => {
      closePanel = null;
      st.node = null;
      if (quiet !== true) drawTree();
    });
    drawTree();
  }

  // --- history and rollback -------------------------------------------------
  function drawHistory() {
    if (st.tab !== 'history') return;
    const app = st.app;
    const hist = [...(app?.status?.history || [])].reverse();
    const auto = !!(app && automatedOf(app));
    const sig = 'history:' + JSON.stringify([hist, auto, st.perms.sync, st.deleted]);
    if (sig === bodySig) return;
    bodySig = sig;
    mount(body, historyView(hist, auto, st.perms.sync, st.deleted, (entry) => rollback(name, base, entry, started)));
  }

  // --- operations ---------------------------------------------------------------
  // started shows an operation the server accepted.
  function started(app, message) {
    st.app = app;
    toast(message);
    redraw();
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
    const obj = enc(projectOf(app)) + '/' + enc(name);
    const [sync, remove, update] = await Promise.all([canI('applications', 'sync', obj), canI('applications', 'delete', obj), canI('applications', 'update', obj)]);
    st.perms = {sync, delete: remove, update};
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

// summaryView shows app's health, sync status, last operation, source and
// destination, and conditions; deleted says the app is gone.
function summaryView(app, deleted) {
  const status = app.status || {};
  const src = sourceOf(app);
  const dest = destOf(app);
  const op = status.operationState;
  const auto = automatedOf(app);
  return [
    deleted ? h('div', {class: 'alert alert-error', testid: 'app-deleted'}, 'This application was deleted.') : null,
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
        h('div', {class: 'small'}, src.chart ? 'chart ' + src.chart : 'path ' + (src.path || '.'), ' · project ', projectOf(app)),
        h('div', {class: 'small'}, dest.cluster, ' / ', dest.namespace || '(none)'))),
    (status.conditions || []).map((c) => h('div', {class: 'alert alert-warn', testid: 'app-condition'}, c.type + ': ' + c.message)),
  ];
}

// historyView lists the deployments in hist, newest first, each with its
// rollback button when canSync; auto-sync or a deleted app disables them.
function historyView(hist, auto, canSync, deleted, onRollback) {
  if (hist.length === 0) {
    return h('div', {class: 'empty', testid: 'history-empty'}, h('h2', null, 'No history yet'), h('p', {class: 'muted'}, 'Each successful sync is recorded here.'));
  }
  return [
    auto ? h('div', {class: 'alert alert-warn'}, 'Rollback is not allowed while auto-sync is enabled: turn it off first.') : null,
    h('div', {class: 'history', testid: 'history-list'}, hist.map((e, i) => {
      const src = e.source || (e.sources && e.sources[0]) || {};
      return h('div', {class: 'history-entry' + (i === 0 ? ' current' : ''), testid: 'history-entry-' + e.id, dataset: {id: String(e.id), revision: e.revision || ''}},
        h('div', {class: 'history-main'},
          h('div', null, h('span', {class: 'strong'}, 'ID ' + e.id), i === 0 ? h('span', {class: 'chip chip-ok'}, 'current') : null),
          h('div', {class: 'mono', title: e.revision || ''}, 'Revision ' + shortRev(e.revision || (e.revisions || []).join(', '))),
          h('div', {class: 'small muted'}, (src.path ? 'path ' + src.path + ' · ' : '') + 'deployed ' + ago(e.deployedAt) + (e.initiatedBy?.username ? ' by ' + e.initiatedBy.username : ''))),
        canSync ? h('button', {class: 'btn', testid: 'rollback-' + e.id, disabled: auto || deleted, onclick: () => onRollback(e)}, 'Rollback') : null);
    })),
  ];
}

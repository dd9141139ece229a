// The application page's operations: sync, rollback, terminate, delete and
// the confirmation of prunes and deletions, each behind its dialog. onStarted(app, message) hears of an operation the
// server accepted, with the application it answered.
import {h, syncIcon, kindIcon, shortRev} from './dom.js';
import {get, post, put, del} from './api.js';
import {navigate} from './nav.js';
import {sourceOf} from './appinfo.js';
import {modal, confirmDialog, toast} from './ui.js';

// openSync asks which revision and resources of app (named name, at base) to sync.
export function openSync(app, name, base, onStarted) {
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
      onStarted(await post(base + '/sync', req), dryRun.checked ? 'Dry run started' : 'Sync started');
    },
  });
}

// rollback asks to sync the application name (at base) to history entry.
export async function rollback(name, base, entry, onStarted) {
  const ok = await confirmDialog('Roll back ' + name + '?',
    'Sync the application to revision ' + shortRev(entry.revision) + ' (history ID ' + entry.id + ').', 'Rollback', 'rollback-dialog');
  if (!ok) return;
  try {
    onStarted(await post(base + '/rollback', {id: entry.id, prune: false}), 'Rollback to ' + shortRev(entry.revision) + ' started');
  } catch (e) {
    toast(e.message, true);
  }
}

// openDelete asks how to delete the application name (at base), and to
// type its name.
export function openDelete(name, base) {
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

// terminate asks to stop the running operation of the application at base.
export async function terminate(base) {
  if (!await confirmDialog('Terminate the operation?', 'The running sync stops; resources already applied stay.', 'Terminate', 'terminate-dialog')) return;
  try {
    await del(base + '/operation');
    toast('Terminating');
  } catch (e) {
    toast(e.message, true);
  }
}

// The annotation `skiff app confirm-deletion` and Argo CD's write.
const deletionApproved = 'argocd.argoproj.io/deletion-approved';

// awaitingConfirmation tells what of app waits for a confirmation: its
// running sync, before a Prune=confirm prune ('pruning'), or its deletion,
// for a Delete=confirm resource ('deletion'); null when nothing does. The
// controller says so in the operation's message and the DeletionError
// condition, in Argo CD's words.
export function awaitingConfirmation(app) {
  const op = app?.status?.operationState;
  if (op?.phase === 'Running' && (op.message || '').startsWith('waiting for pruning confirmation')) return 'pruning';
  const cond = (app?.status?.conditions || []).find((c) => c.type === 'DeletionError');
  if (app?.metadata?.deletionTimestamp && (cond?.message || '').startsWith('waiting for deletion confirmation')) return 'deletion';
  return null;
}

// approvalTime is now in RFC 3339 seconds, but never before what waits (the
// operation's start, the deletion): a browser clock behind the cluster's
// would otherwise approve nothing.
export function approvalTime(app, now = new Date()) {
  const times = [now, app?.status?.operationState?.startedAt, app?.metadata?.deletionTimestamp]
    .filter(Boolean).map((t) => new Date(t).getTime()).filter((t) => !Number.isNaN(t));
  return new Date(Math.ceil(Math.max(...times) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

// confirmDeletion approves what waits for a confirmation of the app at base
// (what: 'pruning' or 'deletion') as `skiff app confirm-deletion` does:
// it writes the deletion-approved annotation by updating the app (RBAC
// applications, update), reading it again when it changed meanwhile.
export async function confirmDeletion(base, what) {
  const text = what === 'deletion'
    ? 'The app\'s resources marked Delete=confirm are deleted with the app.'
    : 'The running sync prunes the resources marked Prune=confirm.';
  if (!await confirmDialog(what === 'deletion' ? 'Confirm deletion?' : 'Confirm pruning?', text, 'Confirm', 'confirm-deletion-dialog', true)) return;
  try {
    for (let attempt = 1; ; attempt++) {
      const app = await get(base);
      app.metadata.annotations = {...(app.metadata.annotations || {}), [deletionApproved]: approvalTime(app)};
      try {
        await put(base, app);
        break;
      } catch (e) {
        if (e.status !== 409 || attempt >= 3) throw e;
      }
    }
    toast(what === 'deletion' ? 'Deletion confirmed' : 'Pruning confirmed');
  } catch (e) {
    toast(e.message, true);
  }
}

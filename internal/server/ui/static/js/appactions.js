// The application page's operations: sync, rollback, terminate and delete,
// each behind its dialog. onStarted(app, message) hears of an operation the
// server accepted, with the application it answered.
import {h, syncIcon, kindIcon, shortRev} from './dom.js';
import {post, del} from './api.js';
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

// A resource's actions (Argo CD's resource actions): the Actions menu of
// the resource panel, each action run behind a confirmation.
import {h, mount} from './dom.js';
import {get, post} from './api.js';
import {modal, toast} from './ui.js';

// actionsMenu is the Actions button of node n of the application at base:
// it lists the actions when opened, disabled ones greyed.
export function actionsMenu(n, base) {
  const q = {group: n.group || '', version: n.version || '', kind: n.kind, namespace: n.namespace || '', resourceName: n.name};
  const menu = h('div', {class: 'menu hidden', testid: 'actions-menu', role: 'menu'});
  const close = () => {
    menu.classList.add('hidden');
    document.removeEventListener('click', onOutside);
  };
  const onOutside = (e) => !wrap.contains(e.target) && close();
  const open = async () => {
    menu.classList.remove('hidden');
    document.addEventListener('click', onOutside);
    mount(menu, h('div', {class: 'menu-note muted'}, 'Loading…'));
    let actions;
    try {
      actions = (await get(base + '/resource/actions?' + new URLSearchParams(q)))?.actions || [];
    } catch (e) {
      mount(menu, h('div', {class: 'menu-note alert-error', testid: 'actions-error'}, e.message));
      return;
    }
    if (actions.length === 0) {
      mount(menu, h('div', {class: 'menu-note muted', testid: 'actions-none'}, 'No actions for ' + n.kind + '.'));
      return;
    }
    mount(menu, actions.map((a) => h('button', {type: 'button', role: 'menuitem', testid: 'action-' + a.name, disabled: a.disabled,
      title: a.disabled ? 'Not available in the resource\'s present state' : '',
      onclick: () => {
        close();
        runAction(n, base, q, a);
      }}, a.displayName || a.name)));
  };
  const button = h('button', {class: 'btn btn-small', type: 'button', testid: 'panel-actions', 'aria-haspopup': 'menu',
    onclick: () => (menu.classList.contains('hidden') ? open() : close())}, 'Actions ▾');
  const wrap = h('div', {class: 'menu-wrap'}, button, menu);
  return wrap;
}

// runAction asks to confirm action a on node n (and for its parameters),
// runs it and keeps the dialog open with the server's error if refused.
function runAction(n, base, q, a) {
  const inputs = (a.params || []).map((p) => ({p, input: h('input', {type: 'text', id: 'action-param-' + p.name,
    testid: 'action-param-' + p.name, value: p.default || ''})}));
  const what = n.kind + ' ' + (n.namespace ? n.namespace + '/' : '') + n.name;
  modal({
    title: (a.displayName || a.name) + ' ' + n.name, testid: 'action-dialog', confirm: 'Run', confirmTestid: 'action-confirm',
    body: [
      h('p', null, 'Run action ', h('span', {class: 'strong mono'}, a.name), ' on ' + what + '?'),
      inputs.map(({p, input}) => [h('label', {for: 'action-param-' + p.name}, p.name), input]),
    ],
    async onConfirm() {
      await post(base + '/resource/actions/v2', {...q, action: a.name,
        resourceActionParameters: inputs.map(({p, input}) => ({name: p.name, value: input.value.trim()}))});
      toast('Ran ' + a.name + ' on ' + what);
    },
  });
}

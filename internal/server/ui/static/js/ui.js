// Shared widgets: modal dialogs, confirmations, toasts and permission checks.
import {h} from './dom.js';
import {get, missing} from './api.js';

// modal opens a dialog; onConfirm(box) may throw to show an error and keep it open.
export function modal({title, body, confirm = 'OK', confirmTestid, testid, danger, onConfirm, onCancel}) {
  const error = h('div', {class: 'alert alert-error hidden', testid: 'dialog-error', role: 'alert'});
  const ok = h('button', {class: 'btn ' + (danger ? 'btn-danger' : 'btn-primary'), testid: confirmTestid || 'dialog-confirm', type: 'submit'}, confirm);
  const close = () => {
    overlay.remove();
    document.removeEventListener('keydown', onKey);
  };
  const cancel = () => {
    close();
    if (onCancel) onCancel();
  };
  const onKey = (e) => e.key === 'Escape' && cancel();
  const box = h('form', {class: 'modal', testid, role: 'dialog', 'aria-modal': 'true', 'aria-label': title,
    onsubmit: async (e) => {
      e.preventDefault();
      error.classList.add('hidden');
      ok.disabled = true;
      try {
        if (onConfirm) await onConfirm(box);
        close();
      } catch (err) {
        error.textContent = err.message || String(err);
        error.classList.remove('hidden');
        ok.disabled = false;
      }
    }},
  h('header', {class: 'modal-head'}, h('h2', null, title),
    h('button', {class: 'btn btn-ghost', type: 'button', 'aria-label': 'Close', testid: 'dialog-close', onclick: cancel}, '✕')),
  h('div', {class: 'modal-body'}, body),
  error,
  h('footer', {class: 'modal-foot'},
    h('button', {class: 'btn', type: 'button', testid: 'dialog-cancel', onclick: cancel}, 'Cancel'), ok));
  const overlay = h('div', {class: 'overlay modal-overlay', onclick: (e) => e.target === overlay && cancel()}, box);
  document.body.append(overlay);
  document.addEventListener('keydown', onKey);
  ok.focus();
  return box;
}

// confirmDialog resolves to true when confirmed.
export function confirmDialog(title, text, confirm, testid, danger) {
  return new Promise((resolve) => {
    modal({title, body: h('p', null, text), confirm, testid, confirmTestid: 'dialog-confirm', danger,
      onConfirm: () => resolve(true), onCancel: () => resolve(false)});
  });
}

let toasts = null;

// toast shows a short message at the bottom of the screen.
export function toast(text, isError) {
  if (!toasts || !toasts.isConnected) {
    toasts = h('div', {class: 'toasts', 'aria-live': 'polite'});
    document.body.append(toasts);
  }
  const t = h('div', {class: 'toast' + (isError ? ' toast-error' : ''), testid: isError ? 'toast-error' : 'toast'}, text);
  toasts.append(t);
  while (toasts.children.length > 3) toasts.firstChild.remove();
  setTimeout(() => t.remove(), isError ? 8000 : 4000);
}

// canI asks the server whether the user may do action (Argo CD's
// /api/v1/account/can-i). Unknown (no such endpoint, error) counts as yes:
// the server still refuses what RBAC forbids.
export async function canI(resource, action, object) {
  try {
    const r = await get('/api/v1/account/can-i/' + resource + '/' + action + '/' + object);
    return r?.value !== 'no';
  } catch (e) {
    if (missing(e)) return true;
    return e.status !== 403;
  }
}

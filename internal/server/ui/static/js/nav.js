// In-app navigation (history API), shared by the views.
import {h} from './dom.js';

let renderHook = () => {};

export function setRenderer(fn) {
  renderHook = fn;
}

// navigate changes the page without a reload.
export function navigate(path, replace) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  renderHook();
}

// link is an anchor that navigates in-app (and still opens in a new tab).
export function link(path, attrs, ...children) {
  return h('a', {
    href: path, ...attrs, onclick: (e) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
      e.preventDefault();
      navigate(path);
    },
  }, ...children);
}

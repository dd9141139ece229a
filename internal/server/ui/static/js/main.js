// Skiff web UI: routing, layout, login and logout.
import {h, mount} from './dom.js';
import {get, post, del, setUnauthorizedHandler, onLiveChange, APIError} from './api.js';
import {appsView} from './apps.js';
import {appView} from './appdetail.js';
import {navigate, link, setRenderer} from './nav.js';
import {rolloutsView, rolloutView} from './rollouts.js';
import {clustersView} from './clusters.js';
import {appSetsView} from './appsets.js';

const root = document.getElementById('root');
let cleanup = null;
let user = null;

// Routes: path pattern → view(container, params, ctx) returning an optional cleanup.
const routes = [
  [/^\/applications\/?$/, appsView],
  [/^\/applications\/([^/]+)\/?$/, appView],
  [/^\/rollouts\/?$/, rolloutsView],
  [/^\/rollouts\/([^/]+)\/([^/]+)\/?$/, rolloutView],
  [/^\/clusters\/?$/, clustersView],
  [/^\/applicationsets\/?$/, appSetsView],
];

function goLogin() {
  user = null;
  if (location.pathname !== '/login') {
    const back = location.pathname + location.search;
    navigate('/login' + (back && back !== '/' ? '?return=' + encodeURIComponent(back) : ''), true);
  }
}

setUnauthorizedHandler(goLogin);

let renderSeq = 0;

async function render() {
  const seq = ++renderSeq;
  if (cleanup) {
    try {
      cleanup();
    } catch {
      // a view's cleanup must not stop navigation
    }
    cleanup = null;
  }
  closeOverlays();
  const path = location.pathname;
  if (path === '/login') {
    renderLogin();
    return;
  }
  if (!user) {
    try {
      user = await get('/api/v1/session/userinfo');
    } catch (e) {
      if (seq !== renderSeq) return; // navigated meanwhile
      if (e instanceof APIError && e.status === 401) goLogin();
      else showFatal(e);
      return;
    }
    if (seq !== renderSeq) return;
    if (!user || !user.loggedIn) {
      goLogin();
      return;
    }
  }
  if (path === '/' || path === '') {
    navigate('/applications', true);
    return;
  }
  const main = h('main', {class: 'content', id: 'content'});
  mount(root, layout(path), main);
  for (const [re, view] of routes) {
    const m = path.match(re);
    if (m) {
      const params = m.slice(1).map(decodeURIComponent);
      cleanup = view(main, params, {user, query: new URLSearchParams(location.search)}) || null;
      return;
    }
  }
  mount(main, h('div', {class: 'empty', testid: 'not-found'}, h('h2', null, 'Page not found'),
    link('/applications', null, 'Go to applications')));
}

function closeOverlays() {
  document.querySelectorAll('.overlay').forEach((el) => el.remove());
}

function showFatal(e) {
  mount(root, h('div', {class: 'empty', testid: 'fatal'}, h('h2', null, 'Skiff is unreachable'), h('p', null, e.message),
    h('button', {class: 'btn', onclick: () => render()}, 'Try again')));
}

// liveIndicator says whether the page follows the server's event stream or polls.
const liveIndicator = h('span', {class: 'live', testid: 'live-indicator', dataset: {state: 'polling'}, title: 'Polling for changes'}, 'Polling');
onLiveChange((live) => {
  liveIndicator.dataset.state = live ? 'live' : 'polling';
  liveIndicator.textContent = live ? 'Live' : 'Polling';
  liveIndicator.title = live ? 'Changes arrive as they happen' : 'The event stream is unavailable: polling for changes';
});

function layout(path) {
  const item = (to, label, abbr, testid) => link(to, {
    class: 'nav-item' + (path === to || path.startsWith(to + '/') ? ' active' : ''), testid,
  }, h('span', {class: 'nav-icon'}, abbr), h('span', {class: 'nav-label'}, label));
  return h('nav', {class: 'sidebar', id: 'sidebar'},
    link('/applications', {class: 'brand'}, h('img', {src: '/logo.svg', alt: '', class: 'brand-logo'}), h('span', {class: 'brand-name'}, 'Skiff')),
    h('div', {class: 'nav-items'},
      item('/applications', 'Applications', 'A', 'nav-applications'),
      item('/applicationsets', 'ApplicationSets', 'S', 'nav-applicationsets'),
      item('/rollouts', 'Rollouts', 'R', 'nav-rollouts'),
      item('/clusters', 'Clusters', 'C', 'nav-clusters')),
    h('div', {class: 'nav-user'},
      liveIndicator,
      h('span', {class: 'nav-username', testid: 'current-user', title: 'Logged in as ' + (user?.username || '')}, user?.username || ''),
      h('button', {class: 'btn btn-ghost btn-small', id: 'logout', testid: 'logout', onclick: logout}, 'Log out')));
}

async function logout() {
  try {
    await del('/api/v1/session');
  } catch {
    // the cookie is dropped either way
  }
  user = null;
  navigate('/login', true);
}

function renderLogin() {
  const error = h('div', {class: 'alert alert-error hidden', id: 'login-error', testid: 'login-error', role: 'alert'});
  const username = h('input', {id: 'login-username', name: 'username', autocomplete: 'username', required: true, autofocus: true});
  const password = h('input', {id: 'login-password', name: 'password', type: 'password', autocomplete: 'current-password', required: true});
  const submit = h('button', {class: 'btn btn-primary btn-block', id: 'login-submit', type: 'submit'}, 'Sign in');
  const form = h('form', {class: 'login-form', id: 'login-form', onsubmit: async (e) => {
    e.preventDefault();
    error.classList.add('hidden');
    submit.disabled = true;
    try {
      await post('/api/v1/session', {username: username.value, password: password.value});
      user = null;
      const back = new URLSearchParams(location.search).get('return');
      navigate(back && back.startsWith('/') && !back.startsWith('//') ? back : '/applications', true);
    } catch (err) {
      error.textContent = err.message || 'Login failed';
      error.classList.remove('hidden');
      submit.disabled = false;
      password.select();
    }
  }},
  h('label', {for: 'login-username'}, 'Username'), username,
  h('label', {for: 'login-password'}, 'Password'), password,
  error, submit);
  const sso = h('div', {class: 'login-sso hidden', testid: 'login-sso'});
  mount(root, h('div', {class: 'login-page', testid: 'login-page'},
    h('div', {class: 'login-card'},
      h('div', {class: 'login-brand'}, h('img', {src: '/logo.svg', alt: '', class: 'login-logo'}), h('h1', null, 'Skiff')),
      h('p', {class: 'muted'}, 'GitOps continuous delivery and progressive delivery'),
      sso, form)));
  username.focus();
  showSSO(sso);
}

// showSSO adds "Log in via <provider>" when argocd-cm configures SSO.
async function showSSO(container) {
  let settings;
  try {
    settings = await get('/api/v1/settings');
  } catch {
    return; // local login still works
  }
  const oidc = settings && settings.oidcConfig;
  if (!oidc || !container.isConnected) return;
  const back = new URLSearchParams(location.search).get('return');
  const ret = back && back.startsWith('/') && !back.startsWith('//') ? back : '/applications';
  mount(container, h('a', {class: 'btn btn-primary btn-block', id: 'login-sso-link', testid: 'login-sso-link',
    href: '/auth/login?return_url=' + encodeURIComponent(ret)}, 'Log in via ' + (oidc.name || 'SSO')),
  h('p', {class: 'muted login-or'}, 'or with a local account'));
  container.classList.remove('hidden');
}

setRenderer(render);
window.addEventListener('popstate', render);
render();

// Rollouts: list and a rollout's page (steps, weights, revisions, analysis
// and the promote/abort/retry/pause/restart actions RBAC allows).
import {h, mount, healthBadge, phaseBadge, kindIcon, ago} from './dom.js';
import {get, post, watch, enc} from './api.js';
import {link} from './nav.js';
import {confirmDialog, toast} from './ui.js';

const REVISION = 'rollout.argoproj.io/revision';

function strategyOf(ro) {
  const st = ro.spec?.strategy || {};
  if (st.blueGreen) return 'BlueGreen';
  return 'Canary';
}

function phaseOf(ro) {
  return ro.status?.phase || (ro.status?.pauseConditions?.length ? 'Paused' : 'Progressing');
}

function imagesOf(ro) {
  return (ro.spec?.template?.spec?.containers || []).map((c) => c.image);
}

function stepsOf(ro) {
  return ro.spec?.strategy?.canary?.steps || [];
}

// currentWeight is the canary's traffic weight: the status's, else the last
// setWeight reached.
function currentWeight(ro) {
  const w = ro.status?.canary?.weights;
  if (w?.canary) return {canary: w.canary.weight || 0, stable: w.stable?.weight ?? 100 - (w.canary.weight || 0)};
  const steps = stepsOf(ro);
  const idx = ro.status?.currentStepIndex ?? steps.length;
  if (idx >= steps.length) return {canary: 0, stable: 100, done: true}; // complete: the new revision is stable
  let weight = 0;
  for (let i = 0; i < Math.min(idx + 1, steps.length); i++) {
    if (steps[i].setWeight !== undefined) weight = steps[i].setWeight;
  }
  return {canary: weight, stable: 100 - weight};
}

function stepText(step) {
  if (step.setWeight !== undefined) return 'Set weight ' + step.setWeight + '%';
  if (step.pause) return step.pause.duration !== undefined ? 'Pause ' + step.pause.duration + (/^\d+$/.test(String(step.pause.duration)) ? 's' : '') : 'Pause (until promoted)';
  if (step.analysis) return 'Analysis ' + (step.analysis.templates || []).map((t) => t.templateName).join(', ');
  if (step.setCanaryScale) return 'Set canary scale ' + (step.setCanaryScale.weight !== undefined ? step.setCanaryScale.weight + '%' : step.setCanaryScale.replicas !== undefined ? step.setCanaryScale.replicas + ' replicas' : 'to match traffic');
  if (step.experiment) return 'Experiment';
  if (step.setHeaderRoute) return 'Set header route';
  if (step.setMirrorRoute) return 'Set mirror route';
  return Object.keys(step)[0] || 'Step';
}

function rolloutTile(ro) {
  const name = ro.metadata.name;
  const ns = ro.metadata.namespace;
  const steps = stepsOf(ro);
  const idx = ro.status?.currentStepIndex;
  const row = (k, ...v) => h('div', {class: 'tile-row'}, h('span', {class: 'tile-key'}, k), h('span', {class: 'tile-val'}, ...v));
  return link('/rollouts/' + enc(ns) + '/' + enc(name), {class: 'tile health-' + phaseOf(ro).toLowerCase(), testid: 'rollout-tile-' + name, dataset: {name, namespace: ns}},
    h('div', {class: 'tile-head'}, kindIcon('Rollout'), h('span', {class: 'tile-name'}, name)),
    row('Namespace', ns),
    row('Status', healthBadge(phaseOf(ro), 'rollout-phase')),
    row('Strategy', strategyOf(ro)),
    steps.length ? row('Step', (idx ?? steps.length) + '/' + steps.length) : null,
    row('Ready', (ro.status?.readyReplicas || 0) + '/' + (ro.spec?.replicas ?? 1)),
    row('Images', imagesOf(ro).map((i) => h('span', {class: 'chip mono'}, i))));
}

export function rolloutsView(main) {
  const items = new Map();
  let loaded = false;
  let error = null;
  const results = h('div', {class: 'results'});
  const count = h('span', {class: 'count', testid: 'rollout-count'});
  const search = h('input', {type: 'search', class: 'search', placeholder: 'Search rollouts…', testid: 'rollout-search', 'aria-label': 'Search rollouts', oninput: () => draw()});
  mount(main, h('header', {class: 'topbar'}, h('div', {class: 'topbar-title'}, h('h1', null, 'Rollouts'), count), h('div', {class: 'topbar-actions'}, search)), results);
  const key = (ro) => ro.metadata.namespace + '/' + ro.metadata.name;

  function draw() {
    const q = search.value.toLowerCase();
    const list = [...items.values()].sort((a, b) => key(a).localeCompare(key(b)));
    const shown = list.filter((ro) => !q || key(ro).toLowerCase().includes(q) || imagesOf(ro).join(' ').includes(q));
    count.textContent = loaded ? String(shown.length) : '';
    if (!loaded) {
      mount(results, error ? h('div', {class: 'alert alert-error', testid: 'rollouts-error'}, error) : h('div', {class: 'loading'}, 'Loading…'));
      return;
    }
    if (shown.length === 0) {
      mount(results, h('div', {class: 'empty', testid: 'rollouts-empty'}, h('h2', null, list.length ? 'No rollouts match' : 'No rollouts')));
      return;
    }
    mount(results, h('div', {class: 'tiles', testid: 'rollout-tiles'}, shown.map(rolloutTile)));
  }

  async function fetchAll() {
    try {
      const data = await get('/api/v1/rollouts');
      items.clear();
      for (const ro of data?.items || []) items.set(key(ro), ro);
      loaded = true;
      error = null;
    } catch (e) {
      error = e.message;
    }
    draw();
  }
  draw();
  fetchAll();
  return watch('/api/v1/stream/rollouts', (ev) => {
    const ro = ev.rollout;
    if (!ro?.metadata) return;
    if (ev.type === 'DELETED') items.delete(key(ro));
    else items.set(key(ro), ro);
    loaded = true;
    draw();
  }, fetchAll, 5000);
}

const ACTIONS = [
  ['promote', 'Promote', 'btn-primary', 'Go to the next step (or skip the current pause).'],
  ['promote-full', 'Promote full', '', 'Skip every remaining step and analysis: the new revision takes all traffic.'],
  ['abort', 'Abort', 'btn-danger', 'Go back to the stable revision.'],
  ['retry', 'Retry', '', 'Start the aborted update again.'],
  ['pause', 'Pause', '', 'Pause the rollout where it is.'],
  ['restart', 'Restart', '', 'Restart the pods, one at a time.'],
];

export function rolloutView(main, [ns, name]) {
  const base = '/api/v1/rollouts/' + enc(ns) + '/' + enc(name);
  let data = null;
  let error = null;
  let busy = false;
  const header = h('header', {class: 'topbar'});
  const content = h('div', {class: 'rollout-page'});
  mount(main, header, content);

  // Signatures of the header and the content: a poll that changed nothing
  // redraws nothing, and the buttons are redrawn only when they change.
  let headerSig = '';
  let contentSig = '';

  function draw() {
    const ro = data?.rollout;
    const actions = data?.actions || {};
    const status = ro?.status || {};
    const aborted = !!status.abort;
    const paused = !!(ro?.spec?.paused || status.pauseConditions?.length || status.controllerPause);
    const settled = phaseOf(ro || {}) === 'Healthy' && !paused;
    const applicable = {promote: !aborted && !settled, 'promote-full': !aborted && !settled, abort: !aborted && phaseOf(ro || {}) !== 'Healthy', retry: aborted, pause: !paused && !aborted, restart: true};
    const hsig = JSON.stringify([!!ro, actions, applicable, busy]);
    const csig = JSON.stringify([data, error]);
    if (hsig !== headerSig) {
      headerSig = hsig;
      drawHeader(ro, actions, applicable);
    }
    if (csig === contentSig) return;
    contentSig = csig;
    drawContent(ro, status, aborted);
  }

  function drawHeader(ro, actions, applicable) {
    mount(header,
      h('div', {class: 'topbar-title'},
        h('div', {class: 'crumbs'}, link('/rollouts', null, 'Rollouts'), h('span', null, ' / ' + ns + ' / ')),
        h('h1', {testid: 'rollout-name'}, name)),
      h('div', {class: 'topbar-actions', testid: 'rollout-actions'}, ro ? ACTIONS.filter(([a]) => actions[a]).map(([a, label, cls, help]) =>
        h('button', {class: 'btn ' + cls, testid: 'rollout-' + a, id: 'rollout-' + a, title: help, disabled: busy || !applicable[a],
          onclick: () => act(a, label, help)}, label)) : null));
  }

  function drawContent(ro, status, aborted) {
    if (!ro) {
      mount(content, error ? h('div', {class: 'alert alert-error', testid: 'rollout-error'}, error) : h('div', {class: 'loading'}, 'Loading…'));
      return;
    }
    const steps = stepsOf(ro);
    const idx = status.currentStepIndex ?? (steps.length ? 0 : undefined);
    const weight = currentWeight(ro);
    const desired = ro.spec?.replicas ?? 1;
    mount(content,
      h('div', {class: 'cards'},
        h('div', {class: 'card'}, h('div', {class: 'card-label'}, 'Status'), healthBadge(phaseOf(ro), 'rollout-phase'),
          status.message ? h('div', {class: 'card-note', testid: 'rollout-message'}, status.message) : null,
          aborted ? h('div', {class: 'card-note status-degraded'}, 'Aborted') : null),
        h('div', {class: 'card'}, h('div', {class: 'card-label'}, 'Strategy'), h('div', {class: 'strong', testid: 'rollout-strategy'}, strategyOf(ro)),
          steps.length ? h('div', {class: 'card-note', testid: 'rollout-step'}, 'Step ' + Math.min((idx ?? steps.length), steps.length) + ' of ' + steps.length) : null,
          data.application ? h('div', {class: 'card-note'}, 'Managed by ', link('/applications/' + enc(data.application), null, data.application)) : null),
        strategyOf(ro) === 'Canary' ? h('div', {class: 'card'}, h('div', {class: 'card-label'}, 'Traffic'),
          h('div', {class: 'weights', testid: 'rollout-weights', dataset: {canary: String(weight.canary)}},
            h('div', {class: 'weight-bar'}, h('div', {class: 'weight-canary', style: {width: weight.canary + '%'}}), h('div', {class: 'weight-stable', style: {width: (100 - weight.canary) + '%'}})),
            h('div', {class: 'small'}, 'canary ' + weight.canary + '% · stable ' + (100 - weight.canary) + '%'))) : h('div', {class: 'card'}, h('div', {class: 'card-label'}, 'Services'),
          h('div', {class: 'small'}, 'active ', h('span', {class: 'mono'}, ro.spec.strategy.blueGreen.activeService || '')),
          ro.spec.strategy.blueGreen.previewService ? h('div', {class: 'small'}, 'preview ', h('span', {class: 'mono'}, ro.spec.strategy.blueGreen.previewService)) : null),
        h('div', {class: 'card'}, h('div', {class: 'card-label'}, 'Replicas'),
          h('div', {class: 'strong', testid: 'rollout-replicas'}, (status.readyReplicas || 0) + '/' + desired + ' ready'),
          h('div', {class: 'card-note'}, (status.updatedReplicas || 0) + ' updated · ' + (status.availableReplicas || 0) + ' available')),
        h('div', {class: 'card card-wide'}, h('div', {class: 'card-label'}, 'Images'), imagesOf(ro).map((i) => h('div', {class: 'mono small'}, i)))),
      (status.pauseConditions || []).length ? h('div', {class: 'alert alert-info', testid: 'rollout-paused'}, 'Paused: ' + status.pauseConditions.map((p) => p.reason + ' since ' + ago(p.startTime)).join(', ')) : null,
      h('div', {class: 'rollout-grid'},
        steps.length ? h('section', {class: 'panel'}, h('h2', null, 'Steps'),
          h('ol', {class: 'steps', testid: 'rollout-steps'}, steps.map((step, i) => {
            const state = idx === undefined || i < idx ? 'done' : i === idx ? 'current' : 'pending';
            return h('li', {class: 'step step-' + state, testid: 'rollout-step-' + i, dataset: {state}}, h('span', {class: 'step-dot'}), stepText(step));
          }), h('li', {class: 'step ' + (idx !== undefined && idx >= steps.length ? 'step-done' : 'step-pending')}, h('span', {class: 'step-dot'}), 'Complete'))) : null,
        h('section', {class: 'panel'}, h('h2', null, 'Revisions'), revisions(ro, data)),
        h('section', {class: 'panel'}, h('h2', null, 'Analysis runs'), analysisRuns(data))));
  }

  async function act(action, label, help) {
    if (['abort', 'promote-full', 'restart'].includes(action)) {
      if (!await confirmDialog(label + ' ' + name + '?', help, label, 'rollout-action-dialog', action === 'abort')) return;
    }
    busy = true;
    draw();
    try {
      await post(base + '/' + action, {});
      toast(label + ': done');
    } catch (e) {
      toast(e.message, true);
    }
    busy = false;
    await fetchOne();
  }

  async function fetchOne() {
    try {
      data = await get(base);
      error = null;
    } catch (e) {
      error = e.message;
      if (e.status === 404) data = null;
    }
    draw();
  }

  let timer = null;
  draw();
  fetchOne();
  const stop = watch('/api/v1/stream/rollouts?namespace=' + enc(ns) + '&name=' + enc(name), () => {
    clearTimeout(timer);
    timer = setTimeout(fetchOne, 300);
  }, fetchOne, 3000);
  // Pods and ReplicaSets change without the Rollout changing.
  const podPoll = setInterval(fetchOne, 5000);
  return () => {
    stop();
    clearInterval(podPoll);
    clearTimeout(timer);
  };
}

// revisions lists the ReplicaSets of rollout ro in data, newest first,
// with their pods.
function revisions(ro, data) {
  const rss = [...(data.replicaSets || [])].sort((a, b) => Number(b.metadata.annotations?.[REVISION] || 0) - Number(a.metadata.annotations?.[REVISION] || 0));
  if (rss.length === 0) return h('div', {class: 'muted'}, 'No ReplicaSets yet.');
  const status = ro.status || {};
  return h('div', {class: 'revisions', testid: 'rollout-revisions'}, rss.map((rs) => {
    const hash = rs.metadata.labels?.['rollouts-pod-template-hash'] || '';
    const tags = [];
    if (hash && hash === status.stableRS) tags.push('stable');
    if (hash && hash === status.currentPodHash && hash !== status.stableRS) tags.push(strategyOf(ro) === 'BlueGreen' ? 'preview' : 'canary');
    if (hash && status.blueGreen?.activeSelector === hash) tags.push('active');
    const pods = data.pods?.[rs.metadata.uid] || [];
    const rev = rs.metadata.annotations?.[REVISION] || '?';
    return h('div', {class: 'revision', testid: 'revision-' + rev, dataset: {revision: rev}},
      h('div', {class: 'revision-head'}, h('span', {class: 'strong'}, 'Revision ' + rev), tags.map((t) => h('span', {class: 'chip chip-' + t}, t))),
      h('div', {class: 'mono small'}, (rs.spec?.template?.spec?.containers || []).map((c) => c.image).join(', ')),
      h('div', {class: 'small muted'}, rs.metadata.name + ' · ' + (rs.status?.readyReplicas || 0) + '/' + (rs.spec?.replicas ?? 0) + ' ready'),
      h('div', {class: 'pods'}, pods.length ? pods.map(podDot) : h('span', {class: 'small muted'}, 'no pods')));
  }));
}

// podDot is a pod as a dot coloured by its state.
function podDot(pod) {
  const ready = (pod.status?.conditions || []).some((c) => c.type === 'Ready' && c.status === 'True');
  const phase = pod.metadata.deletionTimestamp ? 'Terminating' : pod.status?.phase || 'Pending';
  const cls = phase === 'Terminating' ? 'terminating' : ready ? 'ready' : phase === 'Failed' ? 'failed' : 'pending';
  return h('span', {class: 'pod-dot pod-' + cls, title: pod.metadata.name + ': ' + phase + (ready ? ', ready' : ''), testid: 'pod-dot', dataset: {state: cls}});
}

// analysisRuns lists the analysis runs in data, newest first.
function analysisRuns(data) {
  const runs = [...(data.analysisRuns || [])].sort((a, b) => (b.metadata.creationTimestamp || '').localeCompare(a.metadata.creationTimestamp || ''));
  if (runs.length === 0) return h('div', {class: 'muted', testid: 'analysis-none'}, 'No analysis runs.');
  return h('div', {class: 'analysis', testid: 'analysis-runs'}, runs.map((run) => h('div', {class: 'analysis-run', testid: 'analysis-' + run.metadata.name},
    h('div', {class: 'revision-head'}, h('span', {class: 'strong'}, run.metadata.name), phaseBadge(run.status?.phase || 'Pending')),
    run.status?.message ? h('div', {class: 'small'}, run.status.message) : null,
    (run.status?.metricResults || []).map((m) => h('div', {class: 'small'}, m.name + ': ', phaseBadge(m.phase),
      ' ' + (m.successful || 0) + ' ok, ' + (m.failed || 0) + ' failed' + (m.inconclusive ? ', ' + m.inconclusive + ' inconclusive' : '') + (m.error ? ', ' + m.error + ' errors' : ''))),
    h('div', {class: 'small muted'}, 'started ' + ago(run.metadata.creationTimestamp)))));
}

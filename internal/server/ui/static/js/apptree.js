// An application's resource tree: the model (managed resources and live
// objects, placed in columns by depth) and its drawing.
import {h, s, healthIcon, syncIcon, kindIcon} from './dom.js';

const NODE_W = 230;
const NODE_H = 56;
const COL_GAP = 64;
const ROW_GAP = 14;
const KIND_ORDER = ['Namespace', 'ServiceAccount', 'ConfigMap', 'Secret', 'Service', 'Deployment', 'StatefulSet', 'DaemonSet',
  'Rollout', 'ReplicaSet', 'Job', 'CronJob', 'Pod', 'Ingress', 'EndpointSlice'];

const resKey = (r) => [r.group || '', r.kind, r.namespace || '', r.name].join('/');

// sameResource tells whether two nodes or resources name the same object.
export const sameResource = (a, b) => resKey(a) === resKey(b);

// treeModel places app (named name) and the live objects of its resource
// tree in columns by depth and rows.
export function treeModel(app, tree, name) {
  const managed = app?.status?.resources || [];
  const statusByKey = new Map(managed.map((r) => [resKey(r), r]));
  const live = tree?.nodes || [];
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

// treeCanvas draws model: a node per resource, edges from parents to
// children; selected is the node whose panel is open, onOpen opens one.
export function treeCanvas(model, selected, onOpen) {
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
    canvas.append(treeNode(n, p, selected, onOpen));
  }
  return canvas;
}

function treeNode(n, p, selected, onOpen) {
  const status = n.info.find((i) => i.name === 'Status')?.value;
  const containers = n.info.find((i) => i.name === 'Containers')?.value;
  const el = h(n.app ? 'div' : 'button', {
    class: 'tree-node' + (n.app ? ' tree-root' : '') + (n.missing ? ' tree-missing' : '') + (selected && selected.id === n.id ? ' selected' : ''),
    testid: 'tree-node-' + n.kind + '-' + n.name, dataset: {kind: n.kind, name: n.name, health: n.health?.status || '', sync: n.sync || ''},
    style: {left: p.x + 'px', top: p.y + 'px', width: NODE_W + 'px', height: NODE_H + 'px'},
    title: n.kind + ' ' + (n.namespace ? n.namespace + '/' : '') + n.name,
    onclick: n.app ? undefined : () => onOpen(n),
  },
  kindIcon(n.kind),
  h('div', {class: 'tree-node-text'},
    h('div', {class: 'tree-node-name'}, n.name),
    h('div', {class: 'tree-node-kind'}, n.kind, status ? ' · ' + status : '', containers ? ' · ' + containers : '')),
  h('div', {class: 'tree-node-icons'}, n.health?.status ? healthIcon(n.health.status) : null, n.sync ? syncIcon(n.sync) : null));
  return el;
}

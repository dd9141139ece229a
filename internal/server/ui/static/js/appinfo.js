// What the pages read from an Application: its source, destination, sync
// status and health, its project and whether auto-sync is on (the API's
// ProjectName and IsAutomated).

export function sourceOf(app) {
  const spec = app.spec || {};
  return spec.source || (spec.sources && spec.sources[0]) || {};
}

export function destOf(app) {
  const d = (app.spec && app.spec.destination) || {};
  const local = !d.name && (!d.server || d.server === 'https://kubernetes.default.svc');
  return {cluster: local ? 'in-cluster' : d.name || d.server, namespace: d.namespace || ''};
}

export const syncOf = (app) => app.status?.sync?.status || 'Unknown';
export const healthOf = (app) => app.status?.health?.status || 'Unknown';

export const projectOf = (app) => app.spec?.project || 'default';

// automatedOf is spec.syncPolicy.automated when auto-sync is on, else null:
// `enabled: false` turns it off.
export function automatedOf(app) {
  const auto = app.spec?.syncPolicy?.automated;
  return auto && auto.enabled !== false ? auto : null;
}

// API client: JSON over fetch with the session cookie, and live streams
// (server-sent events) that fall back to polling when unavailable.

export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let onUnauthorized = () => {};

// setUnauthorizedHandler sets what a 401 from any call does (back to login).
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

// request calls the API; it throws APIError with the server's message.
export async function request(method, path, body) {
  const init = {method, credentials: 'same-origin', headers: {Accept: 'application/json'}};
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    throw new APIError(0, 'cannot reach the server: ' + e.message);
  }
  const text = await resp.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!resp.ok) {
    const msg = (data && (data.error || data.message)) || resp.statusText || ('HTTP ' + resp.status);
    if (resp.status === 401 && !path.startsWith('/api/v1/session')) onUnauthorized();
    throw new APIError(resp.status, msg);
  }
  return data;
}

export const get = (path) => request('GET', path);
export const post = (path, body) => request('POST', path, body === undefined ? {} : body);
export const put = (path, body) => request('PUT', path, body);
export const del = (path) => request('DELETE', path);

// missing reports whether an error means "this endpoint does not exist
// (yet)": the UI then shows "not available" instead of failing.
export function missing(err) {
  if (!(err instanceof APIError)) return false;
  if (err.status === 404) return err.message === 'no such API endpoint' || err.message === 'Not Found' || err.message === '404 page not found';
  return err.status === 405 || err.status === 501;
}

const enc = encodeURIComponent;
export {enc};

let liveListener = () => {};

// onLiveChange sets what hears whether the current view's stream is open
// (true) or the view is polling (false).
export function onLiveChange(fn) {
  liveListener = fn;
}

// polling tells the live indicator that the current view has no stream
// and polls.
export function polling() {
  liveListener(false);
}

// watch keeps a view live: it opens an EventSource on streamPath and calls
// onEvent(result) for each change; while the stream is not open it calls
// poll() every pollMs instead. It returns a function that stops both.
export function watch(streamPath, onEvent, poll, pollMs = 5000) {
  let es = null;
  let open = false;
  let stopped = false;
  let retries = 0;
  let opens = 0;
  let timer = null;

  const connect = () => {
    if (stopped || typeof EventSource === 'undefined') return;
    es = new EventSource(streamPath, {withCredentials: true});
    es.onopen = () => {
      open = true;
      liveListener(true);
      retries = 0;
      // After a reconnect, fetch the whole state once: a deletion while
      // disconnected sends no event.
      if (opens++ > 0 && poll) poll().catch(() => {});
    };
    es.onmessage = (ev) => {
      try {
        const msg = JSON.parse(ev.data);
        if (msg && msg.result) onEvent(msg.result);
      } catch {
        // a malformed event is skipped; the next poll or event corrects the view
      }
    };
    es.onerror = () => {
      open = false;
      liveListener(false);
      if (es.readyState === EventSource.CLOSED) {
        // Not a stream (404, 401...): retry now and then, poll meanwhile.
        es.close();
        es = null;
        retries++;
        if (!stopped && retries < 20) setTimeout(connect, Math.min(60000, 5000 * retries));
      }
    };
  };

  const tick = async () => {
    if (stopped) return;
    if (!open && poll) {
      try {
        await poll();
      } catch {
        // errors are shown by the view's own fetch
      }
    }
    if (!stopped) timer = setTimeout(tick, pollMs);
  };

  liveListener(false);
  connect();
  timer = setTimeout(tick, pollMs);
  return () => {
    stopped = true;
    if (es) es.close();
    clearTimeout(timer);
  };
}

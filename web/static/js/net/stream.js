// stream.js: the websocket to /api/v1/stream. It feeds every message to the
// store, shows the connection's state in the store, and reconnects with
// ?since=<last seq applied> so that it resumes where it stopped: the server
// then sends only the events missed, or a resync and a fresh snapshot when
// its history no longer reaches back that far. No DOM: the WebSocket
// constructor and the timers are injectable for tests.

/** Delay before reconnect attempt n (1, 2, ...): 0.5 s doubling to 8 s. */
export function backoffDelay(attempt) {
  return Math.min(8000, 500 * 2 ** Math.max(0, attempt - 1));
}

/** The stream's URL for a page at location, resuming after since, with only kinds (all when null). */
export function streamURL(location, since, kinds = null) {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const params = [];
  if (since > 0) params.push(`since=${since}`);
  if (kinds) params.push(`kinds=${kinds.join(',')}`);
  return `${proto}//${location.host}/api/v1/stream${params.length ? `?${params.join('&')}` : ''}`;
}

export function connectStream({
  store,
  location = globalThis.location,
  WebSocketImpl = globalThis.WebSocket,
  setTimer = (fn, ms) => setTimeout(fn, ms),
  clearTimer = (id) => clearTimeout(id),
  now = () => Date.now(),
  // defer(fn) runs fn a little later (the page passes a timer of some
  // 50 ms). With it, messages are parsed as they come but applied together:
  // the views render once for all the messages of a burst, not once per
  // message (a busy scheduler sends dozens a second). A flush that holds
  // many applies them budgetMs at a time and lets the page paint between.
  // Without defer (tests), each message is applied as it comes.
  defer = null,
  budgetMs = 12,
  // The events waiting to be applied at most (the server's own stream
  // buffer is 50,000 by default): a page that falls further behind drops
  // them and starts again from a fresh snapshot, as the server would.
  maxPending = 50_000,
  clock = () => (globalThis.performance ? globalThis.performance.now() : Date.now()),
}) {
  let ws = null;
  let attempt = 0;
  let timer = null;
  let stopped = false;
  // Messages parsed and not applied yet, oldest first, and whether a flush
  // is scheduled.
  let pending = [];
  let pendingEvents = 0;
  let flushing = false;
  // Set when the pending messages were dropped: the next connection asks for a snapshot.
  let fresh = false;
  // The kinds of event asked for; null: all.
  let kinds = null;

  /** Applies the pending messages, budgetMs worth at a time. */
  function flush(all = false) {
    flushing = false;
    if (!pending.length) return;
    const start = clock();
    let n = 0;
    store.inBatch(() => {
      while (n < pending.length) {
        store.applyMessage(pending[n]);
        n += 1;
        if (!all && clock() - start > budgetMs) break;
      }
    });
    pending = n >= pending.length ? [] : pending.slice(n);
    pendingEvents = pending.reduce((a, m) => a + (m.events?.length || 0), 0);
    if (pending.length) schedule();
  }

  function schedule() {
    if (flushing) return;
    flushing = true;
    defer(() => flush());
  }

  function receive(msg) {
    if (!defer) {
      store.applyMessage(msg);
      return;
    }
    pending.push(msg);
    pendingEvents += msg?.events?.length || 0;
    if (pendingEvents > maxPending) {
      pending = [];
      pendingEvents = 0;
      fresh = true;
      store.addNotice('info', `The page fell ${maxPending} events behind the stream; it starts again from a fresh snapshot.`);
      restart();
      return;
    }
    schedule();
  }

  function open() {
    timer = null;
    if (stopped) return;
    // Resume only once a snapshot has been applied: before it there is no
    // state to resume.
    const since = store.server.snapshots.peek() > 0 && !fresh ? store.server.seq.peek() : 0;
    fresh = false;
    store.setConnection({ status: attempt === 0 ? 'connecting' : 'reconnecting', since: since || null, retryAt: null });
    let sock;
    try {
      sock = new WebSocketImpl(streamURL(location, since, kinds));
      sock.kinds = kinds;
    } catch (err) {
      scheduleRetry(`could not open the stream: ${err.message}`);
      return;
    }
    ws = sock;
    sock.onopen = () => {
      if (ws !== sock) return;
      attempt = 0;
      // The URL's filter holds from the connection's first event; one asked
      // for since it was opened goes as a message.
      if (String(sock.kinds) === String(kinds)) store.setStreamKinds(kinds, true);
      else sendKinds();
      store.setConnection({ status: 'open', attempt: 0, error: '', retryAt: null });
    };
    sock.onmessage = (ev) => {
      if (ws !== sock) return;
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        store.addNotice('error', 'The stream sent a message that is not JSON; it was skipped.');
        return;
      }
      receive(msg);
    };
    sock.onerror = () => {
      // onclose follows and carries the reason.
    };
    sock.onclose = (ev) => {
      if (ws !== sock) return;
      ws = null;
      // What came before the close counts: the next connection resumes after it.
      flush(true);
      if (stopped) {
        store.setConnection({ status: 'closed', retryAt: null });
        return;
      }
      const why = ev?.reason ? `the server closed the stream: ${ev.reason}` : ev?.code && ev.code !== 1006 ? `the stream closed (code ${ev.code})` : 'the connection was lost';
      scheduleRetry(why);
    };
  }

  /** Asks the open connection for the current kinds; the server's answer says it applies them. */
  function sendKinds() {
    store.setStreamKinds(kinds, false);
    ws.send(JSON.stringify(kinds ? { type: 'filter', kinds } : { type: 'filter' }));
  }

  /** Closes the socket and opens another at once (no back-off). */
  function restart() {
    const s = ws;
    ws = null;
    s?.close();
    if (!stopped) open();
  }

  function scheduleRetry(error) {
    attempt += 1;
    const delay = backoffDelay(attempt);
    store.setConnection({ status: 'reconnecting', attempt, error, retryAt: now() + delay });
    timer = setTimer(open, delay);
  }

  open();

  return {
    /** Closes the stream for good. */
    close() {
      stopped = true;
      if (timer != null) clearTimer(timer);
      timer = null;
      if (ws) {
        const s = ws;
        ws = null;
        s.close();
      }
      store.setConnection({ status: 'closed', retryAt: null });
    },
    /** Reconnects now instead of waiting for the next try. */
    retryNow() {
      if (stopped || ws) return;
      if (timer != null) clearTimer(timer);
      open();
    },
    /** Drops the connection (as a network failure would) and reconnects. */
    drop() {
      if (ws) {
        const s = ws;
        s.close();
        s.onclose?.({ code: 1006, reason: '' });
      }
    },
    /**
     * Asks for only these kinds of event from now on (null: all): on the
     * open connection with a filter message (the server answers it, and
     * the store then knows it applies), and in the URL of the next.
     */
    setKinds(next) {
      if (String(next) === String(kinds)) return;
      kinds = next;
      if (ws && ws.readyState === 1) sendKinds();
      // A connection under way sends it once open; the next one has it in its URL.
      else store.setStreamKinds(kinds, false);
    },
    get socket() { return ws; },
  };
}

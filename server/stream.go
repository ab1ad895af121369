package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"minisched/event"
	"minisched/history"
)

const (
	// pingPeriod keeps idle connections (and proxies) alive; a client that
	// answers no ping for pongWait is gone.
	pingPeriod = 25 * time.Second
	pongWait   = 60 * time.Second
	// batchSize is how many events one message carries at most.
	batchSize = 256
	// maxClientMessage bounds what a client may send.
	maxClientMessage = 4096
	// linger gathers the events of a burst into one message: woken by the
	// first new event, a client waits this long before it reads. It keeps
	// twenty dashboards from costing the scheduler twenty wakeups and writes
	// per event, at the price of this much delay.
	linger = 10 * time.Millisecond
)

// streamFilter narrows what a client receives. The zero value passes all,
// with the matrices in full.
type streamFilter struct {
	Pod   string       `json:"pod,omitempty"`
	Kinds []event.Kind `json:"kinds,omitempty"`
	// Matrices is "full" (or empty) or "compact": Filter and Score events
	// then carry a FilterSummary or ScoreSummary instead of the matrix.
	Matrices string `json:"matrices,omitempty"`
}

// encode is the event's encoding for this client.
func (f *streamFilter) encode(e *history.Entry) []byte {
	if f.Matrices == matricesCompact {
		return e.CompactJSON()
	}
	return e.JSON()
}

const matricesFull, matricesCompact = "full", "compact"

func (f *streamFilter) pass(e *event.Event) bool {
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, e.Kind) {
		return false
	}
	if f.Pod != "" {
		// Events about no pod (nodes, scheduler, reset) always pass: the
		// client's view of the cluster must stay right.
		return e.Pod == nil || e.Pod.Key() == f.Pod
	}
	return true
}

// queryFilter reads ?pod=namespace/name, ?kinds=a,b and ?matrices=compact,
// as the stream and GET /events take them.
func queryFilter(c echo.Context) (streamFilter, error) {
	filter := streamFilter{Pod: c.QueryParam("pod"), Matrices: c.QueryParam("matrices")}
	if kinds := c.QueryParam("kinds"); kinds != "" {
		for _, k := range strings.Split(kinds, ",") {
			filter.Kinds = append(filter.Kinds, event.Kind(strings.TrimSpace(k)))
		}
	}
	if err := filter.validate(); err != nil {
		return filter, apiError(http.StatusBadRequest, "filter: %v", err)
	}
	return filter, nil
}

func (f *streamFilter) validate() error {
	for _, k := range f.Kinds {
		if !slices.Contains(event.Words().Kinds, k) {
			return fmt.Errorf("unknown event kind %q", k)
		}
	}
	if f.Matrices != "" && f.Matrices != matricesFull && f.Matrices != matricesCompact {
		return fmt.Errorf("matrices %q: want %q or %q", f.Matrices, matricesFull, matricesCompact)
	}
	if f.Pod != "" {
		ns, name, ok := strings.Cut(f.Pod, "/")
		if !ok || ns == "" || name == "" {
			return fmt.Errorf("pod %q: want namespace/name", f.Pod)
		}
	}
	return nil
}

// clientMessage is what a client may send: a new filter.
type clientMessage struct {
	Type     string       `json:"type"`
	Pod      string       `json:"pod,omitempty"`
	Kinds    []event.Kind `json:"kinds,omitempty"`
	Matrices string       `json:"matrices,omitempty"`
}

// controlMessage is a message that is not events: resync, error, close.
type controlMessage struct {
	Type    string `json:"type"`
	Reason  string `json:"reason,omitempty"`
	Dropped uint64 `json:"dropped,omitempty"`
	// Reset says a resync comes from a reset of the cluster, which forgets
	// the history: expected, not a client's fault.
	Reset bool `json:"reset,omitempty"`
}

// checkOrigin lets a browser open the stream from the dashboard's origin or
// an allowed one; a client that is not a browser sends no Origin.
func (s *Server) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	return origin == "" || s.site.originAllowed(origin, r.Host)
}

// stream serves the websocket: a snapshot, then every event in order.
func (s *Server) stream(c echo.Context) error {
	since, resume, err := querySeq(c, "since")
	if err != nil {
		return err
	}
	filter, err := queryFilter(c)
	if err != nil {
		return err
	}
	if !s.checkOrigin(c.Request()) {
		return apiError(http.StatusForbidden, "origin %q may not open the stream; start minisched with --allowed-origins to allow it", c.Request().Header.Get("Origin"))
	}
	client := s.clientAddr(c.Request())
	if err := s.streams.open(client); err != nil {
		return err
	}
	defer s.streams.close(client)
	up := websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: 64 << 10, CheckOrigin: func(*http.Request) bool { return true },
		EnableCompression: false}
	conn, err := up.Upgrade(c.Response(), c.Request(), nil)
	if err != nil {
		return nil // the upgrader has answered the client already
	}
	sc := &streamClient{s: s, conn: conn, cursor: since}
	sc.filter.Store(&filter)
	s.opts.StreamMetrics.StreamClients(1)
	defer s.opts.StreamMetrics.StreamClients(-1)
	sc.run(resume)
	return nil
}

type streamClient struct {
	s      *Server
	conn   *websocket.Conn
	cursor uint64
	filter atomic.Pointer[streamFilter]
	// replies carries the reader's answers to the writer, which owns the
	// connection's write side.
	replies chan controlMessage
	buf     []byte
}

func (sc *streamClient) run(resume bool) {
	defer sc.conn.Close()
	sc.replies = make(chan controlMessage, 8)
	readerDone := make(chan struct{})
	go sc.read(readerDone)

	if !resume {
		if err := sc.sendSnapshot(""); err != nil {
			return
		}
	}
	ping := time.NewTicker(pingPeriod)
	defer ping.Stop()
	timer := time.NewTimer(linger)
	defer timer.Stop()
	for {
		entries, wake, err := sc.s.opts.Recorder.Since(sc.cursor, batchSize)
		if errors.Is(err, history.ErrTruncated) {
			reason := "the history no longer holds the events after your last one"
			if sc.s.opts.Recorder.ResetAfter(sc.cursor) {
				reason = "the cluster was reset"
			}
			if sc.resync(reason) != nil {
				return
			}
			continue
		}
		if lag := sc.s.opts.Recorder.LastSeq() - sc.cursor; lag > uint64(sc.s.opts.StreamBuffer) {
			if sc.resync(fmt.Sprintf("you fell %d events behind", lag)) != nil {
				return
			}
			continue
		}
		if len(entries) > 0 {
			if err := sc.sendEvents(entries); err != nil {
				sc.s.opts.StreamMetrics.StreamClosed("slow")
				sc.closeWith(websocket.CloseGoingAway, "too slow: a write took longer than "+sc.s.opts.StreamWriteTimeout.String())
				return
			}
			continue
		}
		select {
		case <-wake:
			timer.Reset(linger)
			select {
			case <-timer.C:
			case <-readerDone:
				return
			}
		case reply := <-sc.replies:
			if sc.send(reply) != nil {
				return
			}
		case <-ping.C:
			if sc.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(sc.s.opts.StreamWriteTimeout)) != nil {
				return
			}
		case <-readerDone:
			return
		case <-sc.s.ctx.Done():
			sc.s.opts.StreamMetrics.StreamClosed("shutdown")
			sc.closeWith(websocket.CloseGoingAway, "the server is shutting down")
			return
		}
	}
}

// read handles the client's messages: pongs, close, and filter changes.
func (sc *streamClient) read(done chan struct{}) {
	defer close(done)
	sc.conn.SetReadLimit(maxClientMessage)
	_ = sc.conn.SetReadDeadline(time.Now().Add(pongWait))
	sc.conn.SetPongHandler(func(string) error { return sc.conn.SetReadDeadline(time.Now().Add(pongWait)) })
	for {
		_, data, err := sc.conn.ReadMessage()
		if err != nil {
			return
		}
		_ = sc.conn.SetReadDeadline(time.Now().Add(pongWait))
		var msg clientMessage
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		reply := controlMessage{Type: "filter"}
		switch err := dec.Decode(&msg); {
		case err != nil:
			reply = controlMessage{Type: "error", Reason: "malformed message: " + err.Error()}
		case msg.Type != "filter":
			reply = controlMessage{Type: "error", Reason: fmt.Sprintf("unknown message type %q: the only message a client sends is {\"type\":\"filter\",...}", msg.Type)}
		default:
			f := streamFilter{Pod: msg.Pod, Kinds: msg.Kinds, Matrices: msg.Matrices}
			if err := f.validate(); err != nil {
				reply = controlMessage{Type: "error", Reason: err.Error()}
			} else {
				sc.filter.Store(&f)
			}
		}
		select {
		case sc.replies <- reply:
		default: // a client flooding us with messages gets no more replies
		}
	}
}

func (sc *streamClient) send(v any) error {
	_ = sc.conn.SetWriteDeadline(time.Now().Add(sc.s.opts.StreamWriteTimeout))
	return sc.conn.WriteJSON(v)
}

func (sc *streamClient) sendSnapshot(reason string) error {
	snap := sc.s.snapshot(reason)
	sc.cursor = snap.Seq
	return sc.send(snap)
}

// resync tells the client it missed events and starts it over from a fresh
// snapshot.
func (sc *streamClient) resync(reason string) error {
	dropped := sc.s.opts.Recorder.LastSeq() - sc.cursor
	sc.s.opts.StreamMetrics.StreamDropped(dropped)
	if err := sc.send(controlMessage{Type: "resync", Reason: reason, Dropped: dropped, Reset: sc.s.opts.Recorder.ResetAfter(sc.cursor)}); err != nil {
		return err
	}
	return sc.sendSnapshot(reason)
}

// sendEvents writes one batch, {"type":"events","lastSeq":N,"events":[...]},
// straight into the connection's writer: each event's encoding is shared by
// every client and is not copied again on the way.
func (sc *streamClient) sendEvents(entries []*history.Entry) error {
	filter := sc.filter.Load()
	last := entries[len(entries)-1].Event.Seq
	passing := 0
	for _, e := range entries {
		if filter.pass(&e.Event) {
			passing++
		}
	}
	sc.cursor = last
	if passing == 0 {
		return nil
	}
	_ = sc.conn.SetWriteDeadline(time.Now().Add(sc.s.opts.StreamWriteTimeout))
	w, err := sc.conn.NextWriter(websocket.TextMessage)
	if err != nil {
		return err
	}
	sc.buf = strconv.AppendUint(append(sc.buf[:0], `{"type":"events","lastSeq":`...), last, 10)
	sc.buf = append(sc.buf, `,"events":[`...)
	if _, err := w.Write(sc.buf); err != nil {
		return err
	}
	n := 0
	for _, e := range entries {
		if !filter.pass(&e.Event) {
			continue
		}
		if n > 0 {
			if _, err := w.Write(comma); err != nil {
				return err
			}
		}
		if _, err := w.Write(filter.encode(e)); err != nil {
			return err
		}
		n++
	}
	if _, err := w.Write(closeBatch); err != nil {
		return err
	}
	return w.Close()
}

var comma, closeBatch = []byte(","), []byte("]}")

func (sc *streamClient) closeWith(code int, reason string) {
	_ = sc.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
}

// streamSlots bounds the stream's connections, overall and per client: each
// holds a goroutine pair and up to a buffer of events.
type streamSlots struct {
	mu                sync.Mutex
	total             int
	perClient         map[string]int
	maxTotal, maxEach int
}

func (l *streamSlots) open(client string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.total >= l.maxTotal:
		return apiError(http.StatusServiceUnavailable, "the server holds %d streams, its limit: close a dashboard tab and retry", l.total)
	case l.perClient[client] >= l.maxEach:
		return apiError(http.StatusTooManyRequests, "%s holds %d streams, the limit per client: close a dashboard tab and retry", client, l.perClient[client])
	}
	l.total++
	l.perClient[client]++
	return nil
}

func (l *streamSlots) close(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.perClient[client]--; l.perClient[client] <= 0 {
		delete(l.perClient, client)
	}
}

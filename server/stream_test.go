package server_test

// The websocket stream with a real client: snapshot then events, resume,
// filters, bounds, slow clients. Over 400 lines: one package's control
// plane serves all of them.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"minisched/event"
	"minisched/server"
)

// message is any stream message.
type message struct {
	Type    string        `json:"type"`
	Seq     uint64        `json:"seq"`
	LastSeq uint64        `json:"lastSeq"`
	Reason  string        `json:"reason"`
	Reset   bool          `json:"reset"`
	Events  []event.Event `json:"events"`
	Nodes   []event.NodeSummary
	Pods    []event.PodSummary
	Queue   server.QueueView

	Scheduler  event.SchedulerState
	Vocabulary event.Vocabulary
}

type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
}

func dial(t *testing.T, query string) *wsClient {
	t.Helper()
	return dialWith(t, query, websocket.DefaultDialer)
}

func dialWith(t *testing.T, query string, dialer *websocket.Dialer) *wsClient {
	t.Helper()
	url := "ws" + strings.TrimPrefix(strings.TrimSuffix(inst.URL, "/"), "http") + "/api/v1/stream" + query
	conn, resp, err := dialer.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", url, err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	return &wsClient{t: t, conn: conn}
}

func (c *wsClient) next(timeout time.Duration) (message, error) {
	var m message
	_ = c.conn.SetReadDeadline(time.Now().Add(timeout))
	_, data, err := c.conn.ReadMessage()
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		c.t.Fatalf("undecodable message %q: %v", data, err)
	}
	return m, nil
}

// collect reads events until done says so, checking that sequence numbers
// follow each other with no gap.
func (c *wsClient) collect(after uint64, timeout time.Duration, done func(e event.Event) bool) []event.Event {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	var out []event.Event
	last := after
	for {
		m, err := c.next(time.Until(deadline))
		if err != nil {
			c.t.Fatalf("reading the stream after seq %d: %v; got %d events", last, err, len(out))
		}
		if m.Type != "events" {
			c.t.Fatalf("unexpected %q message (%s) after seq %d", m.Type, m.Reason, last)
		}
		for _, e := range m.Events {
			if e.Seq != last+1 {
				c.t.Fatalf("sequence gap: got %d after %d", e.Seq, last)
			}
			last = e.Seq
			out = append(out, e)
			if done(e) {
				return out
			}
		}
	}
}

func bound(name string) func(e event.Event) bool {
	return func(e event.Event) bool {
		return e.Kind == event.KindBindingEnd && e.Pod.Name == name && e.BindingEnd.Bound
	}
}

func TestStreamShowsEveryStep(t *testing.T) {
	reset(t)
	c := dial(t, "")
	snap, err := c.next(10 * time.Second)
	if err != nil || snap.Type != "snapshot" {
		t.Fatalf("first message: %+v %v, want a snapshot", snap, err)
	}
	if len(snap.Nodes) != 0 || len(snap.Pods) != 0 {
		t.Errorf("snapshot after reset holds %d nodes and %d pods", len(snap.Nodes), len(snap.Pods))
	}
	if v := snap.Vocabulary; len(v.Codes) != 7 || v.Codes[3] != "UnschedulableAndUnresolvable" || !contains(v.ExtensionPoints, "PreBind") || len(v.Kinds) == 0 || len(v.Queues) != 5 {
		t.Errorf("snapshot vocabulary %+v", v)
	}
	if qs := snap.Scheduler.QueueSort; qs == nil || *qs != (event.QueueSort{Plugin: "PrioritySort", Ordered: true}) {
		t.Errorf("snapshot scheduler.queueSort %+v", qs)
	}
	mustCreate(t, "/api/v1/nodes", nodeJSON("node-1", "2"))
	mustCreate(t, "/api/v1/nodes", nodeJSON("node-2", "2"))
	eventually(t, 10*time.Second, "the scheduler to see both nodes", func() bool {
		return inst.Scheduler.Scheduler().NodeCount() == 2
	})
	mustCreate(t, "/api/v1/pods", podJSON("web-1", "500m"))
	events := c.collect(snap.Seq, 30*time.Second, bound("web-1"))

	var kinds []string
	var filter *event.FilterResults
	var score *event.ScoreResults
	var end *event.CycleEnd
	var summary *event.CycleSummary
	for _, e := range events {
		if e.Pod == nil || e.Pod.Name != "web-1" || e.Kind == event.KindPod {
			continue
		}
		if e.Queue != nil && e.Queue.To == event.ActiveQ && e.Queue.Order == "" {
			t.Errorf("a move into activeQ without an order: %+v", e.Queue)
		}
		summary = pick(summary, e.Summary)
		k := string(e.Kind)
		switch {
		case e.Queue != nil:
			k += ":" + string(e.Queue.Action) + ":" + string(e.Queue.To)
		case e.Point != nil:
			k += ":" + e.Point.Point
		}
		kinds = append(kinds, k)
		filter = pick(filter, e.Filter)
		score = pick(score, e.Score)
		end = pick(end, e.CycleEnd)
	}
	want := []string{"queue:add:active", "queue:pop:inFlight", "cycleStart", "point:PreFilter", "filter",
		"point:PreScore", "score", "point:Reserve", "cycleEnd", "point:PreBindPreFlight", "queue:done:", "point:Bind", "bindingEnd"}
	if got := strings.Join(kinds, " "); !containsInOrder(kinds, want) {
		t.Errorf("events for web-1:\n got %s\nwant these in order: %s", got, strings.Join(want, " "))
	}
	if filter == nil || filter.Len() != 2 {
		t.Fatalf("filter results: %+v, want a row for each of the 2 nodes", filter)
	}
	for _, row := range filter.Rows() {
		if len(row.Codes) != len(filter.Plugins) || len(row.Nanos) != len(filter.Plugins) {
			t.Errorf("node %s: %d codes and %d timings for %d Filter plugins", row.Node, len(row.Codes), len(row.Nanos), len(filter.Plugins))
		}
	}
	if len(filter.Plugins) == 0 || filter.Plugins[len(filter.Plugins)-1] != "NodeResourcesFit" && !contains(filter.Plugins, "NodeResourcesFit") {
		t.Errorf("Filter plugins %v lack NodeResourcesFit", filter.Plugins)
	}
	// Reading the rows checks each has a score for every plugin; the
	// weighted scores and totals are made from them (event's TestScoreJSON).
	if score == nil || score.Len() != 2 || len(score.Plugins) == 0 || score.Normalized == nil {
		t.Fatalf("score results: %+v, want every plugin for each of the 2 nodes, normalized", score)
	}
	if end == nil || end.Result != event.ResultScheduled || end.Node != boundNode(t, "web-1") {
		t.Errorf("cycle end %+v, pod bound to %q", end, boundNode(t, "web-1"))
	}
	if summary == nil || summary.Binding == nil || !summary.Binding.Bound || summary.End == nil || summary.End.Node != end.Node {
		t.Errorf("the last summary on the stream %+v, want the bound cycle", summary)
	}

	// Reconnect with since: only the missed events come, no snapshot.
	last := events[len(events)-1].Seq
	c.conn.Close()
	mustCreate(t, "/api/v1/pods", podJSON("web-2", "500m"))
	eventually(t, 20*time.Second, "web-2 to be bound", func() bool { return boundNode(t, "web-2") != "" })
	c2 := dial(t, fmt.Sprintf("?since=%d", last))
	missed := c2.collect(last, 10*time.Second, bound("web-2"))
	if missed[0].Seq != last+1 {
		t.Errorf("resumed at seq %d, want %d", missed[0].Seq, last+1)
	}
}

func TestStreamResumeTooFarBackResyncs(t *testing.T) {
	// A since from before a reset is gone: the client is told and gets a
	// fresh snapshot.
	c := dial(t, "")
	snap, _ := c.next(10 * time.Second)
	reset(t)
	old := dial(t, fmt.Sprintf("?since=%d", 0))
	m, err := old.next(10 * time.Second)
	if err != nil || m.Type != "resync" {
		t.Fatalf("resume from 0 after a reset: %+v %v, want a resync", m, err)
	}
	// A reset is expected, not a client's fault: it says so.
	if !m.Reset || m.Reason != "the cluster was reset" {
		t.Errorf("resync after a reset: reason %q, reset %v; want it to say the cluster was reset", m.Reason, m.Reset)
	}
	m, err = old.next(10 * time.Second)
	if err != nil || m.Type != "snapshot" || m.Seq < snap.Seq {
		t.Fatalf("after the resync: %+v %v, want a fresh snapshot", m, err)
	}
}

func TestStreamFilterAndBadMessages(t *testing.T) {
	reset(t)
	c := dial(t, "?kinds=cycleEnd")
	if snap, err := c.next(10 * time.Second); err != nil || snap.Type != "snapshot" {
		t.Fatalf("snapshot: %v", err)
	}
	mustCreate(t, "/api/v1/nodes", nodeJSON("node-1", "2"))
	mustCreate(t, "/api/v1/pods", podJSON("only-ends", "100m"))
	m, err := c.next(20 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Events {
		if e.Kind != event.KindCycleEnd {
			t.Errorf("filtered stream sent a %s event", e.Kind)
		}
	}
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"shout"}`)); err != nil {
		t.Fatal(err)
	}
	if m, err := c.next(5 * time.Second); err != nil || m.Type != "error" || !strings.Contains(m.Reason, "unknown message type") {
		t.Errorf("answer to a bad message: %+v %v", m, err)
	}

	for _, q := range []string{"?kinds=nonsense", "?pod=nons", "?since=-1"} {
		url := "ws" + strings.TrimPrefix(strings.TrimSuffix(inst.URL, "/"), "http") + "/api/v1/stream" + q
		_, resp, err := websocket.DefaultDialer.Dial(url, nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("dial %s: %v, want 400", q, resp)
		}
	}
	// A page of another origin may not read the stream.
	url := "ws" + strings.TrimPrefix(strings.TrimSuffix(inst.URL, "/"), "http") + "/api/v1/stream"
	_, resp, err := websocket.DefaultDialer.Dial(url, http.Header{"Origin": {"http://evil.example"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("dial from another origin: %v, want 403", resp)
	}
}

// TestStalledClient schedules many pods while one client never reads: the
// other client still sees every event, and the stalled one is told it fell
// behind (resync) or is disconnected with a reason.
func TestStalledClient(t *testing.T) {
	reset(t)
	for i := 0; i < 10; i++ {
		mustCreate(t, "/api/v1/nodes", []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-%d"},"status":{"allocatable":{"cpu":"64","memory":"8Gi","pods":"5000"}}}`, i)))
	}
	// The stalled client never reads. Its small receive buffer keeps the
	// kernel from absorbing the stream for it, so the server is overrun
	// sooner; how soon still depends on the machine's socket buffers, so
	// pods are created until the server says it gave up on the client.
	stalled := dialWith(t, "", &websocket.Dialer{NetDialContext: smallReceiveBuffer})
	reader := dial(t, "")
	snap, err := reader.next(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	const slow, dropped = `minisched_stream_disconnects_total{reason="slow"}`, "minisched_stream_dropped_messages_total"
	slowBefore, droppedBefore := metric(t, slow), metric(t, dropped)
	overrun := func() bool { return metric(t, slow) > slowBefore || metric(t, dropped) > droppedBefore }
	var wg sync.WaitGroup
	var got []event.Event
	boundPods := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		got = reader.collect(snap.Seq, 5*time.Minute, func(e event.Event) bool {
			if e.Kind == event.KindBindingEnd && e.BindingEnd.Bound {
				boundPods++
			}
			return bound("last")(e)
		})
	}()
	const batch, most = 250, 20000
	created := 0
	for !overrun() {
		if created >= most {
			t.Fatalf("%d pods were created and the server never gave up on a client that reads nothing", created)
		}
		for i := 0; i < batch; i++ {
			mustCreate(t, "/api/v1/pods", podJSON(fmt.Sprintf("p-%05d", created), "1m"))
			created++
		}
	}
	mustCreate(t, "/api/v1/pods", podJSON("last", "1m"))
	created++
	wg.Wait()
	t.Logf("%d pods created before the server gave up on the stalled client", created)
	// The reader saw every event with no gap (collect checks); it saw every
	// bind unless "last" overtook pods still in backoff.
	if boundPods == 0 || len(got) < boundPods*8 {
		t.Errorf("the reading client got %d events and %d binds for %d pods", len(got), boundPods, created)
	}

	// Now read what the stalled client was sent: events with no gap, ending
	// in a resync or in the server closing the connection, never in silence.
	// A client that resumes from its last event then carries on.
	last, told := uint64(0), ""
	for told == "" {
		m, err := stalled.next(10 * time.Second)
		var ce *websocket.CloseError
		switch {
		case err != nil && errors.As(err, &ce):
			told = fmt.Sprintf("closed (%d %s)", ce.Code, ce.Text)
		case err != nil:
			t.Fatalf("the stalled client was left open and silent: %v", err)
		case m.Type == "resync":
			told = "resync: " + m.Reason
		case m.Type == "snapshot":
			last = m.Seq
		case m.Type == "events":
			for _, e := range m.Events {
				if e.Seq != last+1 {
					t.Fatalf("the stalled client got a gap: %d after %d", e.Seq, last)
				}
				last = e.Seq
			}
		}
	}
	t.Logf("stalled client: %s after seq %d", told, last)
	resumed := dial(t, fmt.Sprintf("?since=%d", last))
	m, err := resumed.next(10 * time.Second)
	if err != nil || m.Type != "resync" && (m.Type != "events" || m.Events[0].Seq != last+1) {
		t.Fatalf("resuming after seq %d: %+v %v", last, m.Type, err)
	}
}

// smallReceiveBuffer dials with a 4 KiB receive buffer, which also turns off
// the kernel's growing of it.
func smallReceiveBuffer(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		})
		return errors.Join(err, serr)
	}}
	return d.DialContext(ctx, network, addr)
}

func pick[T any](have *T, candidate *T) *T {
	if candidate != nil {
		return candidate
	}
	return have
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsInOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// TestEventsPaging reads GET /events a few events at a time, each page from
// the last one's lastSeq: together the pages hold every event, once each.
func TestEventsPaging(t *testing.T) {
	reset(t)
	mustCreate(t, "/api/v1/nodes", nodeJSON("node-1", "2"))
	mustCreate(t, "/api/v1/pods", podJSON("paged", "100m"))
	eventually(t, 20*time.Second, "the pod to be bound", func() bool { return boundNode(t, "paged") != "" })
	var hist struct{ FirstSeq, LastSeq uint64 }
	api(t, "GET", "/api/v1/history", "", nil, &hist)

	since, pages := hist.FirstSeq-1, 0
	var seqs []uint64
	for {
		var page struct {
			LastSeq uint64        `json:"lastSeq"`
			More    bool          `json:"more"`
			Events  []event.Event `json:"events"`
		}
		if code := api(t, "GET", fmt.Sprintf("/api/v1/events?since=%d&limit=3", since), "", nil, &page); code != http.StatusOK {
			t.Fatalf("page after %d: %d", since, code)
		}
		pages++
		if len(page.Events) > 3 {
			t.Fatalf("a page of %d events with limit=3", len(page.Events))
		}
		if len(page.Events) > 0 && page.LastSeq != page.Events[len(page.Events)-1].Seq {
			t.Fatalf("lastSeq %d, but the page ends at %d", page.LastSeq, page.Events[len(page.Events)-1].Seq)
		}
		for _, e := range page.Events {
			seqs = append(seqs, e.Seq)
		}
		if !page.More && page.LastSeq >= hist.LastSeq {
			break
		}
		if len(page.Events) == 0 {
			t.Fatalf("an empty page after %d that says more=%v", since, page.More)
		}
		since = page.LastSeq
	}
	if pages < 2 {
		t.Fatalf("only %d page(s): the test needs more events", pages)
	}
	for i, seq := range seqs {
		if seq != hist.FirstSeq+uint64(i) {
			t.Fatalf("paged events %v...: want every seq from %d, once", seqs[:i+1], hist.FirstSeq)
		}
	}
	if last := seqs[len(seqs)-1]; last < hist.LastSeq {
		t.Errorf("the pages ended at %d, before the history's %d", last, hist.LastSeq)
	}
}

// TestEventsFilter pages GET /events with ?kinds=: the pages hold exactly
// the events of those kinds, each once, though a page may hold none and
// still say there is more.
func TestEventsFilter(t *testing.T) {
	reset(t)
	mustCreate(t, "/api/v1/nodes", nodeJSON("node-1", "2"))
	mustCreate(t, "/api/v1/pods", podJSON("filtered", "100m"))
	eventually(t, 20*time.Second, "the pod to be bound", func() bool { return boundNode(t, "filtered") != "" })
	// The cluster's informer, which reports pod events, is not the
	// scheduler's: wait until the history holds the pod's bound state too.
	eventually(t, 20*time.Second, "a pod event with the pod bound", func() bool {
		var h struct{ FirstSeq uint64 }
		api(t, "GET", "/api/v1/history", "", nil, &h)
		var p struct{ Events []event.Event }
		api(t, "GET", fmt.Sprintf("/api/v1/events?since=%d&kinds=pod&pod=default/filtered&limit=10000", h.FirstSeq-1), "", nil, &p)
		return slices.ContainsFunc(p.Events, func(e event.Event) bool { return e.PodChange != nil && e.PodChange.Pod.NodeName != "" })
	})
	var hist struct{ FirstSeq, LastSeq uint64 }
	api(t, "GET", "/api/v1/history", "", nil, &hist)
	type page struct {
		LastSeq uint64        `json:"lastSeq"`
		More    bool          `json:"more"`
		Events  []event.Event `json:"events"`
	}
	read := func(query string, limit int) (seqs []uint64, kinds map[event.Kind]bool) {
		kinds = map[event.Kind]bool{}
		since := hist.FirstSeq - 1
		for since < hist.LastSeq {
			var p page
			if code := api(t, "GET", fmt.Sprintf("/api/v1/events?since=%d&limit=%d%s", since, limit, query), "", nil, &p); code != http.StatusOK {
				t.Fatalf("page after %d: %d", since, code)
			}
			for _, e := range p.Events {
				if e.Seq <= hist.LastSeq {
					seqs, kinds[e.Kind] = append(seqs, e.Seq), true
				}
			}
			if p.LastSeq <= since {
				t.Fatalf("a page after %d ends at %d", since, p.LastSeq)
			}
			since = p.LastSeq
		}
		return seqs, kinds
	}
	all, _ := read("", 1000)
	want := map[uint64]bool{}
	for _, seq := range all {
		var one page
		api(t, "GET", fmt.Sprintf("/api/v1/events?since=%d&limit=1", seq-1), "", nil, &one)
		if k := one.Events[0].Kind; k == event.KindQueue || k == event.KindPod {
			want[seq] = true
		}
	}
	got, kinds := read("&kinds=queue,pod", 2)
	if len(kinds) != 2 || !kinds[event.KindQueue] || !kinds[event.KindPod] {
		t.Errorf("kinds in the filtered pages: %v, want queue and pod only", kinds)
	}
	if len(got) != len(want) {
		t.Errorf("the filtered pages hold %d events, want the %d queue and pod events", len(got), len(want))
	}
	for _, seq := range got {
		if !want[seq] {
			t.Errorf("event %d is not a queue or pod event, or came twice", seq)
		}
		delete(want, seq)
	}
	for _, q := range []string{"?kinds=teleport", "?pod=no-namespace"} {
		var e map[string]any
		if code := api(t, "GET", "/api/v1/events"+q, "", nil, &e); code != http.StatusBadRequest || e["error"] == nil {
			t.Errorf("GET /events%s: %d %v, want 400 with a reason", q, code, e)
		}
	}
}

// fullAndCompact empties the cluster and opens two streams, one with the
// matrices in full and one compact, past their snapshots.
func fullAndCompact(t *testing.T) (full, compact *wsClient, snap message) {
	t.Helper()
	reset(t)
	full, compact = dial(t, ""), dial(t, "?matrices=compact")
	snap, err := full.next(10 * time.Second)
	if err != nil || snap.Type != "snapshot" {
		t.Fatalf("snapshot: %+v %v", snap, err)
	}
	if m, err := compact.next(10 * time.Second); err != nil || m.Type != "snapshot" {
		t.Fatalf("compact snapshot: %+v %v", m, err)
	}
	return full, compact, snap
}

// On a cluster of alike nodes a cycle's ties name most of them, in cycleEnd
// and again in the summary its events carry: a compact stream leaves the
// names out and keeps their count.
func TestStreamCompactLeavesOutTies(t *testing.T) {
	full, compact, snap := fullAndCompact(t)
	twins := []string{"twin-a", "twin-b", "twin-c"}
	for _, name := range twins {
		mustCreate(t, "/api/v1/nodes", nodeJSON(name, "4"))
	}
	eventually(t, 10*time.Second, "the twins in the scheduler", func() bool {
		return !slices.ContainsFunc(twins, func(n string) bool { return !inst.Scheduler.Scheduler().HasNode(n) })
	})
	mustCreate(t, "/api/v1/pods", podJSON("alike", "1"))
	fullEvents := full.collect(snap.Seq, 20*time.Second, bound("alike"))
	compactEvents := compact.collect(snap.Seq, 20*time.Second, bound("alike"))
	if len(fullEvents) != len(compactEvents) {
		t.Fatalf("full stream %d events, compact %d: every event must come", len(fullEvents), len(compactEvents))
	}
	tiesLeftOut := 0
	for i, c := range compactEvents {
		f := fullEvents[i]
		if f.CycleEnd != nil {
			if len(f.CycleEnd.Ties) != 2 || f.CycleEnd.TieCount != 2 || f.Summary.End.TieCount != 2 || len(f.Summary.End.Ties) != 2 {
				t.Fatalf("full cycleEnd: %+v, summary's end %+v; want the two other twins and their count", f.CycleEnd, f.Summary.End)
			}
			if c.CycleEnd.Ties != nil || c.CycleEnd.TieCount != 2 {
				t.Errorf("compact cycleEnd %+v, want no names and tieCount 2", c.CycleEnd)
			}
			f.CycleEnd, c.CycleEnd = nil, nil
		}
		if f.Summary != nil && f.Summary.End != nil {
			if c.Summary.End.Ties != nil || c.Summary.End.TieCount != 2 {
				t.Errorf("event %d (%s): compact summary's end %+v, want no names and tieCount 2", c.Seq, c.Kind, c.Summary.End)
			}
			fs, cs := *f.Summary, *c.Summary
			fs.End, cs.End = nil, nil
			f.Summary, c.Summary = &fs, &cs
			tiesLeftOut++
		}
		f.Filter, f.Score, c.FilterSummary, c.ScoreSummary = nil, nil, nil, nil
		if !reflect.DeepEqual(c, f) {
			t.Errorf("event %d (%s) differs between the streams beyond the ties and the matrices:\n%+v\n%+v", c.Seq, c.Kind, c, f)
		}
	}
	// cycleEnd and bindingEnd carry the summary with its end.
	if tiesLeftOut < 2 {
		t.Errorf("%d events carried the cycle's end, want cycleEnd and bindingEnd", tiesLeftOut)
	}
}

func TestStreamCompactMatrices(t *testing.T) {
	full, compact, snap := fullAndCompact(t)
	mustCreate(t, "/api/v1/nodes", nodeJSON("roomy", "4"))
	mustCreate(t, "/api/v1/nodes", nodeJSON("roomier", "8"))
	mustCreate(t, "/api/v1/nodes", nodeJSON("tiny", "1"))
	eventually(t, 10*time.Second, "the three nodes in the scheduler", func() bool {
		return inst.Scheduler.Scheduler().HasNode("roomy") && inst.Scheduler.Scheduler().HasNode("roomier") && inst.Scheduler.Scheduler().HasNode("tiny")
	})
	mustCreate(t, "/api/v1/pods", podJSON("wide", "2"))
	fullEvents := full.collect(snap.Seq, 20*time.Second, bound("wide"))
	compactEvents := compact.collect(snap.Seq, 20*time.Second, bound("wide"))
	if len(fullEvents) != len(compactEvents) {
		t.Fatalf("full stream %d events, compact %d: every event must come", len(fullEvents), len(compactEvents))
	}
	var filters, scores int
	for i, c := range compactEvents {
		f := fullEvents[i]
		if c.Seq != f.Seq || c.Kind != f.Kind {
			t.Fatalf("event %d: compact %d %s, full %d %s", i, c.Seq, c.Kind, f.Seq, f.Kind)
		}
		if c.Filter != nil || c.Score != nil {
			t.Errorf("compact stream sent a matrix in event %d (%s)", c.Seq, c.Kind)
		}
		switch c.Kind {
		case event.KindFilter:
			filters++
			// tiny could not hold the pod even empty: UnschedulableAndUnresolvable.
			want := event.FilterSummary{Plugins: f.Filter.Plugins, Nanos: f.Filter.Nanos, Nodes: 3, Passed: 2,
				Failures: []event.FilterFailure{{Plugin: "NodeResourcesFit", Code: 3, Reason: "Insufficient cpu", Nodes: 1}}}
			if c.FilterSummary == nil || !reflect.DeepEqual(*c.FilterSummary, want) {
				t.Errorf("filter summary %+v, want %+v", c.FilterSummary, want)
			}
		case event.KindScore:
			scores++
			// Two nodes of different sizes score apart: the summary holds
			// both rows, the higher total first.
			rows := f.Score.Rows()
			slices.SortStableFunc(rows, func(a, b event.NodeScore) int { return cmp.Compare(b.Total, a.Total) })
			s := c.ScoreSummary
			if s == nil || s.Nodes != 2 || s.Tied != 1 || s.Best != rows[0].Total || rows[0].Total == rows[1].Total ||
				!reflect.DeepEqual(s.Top, rows) || !reflect.DeepEqual(s.Plugins, f.Score.Plugins) {
				t.Errorf("score summary %+v, want the rows %+v", s, rows)
			}
		default:
			if !reflect.DeepEqual(c, f) {
				t.Errorf("event %d (%s) differs between the streams", c.Seq, c.Kind)
			}
		}
	}
	if filters != 1 || scores != 1 {
		t.Fatalf("%d filter and %d score events, want one of each", filters, scores)
	}

	// A client may change its mind: the next matrix comes in full.
	if err := compact.conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"filter","matrices":"full"}`)); err != nil {
		t.Fatal(err)
	}
	// Events still in flight may come before the answer.
	for m, err := compact.next(5 * time.Second); m.Type != "filter"; m, err = compact.next(5 * time.Second) {
		if err != nil || m.Type != "events" {
			t.Fatalf("waiting for the answer to the filter message: %+v %v", m, err)
		}
	}
	mustCreate(t, "/api/v1/pods", podJSON("wide-2", "2"))
	for {
		m, err := compact.next(20 * time.Second)
		if err != nil {
			t.Fatalf("waiting for wide-2's Filter event: %v", err)
		}
		i := slices.IndexFunc(m.Events, func(e event.Event) bool { return e.Kind == event.KindFilter && e.Pod.Name == "wide-2" })
		if i < 0 {
			continue
		}
		if m.Events[i].Filter == nil || m.Events[i].FilterSummary != nil {
			t.Errorf("after asking for full matrices the Filter event is %+v", m.Events[i])
		}
		break
	}

	// GET /events takes the same choice; a bad one is refused.
	filterSeq := fullEvents[slices.IndexFunc(fullEvents, func(e event.Event) bool { return e.Kind == event.KindFilter })].Seq
	var page struct{ Events []event.Event }
	api(t, "GET", fmt.Sprintf("/api/v1/events?since=%d&limit=1&matrices=compact", filterSeq-1), "", nil, &page)
	if len(page.Events) != 1 || page.Events[0].Filter != nil || page.Events[0].FilterSummary == nil || page.Events[0].FilterSummary.Passed != 2 {
		t.Errorf("GET /events?matrices=compact: %+v", page.Events)
	}
	var e map[string]any
	if code := api(t, "GET", "/api/v1/events?matrices=tiny", "", nil, &e); code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(e["error"]), "compact") {
		t.Errorf("GET /events?matrices=tiny: %d %v, want 400 naming the choices", code, e)
	}
	url := "ws" + strings.TrimPrefix(strings.TrimSuffix(inst.URL, "/"), "http") + "/api/v1/stream?matrices=tiny"
	if _, resp, err := websocket.DefaultDialer.Dial(url, nil); err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("dial ?matrices=tiny: %v, want 400", resp)
	}
}

// TestStreamRefusesAnOversizedMessage: a client message past 4 KiB closes
// the connection with 1009 (message too big), and the server streams on to
// the others.
func TestStreamRefusesAnOversizedMessage(t *testing.T) {
	c := dial(t, "")
	if _, err := c.next(30 * time.Second); err != nil { // the snapshot
		t.Fatal(err)
	}
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"filter","x":"`+strings.Repeat("x", 5000)+`"}`)); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := c.next(30 * time.Second)
		if err == nil {
			continue // events sent before the server read the message
		}
		if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
			t.Errorf("after a 5 KB message: %v, want a close with 1009", err)
		}
		break
	}
	other := dial(t, "")
	if m, err := other.next(30 * time.Second); err != nil || m.Type != "snapshot" {
		t.Errorf("another client after it: %v %q, want its snapshot", err, m.Type)
	}
}

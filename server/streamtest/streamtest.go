// Package streamtest follows minisched's websocket stream the way a
// dashboard does, for load tests and benchmarks: it reads every message but
// parses only what a starved client would lose (the order of the batches)
// and how late each batch arrives, so that dozens of followers in one
// process cost little.
package streamtest

import (
	"bytes"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Follower reads one stream connection.
type Follower struct {
	mu    sync.Mutex
	stats Stats
}

// Stats is what a Follower saw so far.
type Stats struct {
	// Last is the sequence number of the newest event received.
	Last uint64
	// Gaps counts batches that did not start right after Last; Resyncs
	// counts the server's resync messages.
	Gaps, Resyncs, Messages int
	// Delays holds, per batch, the age of its oldest event on arrival.
	Delays []time.Duration
}

// Read follows conn until it closes.
func (f *Follower) Read(conn *websocket.Conn) {
	var buf bytes.Buffer
	for {
		// One buffer for every message: allocating one each would cost this
		// process more garbage collection than the server spends writing.
		_, r, err := conn.NextReader()
		if err != nil {
			return
		}
		buf.Reset()
		if _, err := buf.ReadFrom(r); err != nil {
			return
		}
		f.apply(buf.Bytes(), time.Now())
	}
}

func (f *Follower) apply(data []byte, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &f.stats
	s.Messages++
	switch {
	case bytes.HasPrefix(data, []byte(`{"type":"snapshot"`)):
		s.Last = number(data, `"seq":`)
	case bytes.HasPrefix(data, []byte(`{"type":"resync"`)):
		s.Resyncs++
	case bytes.HasPrefix(data, []byte(`{"type":"events"`)):
		if number(data, `"events":[{"seq":`) != s.Last+1 {
			s.Gaps++
		}
		s.Last = number(data, `"lastSeq":`)
		if t, ok := firstTime(data); ok {
			s.Delays = append(s.Delays, now.Sub(t))
		}
	}
}

// Stats returns a copy of what the follower saw.
func (f *Follower) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats
	s.Delays = append([]time.Duration(nil), s.Delays...)
	return s
}

// Last is the sequence number of the newest event received.
func (f *Follower) Last() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats.Last
}

// number reads the integer after the first occurrence of key.
func number(data []byte, key string) uint64 {
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return 0
	}
	rest := data[i+len(key):]
	end := bytes.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	n, _ := strconv.ParseUint(string(rest[:end]), 10, 64)
	return n
}

// firstTime reads the first event's time.
func firstTime(data []byte) (time.Time, bool) {
	const key = `"time":"`
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return time.Time{}, false
	}
	rest := data[i+len(key):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(rest[:end]))
	return t, err == nil
}

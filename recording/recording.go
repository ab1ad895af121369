// Package recording writes and reads minisched's recordings: a scheduling
// story as one file, the state at its start and every event after it, which
// a dashboard replays with no cluster behind it.
//
// A recording is gzip-compressed JSON lines: a header, the stream's
// snapshot message, one stream event per line in sequence order, and a
// trailer that counts them, so that a cut-off file is told from a whole one.
// Events and the snapshot are the stream's own messages
// (minisched.stream/v1): a reader of the stream reads a recording.
package recording

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"minisched/event"
)

// Format names this layout. A reader takes any recording of the same major
// version; fields it does not know are ignored, so files made today still
// open after the schema gains fields.
const Format = "minisched.recording/v1"

// Header is a recording's first line.
type Header struct {
	Format string `json:"format"`
	// Schema is the stream schema of the snapshot and the events.
	Schema  string    `json:"schema"`
	Created time.Time `json:"created"`
	// Pod, when set, narrowed the events to one pod's (events about no pod,
	// such as node changes, are always kept, as in the stream).
	Pod string `json:"pod,omitempty"`
	// Since is where playback is meant to start: the events before it bring
	// the snapshot up to that point.
	Since uint64 `json:"since,omitempty"`
}

// trailer is a recording's last line.
type trailer struct {
	Type    string `json:"type"`
	Events  int    `json:"events"`
	LastSeq uint64 `json:"lastSeq"`
}

// Writer writes one recording.
type Writer struct {
	gz     *gzip.Writer
	buf    *bufio.Writer
	events int
	last   uint64
}

// NewWriter writes the header and the snapshot (a stream snapshot message,
// as JSON) to w.
func NewWriter(w io.Writer, h Header, snapshot []byte) (*Writer, error) {
	if h.Format == "" {
		h.Format = Format
	}
	if h.Schema == "" {
		h.Schema = event.SchemaVersion
	}
	head, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("recording header: %w", err)
	}
	if err := validSnapshot(snapshot); err != nil {
		return nil, err
	}
	gz := gzip.NewWriter(w)
	rw := &Writer{gz: gz, buf: bufio.NewWriterSize(gz, 64<<10)}
	for _, line := range [][]byte{head, snapshot} {
		if err := rw.line(line); err != nil {
			return nil, err
		}
	}
	return rw, nil
}

// Event appends one event, the stream's encoding of it, whose sequence
// number is seq. Events come in sequence order.
func (w *Writer) Event(seq uint64, event []byte) error {
	if seq <= w.last {
		return fmt.Errorf("event %d after event %d: a recording holds events in order", seq, w.last)
	}
	if err := w.line(event); err != nil {
		return err
	}
	w.events, w.last = w.events+1, seq
	return nil
}

// Close writes the trailer and flushes; the underlying writer stays open.
func (w *Writer) Close() error {
	end, _ := json.Marshal(trailer{Type: "end", Events: w.events, LastSeq: w.last})
	if err := w.line(end); err != nil {
		return err
	}
	if err := w.buf.Flush(); err != nil {
		return fmt.Errorf("writing the recording: %w", err)
	}
	return w.gz.Close()
}

func (w *Writer) line(b []byte) error {
	if bytes.IndexByte(b, '\n') >= 0 {
		// JSON from encoding/json never holds a raw newline; indented JSON does.
		b = compact(b)
	}
	if _, err := w.buf.Write(b); err != nil {
		return fmt.Errorf("writing the recording: %w", err)
	}
	if err := w.buf.WriteByte('\n'); err != nil {
		return fmt.Errorf("writing the recording: %w", err)
	}
	return nil
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return bytes.ReplaceAll(b, []byte("\n"), []byte(" "))
	}
	return out.Bytes()
}

// Recording is a recording read back.
type Recording struct {
	Header   Header
	Snapshot json.RawMessage
	// Events are the stream's events, oldest first.
	Events []json.RawMessage
}

// ErrTooLarge means the recording unpacks to more than the reader's limit,
// or holds a line longer than any minisched writes.
var ErrTooLarge = errors.New("the recording unpacks to more than the limit")

// MaxEventBytes bounds one event's line. The largest events minisched
// writes (a Filter or Score result over 5,000 nodes) take about a megabyte;
// the snapshot, one line too, is bounded only by the reader's limit.
const MaxEventBytes = 16 << 20

// Read reads a whole recording of at most limit bytes once unpacked (a
// small file may unpack to a great deal). It refuses a recording of another
// format, one that is cut off, and events out of order, saying which. It
// reads in time linear in the file's size and stops when ctx ends.
func Read(ctx context.Context, r io.Reader, limit int64) (*Recording, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a recording (want gzip-compressed JSON lines): %w", err)
	}
	defer gz.Close()
	lr := &limitedReader{ctx: ctx, r: gz, left: limit}
	lines := bufio.NewReaderSize(lr, 64<<10)
	var buf []byte
	// next reads the line that should hold what; long names the line in
	// the error when it is longer than max.
	next := func(what, long string, max int64) ([]byte, error) {
		buf = buf[:0]
		for {
			chunk, err := lines.ReadSlice('\n')
			if int64(len(buf)+len(chunk)) > max+1 {
				return nil, fmt.Errorf("%w: the recording's %s is longer than %d bytes", ErrTooLarge, long, max)
			}
			buf = append(buf, chunk...)
			switch {
			case err == nil:
				return buf[:len(buf)-1], nil
			case errors.Is(err, bufio.ErrBufferFull):
				continue
			case lr.over:
				return nil, fmt.Errorf("%w of %d bytes", ErrTooLarge, limit)
			case ctx.Err() != nil:
				return nil, fmt.Errorf("reading the recording: %w", ctx.Err())
			case err == io.EOF && len(buf) > 0:
				return buf, nil // a last line without its newline
			case err == io.EOF:
				return nil, fmt.Errorf("the recording ends before its %s: the file is cut off", what)
			default:
				return nil, fmt.Errorf("reading the recording's %s: %w", what, err)
			}
		}
	}
	line, err := next("header", "header", MaxEventBytes)
	if err != nil {
		return nil, err
	}
	var rec Recording
	if err := json.Unmarshal(line, &rec.Header); err != nil {
		return nil, fmt.Errorf("the recording's header: %w", err)
	}
	if !sameMajor(rec.Header.Format, Format) {
		return nil, fmt.Errorf("format %q: this minisched reads %s", rec.Header.Format, Format)
	}
	if line, err = next("snapshot", "snapshot", limit); err != nil {
		return nil, err
	}
	if err := validSnapshot(line); err != nil {
		return nil, err
	}
	rec.Snapshot = bytes.Clone(line)
	var last uint64
	for {
		if line, err = next("trailer", fmt.Sprintf("event %d", len(rec.Events)+1), MaxEventBytes); err != nil {
			return nil, err
		}
		var probe struct {
			Type string  `json:"type"`
			Seq  *uint64 `json:"seq"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			return nil, fmt.Errorf("event %d of the recording: %w", len(rec.Events)+1, err)
		}
		if probe.Type == "end" {
			var end trailer
			_ = json.Unmarshal(line, &end)
			if end.Events != len(rec.Events) || end.LastSeq != last {
				return nil, fmt.Errorf("the recording's trailer counts %d events up to %d, the file holds %d up to %d", end.Events, end.LastSeq, len(rec.Events), last)
			}
			return &rec, nil
		}
		if probe.Seq == nil || *probe.Seq <= last {
			return nil, fmt.Errorf("event %d of the recording: no sequence number after %d", len(rec.Events)+1, last)
		}
		last = *probe.Seq
		rec.Events = append(rec.Events, bytes.Clone(line))
	}
}

// validSnapshot checks that b is a stream snapshot message of a schema this
// minisched reads.
func validSnapshot(b []byte) error {
	var snap struct {
		Type   string `json:"type"`
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(b, &snap); err != nil {
		return fmt.Errorf("the recording's snapshot: %w", err)
	}
	if snap.Type != "snapshot" || !sameMajor(snap.Schema, event.SchemaVersion) {
		return fmt.Errorf("the recording's snapshot: a %q message of schema %q, want a snapshot of %s", snap.Type, snap.Schema, event.SchemaVersion)
	}
	return nil
}

// sameMajor reports whether two "name/vN" versions share name and N: a
// later "name/vN.M" only adds fields.
func sameMajor(got, want string) bool {
	gotName, gotVersion, ok := strings.Cut(got, "/v")
	wantName, wantVersion, _ := strings.Cut(want, "/v")
	gotMajor, _, _ := strings.Cut(gotVersion, ".")
	wantMajor, _, _ := strings.Cut(wantVersion, ".")
	return ok && gotName == wantName && gotMajor == wantMajor
}

// limitedReader stops at limit bytes, and when ctx ends.
type limitedReader struct {
	ctx  context.Context
	r    io.Reader
	left int64
	over bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if err := l.ctx.Err(); err != nil {
		return 0, err
	}
	if l.left <= 0 {
		// Exactly at the limit is fine if nothing follows.
		var one [1]byte
		if n, err := l.r.Read(one[:]); n == 0 && err == io.EOF {
			return 0, io.EOF
		}
		l.over = true
		return 0, ErrTooLarge
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

package recording

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

const snap = `{"type":"snapshot","schema":"minisched.stream/v1","seq":2,"nodes":[],"pods":[]}`

func write(t *testing.T, h Header, snapshot string, events ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h, []byte(snapshot))
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range events {
		if err := w.Event(uint64(3+i), []byte(e)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gz(lines ...string) []byte {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	_, _ = z.Write([]byte(strings.Join(lines, "\n")))
	_ = z.Close()
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	created := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	events := []string{`{"seq":3,"kind":"queue"}`, `{"seq":4,"kind":"filter","filter":{"plugins":["A"]}}`}
	file := write(t, Header{Created: created, Pod: "default/a", Since: 4}, snap, events...)
	rec, err := Read(context.Background(), bytes.NewReader(file), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := Header{Format: Format, Schema: "minisched.stream/v1", Created: created, Pod: "default/a", Since: 4}
	if rec.Header != want {
		t.Errorf("header %+v, want %+v", rec.Header, want)
	}
	if string(rec.Snapshot) != snap {
		t.Errorf("snapshot %s", rec.Snapshot)
	}
	if len(rec.Events) != 2 || string(rec.Events[0]) != events[0] || string(rec.Events[1]) != events[1] {
		t.Errorf("events %s", rec.Events)
	}
}

func TestIndentedJSONStaysOneLine(t *testing.T) {
	file := write(t, Header{}, "{\n  \"type\": \"snapshot\",\n  \"schema\": \"minisched.stream/v1\"\n}", "{\n \"seq\": 3\n}")
	rec, err := Read(context.Background(), bytes.NewReader(file), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if string(rec.Events[0]) != `{"seq":3}` {
		t.Errorf("event %s", rec.Events[0])
	}
}

func TestWriterRefuses(t *testing.T) {
	var buf bytes.Buffer
	if _, err := NewWriter(&buf, Header{}, []byte(`{"type":"events"}`)); err == nil {
		t.Error("a snapshot that is not one was taken")
	}
	w, err := NewWriter(&buf, Header{}, []byte(snap))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Event(5, []byte(`{"seq":5}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Event(5, []byte(`{"seq":5}`)); err == nil {
		t.Error("an event out of order was taken")
	}
}

// TestReadRefuses: every way a file can be wrong is refused, saying how.
func TestReadRefuses(t *testing.T) {
	head := `{"format":"minisched.recording/v1"}`
	big := strings.Repeat("x", 4096)
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"not gzip", []byte("{}"), "not a recording"},
		{"empty", gz(), "ends before its header"},
		{"another format", gz(`{"format":"minisched.recording/v2"}`, snap, `{"type":"end"}`), `format "minisched.recording/v2"`},
		{"no format", gz(`{}`, snap, `{"type":"end"}`), `format ""`},
		{"another stream schema", gz(head, `{"type":"snapshot","schema":"minisched.stream/v2"}`, `{"type":"end"}`), "want a snapshot of minisched.stream/v1"},
		{"cut off before the trailer", gz(head, snap, `{"seq":3}`), "cut off"},
		{"trailer counts differ", gz(head, snap, `{"seq":3}`, `{"type":"end","events":2,"lastSeq":4}`), "trailer counts 2 events"},
		{"events out of order", gz(head, snap, `{"seq":4}`, `{"seq":3}`, `{"type":"end","events":2,"lastSeq":3}`), "no sequence number after 4"},
		{"an event without a sequence number", gz(head, snap, `{"kind":"queue"}`), "no sequence number after 0"},
		{"not JSON", gz(head, snap, `{"seq":`), "event 1 of the recording"},
		{"unpacks beyond the limit", gz(head, snap, fmt.Sprintf(`{"seq":3,"x":"%s"}`, big), `{"type":"end","events":1,"lastSeq":3}`), "unpacks to more than the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(context.Background(), bytes.NewReader(tt.file), 2048)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read: %v, want an error saying %q", err, tt.want)
			}
			if tt.name == "unpacks beyond the limit" && !errors.Is(err, ErrTooLarge) {
				t.Errorf("Read: %v, want ErrTooLarge", err)
			}
		})
	}
}

// TestLaterFieldsAreIgnored: a recording made by a later minisched, whose
// schema gained fields, still opens.
func TestLaterFieldsAreIgnored(t *testing.T) {
	file := gz(`{"format":"minisched.recording/v1.3","schema":"minisched.stream/v1","newField":{"a":1}}`,
		`{"type":"snapshot","schema":"minisched.stream/v1","seq":2,"gadgets":[1]}`,
		`{"seq":3,"kind":"teleport","teleport":{}}`,
		`{"type":"end","events":1,"lastSeq":3,"checksum":"abc"}`)
	rec, err := Read(context.Background(), bytes.NewReader(file), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Events) != 1 {
		t.Errorf("events %s", rec.Events)
	}
}

func TestReadAtTheLimit(t *testing.T) {
	file := write(t, Header{}, snap, `{"seq":3}`)
	z, _ := gzip.NewReader(bytes.NewReader(file))
	var plain bytes.Buffer
	_, _ = plain.ReadFrom(z)
	size := int64(plain.Len())
	if _, err := Read(context.Background(), bytes.NewReader(file), size); err != nil {
		t.Errorf("a recording of exactly the limit: %v", err)
	}
	if _, err := Read(context.Background(), bytes.NewReader(file), size-1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a recording one byte over the limit: %v, want ErrTooLarge", err)
	}
}

// TestLongLineRefused: an event line beyond MaxEventBytes is refused as
// soon as the reader has read that much, not after the whole line, however
// long it is (a 1.5 MB gzip can hold a line of gigabytes).
func TestLongLineRefused(t *testing.T) {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	_, _ = z.Write([]byte(`{"format":"minisched.recording/v1"}` + "\n" + snap + "\n" + `{"seq":3,"x":"`))
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for range 4 * MaxEventBytes >> 20 {
		_, _ = z.Write(chunk)
	}
	_ = z.Close()
	total := int64(buf.Len())
	counted := &countingReader{r: &buf}
	_, err := Read(context.Background(), counted, 1<<40)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "event 1 is longer than") {
		t.Fatalf("Read: %v, want ErrTooLarge naming event 1", err)
	}
	// Reading stopped near the bound: gzip packs the line about a
	// thousand to one, so reading it all would take the whole file.
	if counted.n > total/2 {
		t.Errorf("read %d of %d compressed bytes: the reader went on past the bound", counted.n, total)
	}
}

// TestReadStopsWithTheContext: a recording that never ends (here a
// snapshot line without end, under a limit too large to matter) is read
// until the context ends, and no longer.
func TestReadStopsWithTheContext(t *testing.T) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		z := gzip.NewWriter(pw)
		_, _ = z.Write([]byte(`{"format":"minisched.recording/v1"}` + "\n" + `{"type":"snapshot","x":"`))
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for written := 0; ; written += len(chunk) {
			if written == 8<<20 {
				cancel() // a signal arrives while the snapshot is read
			}
			if _, err := z.Write(chunk); err != nil {
				return
			}
		}
	}()
	_, err := Read(ctx, pr, 1<<40)
	_ = pr.CloseWithError(errors.New("done"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Read: %v, want it stopped by the context", err)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// BenchmarkReadLongSnapshot reads a recording whose snapshot line is 16, 32
// and 64 MB: the time per size should grow in proportion (a line scanner
// that rescans its buffer grows with the square).
func BenchmarkReadLongSnapshot(b *testing.B) {
	for _, mb := range []int{16, 32, 64} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			snapshot := `{"type":"snapshot","schema":"minisched.stream/v1","x":"` + strings.Repeat("x", mb<<20) + `"}`
			file := gz(`{"format":"minisched.recording/v1"}`, snapshot, `{"type":"end"}`)
			b.SetBytes(int64(len(snapshot)))
			for b.Loop() {
				if _, err := Read(context.Background(), bytes.NewReader(file), 1<<30); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

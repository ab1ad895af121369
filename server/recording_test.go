package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"minisched/event"
	"minisched/history"
	"minisched/recording"
	"minisched/server"
)

// download GETs a recording and reads it back.
func download(t *testing.T, path string) (int, *recording.Recording) {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(inst.URL, "/") + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/gzip" {
		t.Errorf("Content-Type %q", ct)
	}
	rec, err := recording.Read(context.Background(), resp.Body, 1<<30)
	if err != nil {
		t.Fatalf("reading the recording: %v", err)
	}
	return resp.StatusCode, rec
}

// TestRecording downloads the history as one file: it starts from the state
// after the reset, then holds every event since, in order, and ?pod= keeps
// one pod's events and those about no pod.
func TestRecording(t *testing.T) {
	reset(t)
	// The reset dropped the checkpoints; the server gives the history a
	// new one when it asks.
	eventually(t, 30*time.Second, "a checkpoint after the reset", func() bool {
		code, _ := download(t, "/api/v1/recording")
		return code == http.StatusOK
	})
	mustCreate(t, "/api/v1/nodes", nodeJSON("rec-node", "4"))
	mustCreate(t, "/api/v1/pods", podJSON("rec-a", "1"))
	mustCreate(t, "/api/v1/pods", podJSON("rec-b", "1"))
	eventually(t, 30*time.Second, "both pods bound", func() bool { return boundNode(t, "rec-a") != "" && boundNode(t, "rec-b") != "" })
	eventually(t, 30*time.Second, "both bindings recorded", func() bool {
		_, rec := download(t, "/api/v1/recording")
		return len(boundIn(t, rec)) == 2
	})

	_, rec := download(t, "/api/v1/recording")
	var snap struct {
		Type  string              `json:"type"`
		Seq   uint64              `json:"seq"`
		Nodes []event.NodeSummary `json:"nodes"`
	}
	if err := json.Unmarshal(rec.Snapshot, &snap); err != nil || snap.Type != "snapshot" {
		t.Fatalf("the recording starts from %s (%v), want a snapshot", rec.Snapshot, err)
	}
	first := seqOf(t, rec.Events[0])
	if first != snap.Seq+1 {
		t.Errorf("the first event is %d, want the one after the snapshot's %d", first, snap.Seq)
	}
	// The snapshot and the events after it tell the cluster as it is: the
	// snapshot may still show what the reset deleted (the watch had not
	// caught up), and then the deletions follow in the events.
	nodes := map[string]bool{}
	for _, n := range snap.Nodes {
		nodes[n.Name] = true
	}
	for _, raw := range rec.Events {
		var e event.Event
		_ = json.Unmarshal(raw, &e)
		if e.Kind == event.KindNode && e.Node != nil {
			nodes[e.Node.Node.Name] = e.Node.Action != event.Deleted
		}
	}
	for name, there := range nodes {
		if there != (name == "rec-node") {
			t.Errorf("replayed, the recording has node %s there: %v", name, there)
		}
	}

	_, one := download(t, "/api/v1/recording?pod=default/rec-a")
	if got := boundIn(t, one); len(got) != 1 || got[0] != "rec-a" {
		t.Errorf("?pod=default/rec-a holds the bindings of %v", got)
	}
	if one.Header.Pod != "default/rec-a" {
		t.Errorf("header %+v", one.Header)
	}
	for _, raw := range one.Events {
		var e event.Event
		_ = json.Unmarshal(raw, &e)
		if e.Pod != nil && e.Pod.Name != "rec-a" {
			t.Errorf("?pod=default/rec-a holds an event of %s", e.Pod.Name)
			break
		}
	}

	for _, tt := range []struct{ name, query string }{
		{"a pod without a namespace", "?pod=rec-a"},
		{"a sequence number that is not one", "?since=soon"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var e map[string]any
			if code := api(t, "GET", "/api/v1/recording"+tt.query, "", nil, &e); code != http.StatusBadRequest || e["error"] == nil {
				t.Errorf("GET /recording%s: %d %v, want 400 with a message", tt.query, code, e)
			}
		})
	}
}

// TestRecordingWithoutCheckpoint: before any checkpoint, a recording is
// refused with 409 and a reason, not an empty file.
func TestRecordingWithoutCheckpoint(t *testing.T) {
	rec := history.New(history.Options{})
	srv := httptest.NewServer(server.New(server.Options{Recorder: rec, Addr: "127.0.0.1:0"}).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/recording")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(e["error"], "no starting state") {
		t.Errorf("GET /recording with no checkpoint: %d %v, want 409 saying why", resp.StatusCode, e)
	}
}

func seqOf(t *testing.T, raw json.RawMessage) uint64 {
	t.Helper()
	var e struct{ Seq uint64 }
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	return e.Seq
}

// boundIn lists the pods whose binding succeeded in rec, in order.
func boundIn(t *testing.T, rec *recording.Recording) []string {
	t.Helper()
	var out []string
	for _, raw := range rec.Events {
		var e event.Event
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		if e.BindingEnd != nil && e.BindingEnd.Bound && e.Pod != nil {
			out = append(out, e.Pod.Name)
		}
	}
	return out
}

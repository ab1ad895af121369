package server_test

import (
	"net/http"
	"testing"

	"minisched/server"
)

// TestSnapshotSaysCopy: after POST /import the snapshot says the cluster is
// a copy; a reset ends that.
func TestSnapshotSaysCopy(t *testing.T) {
	reset(t)
	copyOf := func() *server.CopyOf {
		var snap server.Snapshot
		if code := api(t, "GET", "/api/v1/snapshot", "", nil, &snap); code != http.StatusOK {
			t.Fatalf("GET /snapshot: %d", code)
		}
		return snap.Copy
	}
	if c := copyOf(); c != nil {
		t.Fatalf("a cluster built by hand is a copy of %+v", c)
	}
	doc := []byte(`{"apiVersion":"minisched.dev/v1","kind":"Snapshot","nodes":[{"metadata":{"name":"copied"},"status":{"allocatable":{"cpu":"1","pods":"10"}}}]}`)
	if code := api(t, "POST", "/api/v1/import", "application/json", doc, nil); code != http.StatusOK {
		t.Fatalf("POST /import: %d", code)
	}
	if c := copyOf(); c == nil || c.Kind != "import" || c.At.IsZero() {
		t.Errorf("after an import the snapshot says copy %+v, want kind import with a time", c)
	}
	reset(t)
	if c := copyOf(); c != nil {
		t.Errorf("after a reset the snapshot still says copy %+v", c)
	}
}

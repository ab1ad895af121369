package journal

import (
	"os"
	"path/filepath"
	"testing"
)

func TestJournal(t *testing.T) {
	dir := t.TempDir()
	j := Journal{Dir: dir}
	type entry struct{ Source string }
	if ok, err := j.GetJSON("copy", &entry{}); ok || err != nil {
		t.Fatalf("an empty journal: %v %v", ok, err)
	}
	if err := j.PutJSON("copy", entry{"a cluster"}); err != nil {
		t.Fatal(err)
	}
	var got entry
	if ok, err := j.GetJSON("copy", &got); !ok || err != nil || got.Source != "a cluster" {
		t.Errorf("read back %+v, %v %v", got, ok, err)
	}
	info, err := os.Stat(filepath.Join(dir, "minisched-copy"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the file: %v, mode %v, want 0600", err, info.Mode())
	}
	if err := j.Remove("copy"); err != nil {
		t.Fatal(err)
	}
	if err := j.Remove("copy"); err != nil {
		t.Errorf("removing what is gone: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	var none Journal
	if err := none.PutJSON("copy", entry{}); err != nil {
		t.Errorf("the zero journal keeps nothing: %v", err)
	}
	if ok, err := none.GetJSON("copy", &got); ok || err != nil {
		t.Errorf("the zero journal reads nothing: %v %v", ok, err)
	}
}

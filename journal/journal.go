// Package journal keeps, in minisched's data directory, what must outlive
// the process: what the cluster is a copy of, and an import under way, so
// that a crash in the middle of one is reported when minisched starts
// again rather than leaving a half-loaded cluster that looks whole.
//
// Files are written 0600 to a temporary name and renamed into place, so a
// reader sees the old content or the new, never half of it.
package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Journal is a data directory. The zero Journal (no directory: a
// temporary cluster) keeps nothing and reads nothing.
type Journal struct{ Dir string }

// Put writes data under name.
func (j Journal) Put(name string, data []byte) error {
	if j.Dir == "" {
		return nil
	}
	f, err := os.CreateTemp(j.Dir, "."+name+"-*")
	if err != nil {
		return fmt.Errorf("journal %s: %w", name, err)
	}
	defer os.Remove(f.Name()) // gone after the rename; cleans up a failure
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("journal %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("journal %s: %w", name, err)
	}
	if err := os.Rename(f.Name(), j.path(name)); err != nil {
		return fmt.Errorf("journal %s: %w", name, err)
	}
	return nil
}

// PutJSON writes v as JSON under name.
func (j Journal) PutJSON(name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("journal %s: %w", name, err)
	}
	return j.Put(name, data)
}

// Get reads name; ok is false when there is none.
func (j Journal) Get(name string) (data []byte, ok bool, err error) {
	if j.Dir == "" {
		return nil, false, nil
	}
	data, err = os.ReadFile(j.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("journal %s: %w", name, err)
	}
	return data, true, nil
}

// GetJSON decodes name into v; ok is false when there is none.
func (j Journal) GetJSON(name string, v any) (ok bool, err error) {
	data, ok, err := j.Get(name)
	if !ok || err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("journal %s: %w", name, err)
	}
	return true, nil
}

// Remove deletes name, if it is there.
func (j Journal) Remove(name string) error {
	if j.Dir == "" {
		return nil
	}
	if err := os.Remove(j.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("journal %s: %w", name, err)
	}
	return nil
}

func (j Journal) path(name string) string { return filepath.Join(j.Dir, "minisched-"+name) }

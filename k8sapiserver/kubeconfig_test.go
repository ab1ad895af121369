package k8sapiserver

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestWriteKubeconfigKeepsTheCredentialPrivate: the file holds a
// system:masters credential, so whatever was at the path before, the result
// is a 0600 file of ours, or a clear refusal that leaves things as they were.
func TestWriteKubeconfigKeepsTheCredentialPrivate(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "secret-token"}
	const nobody = 65534
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir, path string) // what another user left there
		wantErr string                               // "" means it must succeed
		check   func(t *testing.T, dir, path string)
	}{
		{
			name:    "a new file",
			prepare: func(t *testing.T, dir, path string) {},
		},
		{
			name:    "a new file in a directory that does not exist",
			prepare: func(t *testing.T, dir, path string) { _ = os.Remove(dir) },
		},
		{
			name: "a world-writable file made beforehand",
			prepare: func(t *testing.T, dir, path string) {
				writeMode(t, path, 0o666)
			},
		},
		{
			name: "a world-readable file made beforehand",
			prepare: func(t *testing.T, dir, path string) {
				writeMode(t, path, 0o644)
			},
		},
		{
			name: "a symlink is refused, and its target is not created",
			prepare: func(t *testing.T, dir, path string) {
				if err := os.Symlink(filepath.Join(dir, "target"), path); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "is a symlink",
			check: func(t *testing.T, dir, path string) {
				if _, err := os.Lstat(filepath.Join(dir, "target")); !os.IsNotExist(err) {
					t.Errorf("the symlink's target exists: %v", err)
				}
			},
		},
		{
			name: "a file of another user is refused and left alone",
			prepare: func(t *testing.T, dir, path string) {
				if os.Geteuid() != 0 {
					t.Skip("making a file of another user needs root (CI runs as root)")
				}
				writeMode(t, path, 0o666)
				if err := os.Chown(path, nobody, nobody); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "belongs to another user",
			check: func(t *testing.T, dir, path string) {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Sys().(*syscall.Stat_t).Uid != nobody || fi.Size() != 0 {
					t.Errorf("the other user's file was changed: %v", fi)
				}
			},
		},
		{
			name: "a directory is refused",
			prepare: func(t *testing.T, dir, path string) {
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "not a regular file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "kube")
			if err := os.Mkdir(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "config")
			tt.prepare(t, dir, path)
			err := WriteKubeconfig(path, cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("WriteKubeconfig = %v, want an error with %q", err, tt.wantErr)
				}
			} else {
				if err != nil {
					t.Fatalf("WriteKubeconfig: %v", err)
				}
				fi, err := os.Lstat(path)
				if err != nil {
					t.Fatal(err)
				}
				if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
					t.Errorf("mode = %v, want a regular file with -rw-------", fi.Mode())
				}
				if uid := fi.Sys().(*syscall.Stat_t).Uid; int(uid) != os.Geteuid() {
					t.Errorf("owner = %d, want %d", uid, os.Geteuid())
				}
				got, err := clientcmd.BuildConfigFromFlags("", path)
				if err != nil {
					t.Fatalf("loading it: %v", err)
				}
				if got.BearerToken != cfg.BearerToken || got.Host != cfg.Host {
					t.Errorf("it reads back as %s with token %q", got.Host, got.BearerToken)
				}
			}
			if tt.check != nil {
				tt.check(t, dir, path)
			}
			// Nothing half-written is left beside it.
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".config.") {
					t.Errorf("a temporary file was left behind: %s", e.Name())
				}
			}
		})
	}
}

func writeMode(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, nil, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

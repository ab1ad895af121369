package schedperf

import (
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// UpstreamDir finds upstream's scheduler_perf directory in the Go module
// cache, at the version of k8s.io/kubernetes this binary is built with:
// $GOMODCACHE, then `go env GOMODCACHE`, then $GOPATH/pkg/mod.
func UpstreamDir() (string, error) {
	version := "v1.37.2"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == "k8s.io/kubernetes" {
				version = m.Version
			}
		}
	}
	var caches []string
	if c := os.Getenv("GOMODCACHE"); c != "" {
		caches = append(caches, c)
	}
	if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		caches = append(caches, strings.TrimSpace(string(out)))
	}
	caches = append(caches, filepath.Join(build.Default.GOPATH, "pkg", "mod"))
	for _, c := range caches {
		dir := filepath.Join(c, "k8s.io", "kubernetes@"+version, "test", "integration", "scheduler_perf")
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir, nil
		}
	}
	return "", fmt.Errorf("upstream's scheduler_perf (k8s.io/kubernetes@%s) is not in the Go module cache: `go mod download k8s.io/kubernetes@%s`, or name a directory of performance-config.yaml files", version, version)
}

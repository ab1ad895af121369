package minisched_test

import (
	"runtime"
	"testing"
	"time"

	"minisched/minisched"
	"minisched/minisched/schedconfig"
)

// TestCheckConfigLeavesNothingRunning: checking a configuration builds a
// scheduler and throws it away; its events broadcaster must go with it
// (issue 38, 7: 1,000 dry runs left 1,000 goroutines behind), and so must a
// configuration New refuses.
func TestCheckConfigLeavesNothingRunning(t *testing.T) {
	cfg, err := schedconfig.Default("")
	if err != nil {
		t.Fatal(err)
	}
	bad, err := schedconfig.Default("")
	if err != nil {
		t.Fatal(err)
	}
	bad.Profiles = append(bad.Profiles, bad.Profiles[0]) // the same scheduler name twice
	svc := minisched.NewService(minisched.ServiceOptions{Client: client, RESTConfig: cp.RESTConfig()})
	// A first check starts what stays for good (the process's metrics,
	// the client's connections).
	if err := svc.CheckConfig(cfg); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	const checks = 100
	for range checks {
		if err := svc.CheckConfig(cfg); err != nil {
			t.Fatal(err)
		}
		if err := svc.CheckConfig(bad); err == nil {
			t.Fatal("two profiles of one name were taken")
		}
	}
	// What the checks started ends when their context does, a moment later.
	waitFor(t, 30*time.Second, "the checks' goroutines to end", func() bool {
		return runtime.NumGoroutine() < before+checks/5
	})
}

package scenario

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJUnit: reports become JUnit XML that the schema CI systems read
// accepts (xmllint against testdata/junit.xsd), with a case a step and an
// expectation, failures and errors where the runs had them.
func TestJUnit(t *testing.T) {
	start := time.Date(2026, 12, 3, 19, 30, 0, 0, time.UTC)
	passed := &Report{ID: "run-1", Name: "03-score", State: StatePassed, Started: start, Seconds: 1.25,
		Steps:        []StepReport{{Index: 0, Action: "create Node n1", Outcome: OutcomeOK, Seconds: 0.1}, {Index: 1, Name: "wait for web", Action: "wait", Outcome: OutcomeOK, Seconds: 1}},
		Expectations: []ExpectationReport{{Step: 2, Expectation: "pod default/web on node n1", Passed: true, Saw: "bound to n1"}}}
	failed := &Report{ID: "run-2", Name: "lesson <&>", State: StateFailed, Started: start, Seconds: 3,
		Steps: []StepReport{{Index: 0, Action: "wait", Outcome: OutcomeFailed, Message: "timed out after 2s: web not scheduled", Seconds: 2}},
		Expectations: []ExpectationReport{
			{Step: 1, Expectation: "pod default/web on node n1", Passed: false, Saw: `not bound; "Insufficient cpu"`},
			{Step: 1, Expectation: "1 scheduled pods", Passed: true, Saw: "1 scheduled"},
		}}
	broken := &Report{ID: "run-3", Name: "broken", State: StateError, Message: "the control plane went away", Started: start, Seconds: 0.5,
		Steps: []StepReport{{Index: 0, Action: "create Pod p", Outcome: OutcomeOK}}}
	cancelled := &Report{ID: "run-4", Name: "cut", State: StateCancelled, Message: "cancelled by the user", Started: start}

	var out bytes.Buffer
	if err := WriteJUnit(&out, []*Report{passed, failed, broken, cancelled}); err != nil {
		t.Fatal(err)
	}
	if err := xmllint(t, out.Bytes()); err != nil {
		t.Fatalf("the schema refuses it: %v\n%s", err, out.String())
	}
	var got junitSuites
	if err := xml.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Tests != 9 || got.Failures != 2 || got.Errors != 2 || len(got.Suites) != 4 {
		t.Errorf("totals: %d tests, %d failures, %d errors, %d suites; want 9, 2, 2, 4", got.Tests, got.Failures, got.Errors, len(got.Suites))
	}
	tests := []struct {
		suite                    int
		name                     string
		tests, failures, errors  int
		failedCase, failedReason string
	}{
		{0, "03-score", 3, 0, 0, "", ""},
		{1, "lesson <&>", 3, 2, 0, "step 2 expects pod default/web on node n1", `saw: not bound; "Insufficient cpu"`},
		{2, "broken", 2, 0, 1, "the run", "the control plane went away"},
		{3, "cut", 1, 0, 1, "the run", "cancelled by the user"},
	}
	for _, tt := range tests {
		s := got.Suites[tt.suite]
		if s.Name != tt.name || s.Tests != tt.tests || s.Failures != tt.failures || s.Errors != tt.errors || s.Timestamp != "2026-12-03T19:30:00" {
			t.Errorf("suite %d: %s, %d tests, %d failures, %d errors, at %s; want %s, %d, %d, %d", tt.suite, s.Name, s.Tests, s.Failures, s.Errors, s.Timestamp, tt.name, tt.tests, tt.failures, tt.errors)
		}
		if !strings.Contains(s.SystemOut, "scenario "+tt.name) {
			t.Errorf("suite %d: output %q, want the text report", tt.suite, s.SystemOut)
		}
		if tt.failedCase == "" {
			continue
		}
		found := false
		for _, c := range s.Cases {
			p := c.Failure
			if p == nil {
				p = c.Error
			}
			if c.Name == tt.failedCase && p != nil && p.Message == tt.failedReason {
				found = true
			}
		}
		if !found {
			t.Errorf("suite %d: no case %q failing with %q in %+v", tt.suite, tt.failedCase, tt.failedReason, s.Cases)
		}
	}

	// The check can fail: the schema refuses a case without its classname.
	bad := strings.Replace(out.String(), `classname="scenario.03-score"`, "", 1)
	if err := xmllint(t, []byte(bad)); err == nil {
		t.Error("the schema took a test case without a classname")
	}
}

// xmllint validates doc against testdata/junit.xsd with libxml2's xmllint
// (Debian's libxml2-utils, which hack/test.sh installs).
func xmllint(t *testing.T, doc []byte) error {
	t.Helper()
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		t.Fatal("xmllint is needed to check JUnit XML against its schema: install Debian's libxml2-utils (hack/test.sh does)")
	}
	path := filepath.Join(t.TempDir(), "report.xml")
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--noout", "--schema", "testdata/junit.xsd", path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

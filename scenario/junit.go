package scenario

// Reports as JUnit XML, the format CI systems (Jenkins, GitLab, GitHub's
// test reporters) read: a plugin repository keeps lessons as regression
// tests. testdata/junit.xsd is the shape, checked in the tests.

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	ID        string      `xml:"id,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
	SystemOut string      `xml:"system-out"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes reports as JUnit XML: a suite a run, a test case a
// step (an error when it could not be done, a failure when its wait ran
// out) and an expectation (a failure when it did not hold, with what was
// seen); a run that ended in error or was cancelled without a step to
// blame adds a case that says so. Each suite's output is the text report.
func WriteJUnit(w io.Writer, reports []*Report) error {
	all := junitSuites{Name: "minisched scenarios"}
	var total float64
	for _, r := range reports {
		s := junitSuite{Name: r.Name, ID: r.ID, Time: seconds(r.Seconds), Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05")}
		class := "scenario." + r.Name
		blamed := false
		for _, st := range r.Steps {
			c := junitCase{Name: fmt.Sprintf("step %d: %s", st.Index+1, cmp.Or(st.Name, st.Action)), Classname: class, Time: seconds(st.Seconds)}
			switch st.Outcome {
			case OutcomeFailed:
				c.Failure = &junitProblem{Message: st.Message, Type: "StepFailed", Text: st.Message}
				blamed = true
			case OutcomeError:
				c.Error = &junitProblem{Message: st.Message, Type: "StepError", Text: st.Message}
				blamed = true
			}
			s.Cases = append(s.Cases, c)
		}
		for _, e := range r.Expectations {
			c := junitCase{Name: fmt.Sprintf("step %d expects %s", e.Step+1, e.Expectation), Classname: class, Time: seconds(0)}
			if !e.Passed {
				c.Failure = &junitProblem{Message: "saw: " + e.Saw, Type: "ExpectationFailed", Text: "saw: " + e.Saw}
			}
			s.Cases = append(s.Cases, c)
		}
		if (r.State == StateError || r.State == StateCancelled) && !blamed {
			s.Cases = append(s.Cases, junitCase{Name: "the run", Classname: class, Time: s.Time,
				Error: &junitProblem{Message: r.Message, Type: map[State]string{StateError: "RunError", StateCancelled: "RunCancelled"}[r.State], Text: r.Message}})
		}
		for _, c := range s.Cases {
			s.Tests++
			if c.Failure != nil {
				s.Failures++
			}
			if c.Error != nil {
				s.Errors++
			}
		}
		var text strings.Builder
		r.WriteText(&text)
		s.SystemOut = text.String()
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Errors += s.Errors
		total += r.Seconds
		all.Suites = append(all.Suites, s)
	}
	all.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

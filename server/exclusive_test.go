package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"minisched/compare"
	"minisched/exclusive"
	"minisched/scenario"
)

// waitsLong is a scenario that runs until it is cancelled.
const waitsLong = `apiVersion: minisched/v1
kind: Scenario
metadata: {name: waits-long}
spec:
  steps:
  - wait: {duration: 20m}
`

// busyAnswer is a refusal's body.
type busyAnswer struct {
	Error string        `json:"error"`
	Busy  *exclusive.Op `json:"busy"`
}

// TestOneOperationAtATime: while a reset, an import, a scenario run, a
// what-if or a comparison is under way, every other one is refused with a
// 409 that names it, and once it ends the next one runs.
func TestOneOperationAtATime(t *testing.T) {
	reset(t)
	var snapshotJSON json.RawMessage
	if code := api(t, "GET", "/api/v1/export?format=json", "", nil, &snapshotJSON); code != http.StatusOK {
		t.Fatalf("GET /export: %d", code)
	}
	scenarioJSON, err := yaml.YAMLToJSON([]byte(waitsLong))
	if err != nil {
		t.Fatal(err)
	}
	requests := []struct {
		name                      string
		method, path, contentType string
		body                      []byte
	}{
		{"a reset", "POST", "/api/v1/reset", "", nil},
		{"an import", "POST", "/api/v1/import?replace=true", "application/json", snapshotJSON},
		{"a scenario run", "POST", "/api/v1/scenarios", "application/yaml", []byte(quickScenario)},
		{"a what-if", "POST", "/api/v1/whatif/reschedule", "", nil},
		{"a comparison", "POST", "/api/v1/compare", "application/json", []byte(`{"b":{"name":"same"}}`)},
	}
	holders := []struct {
		name string
		kind exclusive.Kind
		// hold starts the operation, with what ends it, and for an
		// operation that may be refused before it is under way, what
		// tells so and tries again; the loop below waits until it is
		// under way.
		hold func(t *testing.T) (release func(), refused func() bool)
	}{
		{"a scenario run", exclusive.Scenario, func(t *testing.T) (func(), func() bool) {
			var run scenario.Run
			if code := api(t, "POST", "/api/v1/scenarios", "application/yaml", []byte(waitsLong), &run); code != http.StatusAccepted {
				t.Fatalf("POST /scenarios: %d", code)
			}
			return func() { cancelRun(t, run.ID) }, nil
		}},
		{"a comparison", exclusive.Comparison, func(t *testing.T) (func(), func() bool) {
			body := fmt.Sprintf(`{"scenario":%s,"a":{"name":"one"},"b":{"name":"other"}}`, scenarioJSON)
			var c compare.Comparison
			if code := api(t, "POST", "/api/v1/compare", "application/json", []byte(body), &c); code != http.StatusAccepted {
				t.Fatalf("POST /compare: %d %+v", code, c)
			}
			return func() {
				// Its scenario's run cancelled, the comparison ends in error.
				var list struct{ Runs []scenario.Run }
				eventually(t, time.Minute, "the comparison's run", func() bool {
					api(t, "GET", "/api/v1/scenarios", "", nil, &list)
					return len(list.Runs) > 0 && list.Runs[0].State == scenario.StateRunning
				})
				cancelRun(t, list.Runs[0].ID)
				eventually(t, time.Minute, "the comparison's end", func() bool {
					var last compare.Comparison
					api(t, "GET", "/api/v1/compare", "", nil, &last)
					return last.ID == c.ID && last.State != "running"
				})
			}, nil
		}},
		{"an import", exclusive.Import, func(t *testing.T) (func(), func() bool) {
			held := &slowImport{t: t}
			held.start()
			return held.release, held.refused
		}},
	}
	for _, h := range holders {
		t.Run("during "+h.name, func(t *testing.T) {
			release, refused := h.hold(t)
			released := false
			defer func() {
				if !released {
					release()
				}
			}()
			// Under way once a reset is refused for it. An import's request
			// may reach the server after the first of these resets: it is
			// then refused, and sent again (slowImport.again).
			eventually(t, time.Minute, h.name+" under way", func() bool {
				var answer busyAnswer
				code := api(t, "POST", "/api/v1/reset", "", nil, &answer)
				if code == http.StatusConflict && answer.Busy != nil && answer.Busy.Kind == h.kind {
					return true
				}
				if refused != nil {
					refused()
				}
				return false
			})
			for _, r := range requests {
				var answer busyAnswer
				code := api(t, r.method, r.path, r.contentType, r.body, &answer)
				if code != http.StatusConflict || answer.Busy == nil || answer.Busy.Kind != h.kind || !strings.Contains(answer.Error, h.name) {
					t.Errorf("%s during %s: %d %+v, want 409 naming %s", r.name, h.name, code, answer, h.name)
				}
			}
			release()
			released = true
			eventually(t, time.Minute, "a reset once "+h.name+" is over", func() bool {
				return api(t, "POST", "/api/v1/reset", "", nil, nil) == http.StatusNoContent
			})
		})
	}
}

// slowImport is a client that sends its snapshot slowly, holding the
// import. A request refused because another operation came first (a reset
// of the probe's) is sent again, until one is under way.
type slowImport struct {
	t        *testing.T
	sender   *io.PipeWriter
	answered chan string
}

func (s *slowImport) start() {
	body, sender := io.Pipe()
	answered := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest("POST", strings.TrimSuffix(inst.URL, "/")+"/api/v1/import", body)
		req.Header.Set("Content-Type", "application/json")
		// A connection of its own: one a refused request left may still
		// be draining its body.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Do(req)
		if err != nil {
			answered <- err.Error()
			return
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answered <- fmt.Sprintf("%d %s", resp.StatusCode, data)
	}()
	s.sender, s.answered = sender, answered
	// The write returns once the client's transport has taken it, or the
	// request ended (refused).
	_, _ = sender.Write([]byte(`{"apiVersion":`))
}

// refused reports whether the server refused the request already, and
// then sends another.
func (s *slowImport) refused() bool {
	select {
	case answer := <-s.answered:
		s.t.Logf("the held import was refused (%s): sent again", answer)
		if !strings.HasPrefix(answer, "409 ") {
			s.t.Fatalf("the held import: %s, want it held or refused as busy", answer)
		}
		s.sender.Close()
		s.start()
		return true
	default:
		return false
	}
}

// release gives up: the request fails, and the import ends with it.
func (s *slowImport) release() {
	s.sender.CloseWithError(errors.New("the client gave up"))
	if answer := <-s.answered; !strings.Contains(answer, "the client gave up") {
		s.t.Errorf("the held import: %s, want the client's own error", answer)
	}
}

func cancelRun(t *testing.T, id string) {
	t.Helper()
	if code := api(t, "DELETE", "/api/v1/scenarios/"+id, "", nil, nil); code != http.StatusOK {
		t.Errorf("DELETE /scenarios/%s: %d", id, code)
	}
}

package scenario

// The example scheduler extender, run for a scenario that asks for it.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"minisched/examples/extender"
)

// example is the example extender serving on loopback for one run; nil
// when the scenario runs none.
type example struct {
	spec   *ExampleExtender
	url    string
	server *http.Server
	done   chan struct{}
}

// startExample serves the example extender on a free loopback port; it
// binds through client when the scenario lets it bind.
func startExample(spec *ExampleExtender, client kubernetes.Interface) (*example, error) {
	if spec == nil {
		return nil, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on loopback: %w", err)
	}
	e := &example{spec: spec, url: "http://" + l.Addr().String() + "/", done: make(chan struct{}),
		server: &http.Server{Handler: &extender.Server{Client: client}, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		defer close(e.done)
		// Serve ends with ErrServerClosed at stop; the scheduler's calls
		// say any other end as errors of their own.
		_ = e.server.Serve(l)
	}()
	return e, nil
}

// addTo returns a copy of cfg that calls the example extender too.
func (e *example) addTo(cfg *config.KubeSchedulerConfiguration) *config.KubeSchedulerConfiguration {
	out := cfg.DeepCopy()
	x := config.Extender{URLPrefix: e.url, FilterVerb: "filter", PrioritizeVerb: "prioritize", Weight: max(e.spec.Weight, 1), PreemptVerb: "preempt"}
	if e.spec.Bind {
		x.BindVerb = "bind"
	}
	out.Extenders = append(out.Extenders, x)
	return out
}

// stop ends the server; nothing to do for none.
func (e *example) stop() {
	if e == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = e.server.Shutdown(ctx)
	<-e.done
}

package snapshot

import (
	"fmt"
	"net/http"

	"k8s.io/client-go/rest"
)

// ReadOnly makes a client configuration refuse, before anything is sent,
// every request that is not a read: whatever the identity may do, a client
// built from it never changes the cluster it reads.
func ReadOnly(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return readOnly{rt} })
	return cfg
}

type readOnly struct{ next http.RoundTripper }

func (r readOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return nil, fmt.Errorf("minisched only reads this cluster: it refused to send %s %s", req.Method, req.URL.Path)
	}
	return r.next.RoundTrip(req)
}

package snapshot

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// SourceClient is the client a copy reads its source cluster through: read
// only; in protobuf, as the cluster's own components read it (a list of
// 50,000 pods decodes several times faster than in JSON); and allowed
// enough requests a second that a list, which comes a page at a time, is
// not left waiting on client-go's default of 5.
func SourceClient(cfg *rest.Config) (kubernetes.Interface, error) {
	cfg = ReadOnly(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "minisched-import"
	return kubernetes.NewForConfig(cfg)
}

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

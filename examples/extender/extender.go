// Package extender is an example scheduler extender: an HTTP webhook that
// kube-scheduler, and minisched, call beside their plugins (the
// configuration's extenders). It decides from labels, so that a lesson can
// show each verb at work:
//
//   - filter: a node labelled extender.minisched.io/closed=true turns every
//     pod away for good (UnschedulableAndUnresolvable); a pod labelled
//     extender.minisched.io/avoid=Z is turned away from the nodes labelled
//     extender.minisched.io/zone=Z (Unschedulable).
//   - prioritize: a pod labelled extender.minisched.io/prefer=Z scores 10 on
//     the nodes labelled extender.minisched.io/zone=Z; no other node gets a
//     score, so no tie between them is broken at random.
//   - preempt: the candidates come back as they went.
//   - bind: binds the pod through its client, when it has one.
//
// The scheduler sends whole nodes (nodeCacheCapable: false).
package extender

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// The labels it reads.
const (
	ClosedLabel = "extender.minisched.io/closed"
	ZoneLabel   = "extender.minisched.io/zone"
	AvoidLabel  = "extender.minisched.io/avoid"
	PreferLabel = "extender.minisched.io/prefer"
)

// maxBody bounds a request: a scheduler sends at most its nodes and a pod.
const maxBody = 64 << 20

// Server answers the verbs at /filter, /prioritize, /preempt and /bind.
type Server struct {
	// Client binds pods for /bind; nil refuses to bind.
	Client kubernetes.Interface

	mu    sync.Mutex
	calls map[string]int
}

// Calls counts the requests of each verb so far.
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

func (s *Server) count(verb string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[verb]++
}

// ServeHTTP answers one verb.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST a verb: /filter, /prioritize, /preempt or /bind", http.StatusMethodNotAllowed)
		return
	}
	verb := path.Base(r.URL.Path)
	s.count(verb)
	var out any
	var err error
	switch verb {
	case "filter":
		var args extenderv1.ExtenderArgs
		if err = decode(r, &args); err == nil {
			out = filter(&args)
		}
	case "prioritize":
		var args extenderv1.ExtenderArgs
		if err = decode(r, &args); err == nil {
			out = prioritize(&args)
		}
	case "preempt":
		var args extenderv1.ExtenderPreemptionArgs
		if err = decode(r, &args); err == nil {
			out = preempt(&args)
		}
	case "bind":
		var args extenderv1.ExtenderBindingArgs
		if err = decode(r, &args); err == nil {
			out = s.bind(r.Context(), &args)
		}
	default:
		http.Error(w, fmt.Sprintf("no verb %q: /filter, /prioritize, /preempt or /bind", verb), http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func decode(r *http.Request, into any) error {
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(into); err != nil {
		return fmt.Errorf("decoding the request: %w", err)
	}
	return nil
}

func filter(args *extenderv1.ExtenderArgs) *extenderv1.ExtenderFilterResult {
	res := &extenderv1.ExtenderFilterResult{
		Nodes:                      &v1.NodeList{},
		FailedNodes:                extenderv1.FailedNodesMap{},
		FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{},
	}
	if args.Nodes == nil || args.Pod == nil {
		res.Error = "want a pod and whole nodes (nodeCacheCapable: false)"
		return res
	}
	avoid := args.Pod.Labels[AvoidLabel]
	for _, n := range args.Nodes.Items {
		switch {
		case n.Labels[ClosedLabel] == "true":
			res.FailedAndUnresolvableNodes[n.Name] = "the extender says this node is closed"
		case avoid != "" && n.Labels[ZoneLabel] == avoid:
			res.FailedNodes[n.Name] = fmt.Sprintf("the extender keeps the pod out of zone %s", avoid)
		default:
			res.Nodes.Items = append(res.Nodes.Items, n)
		}
	}
	return res
}

func prioritize(args *extenderv1.ExtenderArgs) *extenderv1.HostPriorityList {
	list := extenderv1.HostPriorityList{}
	if args.Nodes == nil || args.Pod == nil {
		return &list
	}
	prefer := args.Pod.Labels[PreferLabel]
	for _, n := range args.Nodes.Items {
		if prefer != "" && n.Labels[ZoneLabel] == prefer {
			list = append(list, extenderv1.HostPriority{Host: n.Name, Score: extenderv1.MaxExtenderPriority})
		}
	}
	return &list
}

func preempt(args *extenderv1.ExtenderPreemptionArgs) *extenderv1.ExtenderPreemptionResult {
	res := &extenderv1.ExtenderPreemptionResult{NodeNameToMetaVictims: map[string]*extenderv1.MetaVictims{}}
	for node, victims := range args.NodeNameToVictims {
		meta := &extenderv1.MetaVictims{NumPDBViolations: victims.NumPDBViolations}
		for _, p := range victims.Pods {
			meta.Pods = append(meta.Pods, &extenderv1.MetaPod{UID: string(p.UID)})
		}
		res.NodeNameToMetaVictims[node] = meta
	}
	for node, meta := range args.NodeNameToMetaVictims {
		res.NodeNameToMetaVictims[node] = meta
	}
	return res
}

func (s *Server) bind(ctx context.Context, args *extenderv1.ExtenderBindingArgs) *extenderv1.ExtenderBindingResult {
	if s.Client == nil {
		return &extenderv1.ExtenderBindingResult{Error: "this extender has no client to bind with"}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := s.Client.CoreV1().Pods(args.PodNamespace).Bind(ctx, &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: args.PodNamespace, Name: args.PodName, UID: args.PodUID},
		Target:     v1.ObjectReference{Kind: "Node", Name: args.Node},
	}, metav1.CreateOptions{})
	if err != nil {
		return &extenderv1.ExtenderBindingResult{Error: err.Error()}
	}
	return &extenderv1.ExtenderBindingResult{}
}

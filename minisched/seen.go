package minisched

import (
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// seenVersions records, for each node and pod, the resourceVersion of the
// last event the scheduler's handlers have finished with. A scenario waits
// on it after each write, so that the next step never races the informer
// and a lesson replays the same way every time.
type seenVersions struct {
	mu sync.Mutex
	rv map[string]uint64
}

func seenKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func (v *seenVersions) record(kind string, obj any, deleted bool) {
	m, err := meta.Accessor(unwrap(obj))
	if err != nil {
		return
	}
	key := seenKey(kind, m.GetNamespace(), m.GetName())
	v.mu.Lock()
	defer v.mu.Unlock()
	if deleted {
		delete(v.rv, key)
		return
	}
	// The embedded etcd numbers versions in order; a version that is not a
	// number still counts as seen.
	rv, _ := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
	v.rv[key] = max(v.rv[key], rv)
}

// track wraps h so that every event it handles is recorded once handled.
func (v *seenVersions) track(kind string, h cache.ResourceEventHandlerFuncs) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { h.OnAdd(obj, false); v.record(kind, obj, false) },
		UpdateFunc: func(oldObj, newObj any) { h.OnUpdate(oldObj, newObj); v.record(kind, newObj, false) },
		DeleteFunc: func(obj any) { h.OnDelete(obj); v.record(kind, obj, true) },
	}
}

// Seen says whether the scheduler has handled the object of that kind
// ("Node" or "Pod") at resourceVersion rv or later; with rv "", whether it
// has handled its deletion.
func (s *Scheduler) Seen(kind, namespace, name, rv string) bool {
	key := seenKey(kind, namespace, name)
	s.seen.mu.Lock()
	defer s.seen.mu.Unlock()
	have, ok := s.seen.rv[key]
	if rv == "" {
		return !ok
	}
	want, err := strconv.ParseUint(rv, 10, 64)
	return ok && (err != nil || have >= want)
}

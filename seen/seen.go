// Package seen records, for each node and pod, the resourceVersion of the
// last event an informer's handlers have finished with. A scenario waits on
// it after each write, so that the next step never races a watch: the
// scheduler has the object, and the dashboards' history tells of it before
// the next step is announced.
package seen

import (
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// Versions is the record of one informer's handlers. The zero value is
// ready to use.
type Versions struct {
	mu sync.Mutex
	rv map[string]uint64
}

func key(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func (v *Versions) record(kind string, obj any, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	k := key(kind, m.GetNamespace(), m.GetName())
	v.mu.Lock()
	defer v.mu.Unlock()
	if deleted {
		delete(v.rv, k)
		return
	}
	if v.rv == nil {
		v.rv = map[string]uint64{}
	}
	// The embedded etcd numbers versions in order; a version that is not a
	// number still counts as seen.
	rv, _ := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
	v.rv[k] = max(v.rv[k], rv)
}

// Track wraps h so that every event it handles is recorded once handled.
func (v *Versions) Track(kind string, h cache.ResourceEventHandler) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { h.OnAdd(obj, false); v.record(kind, obj, false) },
		UpdateFunc: func(oldObj, newObj any) { h.OnUpdate(oldObj, newObj); v.record(kind, newObj, false) },
		DeleteFunc: func(obj any) { h.OnDelete(obj); v.record(kind, obj, true) },
	}
}

// Seen says whether the handlers have finished with the object of that
// kind ("Node" or "Pod") at resourceVersion rv or later; with rv "",
// whether they have finished with its deletion.
func (v *Versions) Seen(kind, namespace, name, rv string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	have, ok := v.rv[key(kind, namespace, name)]
	if rv == "" {
		return !ok
	}
	want, err := strconv.ParseUint(rv, 10, 64)
	return ok && (err != nil || have >= want)
}

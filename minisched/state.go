package minisched

// ownState: the cycle state a point's plugins see, carried back to the
// cycle only when the point returned in time.

import (
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
)

// ownState is the cycle state one extension point runs with: a clone of the
// cycle's, so that a call abandoned at the timeout changes only a copy
// nobody reads. How deep the copy goes is each StateData's Clone: upstream's
// plugins copy what PreFilter's AddPod and RemovePod change and share the
// rest (VolumeBinding, DynamicResources and PodsToActivate share it all,
// behind their own locks).
//
// It remembers the keys the plugins read, wrote or deleted, and the skip sets
// they set, so that commit carries their work back when the point returned
// in time: PreFilter's and PreScore's writes reach Filter and Score that
// way. Keys only read are carried as well, because plugins may change in
// place what they read.
type ownState struct {
	fwk.CycleState
	skipFilter, skipScore, skipPreBind, parallelPreBind atomic.Bool

	// touched lists the keys used, copied on write: Filter and Score read
	// the same few keys from many goroutines, thousands of times a cycle,
	// and a look through a short list takes no lock.
	touched atomic.Pointer[[]fwk.StateKey]
	mu      sync.Mutex
}

func newOwnState(state fwk.CycleState) *ownState {
	return &ownState{CycleState: state.Clone()}
}

func (s *ownState) touch(key fwk.StateKey) {
	if keys := s.touched.Load(); keys != nil && slices.Contains(*keys, key) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var next []fwk.StateKey
	if keys := s.touched.Load(); keys != nil {
		if slices.Contains(*keys, key) {
			return
		}
		next = slices.Clone(*keys)
	}
	next = append(next, key)
	s.touched.Store(&next)
}

func (s *ownState) Read(key fwk.StateKey) (fwk.StateData, error) {
	s.touch(key)
	return s.CycleState.Read(key)
}

func (s *ownState) Write(key fwk.StateKey, val fwk.StateData) {
	s.touch(key)
	s.CycleState.Write(key, val)
}

func (s *ownState) Delete(key fwk.StateKey) {
	s.touch(key)
	s.CycleState.Delete(key)
}

func (s *ownState) SetSkipFilterPlugins(plugins sets.Set[string]) {
	s.skipFilter.Store(true)
	s.CycleState.SetSkipFilterPlugins(plugins)
}

func (s *ownState) SetSkipScorePlugins(plugins sets.Set[string]) {
	s.skipScore.Store(true)
	s.CycleState.SetSkipScorePlugins(plugins)
}

func (s *ownState) SetSkipPreBindPlugins(plugins sets.Set[string]) {
	s.skipPreBind.Store(true)
	s.CycleState.SetSkipPreBindPlugins(plugins)
}

func (s *ownState) SetParallelPreBindPlugins(plugins sets.Set[string]) {
	s.parallelPreBind.Store(true)
	s.CycleState.SetParallelPreBindPlugins(plugins)
}

// commit carries what the plugins did into the cycle's state.
func (s *ownState) commit(to fwk.CycleState) {
	if keys := s.touched.Load(); keys != nil {
		for _, key := range *keys {
			if v, err := s.CycleState.Read(key); err == nil {
				to.Write(key, v)
			} else {
				to.Delete(key)
			}
		}
	}
	if s.skipFilter.Load() {
		to.SetSkipFilterPlugins(s.CycleState.GetSkipFilterPlugins())
	}
	if s.skipScore.Load() {
		to.SetSkipScorePlugins(s.CycleState.GetSkipScorePlugins())
	}
	if s.skipPreBind.Load() {
		to.SetSkipPreBindPlugins(s.CycleState.GetSkipPreBindPlugins())
	}
	if s.parallelPreBind.Load() {
		to.SetParallelPreBindPlugins(s.CycleState.GetParallelPreBindPlugins())
	}
}

package queue

import (
	"container/heap"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// podHeap is a priority queue of pods, keyed by UID, ordered by less.
type podHeap struct {
	items []*PodInfo
	index map[types.UID]int
	less  func(a, b *PodInfo) bool
}

func newPodHeap(less func(a, b *PodInfo) bool) *podHeap {
	return &podHeap{index: map[types.UID]int{}, less: less}
}

// heap.Interface, used only through the methods below.
func (h *podHeap) Len() int           { return len(h.items) }
func (h *podHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *podHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[h.items[i].uid()] = i
	h.index[h.items[j].uid()] = j
}
func (h *podHeap) Push(x any) {
	p := x.(*PodInfo)
	h.index[p.uid()] = len(h.items)
	h.items = append(h.items, p)
}
func (h *podHeap) Pop() any {
	last := h.items[len(h.items)-1]
	h.items[len(h.items)-1] = nil
	h.items = h.items[:len(h.items)-1]
	delete(h.index, last.uid())
	return last
}

// add inserts p, or replaces and re-sorts the pod with the same UID.
func (h *podHeap) add(p *PodInfo) {
	if i, ok := h.index[p.uid()]; ok {
		h.items[i] = p
		heap.Fix(h, i)
		return
	}
	heap.Push(h, p)
}

// fix restores the order after the pod with this UID changed, if it is here.
func (h *podHeap) fix(uid types.UID) {
	if i, ok := h.index[uid]; ok {
		heap.Fix(h, i)
	}
}

func (h *podHeap) get(uid types.UID) *PodInfo {
	if i, ok := h.index[uid]; ok {
		return h.items[i]
	}
	return nil
}

func (h *podHeap) remove(uid types.UID) *PodInfo {
	i, ok := h.index[uid]
	if !ok {
		return nil
	}
	return heap.Remove(h, i).(*PodInfo)
}

func (h *podHeap) peek() *PodInfo {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0]
}

func (h *podHeap) pop() *PodInfo {
	if len(h.items) == 0 {
		return nil
	}
	return heap.Pop(h).(*PodInfo)
}

// sorted returns the pods in pop order.
func (h *podHeap) sorted() []*PodInfo {
	pods := slices.Clone(h.items)
	slices.SortFunc(pods, func(a, b *PodInfo) int {
		switch {
		case h.less(a, b):
			return -1
		case h.less(b, a):
			return 1
		}
		return 0
	})
	return pods
}

package queue

import (
	"container/heap"
	"slices"
)

// entityHeap is a priority queue of entities, keyed by Entity.key, ordered
// by less.
type entityHeap struct {
	items []Entity
	index map[string]int
	less  func(a, b Entity) bool
}

func newEntityHeap(less func(a, b Entity) bool) *entityHeap {
	return &entityHeap{index: map[string]int{}, less: less}
}

// heap.Interface, used only through the methods below.
func (h *entityHeap) Len() int           { return len(h.items) }
func (h *entityHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *entityHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[h.items[i].key()] = i
	h.index[h.items[j].key()] = j
}
func (h *entityHeap) Push(x any) {
	e := x.(Entity)
	h.index[e.key()] = len(h.items)
	h.items = append(h.items, e)
}
func (h *entityHeap) Pop() any {
	last := h.items[len(h.items)-1]
	h.items[len(h.items)-1] = nil
	h.items = h.items[:len(h.items)-1]
	delete(h.index, last.key())
	return last
}

// add inserts e, or replaces and re-sorts the entity with the same key.
func (h *entityHeap) add(e Entity) {
	if i, ok := h.index[e.key()]; ok {
		h.items[i] = e
		heap.Fix(h, i)
		return
	}
	heap.Push(h, e)
}

// fix restores the order after the entity with this key changed, if it is
// here.
func (h *entityHeap) fix(key string) {
	if i, ok := h.index[key]; ok {
		heap.Fix(h, i)
	}
}

func (h *entityHeap) get(key string) Entity {
	if i, ok := h.index[key]; ok {
		return h.items[i]
	}
	return nil
}

func (h *entityHeap) remove(key string) Entity {
	i, ok := h.index[key]
	if !ok {
		return nil
	}
	return heap.Remove(h, i).(Entity)
}

func (h *entityHeap) peek() Entity {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0]
}

func (h *entityHeap) pop() Entity {
	if len(h.items) == 0 {
		return nil
	}
	return heap.Pop(h).(Entity)
}

// pods counts the pods of the entities here.
func (h *entityHeap) pods() int {
	n := 0
	for _, e := range h.items {
		n += len(e.members())
	}
	return n
}

// sorted returns the entities in pop order.
func (h *entityHeap) sorted() []Entity {
	entities := slices.Clone(h.items)
	slices.SortFunc(entities, func(a, b Entity) int {
		switch {
		case h.less(a, b):
			return -1
		case h.less(b, a):
			return 1
		}
		return 0
	})
	return entities
}

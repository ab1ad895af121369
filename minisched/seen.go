package minisched

// Seen says whether the scheduler has handled the object of that kind
// ("Node" or "Pod") at resourceVersion rv or later; with rv "", whether it
// has handled its deletion (package seen).
func (s *Scheduler) Seen(kind, namespace, name, rv string) bool {
	return s.seen.Seen(kind, namespace, name, rv)
}

package event

import (
	"slices"
	"strconv"

	fwk "k8s.io/kube-scheduler/framework"
)

// Vocabulary is every name the stream uses, in one place: the server's
// metrics and stream filters use it, and the dashboard reads it from the
// snapshot rather than keeping copies of its own.
type Vocabulary struct {
	// Codes names the status codes of plugin results: Codes[code].
	Codes []string `json:"codes"`
	// ExtensionPoints are the framework's extension points in the order a
	// pod meets them (Unreserve last: it runs only when a later one fails).
	ExtensionPoints []string      `json:"extensionPoints"`
	Kinds           []Kind        `json:"kinds"`
	Queues          []QueueName   `json:"queues"`
	Results         []CycleResult `json:"results"`
}

// Words returns the vocabulary.
func Words() Vocabulary {
	return Vocabulary{
		Codes:           codeNames(),
		ExtensionPoints: []string{"PreEnqueue", "PreFilter", "Filter", "PostFilter", "PreScore", "Score", "Reserve", "Permit", "PreBind", "Bind", "PostBind", "Unreserve"},
		Kinds: []Kind{KindQueue, KindCycleStart, KindPoint, KindFilter, KindScore, KindCycleEnd, KindPermitWait, KindBindingEnd,
			KindNode, KindPod, KindScheduler, KindScenario, KindReset, KindPreemption, KindExtender},
		Queues:  []QueueName{ActiveQ, BackoffQ, ErrorBackoffQ, Unschedulable, InFlight},
		Results: []CycleResult{ResultScheduled, ResultUnschedulable, ResultError},
	}
}

// WithPodGroups adds the queue's parts where pods of pod groups
// (GenericWorkload) wait apart, before InFlight.
func (v Vocabulary) WithPodGroups() Vocabulary {
	i := slices.Index(v.Queues, InFlight)
	v.Queues = slices.Insert(slices.Clone(v.Queues), i, IncompleteGroup, PendingGroup)
	return v
}

// codeNames takes the names from the framework itself, so they cannot drift
// from the codes plugins return.
func codeNames() []string {
	var names []string
	for c := fwk.Success; c <= fwk.Pending; c++ {
		names = append(names, c.String())
	}
	return names
}

// CodeName names a status code of a plugin result.
func CodeName(code int) string {
	if code < int(fwk.Success) || code > int(fwk.Pending) {
		return "Code(" + strconv.Itoa(code) + ")"
	}
	return fwk.Code(code).String()
}

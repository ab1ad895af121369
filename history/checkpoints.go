package history

import "errors"

// A recording starts from the state at some point of the history, and the
// history cannot work that state out from events: it keeps no cluster. So
// whoever can (the server) gives it snapshots, checkpoints, when it says one
// is due: at the start, after a reset, and whenever half the history's cap
// has been recorded since the newest one. Of those, it keeps the two newest
// from which every later event is still held; so a recording covers at
// least the newest half of the history, and usually all of it.

// Checkpoint is the state at Seq, as the stream's snapshot message.
type Checkpoint struct {
	Seq  uint64
	Data []byte
}

// ErrNoCheckpoint means no checkpoint is kept from which the history's
// events follow on: they moved on faster than checkpoints were taken.
var ErrNoCheckpoint = errors.New("no starting state is kept for the events in the history: they move faster than checkpoints are taken; a larger --history helps")

// CheckpointDue is signalled when a checkpoint is wanted; take one, check
// CheckpointNeeded (the signal may be stale) and give it to AddCheckpoint.
func (r *Recorder) CheckpointDue() <-chan struct{} { return r.due }

// CheckpointNeeded reports whether a checkpoint is wanted now.
func (r *Recorder) CheckpointNeeded() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.checkpointNeeded()
}

// checkpointNeeded: r.mu is held.
func (r *Recorder) checkpointNeeded() bool {
	return len(r.checkpoints) == 0 || 2*r.grownWeight >= r.opts.MaxWeight || 2*r.grownBytes >= r.opts.MaxBytes
}

// signalCheckpoint tells the taker, without waiting, that one is due; r.mu
// is held.
func (r *Recorder) signalCheckpoint() {
	if r.checkpointNeeded() {
		select {
		case r.due <- struct{}{}:
		default:
		}
	}
}

// AddCheckpoint keeps the state at seq. A checkpoint from before a reset
// or older than the newest one is ignored.
func (r *Recorder) AddCheckpoint(seq uint64, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if seq+1 < r.first() || seq > r.seq || (len(r.checkpoints) > 0 && seq <= r.checkpoints[len(r.checkpoints)-1].Seq) {
		return
	}
	r.checkpoints = append(r.checkpoints, Checkpoint{Seq: seq, Data: data})
	r.grownWeight, r.grownBytes = 0, 0
	r.pruneCheckpoints()
}

// pruneCheckpoints drops the checkpoints the history has moved past, and
// all but the two newest; r.mu is held.
func (r *Recorder) pruneCheckpoints() {
	first := r.first()
	keep := r.checkpoints[:0]
	for _, c := range r.checkpoints {
		if c.Seq+1 >= first {
			keep = append(keep, c)
		}
	}
	if len(keep) > 2 {
		keep = keep[len(keep)-2:]
	}
	clear(r.checkpoints[len(keep):])
	r.checkpoints = keep
}

// first is the sequence number of the oldest event held (r.seq+1 when
// none is); r.mu is held.
func (r *Recorder) first() uint64 { return r.seq - uint64(len(r.entries)) + 1 }

// Recording returns where a recording starts, the newest checkpoint at or
// before since (since 0: the oldest kept), and every event after it.
func (r *Recorder) Recording(since uint64) (Checkpoint, []*Entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruneCheckpoints()
	if len(r.checkpoints) == 0 {
		return Checkpoint{}, nil, ErrNoCheckpoint
	}
	start := r.checkpoints[0]
	for _, c := range r.checkpoints[1:] {
		if since > 0 && c.Seq <= since {
			start = c
		}
	}
	from := int(start.Seq + 1 - r.first())
	out := make([]*Entry, len(r.entries)-from)
	copy(out, r.entries[from:])
	return start, out, nil
}

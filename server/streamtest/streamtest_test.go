package streamtest

import (
	"testing"
	"time"
)

func TestApply(t *testing.T) {
	at := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		messages []string
		want     Stats
	}{
		{
			name: "batches in order after a snapshot",
			messages: []string{
				`{"type":"snapshot","schema":"minisched.stream/v1","seq":4}`,
				`{"type":"events","lastSeq":6,"events":[{"seq":5,"time":"2026-11-30T00:59:59Z"},{"seq":6}]}`,
				`{"type":"events","lastSeq":7,"events":[{"seq":7,"time":"2026-11-30T00:59:58Z"}]}`,
			},
			want: Stats{Last: 7, Messages: 3, Delays: []time.Duration{time.Second, 2 * time.Second}},
		},
		{
			name: "a batch that skips counts as a gap; a resync is counted apart",
			messages: []string{
				`{"type":"snapshot","seq":4}`,
				`{"type":"events","lastSeq":9,"events":[{"seq":8,"time":"2026-11-30T01:00:00Z"},{"seq":9}]}`,
				`{"type":"resync","reason":"behind","dropped":3}`,
			},
			want: Stats{Last: 9, Gaps: 1, Resyncs: 1, Messages: 3, Delays: []time.Duration{0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Follower
			for _, m := range tt.messages {
				f.apply([]byte(m), at)
			}
			got := f.Stats()
			if got.Last != tt.want.Last || got.Gaps != tt.want.Gaps || got.Resyncs != tt.want.Resyncs || got.Messages != tt.want.Messages ||
				len(got.Delays) != len(tt.want.Delays) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got.Delays {
				if got.Delays[i] != tt.want.Delays[i] {
					t.Errorf("delay %d: %v, want %v", i, got.Delays[i], tt.want.Delays[i])
				}
			}
		})
	}
}

package app

import (
	"os"
	"testing"
)

func TestInterruptible(t *testing.T) {
	tests := []struct {
		name       string
		signals    int
		wantCancel bool
		wantQuit   bool
	}{
		{name: "no signal: runs on", signals: 0},
		{name: "first signal: shuts down in order", signals: 1, wantCancel: true},
		{name: "second signal: quits at once", signals: 2, wantCancel: true, wantQuit: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signals := make(chan os.Signal)
			quit := make(chan struct{})
			ctx, stop := interruptible(signals, func() { close(quit) })
			// Unbuffered sends return only once the watcher took them,
			// so what follows sees their effect without waiting on a clock.
			for i := 0; i < tt.signals; i++ {
				signals <- os.Interrupt
				if i == 0 {
					<-ctx.Done()
				}
			}
			if tt.wantQuit {
				<-quit
			}
			if got := ctx.Err() != nil; got != tt.wantCancel {
				t.Errorf("cancelled after %d signals: %v, want %v", tt.signals, got, tt.wantCancel)
			}
			stop()
			if ctx.Err() == nil {
				t.Errorf("stop left the context running")
			}
			select {
			case <-quit:
				if !tt.wantQuit {
					t.Errorf("quit after %d signals", tt.signals)
				}
			default:
				if tt.wantQuit {
					t.Errorf("no quit after %d signals", tt.signals)
				}
			}
		})
	}
}

//go:build race

package queue

// raceEnabled shortens the differential under the race detector: its
// sequences run on one goroutine, and TestConcurrentUse is there for races.
const raceEnabled = true

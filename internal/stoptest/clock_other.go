//go:build !linux

package stoptest

import "time"

// clockName names the measure of promptness in messages.
const clockName = "wall-clock time (no thread CPU clock on this platform)"

// threadClock returns elapsed wall-clock time: without a thread CPU clock
// the measure is the old one, which a loaded machine stretches.
func threadClock() func() time.Duration {
	t0 := time.Now()
	return func() time.Duration { return time.Since(t0) }
}

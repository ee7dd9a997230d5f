//go:build !linux

package runner

import "time"

// threadCPU reports no per-thread CPU time off Linux: units are timed by
// their wall clock (results.MeasureWall).
func threadCPU() (d time.Duration, measure string, ok bool) { return 0, "", false }

package cli

import (
	"math"
	"strconv"
	"strings"

	"github.com/dprepro/dprepro/experiments"
)

// memoryBudgetEnv names the environment variable that sets the memory a
// run may be estimated to use (experiments.MemoryBudget), in place of the
// machine's physical memory: on a node shared with others, or in a job
// whose scheduler grants less than the machine has.
const memoryBudgetEnv = "DPREPRO_MEMORY_BUDGET"

// applyMemoryBudget sets experiments.MemoryBudget from $DPREPRO_MEMORY_BUDGET
// when it is set and not empty: bytes, or a number with a binary unit
// ("512MiB", "1.5GiB"; B, KiB, MiB, GiB, TiB), and names the variable as
// the budget's source (experiments.MemoryBudgetFrom), so that a refusal no
// spec change can help says to raise it. A value that is not a positive
// size is a usage error naming the variable.
func applyMemoryBudget(getenv func(string) string) error {
	v := strings.TrimSpace(getenv(memoryBudgetEnv))
	if v == "" {
		return nil
	}
	b, ok := parseSize(v)
	if !ok {
		return usagef("$%s: %q is not a memory size (want bytes, or a number with B, KiB, MiB, GiB or TiB, e.g. 8GiB)", memoryBudgetEnv, v)
	}
	experiments.MemoryBudget, experiments.MemoryBudgetFrom = b, "$"+memoryBudgetEnv
	return nil
}

// parseSize parses a positive size in bytes with an optional binary unit.
func parseSize(s string) (int64, bool) {
	units := []struct {
		suffix string
		scale  float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	scale := 1.0
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, scale = strings.TrimSpace(num), u.scale
			break
		}
	}
	x, err := strconv.ParseFloat(s, 64)
	b := x * scale
	if err != nil || !(b >= 1) || b >= math.MaxInt64 {
		return 0, false
	}
	return int64(b), true
}

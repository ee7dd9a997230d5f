package experiments_test

import (
	"errors"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/internal/stoptest"
	"github.com/dprepro/dprepro/kinds/cicoverage"
	"github.com/dprepro/dprepro/kinds/cvtune"
	"github.com/dprepro/dprepro/kinds/expostsweep"
	"github.com/dprepro/dprepro/kinds/learnercmp"
	"github.com/dprepro/dprepro/kinds/mechbounds"
	"github.com/dprepro/dprepro/kinds/privaudit"
	"github.com/dprepro/dprepro/methods/cimethods"
	"github.com/dprepro/dprepro/methods/selection"
)

// withShapes sets DatasetShape to the registry's documented shapes
// (datasets/registry.go: Records and Dim of each entry).
func withShapes(t *testing.T) {
	t.Helper()
	old := DatasetShape
	shapes := map[string][2]int{
		"adult": {30162, 104}, "magic": {19020, 10}, "kddcup99": {494021, 118}, "bank": {45211, 51},
		"twitter": {583250, 77}, "ipums-us": {39928, 57}, "ipums-br": {38000, 52},
	}
	// The numeric attributes of KDD-99 that the af17 specs keep (all 38 of
	// its numeric attributes); the other datasets' lists do not matter here.
	kddNumeric := []string{"duration", "src_bytes", "dst_bytes", "land", "wrong_fragment", "urgent", "hot",
		"num_failed_logins", "logged_in", "num_compromised", "root_shell", "su_attempted", "num_root",
		"num_file_creations", "num_shells", "num_access_files", "num_outbound_cmds", "is_host_login",
		"is_guest_login", "count", "srv_count", "serror_rate", "srv_serror_rate", "rerror_rate",
		"srv_rerror_rate", "same_srv_rate", "diff_srv_rate", "srv_diff_host_rate", "dst_host_count",
		"dst_host_srv_count", "dst_host_same_srv_rate", "dst_host_diff_srv_rate",
		"dst_host_same_src_port_rate", "dst_host_srv_diff_host_rate", "dst_host_serror_rate",
		"dst_host_srv_serror_rate", "dst_host_rerror_rate", "dst_host_srv_rerror_rate"}
	DatasetShape = func(name string) (int, int, []string, bool) {
		s, ok := shapes[name]
		var numeric []string
		if name == "kddcup99" {
			numeric = kddNumeric
		}
		return s[0], s[1], numeric, ok
	}
	t.Cleanup(func() { DatasetShape = old })
}

// withBudget sets MemoryBudget for the test.
func withBudget(t *testing.T, b int64) {
	t.Helper()
	old := MemoryBudget
	MemoryBudget = b
	t.Cleanup(func() { MemoryBudget = old })
}

// TestLimits_HugeCountsRefused checks that absurd counts are refused at
// load, fast, with a message naming the file, line and key and an
// estimate of what they would cost.
func TestLimits_HugeCountsRefused(t *testing.T) {
	withDatasets(t)
	withShapes(t)
	withBudget(t, 24<<30)
	mech := `schema = 1
id = "m"
kind = "mechanism-bounds"
seed = 1
[mechanisms]
mechanisms = ["laplace"]
epsilons = [1.0]
levels = [0.1]
replicates = 2
draws = 100
`
	cases := []struct {
		name, base, old, new string
		want                 []string
	}{
		{"steps 1e12", goodExPost, "steps = 100", "steps = 1000000000000",
			[]string{"af.toml:16: accuracy_first.steps: 1000000000000 is above the limit 1000000", "estimated memory", "TiB", "T × 60 bytes"}},
		{"bootstrap 2e9", goodExPost, "[data]", "[output]\nbootstrap = 2000000000\n[data]",
			[]string{"af.toml:7: output.bootstrap: 2000000000 is above the limit 1000000", "estimated memory 29.8 GiB"}},
		{"dim 2e9", mech, "draws = 100", "draws = 100\ndim = 2000000000",
			[]string{"mech.toml:11: mechanisms.dim: 2000000000 is above the limit 1000000", "estimated work 4e+11 noise draws"}},
		{"mc_samples in a profile", goodCI, "vi_fits = 200", "vi_fits = 200\n[profile.quick.confidence_intervals]\nmc_samples = 100000000",
			[]string{"mc_samples (profile quick): 100000000 is above the limit 10000000", "estimated memory"}},
		{"alphas length", goodCV(), "alphas = [0.5, 1.0]", "alphas = [" + manyAlphas(10001) + "]",
			[]string{"tuning.alphas: has 10001 values, above the limit 10000"}},
		{"bins value", goodHistogram, "bins = [4, 8, 16]", "bins = [4, 8, 100000000]",
			[]string{"histogram.bins[2]: 100000000 is above the limit 10000000"}},
		{"n sweep value", goodCI, `sweep = "d"`, `sweep = "n"`,
			nil}, // values 1, 2, 3: n >= 2 errors only; no limit
		{"audit draws", goodAudit, "draws = 1000", "draws = 10000000000",
			[]string{"audit.draws: 10000000000 is above the limit 100000000", "estimated memory"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(c.base, c.old) {
				t.Fatalf("%q not in the base spec", c.old)
			}
			file := map[string]string{goodExPost: "af.toml", mech: "mech.toml", goodCI: "wkl.toml", goodHistogram: "hist.toml", goodAudit: "audit.toml"}[c.base]
			if file == "" {
				file = "cv.toml"
			}
			// "In under a second" of work: the CPU time of the parse
			// (stoptest.CPU), which a loaded machine does not stretch.
			var err error
			spent := stoptest.CPU(func() {
				_, err = Parse(file, []byte(strings.Replace(c.base, c.old, c.new, 1)), "quick", testKinds)
			})
			if spent > time.Second {
				t.Errorf("refusing took %v of CPU, want < 1 s", spent)
			}
			if c.want == nil {
				if err != nil && strings.Contains(err.Error(), "limit") {
					t.Errorf("unexpected limit error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want %q", c.want[0])
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}

func goodCV() string { return goodSpec }

const goodHistogram = `schema = 1
id = "h"
kind = "histogram-tuning"
seed = 1
[data]
column_scale = "none"
row_norm = "none"
intercept = false
[histogram]
bins = [4, 8, 16]
densities = ["uniform"]
records = 2000
[tuning]
alphas = [1.0]
methods = ["stability"]
`

// TestLimits_SpecFiles checks that every spec in this folder at every
// profile passes the limits (Load) and CheckResources with 2 workers in a
// 24 GiB budget, and that the estimates stay far below the limits'
// reach.
func TestLimits_SpecFiles(t *testing.T) {
	withDatasets(t)
	withShapes(t)
	withBudget(t, 24<<30)
	files, err := filepath.Glob("*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no spec files found (%v)", err)
	}
	for _, f := range files {
		for _, p := range []string{"paper", "quick"} {
			s, err := Load(f, p, testKinds)
			if err != nil {
				t.Errorf("%s (%s): %v", f, p, err)
				continue
			}
			if err := s.CheckResources(2); err != nil {
				t.Errorf("%s (%s): %v", f, p, err)
			}
			b, key := s.EstimateMemory(2)
			t.Logf("%-32s %-6s %9s  largest: %s", f, p, FormatBytes(float64(b)), key)
		}
	}
}

// TestCheckResources_Message checks the error of a spec over the budget:
// file, line and key of the largest term, the estimate, the budget, and
// that more workers cost more.
func TestCheckResources_Message(t *testing.T) {
	withDatasets(t)
	withShapes(t)
	withBudget(t, 24<<30)
	src := strings.Replace(goodCI, "mc_samples = 500", "mc_samples = 5000000", 1)
	s, err := Parse("wkl.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	b1, key := s.EstimateMemory(1)
	b8, _ := s.EstimateMemory(8)
	if key != "confidence_intervals.mc_samples" {
		t.Errorf("largest term %q, want confidence_intervals.mc_samples", key)
	}
	if !(b8 > b1) {
		t.Errorf("8 workers estimated %d bytes, 1 worker %d: want more", b8, b1)
	}
	// m × (d+1) × 8 × 2 (GC) per unit: 5e6 × 4 × 16 = 320 MB (d = 3 at most).
	if lo := int64(5e6 * 4 * 8 * 2); b1 < lo || b1 > 4*lo {
		t.Errorf("1 worker: %d bytes, want about %d", b1, lo)
	}
	if err := s.CheckResources(8); err != nil {
		t.Fatalf("8 workers in 24 GiB: %v", err)
	}
	MemoryBudget = 1 << 30
	err = s.CheckResources(8)
	re := regexp.MustCompile(`^wkl\.toml:15: confidence_intervals\.mc_samples: estimated memory [0-9.]+ GiB with 8 workers exceeds the memory budget 1\.00 GiB; its largest term, [0-9.]+ GiB, is m × \(d\+1\) × 8 bytes of Monte Carlo draws.* × 8 units in flight: lower confidence_intervals\.mc_samples or run with fewer workers, until the term is below [0-9.]+ MiB$`)
	if err == nil || !re.MatchString(err.Error()) || strings.Contains(err.Error(), "fixed") {
		t.Errorf("error %v\nwant it to match %s (the fixed 64 MiB, a small part of 1 GiB, unmentioned)", err, re)
	}
	// Load refuses a spec that does not fit with one worker.
	MemoryBudget = 100 << 20
	if _, err := Parse("wkl.toml", []byte(src), "", testKinds); err == nil || !strings.HasPrefix(err.Error(), "wkl.toml:15: confidence_intervals.mc_samples: estimated memory") {
		t.Errorf("Parse over the budget: %v", err)
	}
}

// TestCheckResources_FixedPart: a refusal names only changes that can
// bring the estimate under the budget. goodSpec at 1 worker is estimated
// at about 102 MiB: the fixed 64 MiB, magic's two terms (36.6 MiB: a
// unit's rows and its table), and under 2 MiB of rows, fold assignments
// and resamples. Under a 60 MiB budget the fixed part alone is over: no
// key is blamed, a larger budget is asked for, from where it came. Under
// 82 MiB cutting magic alone would fit: it is named with how far, and,
// the fixed part being most of the budget, a larger budget too. Under
// 65 MiB no one change fits: the shares that together could are named
// with how far they must shrink.
func TestCheckResources_FixedPart(t *testing.T) {
	withShapes(t)
	withBudget(t, 24<<30)
	oldFrom := MemoryBudgetFrom
	t.Cleanup(func() { MemoryBudgetFrom = oldFrom })
	s, err := Parse("good.toml", []byte(goodSpec), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	total, terms := s.ScaledTerms(1)
	if total < 90<<20 || total > 110<<20 || terms[0].Dataset != "magic" {
		t.Fatalf("goodSpec estimated at %v bytes, largest term %+v: the budgets below assume about 102 MiB, magic's first", total, terms[0])
	}
	tests := []struct {
		name      string
		budget    int64
		from      string
		want      []string
		wantNot   []string
		wantStart string
	}{
		{"fixed part over the budget, from the variable", 60 << 20, "$DPREPRO_MEMORY_BUDGET",
			[]string{"exceeds the memory budget 60.0 MiB (from $DPREPRO_MEMORY_BUDGET); 64.0 MiB of it is fixed (the Go runtime, the binary's data and the figure renderer, whatever the spec), above the budget by itself: no change to the spec can bring the estimate under it; raise $DPREPRO_MEMORY_BUDGET to at least " + FormatBytes(total)},
			[]string{"lower", "largest term", "data.columns"}, "good.toml: estimated memory "},
		{"fixed part over the machine's memory", 60 << 20, "",
			[]string{"exceeds the memory budget 60.0 MiB; 64.0 MiB of it is fixed", "no change to the spec can bring the estimate under it; run it on a machine with more memory (the estimate needs at least " + FormatBytes(total) + ")"},
			[]string{"lower", "$DPREPRO"}, "good.toml: estimated memory "},
		{"one change fits, the fixed part most of the budget", 82 << 20, "$DPREPRO_MEMORY_BUDGET",
			[]string{"its largest term, 29.6 MiB, is dataset magic: a unit's rows", "with 1 more term that dataset magic drives (36.6 MiB in all)",
				"keep fewer attributes (data.columns) or records (data.subsample), until those terms are below 16.1 MiB together",
				"; or raise $DPREPRO_MEMORY_BUDGET to at least " + FormatBytes(total) + ", as 64.0 MiB of it is fixed"},
			[]string{"no change", "no one change"}, "good.toml:7: data.datasets[0]: estimated memory "},
		{"no one change fits", 65 << 20, "$DPREPRO_MEMORY_BUDGET",
			[]string{"no one change can bring it under: 64.0 MiB of it is fixed", "and the 2 largest shares of the rest, which must shrink by " + FormatBytes(total-65<<20) + " together, are 29.6 MiB, dataset magic",
				"; 960 KiB, 120 rows × 4096 bytes (rows, checkpoint and rows.csv), ×2 for garbage-collector headroom, with 1 more term that cv.folds drives (1020 KiB in all)",
				": dataset magic has n = 19020, d = 10 as the registry documents it: keep fewer attributes (data.columns) or records (data.subsample), and lower cv.folds; or raise $DPREPRO_MEMORY_BUDGET to at least"},
			[]string{"its largest term"}, "good.toml:7: data.datasets[0]: estimated memory "},
	}
	for _, tt := range tests {
		MemoryBudget, MemoryBudgetFrom = tt.budget, tt.from
		err := s.CheckResources(1)
		var se *SpecError
		if !errors.As(err, &se) {
			t.Errorf("%s: %v, want a *SpecError", tt.name, err)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, tt.wantStart) {
			t.Errorf("%s: error\n%s\ndoes not start with %q", tt.name, msg, tt.wantStart)
		}
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error\n%s\nlacks %q", tt.name, msg, w)
			}
		}
		for _, w := range tt.wantNot {
			if strings.Contains(msg, w) {
				t.Errorf("%s: error\n%s\nhas %q", tt.name, msg, w)
			}
		}
	}
}

// TestEstimateMemory_AtLimits sets every count to its limit: the estimate
// stays finite (no overflow; saturates at MaxInt64 at worst) and names a
// key.
func TestEstimateMemory_AtLimits(t *testing.T) {
	withShapes(t)
	for _, kind := range testKinds.Names() {
		s := DefaultSpec()
		s.Kind = kind
		s.Data.Datasets = []string{"twitter", "kddcup99"}
		s.Data.Subsample = 1e8
		s.Output.Bootstrap = 1e6
		sec, _ := testKinds.Section(kind)
		s.Section = sec
		switch sec := sec.(type) {
		case *expostsweep.Section:
			a := &sec.AccuracyFirst
			a.Steps, a.Trials = 1e6, 1e5
			a.Alphas = make([]float64, 1e4)
			a.Methods = []string{"noise-reduction", "doubling", "theory", "theory-output"}
			a.Generator = "covariance"
		case *cicoverage.Section:
			c := &sec.ConfidenceIntervals
			c.Replicates, c.MCSamples, c.VIFits, c.BlockSize, c.N1, c.D1 = 1e6, 1e7, 1e7, 1, 1e8, 1e5
			c.Values = make([]float64, 1000)
			for i := range c.Values {
				c.Values[i] = 1e8
			}
			c.Sweep = "n"
			c.Methods = cimethods.Names()
		case *cvtune.Section:
			sec.CV.Repetitions, sec.CV.Folds = 1e4, 1e5
			sec.Tuning.Lambdas, sec.Tuning.Alphas, sec.Tuning.Methods = make([]float64, 1e4), make([]float64, 1e4), selection.Names()
		case *cvtune.HistSection:
			sec.CV.Repetitions, sec.CV.Folds = 1e4, 1e5
			sec.Tuning.Alphas, sec.Tuning.Methods = make([]float64, 1e4), selection.Names()
			h := &sec.Histogram
			h.Bins = make([]int, 1e4)
			for i := range h.Bins {
				h.Bins[i] = 1e7
			}
			h.Densities, h.Records = cvtune.HistogramDensities, 1e8
			h.Attributes = make([]cvtune.AttributeSpec, 1000)
		case *mechbounds.Section:
			m := &sec.Mechanisms
			m.Mechanisms, m.Dim, m.Candidates = mechbounds.MechanismNames, 1e6, 1e6
			m.Replicates, m.Draws = 1e5, 1e9
			m.Epsilons, m.Levels = make([]float64, 1000), make([]float64, 1000)
		case *privaudit.Section:
			a := &sec.Audit
			a.Mechanisms, a.Epsilons, a.Draws, a.FitDraws = make([]string, 30), make([]float64, 1000), 1e8, 1e7
		case *learnercmp.Section:
			sec.CV.Repetitions, sec.CV.Folds = 1e4, 1e5
			c := &sec.Comparison
			c.Learners, c.Epsilons, c.Lambda = make([]string, 1000), make([]float64, 1e4), 0.01
		default:
			t.Fatalf("kind %s: no case for section %T", kind, sec)
		}
		for _, w := range []int{1, 2, math.MaxInt} {
			b, key := s.EstimateMemory(w)
			if b <= 0 || key == "" {
				t.Errorf("%s, %d workers: %d bytes, largest %q", kind, w, b, key)
			}
			if err := s.CheckResources(w); err == nil {
				t.Errorf("%s at the limits fits the budget (%d bytes)", kind, b)
			}
		}
	}
}

func TestPhysicalMemory(t *testing.T) {
	if b := PhysicalMemory(); b < 64<<20 {
		t.Errorf("PhysicalMemory() = %d", b)
	}
}

// manyAlphas returns n distinct positive values as a TOML array body.
func manyAlphas(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString(".0")
	}
	return b.String()
}

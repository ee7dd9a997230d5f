package experiments

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Claim rules: how a [[claims]] table is decided (package claims).
const (
	RuleMatch      = "match"      // our mean equals the published value within our CI plus tolerance
	RuleGreater    = "greater"    // the method's metric exceeds the other's (paired difference CI > 0)
	RuleLess       = "less"       // … is below the other's (paired difference CI < 0)
	RuleIncreasing = "increasing" // the metric rises with x
	RuleDecreasing = "decreasing" // the metric falls with x
	RuleBelowX     = "below_x"    // the metric is below the x value itself (achieved excess risk < α)
	RuleAtMost     = "at_most"    // the metric is at most value
	RuleAtLeast    = "at_least"   // the metric is at least value
)

// ClaimRules lists the accepted values of claims[i].rule.
var ClaimRules = []string{RuleMatch, RuleGreater, RuleLess, RuleIncreasing, RuleDecreasing, RuleBelowX, RuleAtMost, RuleAtLeast}

// ClaimSpec is one [[claims]] table of a spec: a claim or published number
// of the reproduced paper, with its source and the rule that checks it
// against a run (package claims writes the verdicts to claims.csv):
//
//	[[claims]]
//	id = "t4-dp-obj-lr-coverage"      # unique in the spec
//	source = "Table 4"                # where the paper says it
//	statement = "…"                   # the claim, in words
//	rule = "match"                    # see ClaimRules
//	metric = "coverage"               # a summary.csv metric
//	method = "dp-obj-lr"              # a summary.csv method
//	dataset = "bank"                  # optional when the spec has one dataset
//	x = [0.3, 0.6, 1.0]               # the swept values it is about (empty: every x of the run)
//	paper = [0.948, 0.951, 0.95]      # match: the published values, one per x
//	tolerance = 0.01                  # match: allowed |ours − paper| beyond our CI half-width
//	than = "alphaSplit"               # greater/less: the other method …
//	than_metric = "hypothesis_eps"    # … or another metric of the same method
//	value = 0.05                      # at_most/at_least: the bound
//	unreadable = ["…"]                # cells of the paper that could not be read
//	analysis = "docs/analysis.md#…"   # where a verdict that is not held is explained
//
// Claims are not part of the run's identity (the spec hash): editing one
// re-evaluates it without recomputing any unit.
type ClaimSpec struct {
	ID         string    `toml:"id"`
	Source     string    `toml:"source"`
	Statement  string    `toml:"statement"`
	Rule       string    `toml:"rule"`
	Metric     string    `toml:"metric"`
	Method     string    `toml:"method"`
	Dataset    string    `toml:"dataset,omitempty"`
	X          []float64 `toml:"x,omitempty"`
	Paper      []float64 `toml:"paper,omitempty"`
	Tolerance  float64   `toml:"tolerance,omitempty"`
	Than       string    `toml:"than,omitempty"`
	ThanMetric string    `toml:"than_metric,omitempty"`
	Value      *float64  `toml:"value,omitempty"`
	Unreadable []string  `toml:"unreadable,omitempty"`
	// Notes is free text for the reader of the spec file; no output
	// carries it.
	Notes string `toml:"notes,omitempty"`
	// Analysis is a link, relative to the repository's root, to the
	// written analysis of the claim's verdict where it is not held, e.g.
	// "docs/analysis.md#cv13-magic-maxabs-s5-mse-stability-lt-alphasplit";
	// `dprepro report` links every "not held" verdict to it. Optional; nil
	// when absent, and never empty when present.
	Analysis *string `toml:"analysis,omitempty"`
}

// claimsFile decodes the [[claims]] tables of a spec file apart from the
// spec (they are not in its canonical form or hash).
type claimsFile struct {
	Claims []ClaimSpec `toml:"claims"`
}

// ClaimsOf returns the [[claims]] tables of the spec file that a run's
// manifest names (results.SpecInfo.File): a built-in spec as
// "builtin:experiments/ID.toml", read from the copy built into the binary,
// else a file path. The tables are decoded, not validated: a report reads
// the current links to analyses from them, and a claim's verdicts come
// from the run's claims.csv.
func ClaimsOf(file string) ([]ClaimSpec, error) {
	var (
		src []byte
		err error
	)
	if name, ok := strings.CutPrefix(file, BuiltinPrefix); ok {
		src, err = builtin.ReadFile(name)
	} else {
		src, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("claims of %s: %w", file, err)
	}
	var cf claimsFile
	if _, err := toml.Decode(string(src), &cf); err != nil {
		return nil, fmt.Errorf("claims of %s: %w", file, err)
	}
	return cf.Claims, nil
}

// Produced is what a kind's summary.csv holds for a spec: the values of
// its dataset, method and metric columns, the only names a claim
// ([[claims]]) can be decided on.
type Produced struct {
	// Datasets are the values of the dataset column: data.datasets for
	// most kinds; the histogram's sources, or the mechanisms of
	// mechanism-bounds and privacy-audit, for kinds whose rows are not
	// keyed by a registry dataset.
	Datasets []string
	// Methods are the values of the method column, the labels the rows
	// carry: e.g. "stability", or "stability/noisy-gd" when
	// tuning.learners is set; external methods ([[methods]]) by their
	// names.
	Methods []string
	// Varied are the labels of methods that run as variants (a list in
	// the params of their [[methods]] table; see [Spec.VariedMethods]):
	// their rows carry "label[param=value,…]" (or "label[grid=oracle]",
	// "label[grid=private]" for a grid selected per fold), never the bare
	// label. The exact variant labels are known once the
	// method's declared parameters are, at the run: a name that passed
	// [Produced.CheckMethod] but no row carries is reported there (a
	// claim "missing", with the reason).
	Varied []string
	// Metrics are the summarized metrics, in the summary's order.
	Metrics []string
}

// variantBase is the base of a variant label "base[…]" and true, or ""
// and false for any other name (as methods/params.Base splits it).
func variantBase(name string) (string, bool) {
	if i := strings.IndexByte(name, '['); i > 0 && strings.HasSuffix(name, "]") {
		return name[:i], true
	}
	return "", false
}

// CheckVariantClaims checks, once a kind knows every label its rows carry
// (labels, after the methods' hellos have declared their parameters),
// each claim's method and than that names a variant "base[…]": it must
// be one of labels. Parse checks only the base ([Produced.CheckMethod]),
// since the exact labels depend on the declared parameters (a value's
// type decides "steps=20" against "steps=20.0"). The error is at the
// claim's key line and lists the run's variants of that base; a base that
// runs no variants in this run is left to the claims, which say why
// ("missing").
func (s *Spec) CheckVariantClaims(labels []string) error {
	var errs []error
	for i, c := range s.Claims {
		for _, f := range [...]struct{ field, name string }{{"method", c.Method}, {"than", c.Than}} {
			b, ok := variantBase(f.name)
			if !ok || slices.Contains(labels, f.name) {
				continue
			}
			var same []string
			for _, l := range labels {
				if lb, ok := variantBase(l); ok && lb == b {
					same = append(same, l)
				}
			}
			if len(same) == 0 {
				continue
			}
			key := fmt.Sprintf("claims[%d].%s", i, f.field)
			errs = append(errs, s.ErrorAt(key, key, fmt.Errorf("no variant %q in this run: the variants of %s are %s%s", f.name, b, strings.Join(same, ", "), Hint(f.name, same))))
		}
	}
	return errors.Join(errs...)
}

// CheckMethod returns "" when name is a method label the rows can carry
// (one of Methods, or a variant "base[…]" of one of Varied), else why
// not, in words: the bare label of a method that runs variants, or an
// unknown name with the names the spec runs and a "did you mean".
func (p Produced) CheckMethod(name string) string {
	if slices.Contains(p.Methods, name) {
		return ""
	}
	if b, ok := variantBase(name); ok && slices.Contains(p.Varied, b) {
		return ""
	}
	if slices.Contains(p.Varied, name) {
		return fmt.Sprintf("method %q runs variants (a list in its [[methods]] params): name one as its rows label it, %s[param=value,…] (or %s[grid=…] for a grid selected per fold)", name, name, name)
	}
	known := slices.Clone(p.Methods)
	for _, v := range p.Varied {
		known = append(known, v+"[…]")
	}
	return unknownName("method", name, "the spec runs", known)
}

// Producer is implemented by a Section that declares what its kind's
// summary.csv holds for a spec, so that a claim naming anything else is
// refused at load with the names it could have used.
//
// A kind whose section does not implement it (a user's kind may not)
// declares nothing: its claims' method, than, metric and than_metric are
// then not checked at load, and their dataset only against
// data.datasets. Nothing is lost silently even so: every claim still
// yields claims.csv rows, and a name the run's summary lacks makes them
// "missing" with the reason (package claims).
type Producer interface {
	// Produces returns the names of s's summary, derived from the kind's
	// registries, the spec's lists (its [[methods]] included) and the
	// metric list its Summary uses. It must not fail on a spec that did
	// not validate.
	Produces(s *Spec) Produced
}

// Produced returns the names of s's summary as its kind declares them
// ([Producer]), and false for a kind that declares nothing.
func (s *Spec) Produced() (Produced, bool) {
	if p, ok := s.Section.(Producer); ok {
		return p.Produces(s), true
	}
	return Produced{}, false
}

// ClaimDatasets returns the datasets a claim of s may name: the dataset
// column of the kind's summary ([Producer]), or data.datasets for a kind
// that declares nothing. A claim that names none is about the one dataset
// of a spec that has one.
func (s *Spec) ClaimDatasets() []string {
	if p, ok := s.Produced(); ok {
		return p.Datasets
	}
	return s.Data.Datasets
}

// claimScope is what the claims of a spec file may name: the union over
// the base spec and every profile (a claim is about the file, and a
// profile that runs fewer methods or datasets leaves its claims missing
// at that profile, with the reason, rather than refused).
type claimScope struct {
	Produced
	declared bool // the kind declares methods and metrics (Producer)
}

// scopeOf returns the union of what specs produce, in order of first
// appearance.
func scopeOf(specs ...*Spec) *claimScope {
	sc := &claimScope{}
	union := func(dst *[]string, xs []string) {
		for _, x := range xs {
			if !slices.Contains(*dst, x) {
				*dst = append(*dst, x)
			}
		}
	}
	for _, s := range specs {
		union(&sc.Datasets, s.ClaimDatasets())
		if p, ok := s.Produced(); ok {
			sc.declared = true
			union(&sc.Methods, p.Methods)
			union(&sc.Varied, p.Varied)
			union(&sc.Metrics, p.Metrics)
		}
	}
	return sc
}

// unknownName is the message for a claim's name that the run cannot
// produce: `unknown metric "AUC" (the kind writes: auc, mse); did you mean
// "auc"?`.
func unknownName(what, name, whose string, known []string) string {
	return fmt.Sprintf("unknown %s %q (%s: %s)%s", what, name, whose, strings.Join(known, ", "), Hint(name, known))
}

// validateClaims checks the [[claims]] tables: each on its own, and each
// name (dataset, method, than, metric, than_metric) against what the
// kind's summary holds at some profile of the file (s.claimScope, set by
// Parse; s alone for a spec built in code).
func (s *Spec) validateClaims() []fieldErr {
	var errs []fieldErr
	add := func(i int, field, format string, args ...any) {
		key := fmt.Sprintf("claims[%d].%s", i, field)
		errs = append(errs, fieldErr{key: key, path: key, msg: fmt.Sprintf(format, args...)})
	}
	// addAt reports at the key's line, shown as the element's path.
	addAt := func(i int, field string, k int, format string, args ...any) {
		key := fmt.Sprintf("claims[%d].%s", i, field)
		errs = append(errs, fieldErr{key: key, path: fmt.Sprintf("%s[%d]", key, k), msg: fmt.Sprintf(format, args...)})
	}
	scope := s.claimScope
	if scope == nil {
		scope = scopeOf(s)
	}
	checkName := func(i int, field, what, name, whose string, known []string) {
		if name == "" || len(known) == 0 || slices.Contains(known, name) {
			return // an empty list is the section's to report
		}
		add(i, field, "%s", unknownName(what, name, whose, known))
	}
	seen := map[string]int{}
	for i, c := range s.Claims {
		switch {
		case c.ID == "":
			add(i, "id", "required")
		case !safeName.MatchString(c.ID):
			add(i, "id", "must be a safe name: letters, digits, '-', '_' and '.', starting with a letter or digit (got %q)", c.ID)
		default:
			if j, ok := seen[c.ID]; ok {
				add(i, "id", "duplicate claim %q (also claims[%d])", c.ID, j)
			}
			seen[c.ID] = i
		}
		if c.Source == "" {
			add(i, "source", "required: the section, table or figure of the paper")
		}
		if c.Statement == "" {
			add(i, "statement", "required: the claim in words")
		}
		if c.Metric == "" {
			add(i, "metric", "required")
		}
		if c.Method == "" {
			add(i, "method", "required")
		}
		checkName(i, "dataset", "dataset", c.Dataset, "the spec runs", scope.Datasets)
		if c.Dataset == "" && len(scope.Datasets) > 1 {
			add(i, "dataset", "required: the spec's summary has %d datasets (%s)", len(scope.Datasets), strings.Join(scope.Datasets, ", "))
		}
		if scope.declared {
			for _, f := range [...]struct{ field, name string }{{"method", c.Method}, {"than", c.Than}} {
				if f.name == "" || len(scope.Methods)+len(scope.Varied) == 0 {
					continue // an empty list is the section's to report
				}
				if why := scope.CheckMethod(f.name); why != "" {
					add(i, f.field, "%s", why)
				}
			}
			checkName(i, "metric", "metric", c.Metric, "the kind writes", scope.Metrics)
			checkName(i, "than_metric", "metric", c.ThanMetric, "the kind writes", scope.Metrics)
		}
		dupX := SeenBefore[float64]()
		for k, x := range c.X {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				addAt(i, "x", k, "must be finite (got %v)", x)
			} else if dupX(x) {
				addAt(i, "x", k, "duplicate value %v (each x is decided once)", x)
			}
		}
		switch c.Rule {
		case RuleMatch:
			if len(c.X) == 0 || len(c.Paper) != len(c.X) {
				add(i, "paper", "a match claim needs x and one published value per x (got %d x, %d values)", len(c.X), len(c.Paper))
			}
			for k, v := range c.Paper {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					addAt(i, "paper", k, "a match claim's published value must be finite (got %v): leave out the x of a cell that cannot be read and list the cell in unreadable", v)
				}
			}
			if !(c.Tolerance >= 0) || math.IsInf(c.Tolerance, 0) {
				add(i, "tolerance", "must be finite and >= 0 (got %v)", c.Tolerance)
			}
		case RuleGreater, RuleLess:
			switch {
			case (c.Than == "") == (c.ThanMetric == ""):
				add(i, "than", "a %s claim names exactly one of than (another method) and than_metric (another metric of the same method)", c.Rule)
			case c.Than != "" && c.Than == c.Method:
				add(i, "than", "compares method %q with itself: name another method (or than_metric, another metric of it)", c.Than)
			case c.ThanMetric != "" && c.ThanMetric == c.Metric:
				add(i, "than_metric", "compares metric %q of %q with itself: name another metric (or than, another method)", c.ThanMetric, c.Method)
			}
		case RuleAtMost, RuleAtLeast:
			if c.Value == nil || math.IsNaN(*c.Value) || math.IsInf(*c.Value, 0) {
				add(i, "value", "an %s claim needs a finite value", c.Rule)
			}
		case RuleIncreasing, RuleDecreasing:
			if len(c.X) == 1 {
				add(i, "x", "a trend needs at least two x values (or none: every x of the run)")
			}
		case RuleBelowX:
		default:
			add(i, "rule", "%s", Unknown("rule", c.Rule, ClaimRules))
		}
		// A key the rule does not read would be ignored without a word:
		// refuse it, naming the rules that read it.
		if c.Rule != RuleGreater && c.Rule != RuleLess {
			if c.Than != "" {
				add(i, "than", "than is read by the greater and less rules only, and rule %q compares with nothing (got %q)", c.Rule, c.Than)
			}
			if c.ThanMetric != "" {
				add(i, "than_metric", "than_metric is read by the greater and less rules only, and rule %q compares with nothing (got %q)", c.Rule, c.ThanMetric)
			}
		}
		if c.Value != nil && c.Rule != RuleAtMost && c.Rule != RuleAtLeast {
			add(i, "value", "value is read by the at_most and at_least rules only, and rule %q has no bound (got %v)", c.Rule, *c.Value)
		}
		if len(c.Paper) > 0 && (c.Rule == RuleIncreasing || c.Rule == RuleDecreasing) {
			add(i, "paper", "a trend is decided over all its x at once, in one claims.csv row with no published value: rule %q does not read paper (got %d values)", c.Rule, len(c.Paper))
		}
		if c.Tolerance != 0 && c.Rule != RuleMatch {
			add(i, "tolerance", "tolerance is read by the match rule only, and rule %q has no published value to be near (got %v)", c.Rule, c.Tolerance)
		}
		if c.Analysis != nil && strings.TrimSpace(*c.Analysis) == "" {
			add(i, "analysis", "must be a non-empty link to the written analysis, e.g. \"docs/analysis.md#%s-%s\" (or leave it out)", s.ID, c.ID)
		}
		if c.Rule != RuleMatch && c.Rule != RuleIncreasing && c.Rule != RuleDecreasing && len(c.Paper) > 0 && len(c.Paper) != len(c.X) {
			add(i, "paper", "one published value per x (got %d x, %d values)", len(c.X), len(c.Paper))
		}
	}
	return errs
}

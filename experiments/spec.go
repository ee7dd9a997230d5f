// Package experiments defines the TOML experiment specifications that drive
// dprepro, and the specs themselves (the *.toml files in this directory, one
// per paper figure or table).
//
// # Loading
//
// A spec is loaded in fixed steps: DefaultSpec, decode the file over it,
// reject keys that no field took (unknown keys), apply the chosen profile's
// overrides, normalise, validate. Every error names the file, the line of the
// key at fault (where the key is written in the file) and the key path, e.g.
//
//	cv13-adult.toml:14: tuning.lambdas[3]: must be > 0 (got -1)
//
// # Profiles
//
// A spec may carry tables [profile.NAME] whose contents have the shape of the
// spec itself and override it when the profile is chosen, e.g.
//
//	[profile.quick.cv]
//	repetitions = 2
//
// Every profile written in a file is checked for unknown keys and validated,
// whichever profile is run. The profile "paper" is the paper's protocol; when
// a file has no [profile.paper] table the base spec is the paper protocol.
package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// SchemaVersion is the spec schema version this build reads.
const SchemaVersion = 1

// Kinds of experiment the runner knows.
const (
	KindCVTuning = "cv-tuning"    // Chaudhuri & Vinterbo 2013: repeated CV of private parameter tuning
	KindExPost   = "expost-sweep" // Ligett et al. 2017: ex-post privacy loss of accuracy-first searches
	// KindCICoverage is Wang, Kifer & Lee 2019: bootstrap coverage and length of private confidence intervals.
	KindCICoverage = "ci-coverage"
	// KindHistogram is Chaudhuri & Vinterbo 2013, Appendix 6.3: repeated CV
	// of private bin-width selection for histogram density estimation.
	KindHistogram = "histogram-tuning"
	// KindMechanisms is Nguyen 2019, Sections 3.1–3.4: empirical error tails
	// of the basic mechanisms against the review's accuracy bounds.
	KindMechanisms = "mechanism-bounds"
	// KindAudit is the empirical privacy audit: Clopper–Pearson lower
	// bounds on ε of every mechanism of the harness, from outputs on
	// neighbouring datasets (core/audit).
	KindAudit = "privacy-audit"
)

// safeName is the form of a spec id and a profile name: a safe file name on
// every platform, and never "." or "..".
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ReservedIDs are names the harness writes itself at the top of an output
// folder, which a spec id may not take.
var ReservedIDs = []string{"index.json", "index.md", "wkl-figures"}

// Kinds lists the known kinds.
var Kinds = []string{KindCVTuning, KindExPost, KindCICoverage, KindHistogram, KindMechanisms, KindAudit}

// Spec is a resolved experiment specification.
type Spec struct {
	Schema int    `toml:"schema"`
	ID     string `toml:"id"`    // Required; names the output folder.
	Title  string `toml:"title"` // Human-readable; figure titles use it.
	Kind   string `toml:"kind"`  // Required; one of the Kind constants.
	Paper  string `toml:"paper"` // Citation of the reproduced paper.
	Seed   int64  `toml:"seed"`  // Root seed of every random stream; >= 0.
	Notes  string `toml:"notes"` // Deviations and choices, copied to the manifest.

	// Profile is the name of the profile applied; set by Load, not read
	// from the file.
	Profile string `toml:"profile_applied,omitempty"`
	// ProfileFallback reports that the profile "quick" was asked for and
	// the file has none, so the spec runs as written (set by Load).
	ProfileFallback bool `toml:"-"`

	Data   DataSpec   `toml:"data"`
	CV     CVSpec     `toml:"cv"`
	Tuning TuningSpec `toml:"tuning"`
	// AccuracyFirst configures the expost-sweep kind.
	AccuracyFirst AccuracyFirstSpec `toml:"accuracy_first"`
	// ConfidenceIntervals configures the ci-coverage kind.
	ConfidenceIntervals CISpec `toml:"confidence_intervals"`
	// Histogram configures the histogram-tuning kind (with cv, and tuning's
	// alphas, delta and methods).
	Histogram HistogramSpec `toml:"histogram"`
	// Mechanisms configures the mechanism-bounds kind.
	Mechanisms MechanismsSpec `toml:"mechanisms"`
	// Audit configures the privacy-audit kind.
	Audit  AuditSpec   `toml:"audit"`
	Output OutputSpec  `toml:"output"`
	Source *SourceInfo `toml:"-"`

	// lines locates the keys of the file the spec was parsed from (nil for
	// a spec built in code), for messages after Load (CheckResources).
	lines keyLines
}

// SourceInfo records where a spec came from.
type SourceInfo struct {
	Path   string // file path as given
	SHA256 string // digest of the file's bytes
}

// DataSpec selects datasets and their preprocessing.
type DataSpec struct {
	// Datasets names registry entries (see `dprepro list`). Required.
	Datasets []string `toml:"datasets"`
	// Synthetic says when a dataset may run on its labelled synthetic
	// stand-in. Default "auto". A real file that is present is always used
	// (and a present but bad one is always an error), except with "always":
	//   - "auto": the stand-in replaces an absent file only when no data
	//     directory was named (no --data-dir, no $DPREPRO_DATA: the
	//     newcomer's first run); from a named directory an absent file is
	//     an error saying `dprepro data fetch NAME --data-dir DIR`;
	//   - "allow": the spec allows the stand-in for an absent file even
	//     from a named directory (for data few users have: the IPUMS
	//     extracts, Twitter); the stand-in records why;
	//   - "never": an absent file is an error;
	//   - "always": the stand-in, without looking at the data directory.
	Synthetic string `toml:"synthetic"`
	// ColumnScale is "maxabs" (default), "zscore" or "none".
	ColumnScale string `toml:"column_scale"`
	// Intercept appends a constant feature before row scaling. Default true.
	Intercept bool `toml:"intercept"`
	// RowNorm is "l2-max" (default), "l2-clip", "l2-unit", "l1-max" or "none".
	RowNorm string `toml:"row_norm"`
	// Log1p lists raw numeric columns mapped x -> log(1+x) before scaling.
	Log1p []string `toml:"log1p"`
	// Subsample, when > 0, keeps a seeded uniform subsample of that many
	// rows (without replacement) after preprocessing. Zero keeps all rows.
	Subsample int `toml:"subsample"`
	// Columns keeps only these raw attributes (empty keeps all), e.g. to
	// drop the three text columns of KDD-99 as Ligett et al. do.
	Columns []string `toml:"columns"`
	// TargetLog1p maps a regression target y -> log(1+y).
	TargetLog1p bool `toml:"target_log1p"`
	// TargetScale is "none" (default) or "maxabs" (y / max|y|).
	TargetScale string `toml:"target_scale"`
}

// AccuracyFirstSpec is the ex-post privacy sweep of Ligett, Neel, Roth,
// Waggoner & Wu, "Accuracy First" (NeurIPS 2017), Section 4 and Appendix B.
type AccuracyFirstSpec struct {
	// Task is "ridge" (Section 3.1) or "logistic" (Section 3.2).
	Task string `toml:"task"`
	// Generator is the private ERM method that noise reduction and the
	// doubling method drive: "covariance" (ridge only; Algorithm 3) or
	// "output" (Algorithm 5).
	Generator string `toml:"generator"`
	// Calibration of the accuracy tests: "authors-code" or "paper".
	Calibration string `toml:"calibration"`
	// Lambda is the regularization λ; Gamma the failure probability γ.
	Lambda float64 `toml:"lambda"`
	Gamma  float64 `toml:"gamma"`
	// Steps is the number T of noise-reduction levels.
	Steps int `toml:"steps"`
	// Alphas is the grid of requested excess risks α.
	Alphas []float64 `toml:"alphas"`
	// Trials is the number of independent trials per (method, α).
	Trials int `toml:"trials"`
	// Methods: "noise-reduction", "doubling", "theory" (the generator's
	// utility theorem inverted) and, for ridge, "theory-output"
	// (Theorem A.9).
	Methods []string `toml:"methods"`
	// EpsMin is the most private level ε_min; 0 means 1/n.
	EpsMin float64 `toml:"eps_min"`
	// EpsMaxFactor sets ε_max = EpsMaxFactor·E, E the theory ε for α.
	EpsMaxFactor float64 `toml:"eps_max_factor"`
}

// CISpec is the coverage experiment of Wang, Kifer & Lee, "Differentially
// Private Confidence Intervals for Empirical Risk Minimization" (JPC 9(1),
// 2019, arXiv:1804.03794), Section 7: bootstrap coverage and length of the
// private confidence intervals of Algorithms 3 and 5 against the
// variability interval.
type CISpec struct {
	// Methods are "<privacy>-<perturbation>-<model>" with privacy dp or
	// zcdp, perturbation obj or output, model lr or svm (CIMethods).
	Methods []string `toml:"methods"`
	// Alpha is the CI level 1−α; in (0, 1). Default 0.05.
	Alpha float64 `toml:"alpha"`
	// C is the regularization c (objective c‖θ‖²); > 0. Default 0.001.
	C float64 `toml:"c"`
	// H is the Huber width h of the SVM loss; > 0. Default 1.
	H float64 `toml:"h"`
	// Eps1, Eps2, Eps3 are the DP budgets ε₁ (θ̃), ε₂ (Hessian), ε₃
	// (gradient covariance); > 0. Defaults 0.5, 0.25, 0.25. The zCDP
	// methods use ρᵢ = εᵢ²/2 (Section 7: "we set ρ = ε²/2").
	Eps1 float64 `toml:"eps1"`
	Eps2 float64 `toml:"eps2"`
	Eps3 float64 `toml:"eps3"`
	// N1 is the number of records kept after the seeded permutation; 0
	// keeps all. D1 is the number of features kept (before the constant
	// feature); 0 keeps all.
	N1 int `toml:"n1"`
	D1 int `toml:"d1"`
	// Sweep is the swept parameter, "n", "d", "eps1", "eps2" or "eps3";
	// Values its values (integers >= 1 for n and d, > 0 otherwise).
	Sweep  string    `toml:"sweep"`
	Values []float64 `toml:"values"`
	// Replicates is the number k of bootstrap replicates for coverage (the
	// paper: 1000); >= 1.
	Replicates int `toml:"replicates"`
	// MCSamples is the number m of Monte Carlo samples of Algorithms 3 and
	// 5 (the paper: 10,000); >= 1.
	MCSamples int `toml:"mc_samples"`
	// VIFits is the number of bootstrap private fits of the variability
	// interval (the paper: 10,000); >= 2.
	VIFits int `toml:"vi_fits"`
	// BlockSize is the number of coverage replicates per runner unit; >= 1.
	// Default 50. Results do not depend on it.
	BlockSize int `toml:"block_size"`
}

// HistogramSpec is the histogram case study of Chaudhuri & Vinterbo 2013,
// Appendix 6.3: the bin width of Algorithm 5 chosen privately.
type HistogramSpec struct {
	// Bins are the candidate numbers of bins K (widths h = 1/K); distinct,
	// >= 1.
	Bins []int `toml:"bins"`
	// Densities names synthetic densities on [0, 1] with a known f
	// (HistogramDensities), whose exact ISE is reported.
	Densities []string `toml:"densities"`
	// Records is the number of points drawn from each density; >= 1 when
	// Densities is set.
	Records int `toml:"records"`
	// Attributes are real one-dimensional attributes.
	Attributes []AttributeSpec `toml:"attributes"`
}

// AttributeSpec is one numeric attribute of a dataset of data.datasets
// (read with column_scale = "none", so the raw value), mapped to [0, 1] by
// public bounds: (x − Lo)/(Hi − Lo), values outside clipped to the bounds
// (a data-independent map, so the privacy analysis is unchanged).
type AttributeSpec struct {
	Dataset string  `toml:"dataset"`
	Column  string  `toml:"column"`
	Lo      float64 `toml:"lo"`
	Hi      float64 `toml:"hi"`
}

// HistogramDensities are the synthetic densities of the histogram-tuning
// kind: Beta mixtures on [0, 1] (see kinds/cvtune).
var HistogramDensities = []string{"uniform", "beta(2,5)", "bimodal"}

// MechanismsSpec is the mechanism-bounds kind: each mechanism of Nguyen's
// 2019 review (Sections 3.1–3.4) run many times at each ε, and the
// empirical probability of an error beyond the review's threshold compared
// with the bound.
type MechanismsSpec struct {
	// Mechanisms are names from MechanismNames.
	Mechanisms []string `toml:"mechanisms"`
	// Epsilons is the ε grid; finite and > 0.
	Epsilons []float64 `toml:"epsilons"`
	// Levels are the tail probabilities at which the thresholds are set
	// (δ, or e^(−t) for the exponential mechanism); in (0, 1).
	Levels []float64 `toml:"levels"`
	// Dim is k: the bits of randomized response, the coordinates of the
	// Laplace and Gaussian mechanisms; >= 1. Default 10.
	Dim int `toml:"dim"`
	// Candidates is |Y| of the exponential mechanism (scores −0, −1, …,
	// −(|Y|−1), sensitivity 1); >= 2. Default 100.
	Candidates int `toml:"candidates"`
	// GaussianDelta is the δ of the Gaussian mechanism's σ (Proposition
	// 3.15); in (0, 1). Default 1e-5.
	GaussianDelta float64 `toml:"gaussian_delta"`
	// Replicates and Draws: each (mechanism, ε) runs Replicates units of
	// Draws outputs each; the summary's CI is over the replicates.
	Replicates int `toml:"replicates"` // >= 2
	Draws      int `toml:"draws"`      // >= 1
}

// AuditSpec is the privacy-audit kind: each audited mechanism, at each
// privacy parameter and in each variant (the correct one and deliberately
// broken ones), run on a pair of neighbouring inputs; a Clopper–Pearson
// lower bound on ε is set against the claimed ε.
type AuditSpec struct {
	// Mechanisms are names from AuditMechanisms (set by the audit package
	// at init). Required.
	Mechanisms []string `toml:"mechanisms"`
	// Epsilons is the grid of privacy parameters (ε; for zCDP mechanisms
	// ρ = ε²/2); finite and > 0.
	Epsilons []float64 `toml:"epsilons"`
	// Variants are the deliberately broken variants audited besides the
	// correct mechanism, from AuditVariants; each runs where the mechanism
	// supports it. May be empty.
	Variants []string `toml:"variants"`
	// Draws is the number of measurement draws per side of a mechanism
	// that costs one noise draw; FitDraws of one that fits a model per
	// release. The selection stage draws a quarter as many. >= 400 each.
	Draws    int `toml:"draws"`
	FitDraws int `toml:"fit_draws"`
	// Delta is the δ at which zCDP claims are converted to (ε, δ) and the
	// δ of the (ε, δ) Gaussian mechanism; in (0, 1). Default 1e-5.
	Delta float64 `toml:"delta"`
	// Confidence is the level of each lower bound; in (0, 1). Default 0.95.
	Confidence float64 `toml:"confidence"`
}

// AuditMechanisms and AuditVariants are the names the privacy-audit kind
// knows; the audit package registers them (nil: names are not checked).
var AuditMechanisms, AuditVariants []string

// MechanismNames are the mechanisms of the mechanism-bounds kind.
var MechanismNames = []string{"randomized-response", "laplace", "exponential", "gaussian"}

// CIMethods are the methods of the ci-coverage kind.
var CIMethods = []string{
	"dp-obj-lr", "dp-obj-svm", "dp-output-lr", "dp-output-svm",
	"zcdp-obj-lr", "zcdp-obj-svm", "zcdp-output-lr", "zcdp-output-svm",
}

// CISweeps are the parameters the ci-coverage kind can sweep.
var CISweeps = []string{"n", "d", "eps1", "eps2", "eps3"}

// ExPostMethods are the methods of the expost-sweep kind.
var ExPostMethods = []string{"noise-reduction", "doubling", "theory", "theory-output"}

// CVSpec is the repeated cross-validation protocol of Chaudhuri & Vinterbo
// 2013, Section 5: in round i fold i is the test set, fold (i mod K)+1 the
// validation set and the rest the training set.
type CVSpec struct {
	Repetitions int `toml:"repetitions"` // >= 1
	Folds       int `toml:"folds"`       // >= 3
}

// TuningSpec configures private parameter tuning.
type TuningSpec struct {
	// Lambdas is the parameter list Θ (regularization strengths), > 0.
	Lambdas []float64 `toml:"lambdas"`
	// Alphas is the grid of total privacy levels α, > 0.
	Alphas []float64 `toml:"alphas"`
	// Delta is the δ of the stability-based validation (Theorem 1), in (0,1).
	Delta float64 `toml:"delta"`
	// Methods are the tuning methods to compare.
	Methods []string `toml:"methods"`
	// Loss is the training loss: "logistic" or "huber".
	Loss string `toml:"loss"`
	// HuberH is the Huber-hinge parameter h when Loss is "huber".
	HuberH float64 `toml:"huber_h"`
	// ObjPert is the objective-perturbation parametrization: "cms11"
	// (default) or the labelled opt-in "dplr2013".
	ObjPert string `toml:"objective_perturbation"`
	// Learners names the private learners the cv-tuning kind tunes, from
	// its learner registry (see `dprepro list` and
	// kinds/cvtune.LearnerNames); each method runs with each learner.
	// Optional: empty means the built-in objective-perturbation learner
	// alone, with the rows laid out as before the key existed; listing
	// learners adds a learner column and labels each row's method
	// "<method>/<learner>".
	Learners []string `toml:"learners"`
}

// OutputSpec configures summaries.
type OutputSpec struct {
	// Bootstrap is the number of resamples for the percentile-bootstrap CI
	// of each mean. Default 2000.
	Bootstrap int `toml:"bootstrap"`
	// CILevel is the confidence level of the CIs. Default 0.95.
	CILevel float64 `toml:"ci_level"`
	// SecureNoise draws every release's noise from crypto/rand through
	// floating-point-safe constructions where the harness has them
	// (core/mech.SetSecureNoise); results then do not replay. Set by
	// --secure-noise. Default false.
	SecureNoise bool `toml:"secure_noise"`
}

// Methods of the cv-tuning kind (Chaudhuri & Vinterbo 2013, Section 5).
var CVTuningMethods = []string{"stability", "alphaSplit", "dataSplit", "random", "control"}

// DatasetNames, when set, is the list of valid dataset names used by
// Validate; the command sets it from the dataset registry. Nil skips the
// check.
var DatasetNames func() []string

// DefaultSpec returns the defaults that a file is decoded over.
func DefaultSpec() Spec {
	return Spec{
		Schema: SchemaVersion,
		Data: DataSpec{
			Synthetic:   "auto",
			ColumnScale: "maxabs",
			Intercept:   true,
			RowNorm:     "l2-max",
			TargetScale: "none",
		},
		CV: CVSpec{Repetitions: 10, Folds: 10},
		Tuning: TuningSpec{
			Delta:   0.01,
			Loss:    "logistic",
			HuberH:  0.5,
			ObjPert: "cms11",
		},
		AccuracyFirst: AccuracyFirstSpec{
			Generator: "output", Calibration: "authors-code",
			Lambda: 0.005, Gamma: 0.1, Steps: 1000, EpsMaxFactor: 4,
		},
		Mechanisms: MechanismsSpec{Dim: 10, Candidates: 100, GaussianDelta: 1e-5},
		Audit:      AuditSpec{Delta: 1e-5, Confidence: 0.95},
		ConfidenceIntervals: CISpec{
			Alpha: 0.05, C: 0.001, H: 1, Eps1: 0.5, Eps2: 0.25, Eps3: 0.25, BlockSize: 50,
		},
		Output: OutputSpec{Bootstrap: 2000, CILevel: 0.95},
	}
}

// typeErrRe matches the type errors of the toml decoder, which carry the
// line and key only in their text.
var typeErrRe = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

type specFile struct {
	Spec
	Profiles map[string]toml.Primitive `toml:"profile"`
}

// Load reads, resolves with the named profile ("" or "paper" for the base
// protocol) and validates the spec file at path.
func Load(path, profile string) (*Spec, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	return Parse(path, src, profile)
}

// Parse is Load on the bytes src; name is used in messages.
func Parse(name string, src []byte, profile string) (*Spec, error) {
	base := filepath.Base(name)
	lines := newKeyLines(string(src))
	decode := func() (specFile, toml.MetaData, error) {
		f := specFile{Spec: DefaultSpec()}
		md, err := toml.Decode(string(src), &f)
		if err != nil {
			var pe toml.ParseError
			var ppe *toml.ParseError
			if errors.As(err, &ppe) {
				pe = *ppe
			}
			if errors.As(err, &pe) || ppe != nil {
				msg := pe.Message
				if pe.LastKey != "" {
					msg = pe.LastKey + ": " + msg
				}
				return f, md, fmt.Errorf("%s:%d: %s", base, pe.Position.Line, msg)
			}
			if m := typeErrRe.FindStringSubmatch(err.Error()); m != nil {
				return f, md, fmt.Errorf("%s:%s: %s: %s", base, m[1], m[2], m[3])
			}
			return f, md, fmt.Errorf("%s: %v", base, err)
		}
		return f, md, nil
	}
	f, md, err := decode()
	if err != nil {
		return nil, err
	}
	// Overlay every profile on a fresh copy so that all profile keys are
	// marked decoded and each profile is validated.
	var errs []error
	names := make([]string, 0, len(f.Profiles))
	for p := range f.Profiles {
		names = append(names, p)
	}
	sort.Strings(names)
	resolved := map[string]Spec{"": f.Spec}
	for _, p := range names {
		if !safeName.MatchString(p) {
			errs = append(errs, fmt.Errorf("%s:%d: profile.%s: a profile name must be a safe file name: letters, digits, '-', '_' and '.', starting with a letter or digit", base, lines.line("profile."+p), p))
			continue
		}
		g, _, _ := decode()
		if err := md.PrimitiveDecode(f.Profiles[p], &g.Spec); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: profile.%s: %v", base, lines.line("profile."+p), p, err))
			continue
		}
		resolved[p] = g.Spec
	}
	for _, k := range md.Undecoded() {
		key := k.String()
		if strings.HasPrefix(key, "profile.") && len(k) == 2 {
			continue // an empty profile table
		}
		errs = append(errs, fmt.Errorf("%s:%d: %s: unknown key", base, lines.line(key), key))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// Validate the base and every profile, so a broken profile is caught
	// whichever profile is run.
	order := append([]string{""}, names...)
	baseErrs := map[fieldErr]bool{}
	for _, p := range order {
		s := resolved[p]
		for _, e := range s.validate() {
			if p == "" {
				baseErrs[e] = true
			} else if baseErrs[e] && !lines.has("profile."+p+"."+e.key) {
				continue // inherited from the base spec, reported there
			}
			line := lines.line(e.key)
			if p != "" && lines.has("profile."+p+"."+e.key) {
				line = lines.line("profile." + p + "." + e.key)
			}
			where := e.path
			if p != "" {
				where = fmt.Sprintf("%s (profile %s)", e.path, p)
			}
			if line > 0 {
				errs = append(errs, fmt.Errorf("%s:%d: %s: %s", base, line, where, e.msg))
			} else {
				errs = append(errs, fmt.Errorf("%s: %s: %s", base, where, e.msg))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	chosen := profile
	fallback := false
	if _, ok := resolved[chosen]; !ok && (chosen == "paper" || chosen == "quick") {
		// "paper" is the base protocol when the file has no paper table;
		// a spec small enough to need no quick profile runs as itself.
		fallback = chosen == "quick"
		chosen = ""
	}
	s, ok := resolved[chosen]
	if !ok {
		return nil, fmt.Errorf("%s: no profile %q (has: paper%s)", base, profile, listProfiles(names))
	}
	if profile == "" {
		profile = "paper"
	}
	s.Profile = profile
	s.ProfileFallback = fallback
	sum := sha256.Sum256(src)
	s.Source = &SourceInfo{Path: name, SHA256: hex.EncodeToString(sum[:])}
	s.lines = lines
	// The run's own memory check (workers known) is CheckResources; with
	// one worker a spec that cannot fit is refused here.
	if err := s.CheckResources(1); err != nil {
		return nil, err
	}
	return &s, nil
}

func listProfiles(names []string) string {
	var b strings.Builder
	for _, n := range names {
		if n != "paper" {
			b.WriteString(", " + n)
		}
	}
	return b.String()
}

// Hash returns the SHA-256 of the canonical TOML encoding of the resolved
// spec, which identifies a run's configuration in its manifest and
// checkpoint.
func (s *Spec) Hash() string {
	b, err := s.Canonical()
	if err != nil {
		panic("experiments: encoding a validated spec: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Canonical returns the resolved spec as TOML (written to spec.toml of a run).
func (s *Spec) Canonical() ([]byte, error) {
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(s); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

type fieldErr struct {
	key  string // key path for the line lookup, e.g. "tuning.lambdas"
	path string // key path as shown, e.g. "tuning.lambdas[3]"
	msg  string
}

func (s *Spec) validate() []fieldErr {
	var errs []fieldErr
	add := func(key, path, format string, args ...any) {
		errs = append(errs, fieldErr{key: key, path: path, msg: fmt.Sprintf(format, args...)})
	}
	if s.Schema != SchemaVersion {
		add("schema", "schema", "unsupported schema version %d (this build reads %d)", s.Schema, SchemaVersion)
	}
	if s.ID == "" {
		add("id", "id", "required")
	} else if !safeName.MatchString(s.ID) {
		add("id", "id", "must be a safe file name: letters, digits, '-', '_' and '.', starting with a letter or digit (got %q)", s.ID)
	} else if slices.Contains(ReservedIDs, s.ID) {
		add("id", "id", "%q is a name the harness writes itself in an output folder (reserved: %s)", s.ID, strings.Join(ReservedIDs, ", "))
	}
	if s.Seed < 0 {
		add("seed", "seed", "must be >= 0 (got %d)", s.Seed)
	}
	switch s.Kind {
	case KindCVTuning, KindExPost, KindCICoverage, KindHistogram, KindMechanisms, KindAudit:
	case "":
		add("kind", "kind", "required (one of: %s)", strings.Join(Kinds, ", "))
	default:
		add("kind", "kind", "unknown kind %q (one of: %s)", s.Kind, strings.Join(Kinds, ", "))
	}
	// Data.
	if len(s.Data.Datasets) == 0 && !(s.Kind == KindHistogram && len(s.Histogram.Densities) > 0) && s.Kind != KindMechanisms && s.Kind != KindAudit {
		add("data.datasets", "data.datasets", "must list at least one dataset")
	}
	var known []string
	if DatasetNames != nil {
		known = DatasetNames()
	}
	seen := map[string]bool{}
	for i, d := range s.Data.Datasets {
		p := fmt.Sprintf("data.datasets[%d]", i)
		if seen[d] {
			add("data.datasets", p, "duplicate dataset %q", d)
		}
		seen[d] = true
		if known != nil && !contains(known, d) {
			add("data.datasets", p, "unknown dataset %q (known: %s)", d, strings.Join(known, ", "))
		}
	}
	oneOf := func(key, v string, allowed ...string) {
		if !contains(allowed, v) {
			add(key, key, "must be one of %s (got %q)", strings.Join(allowed, ", "), v)
		}
	}
	if s.Data.Subsample < 0 {
		add("data.subsample", "data.subsample", "must be >= 0 (got %d)", s.Data.Subsample)
	}
	oneOf("data.synthetic", s.Data.Synthetic, "auto", "allow", "never", "always")
	oneOf("data.column_scale", s.Data.ColumnScale, "maxabs", "zscore", "none")
	oneOf("data.row_norm", s.Data.RowNorm, "l2-max", "l2-clip", "l2-unit", "l1-max", "none")
	oneOf("data.target_scale", s.Data.TargetScale, "none", "maxabs")
	if s.Kind == KindExPost {
		errs = append(errs, s.validateExPost()...)
	}
	if s.Kind == KindCICoverage {
		errs = append(errs, s.validateCI()...)
	}

	if s.Kind == KindHistogram {
		errs = append(errs, s.validateHistogram()...)
	}
	if s.Kind == KindMechanisms {
		errs = append(errs, s.validateMechanisms()...)
	}
	if s.Kind == KindAudit {
		errs = append(errs, s.validateAudit()...)
	}
	if s.Kind == KindCVTuning || s.Kind == KindHistogram {
		if s.CV.Repetitions < 1 {
			add("cv.repetitions", "cv.repetitions", "must be >= 1 (got %d)", s.CV.Repetitions)
		}
		if s.CV.Folds < 3 {
			add("cv.folds", "cv.folds", "must be >= 3: one test, one validation and at least one training fold (got %d)", s.CV.Folds)
		}
		positiveGrid := func(key string, xs []float64) {
			if len(xs) == 0 {
				add(key, key, "must not be empty")
			}
			dup := seenBefore[float64]()
			for i, x := range xs {
				if !(x > 0) || math.IsInf(x, 0) {
					add(key, fmt.Sprintf("%s[%d]", key, i), "must be finite and > 0 (got %v)", x)
				}
				if dup(x) {
					add(key, fmt.Sprintf("%s[%d]", key, i), "duplicate value %v", x)
				}
			}
		}
		if s.Kind == KindCVTuning {
			positiveGrid("tuning.lambdas", s.Tuning.Lambdas)
		}
		positiveGrid("tuning.alphas", s.Tuning.Alphas)
		if !(s.Tuning.Delta > 0 && s.Tuning.Delta < 1) {
			add("tuning.delta", "tuning.delta", "must be in (0, 1) (got %v)", s.Tuning.Delta)
		}
		if len(s.Tuning.Methods) == 0 {
			add("tuning.methods", "tuning.methods", "must list at least one method (known: %s)", strings.Join(CVTuningMethods, ", "))
		}
		mseen := map[string]bool{}
		for i, m := range s.Tuning.Methods {
			p := fmt.Sprintf("tuning.methods[%d]", i)
			if !contains(CVTuningMethods, m) {
				add("tuning.methods", p, "unknown method %q (known: %s)", m, strings.Join(CVTuningMethods, ", "))
			}
			if mseen[m] {
				add("tuning.methods", p, "duplicate method %q", m)
			}
			mseen[m] = true
		}
	}
	if s.Kind == KindCVTuning {
		oneOf("tuning.loss", s.Tuning.Loss, "logistic", "huber")
		if s.Tuning.Loss == "huber" && !(s.Tuning.HuberH > 0 && s.Tuning.HuberH < 1) {
			add("tuning.huber_h", "tuning.huber_h", "must be in (0, 1) (got %v)", s.Tuning.HuberH)
		}
		oneOf("tuning.objective_perturbation", s.Tuning.ObjPert, "cms11", "dplr2013")
	}
	if s.Output.Bootstrap < 100 {
		add("output.bootstrap", "output.bootstrap", "must be >= 100 (got %d)", s.Output.Bootstrap)
	}
	if !(s.Output.CILevel > 0 && s.Output.CILevel < 1) {
		add("output.ci_level", "output.ci_level", "must be in (0, 1) (got %v)", s.Output.CILevel)
	}
	errs = append(errs, s.validateLimits()...)
	return errs
}

// validateAudit checks the audit section.
func (s *Spec) validateAudit() []fieldErr {
	var errs []fieldErr
	add := func(key, path, format string, args ...any) {
		errs = append(errs, fieldErr{key: key, path: path, msg: fmt.Sprintf(format, args...)})
	}
	a := &s.Audit
	names := func(key string, xs, known []string, required bool) {
		if required && len(xs) == 0 {
			add(key, key, "must list at least one name (known: %s)", strings.Join(known, ", "))
		}
		dup := seenBefore[string]()
		for i, name := range xs {
			p := fmt.Sprintf("%s[%d]", key, i)
			if known != nil && !contains(known, name) {
				add(key, p, "unknown name %q (known: %s)", name, strings.Join(known, ", "))
			}
			if dup(name) {
				add(key, p, "duplicate name %q", name)
			}
		}
	}
	names("audit.mechanisms", a.Mechanisms, AuditMechanisms, true)
	names("audit.variants", a.Variants, AuditVariants, false)
	if len(a.Epsilons) == 0 {
		add("audit.epsilons", "audit.epsilons", "must not be empty")
	}
	dupEps := seenBefore[float64]()
	for i, x := range a.Epsilons {
		p := fmt.Sprintf("audit.epsilons[%d]", i)
		if !(x > 0) || math.IsInf(x, 1) {
			add("audit.epsilons", p, "must be finite and > 0 (got %v)", x)
		}
		if dupEps(x) {
			add("audit.epsilons", p, "duplicate value %v", x)
		}
	}
	if a.Draws < 400 {
		add("audit.draws", "audit.draws", "must be >= 400 (got %d)", a.Draws)
	}
	if a.FitDraws < 400 {
		add("audit.fit_draws", "audit.fit_draws", "must be >= 400 (got %d)", a.FitDraws)
	}
	if !(a.Delta > 0 && a.Delta < 1) {
		add("audit.delta", "audit.delta", "must be in (0, 1) (got %v)", a.Delta)
	}
	if !(a.Confidence > 0 && a.Confidence < 1) {
		add("audit.confidence", "audit.confidence", "must be in (0, 1) (got %v)", a.Confidence)
	}
	return errs
}

// validateMechanisms checks the mechanisms section.
func (s *Spec) validateMechanisms() []fieldErr {
	var errs []fieldErr
	add := func(key, path, format string, args ...any) {
		errs = append(errs, fieldErr{key: key, path: path, msg: fmt.Sprintf(format, args...)})
	}
	m := &s.Mechanisms
	if len(m.Mechanisms) == 0 {
		add("mechanisms.mechanisms", "mechanisms.mechanisms", "must list at least one mechanism (known: %s)", strings.Join(MechanismNames, ", "))
	}
	dupMech := seenBefore[string]()
	for i, name := range m.Mechanisms {
		p := fmt.Sprintf("mechanisms.mechanisms[%d]", i)
		if !contains(MechanismNames, name) {
			add("mechanisms.mechanisms", p, "unknown mechanism %q (known: %s)", name, strings.Join(MechanismNames, ", "))
		}
		if dupMech(name) {
			add("mechanisms.mechanisms", p, "duplicate mechanism %q", name)
		}
	}
	grid := func(key string, xs []float64, ok func(float64) bool, want string) {
		if len(xs) == 0 {
			add(key, key, "must not be empty")
		}
		dup := seenBefore[float64]()
		for i, x := range xs {
			p := fmt.Sprintf("%s[%d]", key, i)
			if !ok(x) {
				add(key, p, "must be %s (got %v)", want, x)
			}
			if dup(x) {
				add(key, p, "duplicate value %v", x)
			}
		}
	}
	grid("mechanisms.epsilons", m.Epsilons, func(x float64) bool { return x > 0 && !math.IsInf(x, 1) }, "finite and > 0")
	grid("mechanisms.levels", m.Levels, func(x float64) bool { return x > 0 && x < 1 }, "in (0, 1)")
	if m.Dim < 1 {
		add("mechanisms.dim", "mechanisms.dim", "must be >= 1 (got %d)", m.Dim)
	}
	if m.Candidates < 2 {
		add("mechanisms.candidates", "mechanisms.candidates", "must be >= 2 (got %d)", m.Candidates)
	}
	if !(m.GaussianDelta > 0 && m.GaussianDelta < 1) {
		add("mechanisms.gaussian_delta", "mechanisms.gaussian_delta", "must be in (0, 1) (got %v)", m.GaussianDelta)
	}
	if m.Replicates < 2 {
		add("mechanisms.replicates", "mechanisms.replicates", "must be >= 2 (got %d)", m.Replicates)
	}
	if m.Draws < 1 {
		add("mechanisms.draws", "mechanisms.draws", "must be >= 1 (got %d)", m.Draws)
	}
	return errs
}

// validateHistogram checks the histogram section.
func (s *Spec) validateHistogram() []fieldErr {
	var errs []fieldErr
	add := func(key, path, format string, args ...any) {
		errs = append(errs, fieldErr{key: key, path: path, msg: fmt.Sprintf(format, args...)})
	}
	h := &s.Histogram
	if len(h.Bins) == 0 {
		add("histogram.bins", "histogram.bins", "must list at least one number of bins")
	}
	dupBins := seenBefore[int]()
	for i, b := range h.Bins {
		p := fmt.Sprintf("histogram.bins[%d]", i)
		if b < 1 {
			add("histogram.bins", p, "must be >= 1 (got %d)", b)
		}
		if dupBins(b) {
			add("histogram.bins", p, "duplicate value %d", b)
		}
	}
	if len(h.Densities) == 0 && len(h.Attributes) == 0 {
		add("histogram.densities", "histogram.densities", "the histogram kind needs densities or attributes")
	}
	dupDens := seenBefore[string]()
	for i, d := range h.Densities {
		p := fmt.Sprintf("histogram.densities[%d]", i)
		if !contains(HistogramDensities, d) {
			add("histogram.densities", p, "unknown density %q (known: %s)", d, strings.Join(HistogramDensities, ", "))
		}
		if dupDens(d) {
			add("histogram.densities", p, "duplicate density %q", d)
		}
	}
	if len(h.Densities) > 0 && h.Records < 1 {
		add("histogram.records", "histogram.records", "must be >= 1 with densities (got %d)", h.Records)
	}
	for i, a := range h.Attributes {
		p := fmt.Sprintf("histogram.attributes[%d]", i)
		if !contains(s.Data.Datasets, a.Dataset) {
			add("histogram.attributes", p+".dataset", "%q is not in data.datasets %v", a.Dataset, s.Data.Datasets)
		}
		if a.Column == "" {
			add("histogram.attributes", p+".column", "required")
		}
		if !(a.Lo < a.Hi) || math.IsInf(a.Lo, 0) || math.IsInf(a.Hi, 0) {
			add("histogram.attributes", p, "public bounds must be finite with lo < hi (got [%v, %v])", a.Lo, a.Hi)
		}
	}
	if len(h.Attributes) > 0 && (s.Data.ColumnScale != "none" || s.Data.RowNorm != "none") {
		add("data.column_scale", "data.column_scale", `attributes are read raw: set column_scale = "none" and row_norm = "none" (got %q, %q)`, s.Data.ColumnScale, s.Data.RowNorm)
	}
	return errs
}

// validateExPost checks the accuracy_first section.
func (s *Spec) validateExPost() []fieldErr {
	var errs []fieldErr
	add := func(key, path, format string, args ...any) {
		errs = append(errs, fieldErr{key: key, path: path, msg: fmt.Sprintf(format, args...)})
	}
	a := &s.AccuracyFirst
	k := func(name string) string { return "accuracy_first." + name }
	oneOf := func(name, v string, allowed ...string) {
		if !contains(allowed, v) {
			add(k(name), k(name), "must be one of %s (got %q)", strings.Join(allowed, ", "), v)
		}
	}
	oneOf("task", a.Task, "ridge", "logistic")
	oneOf("generator", a.Generator, "covariance", "output")
	oneOf("calibration", a.Calibration, "authors-code", "paper")
	if a.Task == "logistic" && a.Generator == "covariance" {
		add(k("generator"), k("generator"), "covariance perturbation is defined for ridge regression only (task = \"ridge\")")
	}
	if !(a.Lambda > 0) || math.IsInf(a.Lambda, 1) {
		add(k("lambda"), k("lambda"), "must be finite and > 0 (got %v)", a.Lambda)
	}
	if !(a.Gamma > 0 && a.Gamma < 1) {
		add(k("gamma"), k("gamma"), "must be in (0, 1) (got %v)", a.Gamma)
	}
	if a.Steps < 2 {
		add(k("steps"), k("steps"), "must be >= 2 (got %d)", a.Steps)
	}
	if a.Trials < 1 {
		add(k("trials"), k("trials"), "must be >= 1 (got %d)", a.Trials)
	}
	if len(a.Alphas) == 0 {
		add(k("alphas"), k("alphas"), "must not be empty")
	}
	dupAlpha := seenBefore[float64]()
	for i, x := range a.Alphas {
		if !(x > 0) || math.IsInf(x, 0) {
			add(k("alphas"), fmt.Sprintf("%s[%d]", k("alphas"), i), "must be finite and > 0 (got %v)", x)
		}
		if dupAlpha(x) {
			add(k("alphas"), fmt.Sprintf("%s[%d]", k("alphas"), i), "duplicate value %v", x)
		}
	}
	if len(a.Methods) == 0 {
		add(k("methods"), k("methods"), "must list at least one method (known: %s)", strings.Join(ExPostMethods, ", "))
	}
	seen := map[string]bool{}
	for i, m := range a.Methods {
		p := fmt.Sprintf("%s[%d]", k("methods"), i)
		switch {
		case !contains(ExPostMethods, m):
			add(k("methods"), p, "unknown method %q (known: %s)", m, strings.Join(ExPostMethods, ", "))
		case seen[m]:
			add(k("methods"), p, "duplicate method %q", m)
		case m == "theory-output" && a.Task != "ridge":
			add(k("methods"), p, "theory-output (Theorem A.9) is the ridge output-perturbation curve; for logistic, \"theory\" is Theorem 3.3")
		}
		seen[m] = true
	}
	if !(a.EpsMin >= 0) || math.IsInf(a.EpsMin, 1) {
		add(k("eps_min"), k("eps_min"), "must be finite and >= 0 (0 means 1/n) (got %v)", a.EpsMin)
	}
	if !(a.EpsMaxFactor > 0) || math.IsInf(a.EpsMaxFactor, 1) {
		add(k("eps_max_factor"), k("eps_max_factor"), "must be finite and > 0 (got %v)", a.EpsMaxFactor)
	}
	return errs
}

// validateCI checks the confidence_intervals section and the data options
// the ci-coverage kind relies on.
func (s *Spec) validateCI() []fieldErr {
	var errs []fieldErr
	add := func(key, path, format string, args ...any) {
		errs = append(errs, fieldErr{key: key, path: path, msg: fmt.Sprintf(format, args...)})
	}
	c := &s.ConfidenceIntervals
	k := func(name string) string { return "confidence_intervals." + name }
	if s.Data.Intercept {
		add("data.intercept", "data.intercept", "must be false for ci-coverage: the constant feature is appended after the feature subset (Section 7)")
	}
	if !contains([]string{"l2-max", "l2-clip", "l2-unit"}, s.Data.RowNorm) {
		add("data.row_norm", "data.row_norm", "must be l2-max, l2-clip or l2-unit for ci-coverage (got %q)", s.Data.RowNorm)
	}
	if s.Data.Subsample != 0 {
		add("data.subsample", "data.subsample", "must be 0 for ci-coverage; use confidence_intervals.n1 (got %d)", s.Data.Subsample)
	}
	if len(c.Methods) == 0 {
		add(k("methods"), k("methods"), "must list at least one method (known: %s)", strings.Join(CIMethods, ", "))
	}
	seen := map[string]bool{}
	for i, m := range c.Methods {
		p := fmt.Sprintf("%s[%d]", k("methods"), i)
		switch {
		case !contains(CIMethods, m):
			add(k("methods"), p, "unknown method %q (known: %s)", m, strings.Join(CIMethods, ", "))
		case seen[m]:
			add(k("methods"), p, "duplicate method %q", m)
		}
		seen[m] = true
	}
	if !(c.Alpha > 0 && c.Alpha < 1) {
		add(k("alpha"), k("alpha"), "must be in (0, 1) (got %v)", c.Alpha)
	}
	pos := func(name string, v float64) {
		if !(v > 0) || math.IsInf(v, 1) {
			add(k(name), k(name), "must be finite and > 0 (got %v)", v)
		}
	}
	pos("c", c.C)
	pos("h", c.H)
	pos("eps1", c.Eps1)
	pos("eps2", c.Eps2)
	pos("eps3", c.Eps3)
	if c.N1 < 0 {
		add(k("n1"), k("n1"), "must be >= 0 (0 keeps all records) (got %d)", c.N1)
	}
	if c.D1 < 0 {
		add(k("d1"), k("d1"), "must be >= 0 (0 keeps all features) (got %d)", c.D1)
	}
	if !contains(CISweeps, c.Sweep) {
		add(k("sweep"), k("sweep"), "must be one of %s (got %q)", strings.Join(CISweeps, ", "), c.Sweep)
	}
	if len(c.Values) == 0 {
		add(k("values"), k("values"), "must not be empty")
	}
	dupValue := seenBefore[float64]()
	for i, x := range c.Values {
		p := fmt.Sprintf("%s[%d]", k("values"), i)
		switch {
		case !(x > 0) || math.IsInf(x, 0):
			add(k("values"), p, "must be finite and > 0 (got %v)", x)
		case (c.Sweep == "n" || c.Sweep == "d") && x != math.Trunc(x):
			add(k("values"), p, "must be an integer for sweep %q (got %v)", c.Sweep, x)
		case c.Sweep == "n" && x < 2:
			add(k("values"), p, "must be >= 2 records (got %v)", x)
		}
		if dupValue(x) {
			add(k("values"), p, "duplicate value %v", x)
		}
	}
	if c.Replicates < 1 {
		add(k("replicates"), k("replicates"), "must be >= 1 (got %d)", c.Replicates)
	}
	if c.MCSamples < 1 {
		add(k("mc_samples"), k("mc_samples"), "must be >= 1 (got %d)", c.MCSamples)
	}
	if c.VIFits < 2 {
		add(k("vi_fits"), k("vi_fits"), "must be >= 2 (got %d)", c.VIFits)
	}
	if c.BlockSize < 1 {
		add(k("block_size"), k("block_size"), "must be >= 1 (got %d)", c.BlockSize)
	}
	return errs
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

package accfirst

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dprepro/dprepro/core/expost"
	"github.com/dprepro/dprepro/core/privacy"
)

// Task is the ERM problem of an accuracy-first search, as a spec names it
// (accuracy_first.task).
type Task string

// The tasks of Ligett et al. 2017.
const (
	// TaskRidge is ridge regression (Section 3.1, Appendix A.3; [Ridge]).
	TaskRidge Task = "ridge"
	// TaskLogistic is ℓ₂-regularized logistic regression (Section 3.2,
	// Appendix A.4; [Logistic]).
	TaskLogistic Task = "logistic"
)

// KnownTasks returns the tasks a [Generator] may declare, sorted.
func KnownTasks() []Task { return []Task{TaskLogistic, TaskRidge} }

// Setting is what a [Generator] runs on: the task, the problem (data, θ*,
// norm bound and sensitivities) and the calibration of the accuracy tests,
// which a generator may follow where the paper and the authors' code
// differ (covariance perturbation solves as the code does under
// [expost.AuthorsCode]). Settings are read-only and shared by the trials
// of a run.
type Setting struct {
	// Task is the task the problem was built for; required.
	Task Task
	// Problem is the private problem; required. It is a *Ridge for
	// TaskRidge and a *Logistic for TaskLogistic.
	Problem Problem
	// Calibration is the calibration of the tests that will judge the
	// hypotheses; required (expost.Paper or expost.AuthorsCode).
	Calibration expost.Calibration
}

// Generator is a private ERM method that the accuracy-first searches of
// Ligett, Neel, Roth, Waggoner & Wu, "Accuracy First" (NeurIPS 2017,
// arXiv:1705.10829) drive: it releases (a) a noise-reduction sequence of
// ever more accurate hypotheses for InteractiveAboveThreshold (Algorithm 1
// applied to the method's Laplace release, as in CovNR, Algorithm 3, and
// OutputNR, Algorithm 5) and (b) independent hypotheses with fresh noise
// for the doubling method (Algorithm 4's black box M). A generator that
// also has a utility theorem implements [TheoryGenerator]; one that states
// the memory of its sequences implements [MemoryEstimator] (otherwise a
// run's memory estimate assumes covariance perturbation's).
//
// Every release states its privacy guarantee as a [privacy.Guarantee]
// value: the sequence's Guarantee after t steps covers the prefix
// θ¹…θᵗ, each independent release covers itself. The searches compose
// those values (Lemma 2.8, Theorem A.2) and refuse any notion but pure
// ε-DP, the setting of the paper's ex-post analysis (Remark 2.9). Both
// kinds of release must keep ‖θ‖ ≤ Problem.Radius() (rescaling if need
// be, Remark A.3), so that the excess-risk query has the sensitivity
// Problem.QuerySensitivity the tests are calibrated for (Claims A.5, A.12).
//
// Implementations must be safe for concurrent use: the trials of a run
// call one generator from several goroutines, each with its own rng. All
// randomness comes from rng, drawn in a fixed order, so that a trial
// reproduces bit for bit.
//
// Package methods/generators is the extension point's home: its registry
// (generators.Register) holds [Covariance] and [Output] and whatever a
// user's module adds, and its adapter serves a generator from an external
// command (generators.External).
type Generator interface {
	// Name is the name a spec gives (accuracy_first.generator), e.g.
	// "covariance". It must follow the registries' name rule
	// (methods/registry.CheckName): it appears in unit keys and rows.
	Name() string
	// Tasks lists the tasks the generator is defined for. A spec pairing
	// it with another task is refused.
	Tasks() []Task
	// Sequence returns the noise-reduction sequence at the increasing
	// levels eps = ε₁ < … < ε_T: releasing the prefix up to t must be
	// εₜ-DP, with correlated noise (Algorithm 1), not independent draws.
	// ctx is the unit's: a generator that does work outside the process
	// (an external worker) ends it when ctx is done.
	Sequence(ctx context.Context, rng *rand.Rand, s Setting, eps []float64) (expost.Sequence, error)
	// Independent draws one hypothesis with fresh noise at level ε and
	// returns the guarantee of that release (ε-DP for the built-ins).
	Independent(ctx context.Context, rng *rand.Rand, s Setting, epsilon float64) (expost.Hypothesis, privacy.Guarantee, error)
}

// TheoryGenerator is a [Generator] with a utility theorem, which gives the
// "theory" approach of Ligett et al. 2017 (Section 4, Figure 1: run the
// mechanism once at the ε its theorem needs for accuracy α) and the scale
// E of the ε grid (Appendix B.1: ε_max = 4E).
type TheoryGenerator interface {
	Generator
	// TheoryEpsilon returns the ε at which the generator's utility theorem
	// bounds the excess risk by alpha: in expectation for the built-ins
	// (Theorems 3.1, 3.3, A.9; gamma unused), or with probability
	// 1 − gamma for a theorem stated that way. alpha is finite and > 0,
	// gamma in (0, 1).
	TheoryEpsilon(s Setting, alpha, gamma float64) (float64, error)
	// TheoryRelease runs the theorem's mechanism once at ε, as the theorem
	// states it (no rescaling it does not make), and returns the guarantee
	// of the release.
	TheoryRelease(ctx context.Context, rng *rand.Rand, s Setting, epsilon float64) (expost.Hypothesis, privacy.Guarantee, error)
}

// Footprint is the memory shape of a generator's noise-reduction sequence
// (Generator.Sequence), for the harness's estimate of a run's memory made
// before any data is read.
type Footprint struct {
	// Chains is the number of noise-reduction chains (package noisered)
	// one sequence draws, each over the whole ε grid: 1 for output
	// perturbation (θ*), 2 for covariance perturbation (XᵀX and Xᵀy).
	Chains int
	// Coordinates is the number of values the chains perturb together: d
	// for output perturbation, d² + d for covariance perturbation.
	Coordinates float64
}

// MemoryEstimator is implemented by a [Generator] that states the
// [Footprint] of its sequences. One that does not is estimated with
// [DefaultFootprint].
type MemoryEstimator interface {
	// Footprint returns the shape of one Sequence for task on a problem
	// whose design matrix has d columns (d ≥ 1).
	Footprint(task Task, d float64) Footprint
}

// DefaultFootprint is the footprint assumed for a generator that does not
// implement [MemoryEstimator]: that of covariance perturbation, 2 chains
// over d² + d coordinates, the largest of the built-ins, so that the
// estimate errs towards refusing a spec that may not fit rather than
// running out of memory.
func DefaultFootprint(d float64) Footprint { return Footprint{Chains: 2, Coordinates: d*d + d} }

// FootprintOf returns the footprint of g's sequences for task and d
// columns: g's own ([MemoryEstimator]) or [DefaultFootprint] (also for a
// nil g, a generator the registry does not know).
func FootprintOf(g Generator, task Task, d float64) Footprint {
	if m, ok := g.(MemoryEstimator); ok {
		return m.Footprint(task, d)
	}
	return DefaultFootprint(d)
}

// SupportsTask reports whether g declares task t among its Tasks.
func SupportsTask(g Generator, t Task) bool { return slices.Contains(g.Tasks(), t) }

// checkTheory validates the arguments of TheoryEpsilon.
func checkTheory(alpha, gamma float64) error {
	if !(alpha > 0) || math.IsInf(alpha, 1) {
		return fmt.Errorf("accfirst: theory ε: α must be finite and > 0 (got %v)", alpha)
	}
	if !(gamma > 0 && gamma < 1) {
		return fmt.Errorf("accfirst: theory ε: γ must be in (0, 1) (got %v)", gamma)
	}
	return nil
}

// Covariance is covariance perturbation for ridge regression (Ligett et
// al. 2017, Theorem 3.1; noise reduction CovNR, Algorithm 3), the
// generator named "covariance":
//
//   - Sequence: [CovNR] over the levels;
//   - Independent: [CovPert], ε-DP per release;
//   - TheoryEpsilon: [TheoryCovariance] (Theorem 3.1, expected excess risk);
//   - TheoryRelease: [CovPert] with [CovExact], Theorem 3.1's mechanism.
//
// Sequence and Independent solve per the calibration: [CovSolveScale]
// under expost.AuthorsCode (the authors' code), [CovExact] otherwise
// (Algorithm 3: the constrained minimizer over ‖θ‖ ≤ 1/√λ).
type Covariance struct{}

var (
	_ TheoryGenerator = Covariance{}
	_ MemoryEstimator = Covariance{}
)

// Name implements Generator: "covariance".
func (Covariance) Name() string { return "covariance" }

// Tasks implements Generator: ridge regression only (the method perturbs
// the sufficient statistics XᵀX and Xᵀy of the squared loss).
func (Covariance) Tasks() []Task { return []Task{TaskRidge} }

// ridge returns the setting's problem as a *Ridge.
func (Covariance) ridge(s Setting) (*Ridge, error) {
	r, ok := s.Problem.(*Ridge)
	if !ok || s.Task != TaskRidge {
		return nil, fmt.Errorf("accfirst: covariance perturbation needs a ridge problem (task %q, problem %T)", s.Task, s.Problem)
	}
	return r, nil
}

// mode is the solve of the calibration.
func (Covariance) mode(c expost.Calibration) CovMode {
	if c == expost.AuthorsCode {
		return CovSolveScale
	}
	return CovExact
}

// Sequence implements Generator with [CovNR].
func (g Covariance) Sequence(_ context.Context, rng *rand.Rand, s Setting, eps []float64) (expost.Sequence, error) {
	r, err := g.ridge(s)
	if err != nil {
		return nil, err
	}
	return CovNR(rng, r, eps, g.mode(s.Calibration))
}

// Independent implements Generator with [CovPert].
func (g Covariance) Independent(_ context.Context, rng *rand.Rand, s Setting, epsilon float64) (expost.Hypothesis, privacy.Guarantee, error) {
	r, err := g.ridge(s)
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	return CovPert(r, g.mode(s.Calibration))(rng, epsilon)
}

// Footprint implements MemoryEstimator: [CovNR] draws two chains, over the
// d² entries of XᵀX and the d of Xᵀy.
func (Covariance) Footprint(_ Task, d float64) Footprint {
	return Footprint{Chains: 2, Coordinates: d*d + d}
}

// TheoryEpsilon implements TheoryGenerator with [TheoryCovariance].
func (g Covariance) TheoryEpsilon(s Setting, alpha, gamma float64) (float64, error) {
	if err := checkTheory(alpha, gamma); err != nil {
		return 0, err
	}
	r, err := g.ridge(s)
	if err != nil {
		return 0, err
	}
	return TheoryCovariance(r.N(), r.P(), r.Lambda(), alpha), nil
}

// TheoryRelease implements TheoryGenerator: Theorem 3.1's mechanism
// ([CovPert] with [CovExact]).
func (g Covariance) TheoryRelease(_ context.Context, rng *rand.Rand, s Setting, epsilon float64) (expost.Hypothesis, privacy.Guarantee, error) {
	r, err := g.ridge(s)
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	return CovPert(r, CovExact)(rng, epsilon)
}

// Output is output perturbation, θ* + Laplace noise (Ligett et al. 2017,
// Theorem 3.3 for logistic, Theorem A.9 for ridge; noise reduction
// OutputNR, Algorithm 5), the generator named "output":
//
//   - Sequence: [OutputNR] (rescaled onto the ball of radius M);
//   - Independent: [OutputPert] rescaled onto the ball (Remark A.3), ε-DP
//     per release;
//   - TheoryEpsilon: [TheoryOutputLogistic] (Theorem 3.3) or
//     [TheoryOutputRidge] (Theorem A.9, corrected), expected excess risk;
//   - TheoryRelease: [OutputPert] without rescaling, the theorems'
//     mechanism.
type Output struct{}

var (
	_ TheoryGenerator = Output{}
	_ MemoryEstimator = Output{}
)

// Name implements Generator: "output".
func (Output) Name() string { return "output" }

// Tasks implements Generator: logistic and ridge regression.
func (Output) Tasks() []Task { return []Task{TaskLogistic, TaskRidge} }

func (Output) problem(s Setting) (Problem, error) {
	if s.Problem == nil {
		return nil, fmt.Errorf("accfirst: output perturbation: no problem")
	}
	return s.Problem, nil
}

// Sequence implements Generator with [OutputNR].
func (g Output) Sequence(_ context.Context, rng *rand.Rand, s Setting, eps []float64) (expost.Sequence, error) {
	pr, err := g.problem(s)
	if err != nil {
		return nil, err
	}
	return OutputNR(rng, pr, eps)
}

// Independent implements Generator with [OutputPert], rescaled.
func (g Output) Independent(_ context.Context, rng *rand.Rand, s Setting, epsilon float64) (expost.Hypothesis, privacy.Guarantee, error) {
	pr, err := g.problem(s)
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	return OutputPert(pr, true)(rng, epsilon)
}

// Footprint implements MemoryEstimator: [OutputNR] draws one chain over
// the d coordinates of θ*.
func (Output) Footprint(_ Task, d float64) Footprint { return Footprint{Chains: 1, Coordinates: d} }

// TheoryEpsilon implements TheoryGenerator: Theorem 3.3 for logistic,
// Theorem A.9 (corrected, see [TheoryOutputRidge]) for ridge.
func (g Output) TheoryEpsilon(s Setting, alpha, gamma float64) (float64, error) {
	if err := checkTheory(alpha, gamma); err != nil {
		return 0, err
	}
	pr, err := g.problem(s)
	if err != nil {
		return 0, err
	}
	n, p, l := pr.N(), pr.P(), pr.Lambda()
	switch s.Task {
	case TaskLogistic:
		return TheoryOutputLogistic(n, p, l, alpha), nil
	case TaskRidge:
		return TheoryOutputRidge(n, p, l, alpha), nil
	}
	return 0, fmt.Errorf("accfirst: output perturbation has no utility theorem for task %q", s.Task)
}

// TheoryRelease implements TheoryGenerator: [OutputPert] as the theorems
// state it, without rescaling.
func (g Output) TheoryRelease(_ context.Context, rng *rand.Rand, s Setting, epsilon float64) (expost.Hypothesis, privacy.Guarantee, error) {
	pr, err := g.problem(s)
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	return OutputPert(pr, false)(rng, epsilon)
}

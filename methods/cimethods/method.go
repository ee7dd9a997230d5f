package cimethods

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/registry"
)

// Method is a private confidence-interval method: the extension point of
// the ci-coverage kind (kinds/cicoverage), for what Wang, Kifer & Lee,
// "Differentially Private Confidence Intervals for Empirical Risk
// Minimization" (JPC 9(1), 2019; [arXiv:1804.03794]) compare in Section 7.
// Given one bootstrap replicate of the (sub)dataset it fits θ̃ privately
// and releases per-coordinate (1 − α) intervals for θ₀, as Algorithms 3
// and 5 do; given the same replicate it can also fit θ̃ alone, the private
// fit whose spread is the variability interval of Section 7.1. It states
// its privacy cost as data ([Cost]), from which the run's ledger is
// composed.
//
// The eight methods of the paper ([NewWKL]) are registered under
// "<privacy>-<perturbation>-<model>" names (dp|zcdp × obj|output × lr|svm);
// [Register] adds others, and a spec's [[methods]] tables with
// serves = "ci" add its own ([External]). A spec names methods in
// confidence_intervals.methods.
//
// A Method is called from several goroutines at once (one per unit), each
// call with its own [Data]; it must not keep state between calls.
//
// [arXiv:1804.03794]: https://arxiv.org/abs/1804.03794
type Method interface {
	// Name is the name a spec uses, unique in the registry: lowercase
	// letters, digits, '.', '_' and '-' (see Register).
	Name() string
	// Attributes describe the method for rows.csv, the tables and the
	// figures; the kind groups methods by them, never by the name.
	Attributes() Attributes
	// Cost is the privacy cost of one interval at budget b, as data. It
	// must not depend on the data: the ledger is composed from it before
	// any unit runs. Its guarantees must be valid
	// ([privacy.Guarantee.Validate]) and compose ([privacy.Compose]).
	Cost(b Budget) Cost
	// Interval fits θ̃ privately on d.Rows and releases the (1 − α)
	// intervals of every coordinate of θ₀ (the d features and the
	// constant) at budget b. A per-replicate outcome such as a budget too
	// small to fit (ε′ ≤ 0) is a Release with a status, not an error;
	// errors stop the run.
	Interval(ctx context.Context, d Data, b Budget) (Release, error)
	// Fit is the private fit alone, spending ε₁ (the paper's ϕ₁) only: the
	// variability interval of Section 7.1 is the spread of Fit over
	// bootstrap replicates "with privacy budget ϕ₁ ... not affected by the
	// ϕ₂ and ϕ₃ that are used in our confidence interval algorithms". The
	// kind shares one variability interval between swept values that
	// differ only in ε₂ or ε₃, and fits each bootstrap replicate at every
	// ε₁ of an ε₁ sweep with one d.Shared (see [Shared]). Fit must read
	// only d.Rows, its streams, d.Records and d.Problem's C, H and Fit
	// (never the intervals' Alpha, MCSamples or SigmaFloor): the kind
	// also shares a variability interval between runs of one command that
	// differ only in those (runner.Memo).
	Fit(ctx context.Context, d Data, eps1 float64) (Estimate, error)
}

// Attributes describe a Method for the outputs of the kind. The built-in
// methods have Privacy "dp" or "zcdp", Perturbation "obj" or "output" and
// Model dpci.LR or dpci.SVM, with the labels of the paper's Tables 2–6
// ("DP", "zCDP"; "obj", "output"; "LR", "SVM").
type Attributes struct {
	// Privacy is the rows.csv privacy column, e.g. "dp". Required. A label
	// only: the guarantee itself is the method's Cost.
	Privacy string
	// Perturbation is the rows.csv perturbation column, e.g. "obj".
	// Required.
	Perturbation string
	// Model is the ERM loss whose coefficients θ₀ the interval is for
	// (rows.csv model column). Required; a model dpci knows (dpci.LR,
	// dpci.SVM). The kind fits θ₀ and groups work units by model.
	Model dpci.Model
	// PrivacyLabel, PerturbationLabel and ModelLabel are the labels in the
	// paper-layout tables and figure panels; empty means Privacy,
	// Perturbation and the upper-cased Model.
	PrivacyLabel, PerturbationLabel, ModelLabel string
}

// Labels returns the labels of the paper-layout tables and figure panels:
// PrivacyLabel, PerturbationLabel and ModelLabel, or where empty Privacy,
// Perturbation and the upper-cased Model.
func (a Attributes) Labels() (privacy, perturbation, model string) {
	privacy, perturbation, model = a.PrivacyLabel, a.PerturbationLabel, a.ModelLabel
	if privacy == "" {
		privacy = a.Privacy
	}
	if perturbation == "" {
		perturbation = a.Perturbation
	}
	if model == "" {
		model = strings.ToUpper(string(a.Model))
	}
	return privacy, perturbation, model
}

// Budget is the privacy budget of one interval as the spec states it, in
// ε units (Section 7): Eps1 for θ̃, Eps2 for the Hessian and Eps3 for the
// gradient covariance, all finite and > 0. A method under another notion
// converts it; the paper's zCDP methods spend ρᵢ = εᵢ²/2 ("we set
// ρ = ε²/2", Section 7).
type Budget struct {
	Eps1, Eps2, Eps3 float64
}

// Rho returns the ρ = ε²/2 that Section 7 pairs with ε ("we set
// ρ = ε²/2"): the zCDP budget of a budget part ε.
func Rho(eps float64) float64 { return eps * eps / 2 }

// Problem is the ERM problem and interval settings of a run (the spec's
// confidence_intervals section): minimise (1/n)Σᵢ[f(xᵢ, yᵢ, θ) + c‖θ‖²]
// with the loss f of the method's model.
type Problem struct {
	// C is the regularization coefficient c; > 0.
	C float64
	// H is the Huber width h of the SVM loss; > 0.
	H float64
	// Alpha is the miscoverage α of the (1 − α) intervals; in (0, 1).
	Alpha float64
	// MCSamples is the number m of Monte Carlo samples of Algorithms 3 and
	// 5; ≥ 1.
	MCSamples int
	// SigmaFloor is the floor of Σ̃'s eigenvalues as a multiple of C, as
	// [dpci.Params.SigmaFloor]: 0 is the paper's 2c; the spec's
	// confidence_intervals.sigma_floor sets another.
	SigmaFloor float64
	// Fit are the solver options: a warm start at θ₀, a workspace reused
	// within the unit (one goroutine) and the unit's context.
	Fit erm.FitOptions
}

// Data is one bootstrap replicate handed to a Method, with its random
// streams and the work the methods of the replicate share.
type Data struct {
	// Rows is the replicate: n records drawn with replacement, stored as
	// the distinct records weighted by their counts (n =
	// Rows.SumWeights()). Every row has ‖x‖₂ ≤ 1, label ±1, and the
	// constant feature last. Read only.
	Rows *erm.Rows
	// Records is the same replicate record by record: how often each
	// record of the (sub)dataset was drawn. It is set only for the methods
	// of a [RecordUser] that asks for it (nil otherwise), and valid for
	// the call only. Read only.
	Records *Records
	// Problem is the ERM problem and interval settings.
	Problem Problem
	// Streams gives the random stream of each named step of this
	// replicate.
	Streams Streams
	// Shared holds work the methods of this replicate share (see Share).
	Shared *Shared
	// Scope names the records the replicate's releases touch (the n
	// records of the replicate), for a traced run's labels: a method calls
	// mech.Scope(rng, what, d.Scope) right before each release it draws
	// from rng. Scope draws nothing.
	Scope mech.Records
}

// RecordUser is implemented by a Method that reads a replicate record by
// record (Data.Records) rather than, or besides, as weighted distinct rows
// (Data.Rows): [External], which hands the records to another process as
// a file and the replicate as counts over them. The kind then counts each
// replicate per record too, from the same draws, so the other methods'
// results do not change.
type RecordUser interface {
	UsesRecords() bool
}

// Records is a bootstrap replicate in terms of the records of the
// (sub)dataset it was drawn from (the n records of one dataset and swept
// setting, in the kind's permuted order, each with its d features and the
// constant, as the kind builds them): Counts[i] is how often record i was
// drawn, summing to n. Data.Rows holds the same replicate with equal
// records merged.
type Records struct {
	key  string
	base *erm.Rows // each distinct record once, unweighted
	rec  []int32   // rec[i] is the row of base that record i equals
	// Counts are the draws per record; len(Counts) = n. Read only.
	Counts []int32
}

// NewRecords returns the Records of a (sub)dataset of n = len(rec) records
// stored as its distinct records, for the kind to fill per replicate:
// record i equals row rec[i] of base (each distinct record once,
// unweighted, the constant feature last), and key names the (sub)dataset
// ([Records.Key]). Counts is zero, of length n. base and rec are kept, not
// copied, and must not change while the Records is in use.
func NewRecords(key string, base *erm.Rows, rec []int32) *Records {
	return &Records{key: key, base: base, rec: rec, Counts: make([]int32, len(rec))}
}

// Key names the (sub)dataset: a safe file name, the same for every
// replicate of it and different for every other (sub)dataset of the run.
func (r *Records) Key() string { return r.key }

// N returns the number n of records.
func (r *Records) N() int { return len(r.rec) }

// X returns the records' design matrix, n × (d+1) with the constant
// feature last (a new matrix on every call).
func (r *Records) X() *mat.Dense {
	base := r.base
	x := mat.NewDense(len(r.rec), base.D(), nil)
	for i, u := range r.rec {
		row := x.RawRowView(i)
		cols, vals := base.Row(int(u))
		for k, j := range cols {
			row[j] = vals[k]
		}
	}
	return x
}

// Y returns the records' labels, ±1 (a new slice on every call).
func (r *Records) Y() []float64 {
	ys := r.base.Y()
	y := make([]float64, len(r.rec))
	for i, u := range r.rec {
		y[i] = ys[u]
	}
	return y
}

// Streams returns the random stream of one named step of one replicate
// (or one variability fit), derived by the runner from the seed, the
// dataset, the swept value (ε₁ alone in an ε₂ or ε₃ sweep, whose values
// then draw the same numbers at their own ε₂, ε₃), the model, the
// replicate and step. Every call
// returns a fresh generator; methods that name the same step draw the same
// numbers, which is how the paper's DP and zCDP objective perturbation
// share one Algorithm 1 run ("obj-fit"). A method of its own should name
// its steps after itself. The ci-coverage kind draws the replicate from
// the step "resample"; its Streams panic when a method asks for it.
type Streams func(step string) *rand.Rand

// Release is what Method.Interval releases for one replicate.
type Release struct {
	// Theta is the private estimate θ̃ (nil when nothing was released).
	Theta []float64
	// Interval holds the (1 − α) intervals for θ₀, one per coordinate of θ̃
	// (the constant's last). Lo and Hi are nil when no interval was
	// released; Status then says why.
	Interval dpci.Interval
	// Status is the rows.csv status: "ok"; "fit <solver status>" when the
	// fit did not converge (the privacy proof assumes the exact
	// minimizer); or, with no interval, the reason (the built-ins:
	// [StatusEpsilonPrime]).
	Status string
	// EpsilonPrime is ε′ of Algorithm 1 (rows.csv epsilon_prime); NaN for
	// a method without one.
	EpsilonPrime float64
	// Cost is the privacy cost of the release: it must equal Method.Cost
	// of the same budget, which the ledger states; the kind checks it.
	Cost Cost
}

// Estimate is what Method.Fit returns for one replicate of a variability
// interval.
type Estimate struct {
	// Theta is θ̃; nil when the method cannot fit (Status says why, and the
	// variability interval of the method is then not computed).
	Theta []float64
	// Status is "ok", or as Release.Status: with Theta set, anything but
	// "ok" counts as a fit that did not converge.
	Status string
	// EpsilonPrime is as in Release (NaN for a method without one).
	EpsilonPrime float64
}

// Cost is the privacy cost of one interval of a Method as data: the
// guarantee of each release, composed sequentially (all releases touch
// the same replicate) into the guarantee of the whole.
type Cost struct {
	// Charges are the releases in order, each with its guarantee.
	Charges []Charge
	// Rule names the result that composes them, e.g. "Wang, Kifer & Lee
	// 2019, Theorem 2".
	Rule string
	// Covers says what the composed guarantee protects.
	Covers string
}

// Charge is one release of a Method and its guarantee.
type Charge struct {
	// Part is a short name: the built-ins use "training" (θ̃), "hessian"
	// and "covariance".
	Part string
	// Guarantee is the release's guarantee; its Covers names the release.
	Guarantee privacy.Guarantee
}

// Total returns the sequential composition of c's charges
// ([privacy.Compose]), covering c.Covers.
func (c Cost) Total() (privacy.Guarantee, error) {
	gs := make([]privacy.Guarantee, len(c.Charges))
	for i, ch := range c.Charges {
		gs[i] = ch.Guarantee
	}
	return privacy.Compose(privacy.Sequential, c.Covers, gs...)
}

// Equal reports whether c and o state the same cost.
func (c Cost) Equal(o Cost) bool {
	return c.Rule == o.Rule && c.Covers == o.Covers && slices.Equal(c.Charges, o.Charges)
}

// Shared holds the work that the methods of one replicate (or of one
// variability fit) share, such as one non-private fit θ̂ for several
// output perturbations. It lives for one replicate and is used by one
// goroutine; the zero value is ready to use.
//
// A variability fit's Shared serves the replicate's fits at every ε₁ of a
// sweep (Fit is called once per ε₁ and method, each call's Data.Streams
// keyed by its ε₁), and a coverage replicate's its intervals at every
// value of an ε sweep (Interval is called once per value and method, the
// Streams keyed by its ε₁, and the same for every value of an ε₂ or ε₃
// sweep): a value that depends on ε₁, or draws from Streams, must name ε₁
// in its key; one that does not (θ̂ of Eq. 7) is then computed once for
// all of them. A value that depends on ε₂ or ε₃ must not be shared.
type Shared struct {
	values map[string]shared
}

type shared struct {
	v   any
	err error
}

// Share returns the value that f computed for key in s, calling f the
// first time key is asked for; an error is kept and returned too. The key
// must name everything the value depends on besides the replicate (which
// s is for); values are shared and must not be modified. It panics if key
// holds a value of another type (two methods disagreeing about a key).
func Share[T any](s *Shared, key string, f func() (T, error)) (T, error) {
	if s.values == nil {
		s.values = map[string]shared{}
	}
	sv, ok := s.values[key]
	if !ok {
		v, err := f()
		s.values[key] = shared{v, err}
		return v, err
	}
	v, ok := sv.v.(T)
	if !ok {
		panic(fmt.Sprintf("cimethods: shared %q holds a %T, not a %T", key, sv.v, v))
	}
	return v, sv.err
}

// methods is the registry, filled with the paper's eight methods when the
// package is initialised (a variable initializer, not init).
var methods = builtinRegistry()

// ErrDuplicate is returned (wrapped) by Register for a name already
// registered: registry.ErrDuplicate.
var ErrDuplicate = registry.ErrDuplicate

// Register adds m to the methods a spec can name. It returns an error for
// a nil m or a name that breaks the registries' one rule
// (registry.CheckName: 1–64 bytes, a letter or digit, then letters,
// digits, '_', '.' or '-'; the name appears in CSV cells, Markdown tables,
// the ledger and figure legends), a name already registered
// ([ErrDuplicate]), or attributes without privacy or perturbation or with
// a model dpci does not know. Register before loading the specs that name
// m (for example from a package-level variable initializer of the module
// that defines it). Safe for concurrent use.
func Register(m Method) error {
	return methods.Register(m)
}

// checkAttributes is the registry's check of a method: a privacy and a
// perturbation, and a model dpci knows.
func checkAttributes(m Method) error {
	a := m.Attributes()
	if a.Privacy == "" || a.Perturbation == "" {
		return fmt.Errorf("cimethods: register %s: attributes need a privacy and a perturbation (got %+v)", m.Name(), a)
	}
	if _, err := (dpci.Params{Model: a.Model, H: 1}).Loss(); err != nil {
		return fmt.Errorf("cimethods: register %s: %w", m.Name(), err)
	}
	return nil
}

// Names returns the names of the registered methods in registration
// order: the eight built-ins first, in the row order of the paper's Tables
// 2–6 (DP before zCDP, obj before output, LR before SVM).
func Names() []string { return methods.Names() }

// Lookup returns the registered method called name, or an error listing
// the known names; an unknown name never falls back to a default.
func Lookup(name string) (Method, error) { return methods.Get(name) }

// Rank returns the registered method called name and its place in
// registration order ([Names]), or false when none is called name.
func Rank(name string) (Method, int, bool) { return methods.Rank(name) }

// All returns the registered methods in registration order ([Names]).
func All() []Method { return methods.All() }

// DeclaredBy returns the name of method m when the cost it states is its
// own word, which the harness does not check: a method served by an
// external command ([External]) or one a user's module registered
// ([Register]) — a Go extension is no more audited by the harness than a
// worker is. It returns "" for the paper's eight methods ([NewWKL]), whose
// guarantees rest on core/dpci (checked by the harness's tests and privacy
// audit). The ledger names such a method in its charges' declared_by, and
// the figures' legends say "declared by the method".
func DeclaredBy(m Method) string {
	if m == nil {
		return ""
	}
	if _, ext := m.(*External); !ext && methods.Builtin(m) {
		return ""
	}
	return m.Name()
}

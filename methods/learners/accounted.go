package learners

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/dprepro/dprepro/core/accountant"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/results"
)

// MechSubsampledGaussian is the mechanism a learner may declare instead
// of, or beside, its ε: T steps of the Poisson-subsampled Gaussian
// mechanism (DP-SGD, or DP-GD with sampling rate 1), whose (ε, δ) the
// harness computes ([Account]).
const MechSubsampledGaussian = "subsampled-gaussian"

// AccountedMechanisms lists the mechanisms a learner may declare ([Mechanism]).
var AccountedMechanisms = []string{MechSubsampledGaussian}

// Mechanism is the noise mechanism a fit declares, from which the
// harness computes the fit's guarantee rather than taking the method's
// word for its ε (issue 26 §2): T = Steps steps of the Poisson-subsampled
// Gaussian mechanism with sampling rate SamplingRate and noise multiplier
// NoiseMultiplier (the noise's standard deviation over the L2 clipping
// bound of the per-record contributions). In a worker's fit reply it is
// the object privacy.mechanism:
//
//	{"name": "subsampled-gaussian", "noise_multiplier": σ, "sampling_rate": q, "steps": T}
//
// The guarantee is under add-or-remove-one adjacency, as Mironov, Talwar
// & Zhang 2019 state it and as Opacus and TF-Privacy report it: a method
// whose neighbouring datasets replace one record must declare the noise
// multiplier against the sum's sensitivity under replacement (twice the
// clipping bound for a full batch).
type Mechanism struct {
	Name            string  `json:"name"`             // MechSubsampledGaussian
	NoiseMultiplier float64 `json:"noise_multiplier"` // σ; finite, > 0
	SamplingRate    float64 `json:"sampling_rate"`    // q ∈ [0, 1]; 1 for a full batch
	Steps           int     `json:"steps"`            // T ≥ 1
}

// String describes m for the ledger and the messages:
// "subsampled Gaussian σ=1.1, q=0.01, T=1000".
func (m Mechanism) String() string {
	return fmt.Sprintf("subsampled Gaussian σ=%v, q=%v, T=%d", m.NoiseMultiplier, m.SamplingRate, m.Steps)
}

// ParseMechanism decodes a declared mechanism (a worker's
// privacy.mechanism), refusing an unknown name, an unknown or missing
// field and a value outside its domain.
func ParseMechanism(raw json.RawMessage) (Mechanism, error) {
	var m struct {
		Name            *string  `json:"name"`
		NoiseMultiplier *float64 `json:"noise_multiplier"`
		SamplingRate    *float64 `json:"sampling_rate"`
		Steps           *float64 `json:"steps"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Mechanism{}, fmt.Errorf(`privacy.mechanism: %v (want {"name": %q, "noise_multiplier": σ, "sampling_rate": q, "steps": T})`, err, MechSubsampledGaussian)
	}
	switch {
	case m.Name == nil:
		return Mechanism{}, fmt.Errorf(`privacy.mechanism: "name" is required (one of: %s)`, strings.Join(AccountedMechanisms, ", "))
	case *m.Name != MechSubsampledGaussian:
		return Mechanism{}, fmt.Errorf(`privacy.mechanism: unknown mechanism %q (known: %s)`, *m.Name, strings.Join(AccountedMechanisms, ", "))
	case m.NoiseMultiplier == nil || m.SamplingRate == nil || m.Steps == nil:
		return Mechanism{}, fmt.Errorf(`privacy.mechanism: "noise_multiplier", "sampling_rate" and "steps" are required`)
	case *m.Steps != math.Trunc(*m.Steps) || *m.Steps < 1 || *m.Steps > 1e9:
		return Mechanism{}, fmt.Errorf(`privacy.mechanism: "steps" must be a whole number ≥ 1 (got %v)`, *m.Steps)
	}
	out := Mechanism{Name: *m.Name, NoiseMultiplier: *m.NoiseMultiplier, SamplingRate: *m.SamplingRate, Steps: int(*m.Steps)}
	if err := out.sgm().Validate(); err != nil {
		return Mechanism{}, fmt.Errorf("privacy.mechanism: %w", err)
	}
	return out, nil
}

func (m Mechanism) sgm() accountant.SampledGaussian {
	return accountant.SampledGaussian{Sigma: m.NoiseMultiplier, Q: m.SamplingRate, Steps: m.Steps}
}

// Account returns the (ε, δ)-DP guarantee the harness computes for m at
// delta: the smaller of two valid upper bounds (core/accountant), both
// under add-or-remove-one adjacency, for the T steps:
//
//   - the privacy-loss-distribution (PLD) accountant
//     (SampledGaussian.EpsilonPLD at its default grid: both dominating
//     pairs, connect-the-dots discretisation, FFT composition, round-off
//     budget added), tight to ~0.5 %;
//   - the RDP accountant: the Rényi-DP of the subsampled Gaussian
//     (Mironov, Talwar & Zhang 2019, arXiv:1908.10530v1, Section 3)
//     converted with the tight conversion (Balle et al. 2020; Canonne,
//     Kamath & Steinke 2020, Proposition 12) minimized over
//     accountant.DPSGDOrders — what Opacus's and TF-Privacy's RDP
//     accountants report.
//
// Normally the PLD value is the smaller (5–10 % on DP-SGD settings); the
// RDP one is booked when the PLD one is larger, infinite (its round-off
// budget exceeds δ) or fails (a loss range too wide for its grid, or its
// numerical guard). The
// guarantee's text names the accountant that gave the booked ε and the
// other's value, e.g. "computed by the harness (PLD accountant, h=0.000967;
// RDP accountant gives 2.6 at order 8) for the declared …". covers says
// what the guarantee covers; Account prefixes it with how it was computed.
// delta must be in (0, 1): the Gaussian mechanism has no pure ε.
//
// The two ε of a (σ, q, T, δ) are computed once per process and cached
// (a PLD call takes tens to hundreds of milliseconds; every fit of a
// method declares the same mechanism); Account is safe for concurrent use.
func Account(m Mechanism, delta float64, covers string) (privacy.Guarantee, error) {
	if m.Name != MechSubsampledGaussian {
		return privacy.Guarantee{}, fmt.Errorf("unknown mechanism %q (known: %s)", m.Name, strings.Join(AccountedMechanisms, ", "))
	}
	if !(delta > 0 && delta < 1) {
		return privacy.Guarantee{}, fmt.Errorf("the %s has an ε only at a δ in (0, 1) (got δ = %v): give the training budget a δ (comparison.delta, tuning.train_delta)", m, delta)
	}
	a, err := accountFor(m.sgm(), delta)
	if err != nil {
		return privacy.Guarantee{}, fmt.Errorf("accounting for the %s: %w", m, err)
	}
	var eps float64
	var how string
	if a.pldErr == nil && a.pld <= a.rdp {
		eps = a.pld
		how = fmt.Sprintf("PLD accountant, h=%.3g; RDP accountant gives %.4g at order %v", a.h, a.rdp, a.order)
	} else {
		eps = a.rdp
		other := fmt.Sprintf("PLD accountant gives %.4g", a.pld)
		if a.pldErr != nil {
			other = fmt.Sprintf("PLD accountant failed: %v", a.pldErr)
		}
		how = fmt.Sprintf("RDP accountant, order %v; %s", a.order, other)
	}
	g := privacy.EpsDeltaDP(eps, delta, fmt.Sprintf("computed by the harness (%s) for the declared %s: %s", how, m, covers))
	if err := g.Validate(); err != nil {
		return privacy.Guarantee{}, err
	}
	return g, nil
}

// accounting is what Account computes for one (σ, q, T, δ): the RDP ε and
// its order, and the PLD ε at grid width h (or the error of the PLD
// accountant).
type accounting struct {
	rdp, order float64
	pld, h     float64
	pldErr     error
}

type accountingKey struct {
	sigma, q, delta float64
	steps           int
}

// accountingCache maps accountingKey to accounting (see Account).
var accountingCache sync.Map

func accountFor(sg accountant.SampledGaussian, delta float64) (accounting, error) {
	key := accountingKey{sigma: sg.Sigma, q: sg.Q, delta: delta, steps: sg.Steps}
	if v, ok := accountingCache.Load(key); ok {
		return v.(accounting), nil
	}
	var a accounting
	var err error
	if a.rdp, a.order, err = sg.Epsilon(delta); err != nil {
		return accounting{}, err
	}
	a.pld, a.pldErr = sg.EpsilonPLD(delta, accountant.PLDOptions{})
	if a.pldErr == nil {
		a.h, a.pldErr = sg.PLDInterval(delta, accountant.PLDOptions{})
	}
	accountingCache.Store(key, a)
	return a, nil
}

// Accounted is implemented by a learner whose fits' guarantees the
// harness computes from the mechanism each fit declares ([Account]), not
// the method's word for its ε: a worker whose hello declares
// attributes.mechanism, or a Go learner that calls Account and says so.
// The ledger states Accounting beside the charge.
type Accounted interface {
	Learner
	// Accounting says how the harness computes the fits' guarantees.
	Accounting() string
}

// AccountedBy returns how the harness computes l's guarantees, or "" when
// l's guarantees are its own word (or the harness's own mechanisms').
func AccountedBy(l Learner) string {
	if a, ok := l.(Accounted); ok {
		return a.Accounting()
	}
	return ""
}

// The diagnostics an accounted worker's rows carry: DeclaredEpsilon
// (diag_declared_epsilon) the ε the method declared beside its mechanism,
// NaN when it declared none; AccountedEpsilon (diag_accounted_epsilon)
// the ε the harness computed for the mechanism — what the fit returns,
// booked as the larger of it and the level (CheckLevel).
const (
	DeclaredEpsilon  = "declared_epsilon"
	AccountedEpsilon = "accounted_epsilon"
)

// The diagnostics that record how an accounted fit's ε was computed, so
// that a run's rows let a reader recompute it: the declared mechanism
// (MechNoiseMultiplier σ, MechSamplingRate q, MechSteps T) and both
// accountants' ε at the fit's δ (AccountedDelta) — PLDEpsilon (NaN when
// the PLD accountant failed or its round-off budget exceeds δ) and
// RDPEpsilon at its best order RDPOrder. AccountedEpsilon is the smaller
// of the two.
const (
	MechNoiseMultiplier = "noise_multiplier"
	MechSamplingRate    = "sampling_rate"
	MechSteps           = "steps"
	PLDEpsilon          = "pld_epsilon"
	RDPEpsilon          = "rdp_epsilon"
	RDPOrder            = "rdp_order"
	AccountedDelta      = "accounted_delta"
)

// AccountedDiagnostics are the diagnostics the harness adds to the rows of
// a learner whose fits declare their mechanism, in column order.
var AccountedDiagnostics = []string{AccountedEpsilon, DeclaredEpsilon, MechNoiseMultiplier, MechSamplingRate, MechSteps, AccountedDelta, PLDEpsilon, RDPEpsilon, RDPOrder}

// accountingDiagnostics sets, in diag, what the harness computed for m
// at delta (cached by Account): the mechanism's parameters and both
// accountants' ε.
func accountingDiagnostics(diag map[string]float64, m Mechanism, delta float64) error {
	a, err := accountFor(m.sgm(), delta)
	if err != nil {
		return err
	}
	pld := a.pld
	if a.pldErr != nil || math.IsInf(pld, 0) {
		pld = math.NaN()
	}
	diag[MechNoiseMultiplier], diag[MechSamplingRate], diag[MechSteps] = m.NoiseMultiplier, m.SamplingRate, float64(m.Steps)
	diag[AccountedDelta], diag[PLDEpsilon], diag[RDPEpsilon], diag[RDPOrder] = delta, pld, a.rdp, a.order
	return nil
}

// accountingWords is what an accounted learner's Accounting says.
const accountingWords = "ε computed by the harness from the mechanism each fit declares: the smaller of two upper bounds on the Poisson-subsampled Gaussian's ε at the fit's δ, a privacy-loss-distribution accountant (Koskela, Jälkö & Honkela 2020; connect-the-dots discretisation, both add and remove pairs) and the RDP accountant (Mironov, Talwar & Zhang 2019, tight conversion to (ε, δ)), each fit's row recording both (diag_pld_epsilon, diag_rdp_epsilon at diag_rdp_order) and the declared σ, q, T; at sampling rate 1 the Gaussian mechanism at the declared noise multiplier (replace-one when it is against the replace-one sensitivity), below 1 add-or-remove-one adjacency, as Opacus and TF-Privacy report it"

// DeclaredBelowWarnings returns, for each learner of labels whose rows
// carry the ε its method declared beside its mechanism
// (diag_declared_epsilon) below the ε the harness computed for it
// (diag_accounted_epsilon), a warning: how many fits, the first such
// pair, and what is booked (the column spent, from the computed ε). The
// rows' method is in column "learner".
func DeclaredBelowWarnings(rows []results.Row, labels []string, spent string) []string {
	type tally struct {
		below, fits        int
		declared, computed float64
	}
	by := map[string]*tally{}
	for _, r := range rows {
		d := r.Float("diag_" + DeclaredEpsilon)
		if math.IsNaN(d) {
			continue
		}
		t := by[r["learner"]]
		if t == nil {
			t = &tally{}
			by[r["learner"]] = t
		}
		t.fits++
		if c := r.Float("diag_" + AccountedEpsilon); d < c*(1-1e-9) {
			if t.below == 0 {
				t.declared, t.computed = d, c
			}
			t.below++
		}
	}
	var out []string
	for _, l := range labels {
		if t := by[l]; t != nil && t.below > 0 {
			out = append(out, fmt.Sprintf("learner %s declared an ε below what the harness computed for the mechanism it declares in %d of %d fits (first: declared %v, computed %v); %s and the ledger book the computed ε (or the level, when larger)", l, t.below, t.fits, t.declared, t.computed, spent))
		}
	}
	return out
}

package results

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/dprepro/dprepro/core/privacy"
)

// Manifest records how a run was made: spec, seed, platform, versions,
// timing, data provenance, and the privacy ledger. It is written last.
type Manifest struct {
	Tool         string            `json:"tool"`
	Version      string            `json:"version"` // module version or VCS revision (see Build)
	Build        BuildInfo         `json:"build"`
	Spec         SpecInfo          `json:"spec"`
	Seed         int64             `json:"seed"`
	Profile      string            `json:"profile"`
	Workers      int               `json:"workers"`
	GoVersion    string            `json:"go_version"`
	GOOS         string            `json:"goos"`
	GOARCH       string            `json:"goarch"`
	GOAMD64      string            `json:"goamd64,omitempty"`
	Dependencies map[string]string `json:"dependencies"`
	Start        time.Time         `json:"start"`
	End          time.Time         `json:"end"`
	WallSeconds  float64           `json:"wall_seconds"`
	Units        UnitCounts        `json:"units"`
	Datasets     []DatasetInfo     `json:"datasets"`
	Ledger       []LedgerEntry     `json:"privacy_ledger"`
	Outputs      []string          `json:"outputs"`
	Notes        string            `json:"notes,omitempty"`
	// Noise says where the releases' noise came from and how it was drawn
	// (seeded simulation, or --secure-noise and its constructions);
	// SecureNoise is true for the latter (crypto/rand: the run does not
	// replay).
	Noise       []string `json:"noise"`
	SecureNoise bool     `json:"secure_noise"`
	// Unhardened lists, in a run with secure noise, the mechanisms
	// (mech.Release.Mechanism) of the run's releases that have no
	// floating-point-safe construction (mech.Unhardened): their bits come
	// from crypto/rand, their samplers are floating point. Built from what
	// the kind declares it releases (runner.Releaser); tests check it
	// against the releases a traced run drew.
	Unhardened []string `json:"unhardened_releases,omitempty"`
	// PrivacyTrace describes the run's privacy trace when it wrote one
	// (run --trace-privacy): every release its units drew, as drawn.
	PrivacyTrace *TraceSummary `json:"privacy_trace,omitempty"`
	Warnings     []string      `json:"warnings,omitempty"`
	// ExternalMethods are the methods served by external commands that
	// the spec declares ([[methods]]).
	ExternalMethods []ExternalMethod `json:"external_methods,omitempty"`
	// ScratchPeakBytes is the most bytes of scratch files (the data
	// matrices handed to external methods) on disk at once during the
	// run's units; absent when the run wrote none.
	ScratchPeakBytes int64 `json:"scratch_peak_bytes,omitempty"`
	// Audits are the empirical privacy audits of the run's methods
	// (runner.MethodAuditor, e.g. [comparison.audit]): ε_LB beside the
	// claimed ε, releases, confidence and verdict; their rows are in
	// AuditFile. Absent when the run audited nothing.
	Audits []MethodAudit `json:"method_audits,omitempty"`
	// UnitTimes records what the run's units cost: count, total,
	// quantiles, the longest units and the critical path (issue 27). A
	// measurement: it varies between runs and nothing compares it.
	// Absent in manifests written before it existed.
	UnitTimes *UnitTimes `json:"unit_times,omitempty"`
}

// ExternalMethod records a method served by an external command: what ran
// (the command, run in the spec's directory), the digests of its files
// (which are part of the spec hash) and the version its worker stated.
type ExternalMethod struct {
	Name    string       `json:"name"`
	Serves  string       `json:"serves"`
	Command []string     `json:"command"`
	Files   []FileDigest `json:"files,omitempty"`
	// Version is the hello's version; empty when the method states none
	// or no worker of it was started.
	Version string `json:"version,omitempty"`
}

// FileDigest is a file and its SHA-256.
type FileDigest struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// SpecInfo identifies the spec of a run.
type SpecInfo struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Paper string `json:"paper"`
	Kind  string `json:"kind"`
	// File is the spec file's absolute path, or
	// "builtin:experiments/ID.toml" for a built-in spec (older builds
	// wrote the path as given, possibly relative); FileSHA256 the SHA-256
	// of its bytes when the run loaded it.
	File       string `json:"file"`
	FileSHA256 string `json:"file_sha256"`
	Hash       string `json:"resolved_sha256"`
	// DesignHash is the hash of the resolved spec without its seed and
	// secure-noise switch (experiments.Spec.DesignHash): runs with the same
	// design hash estimate the same quantities. Empty in manifests written
	// before it existed.
	DesignHash string `json:"design_sha256"`
	// Overrides are the command-line changes the run applied to the
	// spec after its profile (`--set key=value`, `--only m1,m2`), as
	// given; the run's profile then ends in ".set-<h>" and spec.toml
	// holds the resolved result. Absent for a spec run as its file says.
	Overrides []string `json:"overrides,omitempty"`
	// SharedHash is the hash of what every unit of the run reads, for a
	// kind whose units each say what else they read (runner.UnitReader):
	// the run's identity for resuming, beside each unit's inputs in the
	// checkpoint. Absent for other kinds.
	SharedHash string `json:"shared_sha256,omitempty"`
}

// UnitCounts counts replicate units.
type UnitCounts struct {
	Total    int `json:"total"`
	Resumed  int `json:"resumed_from_checkpoint"`
	Computed int `json:"computed"`
	// New counts the computed units the checkpoint did not hold (a
	// method, ε or parameter value added, or an interrupted attempt);
	// Changed, per input that changed since the checkpoint's units were
	// computed (e.g. "learner ext changed"), the units recomputed for it.
	// Both are absent on a run that resumed nothing.
	New     int            `json:"new,omitempty"`
	Changed map[string]int `json:"recomputed_for_changed_inputs,omitempty"`
}

// DatasetInfo is the provenance of one dataset as used by a run.
type DatasetInfo struct {
	Name      string            `json:"name"`
	Source    string            `json:"source"` // "real" or "synthetic"
	Files     []FileInfo        `json:"files,omitempty"`
	Generator string            `json:"generator,omitempty"`
	Params    map[string]string `json:"params,omitempty"`
	Subsample int               `json:"subsample,omitempty"` // rows kept by a seeded subsample; 0 = all
	N         int               `json:"n"`
	D         int               `json:"d"`
	Preproc   string            `json:"preprocessing"`
	// Scaling says whose records the stated ε covers:
	// "data-dependent scaling: ε holds for the scaled rows only" (scale
	// factors and one-hot levels computed from the records, the papers'
	// preprocessing) or "public bounds: ε holds for the raw records"
	// (experiments.StatementDataDependent, StatementPublic). Empty in
	// manifests written before it existed.
	Scaling string `json:"scaling,omitempty"`
	// Public, for public scaling, records the declared domain used and
	// what clipping changed; nil otherwise.
	Public *PublicBounds `json:"public_bounds,omitempty"`
	// Selection records a predictor selection (data.select), a
	// non-private step; nil when none ran.
	Selection *Selection `json:"selection,omitempty"`
	// Labels, for classification, lists each label value as read with its
	// number of records (before any subsample) and the class it became,
	// sorted by value; empty for regression and in manifests written
	// before it existed.
	Labels []LabelInfo `json:"labels,omitempty"`
}

// LabelInfo is one label value of a classification dataset: the value as
// written in the data ("yes", ">50K", "normal."; for data generated with
// its classes, "+1" or "-1"), its records and its class ("+1" or "-1").
type LabelInfo struct {
	Value   string `json:"value"`
	Records int    `json:"records"`
	Class   string `json:"class"`
}

// Selection is the manifest's record of a predictor selection
// (data.select; datasets.SelectionInfo): backward stepwise elimination of
// a binomial GLM fitted to every record and its label. It is not private.
type Selection struct {
	// Method is the data.select value, Criterion "AIC" or "BIC", K its
	// penalty per estimable coefficient; Records the records fitted (all,
	// before any subsample or split).
	Method    string  `json:"method"`
	Criterion string  `json:"criterion"`
	K         float64 `json:"k"`
	Records   int     `json:"records"`
	// Statement says that the step is not private and what it read.
	Statement string `json:"statement"`
	// Candidates, Kept (file order) and Dropped (order of removal) name
	// attributes.
	Candidates []string `json:"candidates"`
	Kept       []string `json:"kept"`
	Dropped    []string `json:"dropped"`
	// Start is the criterion of the model with every candidate; Steps the
	// removals with the criterion after each.
	Start float64         `json:"start_criterion"`
	Steps []SelectionStep `json:"steps"`
	// Deviance, Rank (estimable coefficients with the intercept), Columns
	// (treatment-coded model-matrix columns with the intercept) and
	// Aliased (columns without an estimable coefficient) describe the
	// final model; Converged is false when a fit did not converge.
	Deviance  float64  `json:"deviance"`
	Rank      int      `json:"rank"`
	Columns   int      `json:"columns"`
	Aliased   []string `json:"aliased,omitempty"`
	Converged bool     `json:"converged"`
	// Unconverged describes each fit that did not converge (which model,
	// and what stopped it).
	Unconverged []string `json:"unconverged,omitempty"`
}

// SelectionStep is one removal of a stepwise selection.
type SelectionStep struct {
	Dropped   string  `json:"dropped"`
	Criterion float64 `json:"criterion"`
	Deviance  float64 `json:"deviance"`
	Rank      int     `json:"rank"`
	// Aliased: removed first because it added no estimable coefficient.
	Aliased bool `json:"aliased,omitempty"`
}

// PublicBounds is the manifest's record of a dataset's public scaling
// (datasets.PublicInfo): the declared domain and what it clipped.
type PublicBounds struct {
	// Ranges lists each numeric attribute used with its declared range
	// and source, e.g. "age [17, 90] (adult.names: AAGE>16; …)".
	Ranges []string `json:"ranges,omitempty"`
	// Levels lists each categorical attribute used with its number of
	// declared levels and source.
	Levels []string `json:"levels,omitempty"`
	// RowBound is the bound R on the row norm the rows were divided by
	// (declared, or implied by the domain), ImpliedRowBound the latter.
	RowBound        float64 `json:"row_bound"`
	ImpliedRowBound float64 `json:"implied_row_bound"`
	// Records, ClippedValues, OutOfDomain, ClippedRows and ClippedRecords
	// count the records encoded (before any subsample), the numeric
	// values clipped to their ranges, the categorical values outside
	// their levels (encoded as all zeros), the rows scaled down to
	// RowBound, and the records changed by any of these.
	Records        int `json:"records"`
	ClippedValues  int `json:"clipped_values"`
	OutOfDomain    int `json:"out_of_domain_levels"`
	ClippedRows    int `json:"clipped_rows"`
	ClippedRecords int `json:"clipped_records"`
}

// FileInfo names a real data file and its verified digest.
type FileInfo struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	// Verified reports that SHA256 equals the registry's pinned digest;
	// false for a file with no pinned checksum (a user's IPUMS extract),
	// which is read as it is.
	Verified bool `json:"verified"`
	// Records and Dropped count the records kept and those dropped as
	// incomplete (a '?' field, the UCI convention for a missing value).
	Records int `json:"records"`
	Dropped int `json:"dropped"`
	// Missing is, for a file whose format has a missing-value marker
	// (adult.data: "?"), the spec's data.missing policy: "drop" (every
	// record holding the marker is dropped) or "level" (a marker in a
	// categorical field is kept as a level). Empty for other files and in
	// manifests written before it existed.
	Missing string `json:"missing,omitempty"`
	// Read is, when Missing is set, the records read (Records + Dropped).
	Read int `json:"read,omitempty"`
	// MissingLevel is, with Missing "level", the kept records that hold
	// the marker as a level of at least one categorical column.
	MissingLevel int `json:"missing_level,omitempty"`
}

// LedgerEntry is what one method's released output cost, for one privacy
// setting: each component (training, tuning) and the composed total.
type LedgerEntry struct {
	Method     string           `json:"method"`
	Setting    string           `json:"setting"` // e.g. "alpha=0.5"
	Components []LedgerCharge   `json:"components"`
	Total      PrivacyGuarantee `json:"total"`
	Rule       string           `json:"composition"`
	// Audit is the empirical privacy audit of this entry's method at this
	// setting, when the run audited it (MethodAudit; the charges'
	// Claimed text says it too); absent otherwise.
	Audit *MethodAudit `json:"audit,omitempty"`
}

// LedgerCharge is one privacy charge. Build one from a privacy.Guarantee
// with NewCharge.
type LedgerCharge struct {
	Part    string `json:"part"`    // "training" or "tuning"
	Release string `json:"release"` // what is computed or released
	Data    string `json:"data"`    // which data it touches: "T", "V", "T,V"
	// Notion is the privacy notion the charge is stated in, as package
	// core/privacy names it: "pure-dp", "approx-dp", "zcdp", "ex-post" or
	// "none". Absent in manifests written before it existed.
	Notion string `json:"notion,omitempty"`
	// Epsilon is ε; "nan" for a ρ-zCDP charge, which states no ε without
	// a δ (see Rho); "inf" for a step that is not private.
	Epsilon Float `json:"epsilon"`
	Delta   Float `json:"delta"`
	// Rho is the ρ of a ρ-zCDP charge. It is absent for every other
	// notion, except an (ε, δ) charge booked for a method's ρ-zCDP claim
	// (the learner-comparison kind states such a claim as (ε, δ) at its
	// δ to check it against an (ε, δ) level): Rho is then the claim's ρ.
	Rho     *Float `json:"rho,omitempty"`
	Private bool   `json:"private"` // false for a non-private step (Control)
	// Claimed is, where a method's own claim differs from what the
	// charge books, that claim in words beside the booking: a claim
	// below the level the harness handed the method is booked at the
	// level (what the protocol spends), one above it as claimed, e.g.
	// "learner X returned ε=0.02 below its level of ε=2 in 20 of 20
	// rows; booked at the level". Empty when claim and booking agree.
	Claimed string `json:"claimed,omitempty"`
	// DeclaredBy names the method whose word the charge's guarantee is,
	// when the harness does not audit it: a method served by an external
	// command ([[methods]]) or a Go extension registered by a user's
	// module. Empty for the built-in methods.
	DeclaredBy string `json:"declared_by,omitempty"`
}

// PrivacyGuarantee is a composed guarantee: (ε, δ), or ρ for ρ-zCDP, in
// the notion Notion (as in LedgerCharge); Private false means none. Build
// one from a privacy.Guarantee with NewTotal.
type PrivacyGuarantee struct {
	Notion  string `json:"notion,omitempty"`
	Epsilon Float  `json:"epsilon"`
	Delta   Float  `json:"delta"`
	Rho     *Float `json:"rho,omitempty"`
	Private bool   `json:"private"`
}

// NewCharge returns the ledger charge of guarantee g for part, the release
// and the data it touches: g's notion, its ε and δ, or for ρ-zCDP its ρ
// (ε then NaN: ρ-zCDP implies an ε only at a δ, Bun & Steinke 2016,
// Proposition 1.3, and the ledger does not choose one), and whether it is
// private.
func NewCharge(part, release, data string, g privacy.Guarantee) LedgerCharge {
	t := NewTotal(g)
	return LedgerCharge{Part: part, Release: release, Data: data, Notion: t.Notion,
		Epsilon: t.Epsilon, Delta: t.Delta, Rho: t.Rho, Private: t.Private}
}

// NewTotal returns g as a ledger total, as NewCharge states a charge.
func NewTotal(g privacy.Guarantee) PrivacyGuarantee {
	t := PrivacyGuarantee{Notion: string(g.Notion), Epsilon: Float(g.Epsilon), Delta: Float(g.Delta), Private: g.Private()}
	if g.Notion == privacy.ZCDP {
		rho := Float(g.Rho)
		t.Epsilon, t.Rho = Float(math.NaN()), &rho
	}
	return t
}

// Float is a float64 that encodes ±Inf and NaN as the JSON strings "inf",
// "-inf" and "nan" (JSON numbers cannot hold them); a non-private step has
// ε = "inf".
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsInf(v, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-inf"`), nil
	case math.IsNaN(v):
		return []byte(`"nan"`), nil
	}
	return []byte(strconv.FormatFloat(v, 'g', -1, 64)), nil
}

// UnmarshalJSON implements json.Unmarshaler: a number, or one of the
// strings MarshalJSON writes.
func (f *Float) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"inf"`:
		*f = Float(math.Inf(1))
		return nil
	case `"-inf"`:
		*f = Float(math.Inf(-1))
		return nil
	case `"nan"`:
		*f = Float(math.NaN())
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("results: %s is not a number or inf/-inf/nan", b)
	}
	*f = Float(v)
	return nil
}

// BuildInfo identifies the program that made a run, from the build
// information the Go toolchain stamps into the binary
// (runtime/debug.ReadBuildInfo): the main module's version, and the VCS
// revision, commit time and dirty flag when built with -buildvcs=true (the
// scripts and the Makefile do). Stamped is false for a binary built without
// VCS information (e.g. `go build` with GOFLAGS=-buildvcs=false, or `go
// test`); then only the module version says anything.
type BuildInfo struct {
	Module   string `json:"module"`
	Version  string `json:"module_version"`
	Revision string `json:"vcs_revision,omitempty"`
	Time     string `json:"vcs_time,omitempty"`
	Modified bool   `json:"vcs_modified"`
	Stamped  bool   `json:"vcs_stamped"`
	// Binary is the SHA-256 of the program file that made the run, which
	// tells two builds of one dirty tree apart (CheckpointHeader.Binary);
	// set in a run's manifest, empty elsewhere and in manifests written
	// before it existed.
	Binary string `json:"binary_sha256,omitempty"`
}

// String renders the build in one line, e.g.
// "github.com/dprepro/dprepro (devel) revision 53dfe7c… (2026-11-23T…, modified)".
func (b BuildInfo) String() string {
	s := b.Module + " " + b.Version
	if !b.Stamped {
		return s + " (no VCS information stamped: build with -buildvcs=true, as scripts/ and make do)"
	}
	s += " revision " + b.Revision
	if b.Time != "" {
		s += " (" + b.Time
		if b.Modified {
			s += ", modified"
		}
		s += ")"
	} else if b.Modified {
		s += " (modified)"
	}
	return s
}

// Identity is the part of the build that decides what a run computes: the
// module version, revision and dirty flag (not the commit time).
func (b BuildInfo) Identity() string {
	if !b.Stamped {
		return b.Module + "@" + b.Version + " (no VCS stamp)"
	}
	id := b.Module + "@" + b.Version + " " + b.Revision
	if b.Modified {
		id += "+modified"
	}
	return id
}

// ReadBuild returns the running program's build information.
func ReadBuild() BuildInfo {
	b := BuildInfo{Module: "unknown", Version: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module, b.Version = bi.Main.Path, bi.Main.Version
	if b.Version == "" {
		b.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision, b.Stamped = s.Value, true
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// FillBuild fills the version, build, platform and dependency fields from
// the running binary's build information.
func (m *Manifest) FillBuild() {
	m.GoVersion = runtime.Version()
	m.GOOS = runtime.GOOS
	m.GOARCH = runtime.GOARCH
	m.Build = ReadBuild()
	m.Version = m.Build.Version
	if m.Build.Stamped {
		m.Version = m.Build.Revision
		if m.Build.Modified {
			m.Version += "+modified"
		}
	}
	m.Dependencies = map[string]string{}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	for _, s := range bi.Settings {
		if s.Key == "GOAMD64" {
			m.GOAMD64 = s.Value
		}
	}
	if m.GOARCH == "amd64" && m.GOAMD64 == "" {
		m.GOAMD64 = "v1" // the toolchain default when not set
	}
	for _, d := range bi.Deps {
		m.Dependencies[d.Path] = d.Version
	}
}

// Identity is the identity of the run m records, as a checkpoint header
// states it (CheckpointHeader.Changes tells two apart): spec, seed,
// profile, the data read and the build; the program's SHA-256 only where
// the manifest records it (Build.Binary).
func (m *Manifest) Identity() CheckpointHeader {
	return CheckpointHeader{Format: CheckpointFormat, SpecID: m.Spec.ID, SpecHash: cmp.Or(m.Spec.SharedHash, m.Spec.Hash), PerUnit: m.Spec.SharedHash != "",
		Seed: m.Seed, Profile: m.Profile, Data: DataIdentities(m.Datasets), Build: m.Build.Identity(), Binary: m.Build.Binary}
}

// Encode renders the manifest as indented JSON.
func (m *Manifest) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// TraceSummary describes the privacy trace of a run (--trace-privacy):
// the file, the releases it lists, and how many units it covers. A unit
// resumed from a checkpoint was computed by an earlier process, which
// may not have traced it: it is counted in UnitsUntraced, and its
// releases are not in the file.
type TraceSummary struct {
	File          string `json:"file"`
	Releases      int    `json:"releases"`
	UnitsTraced   int    `json:"units_traced"`
	UnitsUntraced int    `json:"units_untraced"`
}

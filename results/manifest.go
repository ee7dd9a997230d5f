package results

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"
)

// Manifest records how a run was made: spec, seed, platform, versions,
// timing, data provenance, and the privacy ledger. It is written last.
type Manifest struct {
	Tool         string            `json:"tool"`
	Version      string            `json:"version"` // module version or VCS revision, "unknown" when neither is stamped
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
	// (seeded simulation, or --secure-noise and its constructions).
	Noise    []string `json:"noise"`
	Warnings []string `json:"warnings,omitempty"`
}

// SpecInfo identifies the spec of a run.
type SpecInfo struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Paper      string `json:"paper"`
	Kind       string `json:"kind"`
	File       string `json:"file"`
	FileSHA256 string `json:"file_sha256"`
	Hash       string `json:"resolved_sha256"`
	// DesignHash is the hash of the resolved spec without its seed and
	// secure-noise switch (experiments.Spec.DesignHash): runs with the same
	// design hash estimate the same quantities. Empty in manifests written
	// before it existed.
	DesignHash string `json:"design_sha256"`
}

// UnitCounts counts replicate units.
type UnitCounts struct {
	Total    int `json:"total"`
	Resumed  int `json:"resumed_from_checkpoint"`
	Computed int `json:"computed"`
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
}

// FileInfo names a real data file and its verified digest.
type FileInfo struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	// Records and Dropped count the records kept and those dropped as
	// incomplete (a '?' field, the UCI convention for a missing value).
	Records int `json:"records"`
	Dropped int `json:"dropped"`
}

// LedgerEntry is what one method's released output cost, for one privacy
// setting: each component (training, tuning) and the composed total.
type LedgerEntry struct {
	Method     string           `json:"method"`
	Setting    string           `json:"setting"` // e.g. "alpha=0.5"
	Components []LedgerCharge   `json:"components"`
	Total      PrivacyGuarantee `json:"total"`
	Rule       string           `json:"composition"`
}

// LedgerCharge is one privacy charge.
type LedgerCharge struct {
	Part    string `json:"part"`    // "training" or "tuning"
	Release string `json:"release"` // what is computed or released
	Data    string `json:"data"`    // which data it touches: "T", "V", "T,V"
	Epsilon Float  `json:"epsilon"`
	Delta   Float  `json:"delta"`
	Private bool   `json:"private"` // false for a non-private step (Control)
}

// PrivacyGuarantee is an (ε, δ) pair; Private false means none.
type PrivacyGuarantee struct {
	Epsilon Float `json:"epsilon"`
	Delta   Float `json:"delta"`
	Private bool  `json:"private"`
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

// FillBuild fills the version, platform and dependency fields from the
// running binary's build information.
func (m *Manifest) FillBuild() {
	m.GoVersion = runtime.Version()
	m.GOOS = runtime.GOOS
	m.GOARCH = runtime.GOARCH
	m.Version = "unknown"
	m.Dependencies = map[string]string{}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		m.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			m.Version = s.Value
		case "GOAMD64":
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

// Encode renders the manifest as indented JSON.
func (m *Manifest) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

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
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/dprepro/dprepro/datasets"
)

// SchemaVersion is the spec schema version this build reads.
const SchemaVersion = 1

// safeName is the form of a spec id and a profile name: a safe file name on
// every platform, and never "." or "..".
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// MaxIDBytes is the longest spec id: the id is a folder name
// (OUT/<id>/), and 255 bytes is NAME_MAX, the longest file name of Linux,
// macOS and Windows file systems. A longer id would fail only when the run
// creates its folder; it is refused at load instead.
const MaxIDBytes = 255

// MaxProfileBytes is the longest profile name: a run's folder is
// "<profile>-seed<seed>[-secure]" (runner.RunName), which must fit in
// NAME_MAX (255 bytes) with the longest seed (19 digits):
// 255 − len("-seed") − 19 − len("-secure") = 224.
const MaxProfileBytes = 224

// reservedIDs are names the harness writes itself at the top of an output
// folder, which a spec id may not take.
var reservedIDs = struct {
	sync.RWMutex
	ids []string
}{ids: []string{"index.json", "index.md", "report"}}

// ReserveID adds id to the reserved names: a kind reserves the folder of
// its figures drawn across runs (runner.AcrossKind).
func ReserveID(id string) {
	reservedIDs.Lock()
	defer reservedIDs.Unlock()
	if !slices.Contains(reservedIDs.ids, id) {
		reservedIDs.ids = append(reservedIDs.ids, id)
	}
}

// ReservedIDs returns the reserved names: the harness's own files and
// folders and the kinds' figure folders (ReserveID).
func ReservedIDs() []string {
	reservedIDs.RLock()
	defer reservedIDs.RUnlock()
	return slices.Clone(reservedIDs.ids)
}

// Spec is a resolved experiment specification.
type Spec struct {
	// Schema is the spec schema version; must be SchemaVersion.
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
	// Overrides are the command-line changes applied after the profile
	// (`--set key=value`, `--only m1,m2`; see LoadOptions), as given; nil
	// for a spec run as its file says. Set by Load.
	Overrides []string `toml:"-"`

	Data   DataSpec   `toml:"data"`
	Output OutputSpec `toml:"output"`
	// Methods are the methods served by external commands ([[methods]]
	// tables, see MethodSpec), named like registered ones by the kind's
	// section.
	Methods []MethodSpec `toml:"methods,omitempty"`
	// Claims are the reproduced paper's claims and published numbers
	// ([[claims]] tables, see ClaimSpec), checked against every run; they
	// are not part of the canonical spec or its hash.
	Claims []ClaimSpec `toml:"-"`
	Source *SourceInfo `toml:"-"`
	// Section is the kind's own part of the spec (its tables, e.g. [cv]
	// and [tuning] for cv-tuning), decoded, defaulted and validated by the
	// kind (see Section). Nil only for a spec built in code without one.
	Section Section `toml:"-"`

	// lines locates the keys of the file the spec was parsed from (nil for
	// a spec built in code), for messages after Load (CheckResources).
	lines keyLines
	// claimScope is what the file's claims may name, over all its
	// profiles (set by Parse; nil for a spec built in code).
	claimScope *claimScope
	// shapes holds the measured shape of each dataset read so far
	// (SetDataShape), for the memory estimate; guarded by shapesMu.
	shapes map[string]datasets.Shape
	// warnings are the notes of Load on the spec itself (Warnings).
	warnings []string
}

// SourceInfo records where a spec came from.
type SourceInfo struct {
	Path string // file path as given
	// Abs is the file's absolute path, set by Load (empty for a spec
	// parsed from bytes, e.g. a built-in one): a run's manifest records
	// it, so that `dprepro claims RUN` finds the spec from any folder.
	Abs    string
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
	// Missing says what becomes of a record holding its file's
	// missing-value marker (adult.data: "?" in workclass, occupation and
	// native-country):
	//   - "drop" (the default): the record is dropped and counted; adult
	//     keeps 30,162 of its 32,561 records;
	//   - "level": a marker in a categorical field is kept as a level of
	//     that column (its literal text "?", one-hot encoded like any
	//     other level); a marker in a numeric field or the label still
	//     drops the record. Adult keeps all 32,561 records, with 4 more
	//     one-hot columns (108 before the intercept, not 104); a reading
	//     proposed for the "98 predictors" of Chaudhuri & Vinterbo
	//     (2013), Section 5 (see docs/data.md for the counts). With
	//     scaling = "public" the "?" level must be declared in
	//     [data.levels.NAME] like any other level.
	// A dataset whose file has no marker, and the synthetic stand-ins
	// (which have no missing values), ignore it; a data file
	// ([data.files.NAME], which drops such records) is refused with
	// "level". The manifest records the policy and the records read,
	// kept, dropped and kept with a missing level. Written as "" (and
	// left out of the canonical spec) when not set, so that a spec
	// without the key keeps its hash.
	Missing string `toml:"missing,omitempty"`
	// Select chooses predictors before the experiment: "none" (the
	// default), "stepwise-bic" or "stepwise-aic" — backward stepwise
	// selection of a binomial GLM (logit link) fitted to every record and
	// its label, as R's step(glm(...)) does under BIC (k = log n) or AIC
	// (k = 2) (datasets.Preprocessing.Select). It is NOT private: it reads
	// all records' labels, test folds included, before any split; the
	// manifest records what it kept and why, and the report says it is
	// not private. Chaudhuri & Vinterbo (2013), Section 5, selected
	// Adult's predictors so. Classification datasets under data-dependent
	// scaling only; data.columns, when set, lists the candidates. Left
	// out of the canonical spec when not set (the spec keeps its hash).
	Select string `toml:"select,omitempty"`
	// Coding is how categorical attributes become columns: "one-hot" (the
	// default: one indicator per level) or "treatment" (none for the first
	// level in sorted order, R's default contrasts). Data-dependent
	// scaling only. Left out of the canonical spec when not set.
	Coding string `toml:"coding,omitempty"`
	// ColumnScale is "maxabs" (default), "center-maxabs", "zscore" or
	// "none" (see datasets.Preprocessing).
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
	// Files declares the user's own data files, [data.files.NAME], each
	// loaded as dataset NAME when Datasets names it (see DataFile).
	Files map[string]DataFile `toml:"files,omitempty"`

	// Scaling says what the scale factors and one-hot levels come from
	// (datasets.Preprocessing.Scaling):
	//   - "data-dependent" (the default; the papers' preprocessing): the
	//     records themselves, so the stated ε holds for the scaled rows
	//     only, not for the raw records;
	//   - "public": the declared domain alone (a range per numeric
	//     attribute, the levels of each categorical one), every record
	//     clipped into it, so the stated ε holds for the raw records. The
	//     domain is the registry's documented one (datasets.Entry.Domain:
	//     adult, magic and bank have one) with Bounds and Levels over it.
	//     column_scale must be "maxabs" or "none" and target_scale
	//     "none".
	// The manifest states which mode each run used. Written as "" (and
	// left out of the canonical spec) when not set, so that a spec without
	// the key keeps its hash.
	Scaling string `toml:"scaling,omitempty"`
	// Bounds declares public ranges for scaling = "public", per dataset
	// and numeric attribute, over the registry's documented domain:
	//
	//	[data.bounds.adult]
	//	age = [17, 90]        # the raw value, before any log1p
	Bounds map[string]map[string][]float64 `toml:"bounds,omitempty"`
	// Levels declares the levels of categorical attributes for scaling =
	// "public", per dataset, over the registry's documented domain:
	//
	//	[data.levels.adult]
	//	sex = ["Female", "Male"]
	Levels map[string]map[string][]string `toml:"levels,omitempty"`
	// RowNormBound declares the bound R on the row norm after column
	// scaling for scaling = "public" with row_norm "l2-max" or "l1-max":
	// longer rows are scaled down to R, then every row is divided by R.
	// Zero (the default) means the bound the declared domain implies, so
	// that no row is clipped.
	RowNormBound float64 `toml:"row_norm_bound,omitzero"`
	// AcceptDataDependentScaling lets a run with secure noise
	// (--secure-noise, output.secure_noise) use data-dependent scaling,
	// which it otherwise refuses (see Spec.CheckSecureNoise). Default
	// false.
	AcceptDataDependentScaling bool `toml:"accept_data_dependent_scaling,omitempty"`
}

// OutputSpec configures summaries.
type OutputSpec struct {
	// Bootstrap is the number of resamples for the percentile-bootstrap CI
	// of each mean. Default 2000.
	Bootstrap int `toml:"bootstrap"`
	// CILevel is the confidence level of the CIs. Default 0.95.
	CILevel float64 `toml:"ci_level"`
	// SecureNoise draws every unit's randomness from crypto/rand, and every
	// release's noise through floating-point-safe constructions where the
	// harness has them (the runner hands units mech.CryptoRand; see
	// runner.Env); results then do not replay. Set by --secure-noise.
	// Default false.
	SecureNoise bool `toml:"secure_noise"`
}

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
// protocol) and validates the spec file at path; kinds knows the
// experiment kinds and their sections.
func Load(path, profile string, kinds Kinds) (*Spec, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	s, err := Parse(path, src, profile, kinds)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		s.Source.Abs = abs
	}
	return s, nil
}

// Parse is Load on the bytes src; name is used in messages.
func Parse(name string, src []byte, profile string, kinds Kinds) (*Spec, error) {
	return ParseWith(name, src, profile, kinds, LoadOptions{})
}

// LoadWith is [Load] with the changes of o (`dprepro run --set`,
// `--only`) applied to the chosen profile; see [LoadOptions].
func LoadWith(path, profile string, kinds Kinds, o LoadOptions) (*Spec, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	s, err := ParseWith(path, src, profile, kinds, o)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		s.Source.Abs = abs
	}
	return s, nil
}

// ParseWith is [Parse] with the changes of o applied to the chosen
// profile, validated like the file; their errors name the option
// ("--set tuning.epsilons=…: …").
func ParseWith(name string, src []byte, profile string, kinds Kinds, o LoadOptions) (*Spec, error) {
	base := filepath.Base(name)
	lines := newKeyLines(string(src))
	decodeErr := func(err error) error {
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
			return fmt.Errorf("%s:%d: %s", base, pe.Position.Line, msg)
		}
		if m := typeErrRe.FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("%s:%s: %s: %s", base, m[1], m[2], m[3])
		}
		return fmt.Errorf("%s: %v", base, err)
	}
	decode := func() (specFile, toml.MetaData, error) {
		f := specFile{Spec: DefaultSpec()}
		md, err := toml.Decode(string(src), &f)
		if err != nil {
			return f, md, decodeErr(err)
		}
		return f, md, nil
	}
	f, md, err := decode()
	if err != nil {
		return nil, err
	}
	// The kind's section: decoded from the same file over its defaults.
	if f.Kind == "" {
		return nil, fmt.Errorf("%s%s: required (one of: %s)", lineOf(base, lines, "kind"), "kind", strings.Join(kinds.Names(), ", "))
	}
	if _, ok := kinds.Section(f.Kind); !ok {
		return nil, fmt.Errorf("%s%s: unknown kind %q (one of: %s)%s", lineOf(base, lines, "kind"), "kind", f.Kind, strings.Join(kinds.Names(), ", "), Hint(f.Kind, kinds.Names()))
	}
	decodeSection := func() (Section, toml.MetaData, error) {
		sec, _ := kinds.Section(f.Kind)
		smd, err := toml.Decode(string(src), sec)
		if err != nil {
			return nil, smd, decodeErr(err)
		}
		return sec, smd, nil
	}
	sec, smd, err := decodeSection()
	if err != nil {
		return nil, err
	}
	f.Spec.Section = sec
	// A key is unknown when neither the shared part nor the section took
	// it (profile keys: when no profile decode into either took it).
	sectionTook := map[string]bool{}
	for _, k := range smd.Keys() {
		sectionTook[k.String()] = true
	}
	for _, k := range smd.Undecoded() {
		delete(sectionTook, k.String())
	}
	// The paper's claims: decoded apart, outside the spec's identity.
	var claims claimsFile
	cmd, err := toml.Decode(string(src), &claims)
	if err != nil {
		return nil, decodeErr(err)
	}
	for _, k := range cmd.Keys() {
		if len(k) > 0 && k[0] == "claims" {
			sectionTook[k.String()] = true
		}
	}
	for _, k := range cmd.Undecoded() {
		if len(k) > 0 && k[0] == "claims" {
			delete(sectionTook, k.String())
		}
	}
	f.Spec.Claims = claims.Claims
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
		if len(p) > MaxProfileBytes {
			at := lines.line("profile." + p)
			if at == 0 {
				at = lines.within("profile." + p)
			}
			errs = append(errs, fmt.Errorf("%s:%d: profile.%.40s…: a profile name names the run's folder (<profile>-seed<seed>): at most %d bytes (got %d)", base, at, p, MaxProfileBytes, len(p)))
		}
		g, _, _ := decode()
		if err := md.PrimitiveDecode(f.Profiles[p], &g.Spec); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: profile.%s: %v", base, lines.line("profile."+p), p, err))
			continue
		}
		gs, _, _ := decodeSection()
		if err := md.PrimitiveDecode(f.Profiles[p], gs); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: profile.%s: %v", base, lines.line("profile."+p), p, err))
			continue
		}
		if g.Spec.Kind != f.Kind {
			errs = append(errs, fmt.Errorf("%s:%d: profile.%s.kind: a profile cannot change the kind (%q in the base spec)", base, lines.line("profile."+p+".kind"), p, f.Kind))
			continue
		}
		g.Spec.Section = gs
		g.Spec.Claims = claims.Claims
		resolved[p] = g.Spec
	}
	for _, k := range md.Undecoded() {
		key := k.String()
		if strings.HasPrefix(key, "profile.") && len(k) == 2 {
			continue // an empty profile table
		}
		if sectionTook[key] {
			continue
		}
		errs = append(errs, fmt.Errorf("%s:%d: %s: unknown key", base, lines.line(key), key))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// Validate the base and every profile, so a broken profile is caught
	// whichever profile is run.
	order := append([]string{""}, names...)
	// The claims are the file's, decided at whichever profile runs: what
	// they may name is what some profile's summary holds.
	all := make([]*Spec, 0, len(order))
	for _, p := range order {
		s := resolved[p]
		all = append(all, &s)
	}
	scope := scopeOf(all...)
	for _, p := range order {
		s := resolved[p]
		s.claimScope = scope
		resolved[p] = s
	}
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
	if err := s.applyOptions(base, lines, o); err != nil {
		return nil, fmt.Errorf("%s: %w", base, err)
	}
	sum := sha256.Sum256(src)
	s.Source = &SourceInfo{Path: name, SHA256: hex.EncodeToString(sum[:])}
	s.lines = lines
	s.warnings = unreadDataFiles(base, lines, resolved)
	if errs := s.digestMethods(); len(errs) > 0 {
		var out []error
		for _, e := range errs {
			out = append(out, fmt.Errorf("%s%s: %s", lineOf(base, lines, e.key), e.path, e.msg))
		}
		return nil, errors.Join(out...)
	}
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
	b = append(b, s.methodsIdentity()...)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Canonical returns the resolved spec as TOML (written to spec.toml of a run).
//
// The encoding is the shared part (the fields of Spec) followed by the
// kind's section (its tables).
func (s *Spec) Canonical() ([]byte, error) {
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(s); err != nil {
		return nil, err
	}
	if s.Section != nil {
		b.WriteString("\n")
		if err := toml.NewEncoder(&b).Encode(s.Section); err != nil {
			return nil, err
		}
	}
	return []byte(b.String()), nil
}

// lineOf returns "file:line: " for key of a file, or "file: " when the key
// is not written in it.
func lineOf(base string, lines keyLines, key string) string {
	if l := lines.line(key); l > 0 {
		return fmt.Sprintf("%s:%d: ", base, l)
	}
	return base + ": "
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
	} else if len(s.ID) > MaxIDBytes {
		add("id", "id", "the id names the run's folder (OUT/<id>/): at most %d bytes, the longest file name (got %d bytes: %.40q…)", MaxIDBytes, len(s.ID), s.ID)
	} else if reserved := ReservedIDs(); slices.Contains(reserved, s.ID) {
		add("id", "id", "%q is a name the harness writes itself in an output folder (reserved: %s)", s.ID, strings.Join(reserved, ", "))
	}
	if s.Seed < 0 {
		add("seed", "seed", "must be >= 0 (got %d)", s.Seed)
	}
	// Data. Whether a kind needs datasets at all is the section's to say.
	seen := map[string]bool{}
	for i, d := range s.Data.Datasets {
		p := fmt.Sprintf("data.datasets[%d]", i)
		if seen[d] {
			add("data.datasets", p, "duplicate dataset %q", d)
		}
		seen[d] = true
	}
	errs = append(errs, s.validateDataFiles()...)
	oneOf := func(key, v string, allowed ...string) {
		if !contains(allowed, v) {
			add(key, key, "must be one of %s (got %q)%s", strings.Join(allowed, ", "), v, Hint(v, allowed))
		}
	}
	if s.Data.Subsample < 0 {
		add("data.subsample", "data.subsample", "must be >= 0 (got %d)", s.Data.Subsample)
	}
	oneOf("data.synthetic", s.Data.Synthetic, "auto", "allow", "never", "always")
	if s.Data.Missing != "" {
		oneOf("data.missing", s.Data.Missing, datasets.MissingPolicies...)
	}
	if s.Data.Missing == datasets.MissingLevel {
		for _, name := range s.Data.Datasets {
			if _, file := s.Data.Files[name]; file {
				add("data.missing", "data.missing", "%q is implemented for the registry's files (adult); the data file data.files.%s drops a record with an empty or \"?\" field: use missing = %q, or encode the missing value as a level in the file", datasets.MissingLevel, name, datasets.MissingDrop)
			}
		}
	}
	if s.Data.Select != "" {
		oneOf("data.select", s.Data.Select, datasets.SelectNone, datasets.SelectStepwiseBIC, datasets.SelectStepwiseAIC)
	}
	if s.Data.Coding != "" {
		oneOf("data.coding", s.Data.Coding, datasets.CodingOneHot, datasets.CodingTreatment)
	}
	if r, ok := s.Section.(RawReader); ok && r.ReadsRaw(s) {
		// The kind reads the raw attributes itself: nothing would select
		// or code them, and a key that does nothing is refused.
		if s.Data.Select != "" && s.Data.Select != datasets.SelectNone {
			add("data.select", "data.select", "kind %q reads the raw attributes it names; it takes no predictor selection", s.Kind)
		}
		if s.Data.Coding != "" && s.Data.Coding != datasets.CodingOneHot {
			add("data.coding", "data.coding", "kind %q reads the raw attributes it names; it takes no coding", s.Kind)
		}
	}
	if s.Data.Scaling == datasets.ScalingPublic {
		if s.Data.Select != "" && s.Data.Select != datasets.SelectNone {
			add("data.select", "data.select", "%q fits a model to every record's label, so no row would depend on its own record alone: scaling = %q takes no selection (list the attributes in data.columns)", s.Data.Select, datasets.ScalingPublic)
		}
		if s.Data.Coding != "" && s.Data.Coding != datasets.CodingOneHot {
			add("data.coding", "data.coding", "%q is implemented for data-dependent scaling only; scaling = %q codes every declared level", s.Data.Coding, datasets.ScalingPublic)
		}
	}
	oneOf("data.column_scale", s.Data.ColumnScale, "maxabs", "center-maxabs", "zscore", "none")
	oneOf("data.row_norm", s.Data.RowNorm, "l2-max", "l2-clip", "l2-unit", "l1-max", "none")
	oneOf("data.target_scale", s.Data.TargetScale, "none", "maxabs")
	errs = append(errs, s.validateScaling()...)
	errs = append(errs, s.validateMethods()...)
	errs = append(errs, s.validateClaims()...)
	if s.Section != nil {
		var p Problems
		s.Section.Validate(s, &p)
		errs = append(errs, p.errs...)
		errs = append(errs, s.validateServes()...)
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

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

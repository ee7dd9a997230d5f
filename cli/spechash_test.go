package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// TestBuiltin_HashesMatchReferences: every built-in spec at the quick
// profile resolves to the spec hash and design hash of its committed
// reference run (results/reference/ID/manifest.json), the identity that
// `dprepro check` compares. A field added to the spec structs must leave
// the canonical encoding of a spec that does not set it unchanged
// (omitempty), or every reference would stop matching its spec.
func TestBuiltin_HashesMatchReferences(t *testing.T) {
	if err := registerBuiltins(); err != nil {
		t.Fatal(err)
	}
	for _, id := range experiments.BuiltinIDs() {
		t.Run(id, func(t *testing.T) {
			m, err := results.ReadManifestFS(os.DirFS(filepath.Join("..", "results", "reference", id)), "manifest.json")
			if errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("no reference run: scripts/references.sh makes one")
			}
			if err != nil {
				t.Fatal(err)
			}
			s, err := runner.Kinds.LoadBuiltin(id, "quick")
			if err != nil {
				t.Fatal(err)
			}
			s.Seed = m.Seed
			if got := s.DesignHash(); got != m.Spec.DesignHash {
				t.Errorf("design hash %.12s, reference %.12s", got, m.Spec.DesignHash)
			}
			if got := s.Hash(); got != m.Spec.Hash {
				t.Errorf("resolved hash %.12s, reference %.12s", got, m.Spec.Hash)
			}
		})
	}
}

// TestPublicVariants_MatchBase: each built-in ID-public spec is its base
// spec ID under public bounds and nothing else: at every profile the two
// resolve to the same spec but for the id, title, notes, data.scaling and
// the preprocessing public bounds cannot do (data.select reads every
// label, data.column_scale "zscore" a statistic of the data; with them
// go data.coding and data.missing, which the base sets for its
// selection), and they carry the same claims (each may link its own
// analysis), so that the two runs measure what the public bounds cost.
func TestPublicVariants_MatchBase(t *testing.T) {
	if err := registerBuiltins(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, id := range experiments.BuiltinIDs() {
		base, ok := strings.CutSuffix(id, "-public")
		if !ok {
			continue
		}
		n++
		for _, profile := range []string{"paper", "quick"} {
			v, err := runner.Kinds.LoadBuiltin(id, profile)
			if err != nil {
				t.Fatal(err)
			}
			b, err := runner.Kinds.LoadBuiltin(base, profile)
			if err != nil {
				t.Fatalf("%s: no base spec %s: %v", id, base, err)
			}
			if !v.PublicScaling() || b.PublicScaling() {
				t.Errorf("%s: public scaling %v, base %s %v", id, v.PublicScaling(), base, b.PublicScaling())
			}
			noAnalysis := func(cs []experiments.ClaimSpec) []experiments.ClaimSpec {
				out := slices.Clone(cs)
				for i := range out {
					out[i].Analysis = nil
				}
				return out
			}
			if !reflect.DeepEqual(noAnalysis(v.Claims), noAnalysis(b.Claims)) {
				t.Errorf("%s: its claims differ from %s's", id, base)
			}
			v.ID, v.Title, v.Notes, v.Data.Scaling = b.ID, b.Title, b.Notes, b.Data.Scaling
			if b.Data.Select != "" || b.Data.ColumnScale == datasets.ScaleZScore { // what public bounds cannot do
				v.Data.Select, v.Data.Coding, v.Data.Missing, v.Data.ColumnScale = b.Data.Select, b.Data.Coding, b.Data.Missing, b.Data.ColumnScale
			}
			if v.Hash() != b.Hash() {
				vc, _ := v.Canonical()
				bc, _ := b.Canonical()
				t.Errorf("%s (%s): differs from %s beyond id, title, notes and scaling:\n%s\n---\n%s", id, profile, base, vc, bc)
			}
		}
	}
	if n < 4 {
		t.Errorf("%d public variants, want cv13-adult, cv13-magic, wkl-table3-adult and wkl-table4-bank", n)
	}
}

// TestReadme_PublicBoundsExample: the [data] block of the "Privacy from
// the raw records" section of docs/privacy.md (the privacy guide) is a valid data section: its
// declarations land over adult's documented domain, and the spec runs
// under public bounds.
func TestReadme_PublicBoundsExample(t *testing.T) {
	if err := registerBuiltins(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "docs", "privacy.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Privacy from the raw records: public bounds\n")
	if !ok {
		t.Fatal(`docs/privacy.md has no "## Privacy from the raw records: public bounds" section`)
	}
	_, block, ok := strings.Cut(sec, "```toml\n")
	if !ok {
		t.Fatal("docs/privacy.md: no toml block in the section")
	}
	data, _, ok := strings.Cut(block, "```")
	if !ok {
		t.Fatal("docs/privacy.md: unterminated toml block")
	}
	src := "schema = 1\nid = \"readme\"\nkind = \"cv-tuning\"\nseed = 1\n\n" + data +
		"\n[cv]\nrepetitions = 1\nfolds = 3\n\n[tuning]\nlambdas = [0.1]\nalphas = [1.0]\nmethods = [\"control\"]\n"
	s, err := experiments.Parse("readme.toml", []byte(src), "", runner.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	d := s.Domain("adult")
	if !s.PublicScaling() || d.Ranges["capital-gain"].Hi != 50000 || d.Ranges["age"].Hi != 90 || len(d.Levels["sex"]) != 2 || len(d.Levels["workclass"]) != 8 {
		t.Errorf("public %v, domain %+v", s.PublicScaling(), d)
	}
}

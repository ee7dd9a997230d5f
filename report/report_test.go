package report

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/claims"
	"github.com/dprepro/dprepro/docs"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
)

// fixtureAnalyses is a small analyses document: one section with a gist.
const fixtureAnalyses = `# Analyses

## t: a-lt-b

**The gist: too few repetitions.**

Longer text with a [link to itself](#t-a-lt-b) and one [elsewhere](../README.md).
`

// writeFixture writes OUT/t/quick-seed1/ (a run with four claims and a
// figure) and OUT/u/quick-seed2/ (a run on a stand-in, no claims) and
// returns OUT.
func writeFixture(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	run := filepath.Join(out, "t", "quick-seed1")
	if err := os.MkdirAll(filepath.Join(run, "figures"), 0o755); err != nil {
		t.Fatal(err)
	}
	eps := results.Float(0.5)
	m := results.Manifest{Tool: "dprepro", Spec: results.SpecInfo{ID: "t", Title: "Doe & Roe 2020, Figure 1 (adult)", Paper: "J. Doe, R. Roe. A paper. 2020.", Kind: "cv-tuning", File: "t.toml"},
		Seed: 1, Profile: "quick", Notes: "Deviation: the grid is ours.",
		Datasets: []results.DatasetInfo{{Name: "adult", Source: "real", N: 100, D: 3, Files: []results.FileInfo{{Name: "adult.data", SHA256: strings.Repeat("ab", 32), Verified: true, Records: 100}},
			Selection: &results.Selection{Method: "stepwise-bic", Criterion: "BIC", Records: 100, Statement: "NOT private: BIC selection fitted to all 100 records and their labels before the experiment",
				Candidates: []string{"age", "race", "sex"}, Kept: []string{"age", "sex"}, Dropped: []string{"race"}, Rank: 3, Columns: 3, Converged: true}}},
		Ledger: []results.LedgerEntry{{Method: "a", Setting: "alpha=1", Rule: "sequential",
			Components: []results.LedgerCharge{{Part: "training", Release: "fit", Data: "T", Notion: "pure-dp", Epsilon: eps, Private: true}},
			Total:      results.PrivacyGuarantee{Notion: "pure-dp", Epsilon: eps, Private: true}}},
	}
	writeManifest(t, run, m)
	csv := strings.Join(claims.LegacyColumns, ",") + "\n" + // a claims.csv of before the reason column
		"t,a-lt-b,Section 5,a beats b,adult,a,auc,1,NaN,0.1,0.05,0.15,less,not held\n" +
		"t,a-lt-b,Section 5,a beats b,adult,a,auc,2,NaN,0.0,-0.05,0.05,less,inconclusive\n" +
		"t,a-gt-c,Section 5,a beats c,adult,a,auc,1,NaN,-0.1,-0.15,-0.05,greater,not held\n" +
		"t,m-cov,Table 3,as published,adult,a,coverage,1,0.95,0.951,0.94,0.96,match,held\n" +
		"t,m-cov,Table 3,as published,adult,a,coverage,5,0.96,NaN,NaN,NaN,match,missing\n" +
		"t,gone,Table 3,not run,adult,a,coverage,9,NaN,NaN,NaN,NaN,at_least,missing\n"
	if err := os.WriteFile(filepath.Join(run, "claims.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := results.EncodeSummaryCSV([]results.SummaryRow{{Experiment: "t", Dataset: "adult", DataSource: "real", Method: "a", XName: "alpha", X: 1, Metric: "auc", Mean: 0.8, N: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "summary.csv"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	var png1 bytes.Buffer
	if err := png.Encode(&png1, image.NewGray(image.Rect(0, 0, 30, 20))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "figures", "fig1.png"), png1.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(out, "u", "quick-seed2")
	writeManifest(t, other, results.Manifest{Spec: results.SpecInfo{ID: "u", Title: "Mechanisms", Kind: "mechanism-bounds"}, Seed: 2, Profile: "quick",
		Datasets: []results.DatasetInfo{{Name: "twitter", Source: "synthetic", Params: map[string]string{"stand_in_for": "twitter"}}}})
	return out
}

func writeManifest(t *testing.T, dir string, m results.Manifest) {
	t.Helper()
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixtureClaims stands for the spec file: a-lt-b has an analysis, a-gt-c
// none.
func fixtureClaims(file string) ([]experiments.ClaimSpec, error) {
	if file != "t.toml" {
		return nil, errors.New("no such spec")
	}
	link := "docs/analysis.md#t-a-lt-b"
	return []experiments.ClaimSpec{{ID: "a-lt-b", Analysis: &link}, {ID: "a-gt-c"}}, nil
}

func TestLoadAndWrite(t *testing.T) {
	out := writeFixture(t)
	r, err := Load(out, Options{Analyses: ParseAnalyses("docs/analysis.md", []byte(fixtureAnalyses)), Claims: fixtureClaims})
	if err != nil {
		t.Fatal(err)
	}
	// Papers with claims first; the claims a reader must see first, first.
	if len(r.Papers) != 2 || r.Papers[0].Label != "Doe & Roe 2020" || r.Papers[1].Label != "Mechanisms" {
		t.Fatalf("papers %+v", r.Papers)
	}
	want := Counts{Held: 1, NotHeld: 2, Missing: 1}
	if r.Counts != want {
		t.Errorf("counts %+v, want %+v", r.Counts, want)
	}
	run := r.Papers[0].Runs[0]
	var ids []string
	for _, c := range run.Claims {
		ids = append(ids, c.ID+"="+c.Verdict)
	}
	if got := strings.Join(ids, " "); got != "a-lt-b=not held a-gt-c=not held m-cov=held gone=missing" {
		t.Errorf("claims %s", got)
	}
	if c := run.Claims[0]; c.Anchor != "t-a-lt-b" || c.Gist != "The gist: too few repetitions." {
		t.Errorf("analysis of a-lt-b: anchor %q gist %q", c.Anchor, c.Gist)
	}
	if run.XName != "alpha" || len(run.Matches) != 1 || len(run.Matches[0].Xs) != 1 || run.Matches[0].Xs[0] != 1 || len(run.Matches[0].NotRun) != 1 {
		t.Errorf("match tables %+v (x name %q)", run.Matches, run.XName)
	}
	if len(r.NotHeld) != 2 {
		t.Errorf("not held: %d", len(r.NotHeld))
	}

	dir, err := r.Write()
	if err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(dir, "index.html"))
	md := read(t, filepath.Join(dir, "report.md"))
	for _, want := range []string{
		`href="#analysis-t-a-lt-b"`, `id="analysis-t-a-lt-b"`, "The gist: too few repetitions.",
		"no analysis written yet", // a-gt-c
		`src="figures/t/quick-seed1/fig1.png"`, "SYNTHETIC stand-in for twitter", "Deviation: the grid is ours.",
		`href="#analysis-t-a-lt-b">link to itself`, // in-page link of the document kept
		"paper 0.95", "ε = 0.5", strings.Repeat("ab", 32),
		"non-private preprocessing", ">non-private selection</span>", "NOT private: BIC selection fitted to all 100 records and their labels before the experiment", "kept 2 of 3 attributes (age, sex); dropped race",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	if strings.Contains(page, `href="../README.md"`) || strings.Contains(page, "<script") {
		t.Error("index.html links outside the report folder or has a script")
	}
	for _, want := range []string{"The gist: too few repetitions. [analysis](analysis.md#t-a-lt-b)", "**no analysis written yet**", "![fig1 — Doe & Roe 2020, Figure 1 (adult)](figures/t/quick-seed1/fig1.png)", "❌ 2 not held", "adult: real (**non-private predictor selection**)", "**non-private preprocessing**: NOT private: BIC selection fitted to all 100 records and their labels before the experiment: kept 2 of 3 attributes (age, sex), dropped race"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, f := range []string{"figures/t/quick-seed1/fig1.png", "analysis.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// The report folder is not a run: a second report reads the same runs.
	if r2, err := Load(out, Options{Claims: fixtureClaims}); err != nil || runsOf(r2) != 2 {
		t.Errorf("second load: %v", err)
	}
}

func TestLoad_Errors(t *testing.T) {
	if _, err := Load(t.TempDir(), Options{}); !errors.Is(err, ErrNoRuns) {
		t.Errorf("empty folder: %v", err)
	}
	out := writeFixture(t)
	// A spec whose claims cannot be read: the verdicts still show, with a
	// note, and no claim resolves an analysis.
	r, err := Load(out, Options{Claims: func(string) ([]experiments.ClaimSpec, error) { return nil, errors.New("gone") }})
	if err != nil {
		t.Fatal(err)
	}
	run := r.Papers[0].Runs[0]
	if len(run.Notes) != 1 || !strings.Contains(run.Notes[0], "gone") || run.Claims[0].Anchor != "" {
		t.Errorf("notes %q", run.Notes)
	}
	// A claims.csv of another format is a note, not a failure.
	if err := os.WriteFile(filepath.Join(out, "t", "quick-seed1", "claims.csv"), []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = Load(out, Options{Claims: fixtureClaims})
	if err != nil || len(r.Papers[0].Runs[0].Notes) != 1 || len(r.Papers[0].Runs[0].Claims) != 0 {
		t.Errorf("bad claims.csv: %v", err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBuiltinAnalyses: every analysis link of a built-in spec names a
// section of docs/analysis.md, and each such section has a gist.
func TestBuiltinAnalyses(t *testing.T) {
	a := ParseAnalyses(docs.AnalysisPath, docs.Analysis)
	n := 0
	for _, f := range experiments.BuiltinFiles() {
		cs, err := experiments.ClaimsOf(experiments.BuiltinPrefix + f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.Analysis == nil {
				continue
			}
			n++
			anchor, ok := a.Resolve(*c.Analysis)
			if !ok {
				t.Errorf("%s: claim %s: analysis %q names no section of %s", f, c.ID, *c.Analysis, docs.AnalysisPath)
				continue
			}
			if a.Gist(anchor) == "" {
				t.Errorf("%s: section %s has no gist (a first paragraph starting **…**)", docs.AnalysisPath, anchor)
			}
		}
	}
	if n == 0 {
		t.Error("no built-in claim links an analysis")
	}
}

func TestSlug(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"cv13-magic: s5-auc-stability-gt-alphasplit", "cv13-magic-s5-auc-stability-gt-alphasplit"},
		{"Wang, Kifer and Lee: coverage at the quick profile", "wang-kifer-and-lee-coverage-at-the-quick-profile"},
		{"Magic: Stability's choice of lambda is noisy at alpha 1 and 2", "magic-stabilitys-choice-of-lambda-is-noisy-at-alpha-1-and-2"},
		{"A & B", "a--b"}, // GitHub's: the '&' dropped, both spaces kept
	} {
		if got := slug(c.heading); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

func TestMarkdownHTML(t *testing.T) {
	m := mdHTML{link: func(target string) (string, bool) { return target, strings.HasPrefix(target, "#") }}
	src := "# T <x>\n\nA `<b>` and **bold** [in](#here) [out](x.md).\n\n- one\n  two\n- three\n\n| a | b \\| c |\n|---|---|\n| <i> | 2 |\n"
	got := string(m.render(src))
	for _, want := range []string{`<h1 id="t-x">T &lt;x&gt;</h1>`, "<code>&lt;b&gt;</code>", "<strong>bold</strong>", `<a href="#here">in</a>`, " out.",
		"<li>one two</li>", "<li>three</li>", "<th>b | c</th>", "<td>&lt;i&gt;</td>"} {
		if !strings.Contains(got, want) {
			t.Errorf("render lacks %q:\n%s", want, got)
		}
	}
}

func TestClaimVerdict(t *testing.T) {
	cell := func(v string) *Cell { return &Cell{X: math.NaN(), Verdict: v} }
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{claims.Held, claims.Missing}, claims.Held},
		{[]string{claims.Held, claims.Inconclusive}, claims.Inconclusive},
		{[]string{claims.Inconclusive, claims.NotHeld, claims.Held}, claims.NotHeld},
		{[]string{claims.Synthetic, claims.Missing}, claims.Synthetic},
		{[]string{claims.Missing}, claims.Missing},
		{nil, claims.Missing},
	} {
		var cells []*Cell
		for _, v := range c.in {
			cells = append(cells, cell(v))
		}
		if got := claimVerdict(cells); got != c.want {
			t.Errorf("%v: %s, want %s", c.in, got, c.want)
		}
	}
}

// TestNoneNotHeld: a report whose claims were all on stand-ins (or at x
// the runs lack) says nothing was decided instead of "no claim is
// contradicted", which would read like a pass.
func TestNoneNotHeld(t *testing.T) {
	r := &Report{Counts: Counts{Synthetic: 334, Missing: 3}}
	if got := r.NoneNotHeld(); !strings.Contains(got, "No claim could be decided") {
		t.Errorf("all stand-ins: %q", got)
	}
	r.Counts.Held = 1
	if got := r.NoneNotHeld(); !strings.Contains(got, "No claim is contradicted") {
		t.Errorf("one held: %q", got)
	}
}

// TestLoad_NoPaperLabel: runs of specs that name no paper are grouped by
// kind, and the group is labelled as such, not by one spec's title.
func TestLoad_NoPaperLabel(t *testing.T) {
	out := t.TempDir()
	for _, id := range []string{"mine-a", "mine-b"} {
		writeManifest(t, filepath.Join(out, id, "quick-seed1"), results.Manifest{Tool: "dprepro",
			Spec: results.SpecInfo{ID: id, Title: "My study " + id, Kind: "cv-tuning", File: id + ".toml"}, Profile: "quick", Seed: 1})
	}
	writeManifest(t, filepath.Join(out, "solo", "quick-seed1"), results.Manifest{Tool: "dprepro",
		Spec: results.SpecInfo{ID: "solo", Title: "Alone", Kind: "ci-coverage", File: "solo.toml"}, Profile: "quick", Seed: 1})
	r, err := Load(out, Options{Claims: func(string) ([]experiments.ClaimSpec, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, p := range r.Papers {
		labels = append(labels, p.Label)
	}
	if got := strings.Join(labels, " | "); got != "Alone | Specs of kind cv-tuning that name no paper" {
		t.Errorf("labels: %s", got)
	}
}

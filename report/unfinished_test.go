package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dprepro/dprepro/claims"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/internal/mdcheck"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// writeAttemptT writes an attempt record into dir.
func writeAttemptT(t *testing.T, dir string, a *results.Attempt) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteAttempt(dir, a); err != nil {
		t.Fatal(err)
	}
}

// writeCheckpointT writes a checkpoint of n units into dir.
func writeCheckpointT(t *testing.T, dir, id string, n int) {
	t.Helper()
	cp, _, err := results.OpenCheckpoint(filepath.Join(dir, ".checkpoint"), results.CheckpointHeader{SpecID: id, Profile: "quick", Seed: 9, Build: "b@v1"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := cp.Append(string(rune('a'+i)), []results.Row{{"x": "1"}}); err != nil {
			t.Fatal(err)
		}
	}
	cp.Close()
}

// TestLoad_Unfinished: every run folder whose latest attempt did not
// finish is in the report — a failed run (its error, the units its
// checkpoint holds), a spec not built after an earlier finished run
// (shown, not counted), a run killed while queued, a checkpoint of an
// older build with no record, a damaged record — at the top of both pages, its claims
// counted as not run in the totals and its paper's counts; a queued
// record beside a finished run, and a record older than the run's
// manifest, change nothing.
func TestLoad_Unfinished(t *testing.T) {
	out := writeFixture(t) // t/quick-seed1 (4 claims), u/quick-seed2
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	cl := []results.AttemptClaim{{ID: "f1", Source: "Table 2", Statement: "first"}, {ID: "f2", Source: "Table 2", Statement: "second"}}

	// A failed run of another spec of the fixture's paper.
	failed := filepath.Join(out, "f", "quick-seed1")
	writeCheckpointT(t, failed, "f", 3)
	writeAttemptT(t, failed, &results.Attempt{State: results.AttemptFailed, Error: "f: 2 of 5 units failed:\nunit a: boom",
		Spec:    results.SpecInfo{ID: "f", Title: "Doe & Roe 2020, Table 2", Paper: "J. Doe, R. Roe. A paper. 2020.", Kind: "cv-tuning"},
		Profile: "quick", Seed: 1, Units: 5, Claims: cl, Started: t0, Updated: t0.Add(time.Minute), PID: 7, Host: "h"})

	// The fixture's run t: its latest attempt could not be built.
	tdir := filepath.Join(out, "t", "quick-seed1")
	m, err := results.ReadManifestFS(os.DirFS(tdir), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	writeAttemptT(t, tdir, &results.Attempt{State: results.AttemptNotRun, Error: "t.toml:7: data.datasets[0]: unknown label",
		Spec: results.SpecInfo{ID: "t", Title: m.Spec.Title, Paper: m.Spec.Paper, Kind: m.Spec.Kind}, Profile: "quick", Seed: 1,
		Claims: []results.AttemptClaim{{ID: "a-lt-b"}, {ID: "a-gt-c"}, {ID: "m-cov"}, {ID: "gone"}}, Started: m.Start.Add(time.Hour)})

	// Killed while queued, no earlier run; and queued beside a finished run.
	queued := filepath.Join(out, "q", "quick-seed4")
	writeAttemptT(t, queued, &results.Attempt{State: results.AttemptQueued, Spec: results.SpecInfo{ID: "q", Title: "Queued 2021"},
		Profile: "quick", Seed: 4, Claims: []results.AttemptClaim{{ID: "q1"}}, Started: t0, PID: 8, Host: "h"})
	writeAttemptT(t, filepath.Join(out, "u", "quick-seed2"), &results.Attempt{State: results.AttemptQueued, Spec: results.SpecInfo{ID: "u"}, Started: t0.Add(time.Hour)})

	// A checkpoint with no record and no manifest (an older build's).
	writeCheckpointT(t, filepath.Join(out, "o", "quick-seed9"), "o", 2)
	// A damaged record, alone in its folder.
	damaged := filepath.Join(out, "z", "paper-seed3")
	os.MkdirAll(damaged, 0o755)
	os.WriteFile(filepath.Join(damaged, results.AttemptFile), []byte(`{"state": "runn`), 0o644)

	r, err := Load(out, Options{Analyses: ParseAnalyses("docs/analysis.md", []byte(fixtureAnalyses)), Claims: fixtureClaims})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range r.Unfinished {
		got = append(got, u.Dir+"="+u.State)
	}
	if s := strings.Join(got, " "); s != "f/quick-seed1=failed o/quick-seed9=unfinished q/quick-seed4=queued t/quick-seed1=not run z/paper-seed3=unfinished" {
		t.Fatalf("unfinished: %s", s)
	}
	// Claims: f's 2, t's 4 and q's 1 not run; t's verdicts not counted;
	// o's unknown.
	if want := (Counts{NotRun: 7}); r.Counts != want {
		t.Errorf("counts %+v, want %+v", r.Counts, want)
	}
	if len(r.NotHeld) != 0 {
		t.Errorf("the superseded run's not-held claims are listed: %d", len(r.NotHeld))
	}
	paper := r.Papers[0]
	if paper.Label != "Doe & Roe 2020" || len(paper.Unfinished) != 2 || paper.Counts != (Counts{NotRun: 6}) {
		t.Errorf("paper %q: %d unfinished, counts %+v", paper.Label, len(paper.Unfinished), paper.Counts)
	}
	tu := paper.Unfinished[1]
	if tu.Earlier == nil || tu.Earlier.Superseded != tu || tu.Earlier.Dir != "t/quick-seed1" {
		t.Errorf("t's earlier run: %+v", tu.Earlier)
	}
	f := paper.Unfinished[0]
	if f.Checkpointed != 3 || f.Units != 5 || !strings.Contains(f.NotRunText(), "its 2 claims") || !strings.Contains(f.NotRunText(), "3 of 5 units are checkpointed") {
		t.Errorf("f: %q", f.NotRunText())
	}
	if s := ReadmeSummary(r, "docs/analysis.md"); !strings.Contains(s, "- `f` (quick profile, seed 1): did not finish (it failed); 2 claims not run.") || !strings.Contains(s, "6 in runs that did not finish") {
		t.Errorf("ReadmeSummary:\n%s", s)
	}
	if o := r.Unfinished[1]; o.Claims != nil || o.SpecID != "o" || o.Checkpointed != 2 || !strings.Contains(o.Headline(), "no record of the attempt") {
		t.Errorf("o: %+v %q", o, o.Headline())
	}
	if z := r.Unfinished[4]; z.SpecID != "z" || z.Profile != "paper" || z.Seed != 3 || !strings.Contains(z.Headline(), "its attempt record is unreadable") {
		t.Errorf("z: %+v %q", z, z.Headline())
	}
	for _, p := range r.Papers {
		for _, run := range p.Runs {
			if run.Dir == "u/quick-seed2" && run.Superseded != nil {
				t.Error("a queued record superseded a finished run")
			}
		}
	}

	dir, err := r.Write()
	if err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(dir, "index.html"))
	md := read(t, filepath.Join(dir, "report.md"))
	top, glance := strings.Index(page, `<section class="failed" id="unfinished">`), strings.Index(page, `id="overview"`)
	if top < 0 || top > glance {
		t.Fatalf("index.html: the runs that did not finish are not at the top (at %d, the overview at %d)", top, glance)
	}
	for _, want := range []string{
		"5 runs did not finish: this report is incomplete",
		`<div class="total notrun"><b>7</b>not run</div>`,
		"f: 2 of 5 units failed:\nunit a: boom", "its 2 claims; rows.csv, summary.csv, figures and tables; 3 of 5 units are checkpointed",
		"t.toml:7: data.datasets[0]: unknown label", "Not counted: the latest attempt at this run could not be built",
		"not started: queued at 2024-05-01 12:00:00 UTC by PID 8 on h",
		"no record of the attempt",
		`<td class="statement small">second</td>`,
		`<span class="small muted">claims unknown</span>`, // o
	} {
		if !strings.Contains(page[top:], want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	mtop, mglance := strings.Index(md, "## ⛔ 5 runs did not finish: this report is incomplete"), strings.Index(md, "## At a glance")
	if mtop < 0 || mtop > mglance {
		t.Fatalf("report.md: the runs that did not finish are not at the top (at %d, the overview at %d)", mtop, mglance)
	}
	for _, want := range []string{
		"**Claims:** ⛔ 7 not run", "```text\nf: 2 of 5 units failed:\nunit a: boom\n```",
		"| [f](#f-quick-seed-1-failed) | quick · 1 | ⛔ **failed** | 0 | 0 | 0 | 0 | 0 | 2 |",
		"### f quick seed 1 failed", "| `f2` | Table 2 | second |",
		"> ⛔ **Not counted: the latest attempt at this run could not be built",
		"But 5 runs did not finish: 7 claims were not run",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}

	// The run finished after all (its process died before it removed the
	// record): a record older than the manifest is superseded by it.
	m.Start = t0.Add(2 * time.Hour)
	writeManifest(t, tdir, m)
	writeAttemptT(t, tdir, &results.Attempt{State: results.AttemptRunning, Spec: results.SpecInfo{ID: "t"}, Started: t0.Add(time.Hour)})
	if r, err = Load(out, Options{Claims: fixtureClaims}); err != nil {
		t.Fatal(err)
	}
	if len(r.Unfinished) != 4 || r.Counts.NotHeld != 2 || r.Counts.NotRun != 3 {
		t.Errorf("after the run finished: %d unfinished, counts %+v", len(r.Unfinished), r.Counts)
	}
}

// TestLoad_OnlyUnfinished: a folder whose only run did not finish gets a
// report (of that), not "no finished run".
func TestLoad_OnlyUnfinished(t *testing.T) {
	out := t.TempDir()
	writeAttemptT(t, filepath.Join(out, "x", "quick-seed1"), &results.Attempt{State: results.AttemptInterrupted, Error: "x: interrupted with 1 of 4 units done",
		Spec: results.SpecInfo{ID: "x"}, Profile: "quick", Seed: 1, Claims: []results.AttemptClaim{}})
	r, err := Load(out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Unfinished) != 1 || len(r.Papers) != 1 || r.Papers[0].Label != "x" || runsLine(r) != "0 finished runs and 1 that did not finish" {
		t.Errorf("%d unfinished, papers %+v, %q", len(r.Unfinished), r.Papers, runsLine(r))
	}
	dir, err := r.Write()
	if err != nil {
		t.Fatal(err)
	}
	if page := read(t, filepath.Join(dir, "index.html")); !strings.Contains(page, `<span class="small muted">no claims</span>`) {
		t.Error("a spec known to have no claims is not shown as such")
	}
}

// payload is spec text that tries every way into a Markdown viewer as
// something other than text.
const payload = "<script>alert(1)</script> <img src=x onerror=alert(2)> ` <b>x</b> ` ``` [a](javascript:alert(3)) ![i](http://e.com/i.png) | # - 1. *e* _u_ ~s~ &lt; \\"

// TestWriteMarkdown_Escapes: spec text (title, paper, notes, claim
// statements and sources, dataset and method names, warnings, ledger
// settings, an analysis link, a run's table, errors of runs that did
// not finish) reaches report.md as text: no raw HTML, no link to a
// scheme, no fence of its own closed early; index.html escapes it too.
func TestWriteMarkdown_Escapes(t *testing.T) {
	out := t.TempDir()
	run := filepath.Join(out, "t", "quick-seed1")
	eps := results.Float(1)
	m := results.Manifest{Spec: results.SpecInfo{ID: "t", Title: "Title " + payload, Paper: "Paper " + payload, Kind: "k", File: "t.toml"},
		Profile: "quick", Seed: 1, Notes: "Notes\n```\n" + payload + "\n````\n~~~\n" + payload,
		Warnings: []string{"Warning " + payload},
		Datasets: []results.DatasetInfo{{Name: "d" + payload, Source: "real", Files: []results.FileInfo{{Name: "f" + payload}}}},
		Ledger: []results.LedgerEntry{{Method: "m`" + payload, Setting: "s" + payload, Rule: "r" + payload,
			Components: []results.LedgerCharge{{Part: "p" + payload, Release: "r" + payload, Data: "T", Notion: "pure-dp", Epsilon: eps, Private: true}},
			Total:      results.PrivacyGuarantee{Notion: "pure-dp", Epsilon: eps, Private: true}}},
	}
	writeManifest(t, run, m)
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	csv := strings.Join(claims.Columns, ",") + "\n" +
		"t,c1," + q("Source "+payload) + "," + q("Statement "+payload) + "," + q("d"+payload) + "," + q("m"+payload) + ",coverage,1,0.9,0.5,0.4,0.6,match,not held,\n"
	if err := os.WriteFile(filepath.Join(run, "claims.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(run, "tables"), 0o755)
	os.WriteFile(filepath.Join(run, "tables", "t.md"), []byte("| a | b |\n|---|---|\n| `<code>` | <script>x</script> |\n"), 0o644)
	failed := filepath.Join(out, "f", "quick-seed1")
	writeAttemptT(t, failed, &results.Attempt{State: results.AttemptFailed, Error: "line one " + payload + "\n```\n" + payload,
		Spec: results.SpecInfo{ID: "f", Title: "F " + payload, Paper: "Paper " + payload}, Profile: "quick", Seed: 1,
		Claims: []results.AttemptClaim{{ID: "c", Source: "S " + payload, Statement: "St " + payload}}, Command: "cmd " + payload, Host: "h" + payload, Build: "b" + payload})
	link := "docs/x.md`" + payload
	r, err := Load(out, Options{Claims: func(string) ([]experiments.ClaimSpec, error) {
		return []experiments.ClaimSpec{{ID: "c1", Analysis: &link}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := r.Write()
	if err != nil {
		t.Fatal(err)
	}
	md := read(t, filepath.Join(dir, "report.md"))
	for _, p := range mdcheck.Unsafe(md) {
		t.Errorf("report.md: %s", p)
	}
	// Shown as written: the statement, with its markup escaped.
	if !strings.Contains(md, `Statement &lt;script&gt;alert(1)&lt;/script&gt;`) || !strings.Contains(md, `\[a\](javascript:alert(3))`) {
		t.Error("report.md does not show the statement as written")
	}
	page := read(t, filepath.Join(dir, "index.html"))
	for _, bad := range []string{"<script", "<img src=x", "<b>x</b>"} {
		if strings.Contains(page, bad) {
			t.Errorf("index.html holds %q", bad)
		}
	}
}

// TestMarkdownText: the escapes one by one.
func TestMarkdownText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Doe & Roe 2020", "Doe & Roe 2020"},
		{"a &lt; b", "a &amp;lt; b"},
		{"<b>", "&lt;b&gt;"},
		{"a|b", `a\|b`},
		{"a\nb\r\nc", "a b c"},
		{"`x` *y* _z_ [l](u) ~s~ \\", "\\`x\\` \\*y\\* \\_z\\_ \\[l\\](u) \\~s\\~ \\\\"},
		{"# h", `\# h`},
		{"- item", `\- item`},
		{"12. item", `12\. item`},
		{"3 items", "3 items"},
	} {
		if got := MarkdownText(c.in); got != c.want {
			t.Errorf("MarkdownText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"a", "`a`"},
		{"a`b", "``a`b``"},
		{"`a", "`` `a ``"},
		{"a\nb", "`a b`"},
		{"", ""},
	} {
		if got := mdCode(c.in); got != c.want {
			t.Errorf("mdCode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := cellCode("a|b"); got != "`a\\|b`" {
		t.Errorf("cellCode: %q", got)
	}
	if got := mdBlock("text", "a\n````\nb"); got != "`````text\na\n````\nb\n`````\n" {
		t.Errorf("mdBlock: %q", got)
	}
	if got := mdNoHTML("| `<a>` | <b> |\n```\n<c>\n```\n<d>"); got != "| `<a>` | &lt;b> |\n```\n<c>\n```\n&lt;d>" {
		t.Errorf("mdNoHTML: %q", got)
	}
}

// TestUnfinished_HolderAndFailures: a record that says running is told by
// the folder's lock (runner.HeldBy): with no process holding it, the
// report (and check, through StateNote) says that the process was killed;
// while one holds it, that it is at work, and which. An error that names
// 10 of 12 failed units is followed by where every one is recorded.
func TestUnfinished_HolderAndFailures(t *testing.T) {
	out := t.TempDir()
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	failedDir := filepath.Join(out, "r", "quick-seed1")
	var failures []results.UnitFailure
	msg := "r: 12 of 20 units failed (the others are checkpointed; no results written):"
	for i := 0; i < 12; i++ {
		f := results.UnitFailure{Unit: fmt.Sprintf("u%02d", i), Error: "boom"}
		failures = append(failures, f)
		if i < 10 {
			msg += "\nunit " + f.Unit + ": " + f.Error
		}
	}
	msg += "\n… and 2 more units"
	writeAttemptT(t, failedDir, &results.Attempt{State: results.AttemptFailed, Error: msg, Failures: failures,
		Spec: results.SpecInfo{ID: "r"}, Profile: "quick", Seed: 1, Claims: []results.AttemptClaim{}, Started: t0})
	killed := filepath.Join(out, "k", "quick-seed1")
	writeAttemptT(t, killed, &results.Attempt{State: results.AttemptRunning, Spec: results.SpecInfo{ID: "k"}, Profile: "quick", Seed: 1,
		Claims: []results.AttemptClaim{}, Started: t0, PID: 999999, Host: "h"})
	// The lock file of the killed process: its description, its flock gone.
	if err := os.WriteFile(filepath.Join(killed, runner.LockFile), []byte(`{"pid":999999,"host":"h","command":"dprepro run k"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	byDir := func(r *Report) map[string]*Unfinished {
		m := map[string]*Unfinished{}
		for _, u := range r.Unfinished {
			m[u.Dir] = u
		}
		return m
	}
	r, err := Load(out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	us := byDir(r)
	k, f := us["k/quick-seed1"], us["r/quick-seed1"]
	if k == nil || f == nil {
		t.Fatalf("unfinished: %v", us)
	}
	if h := k.Headline(); !strings.HasPrefix(h, "did not finish: started at 2024-05-01 12:00:00 UTC by PID 999999 on h, "+NoHolder) {
		t.Errorf("killed: headline %q", h)
	}
	if s := k.StateNote(); s != "its record says running, "+NoHolder {
		t.Errorf("killed: state note %q", s)
	}
	if s := f.StateNote(); s != "failed" {
		t.Errorf("failed: state note %q", s)
	}
	wantNote := `The error above names 10 of the 12 units that failed; the error of every one is in r/quick-seed1/attempt.json (its "failures" list).`
	if n := f.FailuresNote(); n != wantNote {
		t.Errorf("failures note %q, want %q", n, wantNote)
	}
	if n := k.FailuresNote(); n != "" {
		t.Errorf("a run without failed units has a failures note: %q", n)
	}
	dir, err := r.Write()
	if err != nil {
		t.Fatal(err)
	}
	md, page := read(t, filepath.Join(dir, "report.md")), read(t, filepath.Join(dir, "index.html"))
	if c := strings.Count(md, MarkdownText(wantNote)); c != 2 {
		t.Errorf("report.md shows the failures note %d times, want 2 (the top, the run's section)", c)
	}
	if c := strings.Count(page, "the error of every one is in r/quick-seed1/attempt.json (its &#34;failures&#34; list)"); c != 2 {
		t.Errorf("index.html shows the failures note %d times, want 2", c)
	}
	if !strings.Contains(page, NoHolder) || !strings.Contains(md, MarkdownText(NoHolder)) {
		t.Error("the report does not say that the killed run's process is gone")
	}

	// A process holds the folder now (this test): the run is at work.
	l, err := runner.Lock(killed)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if r, err = Load(out, Options{}); err != nil {
		t.Fatal(err)
	}
	k = byDir(r)["k/quick-seed1"]
	holds := fmt.Sprintf("PID %d on ", os.Getpid())
	if h := k.Headline(); !strings.HasPrefix(h, "not finished yet: started at 2024-05-01 12:00:00 UTC by PID 999999 on h; "+holds) || !strings.Contains(h, "holds the folder") {
		t.Errorf("at work: headline %q", h)
	}
	if s := k.StateNote(); !strings.HasPrefix(s, "running: "+holds) {
		t.Errorf("at work: state note %q", s)
	}
	// Running the command again would be refused (the folder is in use)
	// and removing the folder would lose the work: the advice is to wait
	// or stop it.
	if a := k.Advice(); !strings.HasPrefix(a, "Wait for it to finish") || strings.Contains(a, "remove the folder") || strings.Contains(a, "Run the same command again") {
		t.Errorf("at work: advice %q", a)
	}
	// The process that wrote the record holds the folder: named once.
	k.Attempt.PID, k.Attempt.Host = os.Getpid(), k.Holder.Host
	if h := k.Headline(); strings.Count(h, holds) != 1 || !strings.Contains(h, "which holds the folder") {
		t.Errorf("at work, the record's own process: headline %q", h)
	}
}

// TestLoad_UnfinishedClaimsFromSpecFile: a run folder holding only a
// checkpoint (its attempt record gone or damaged) still counts its spec's
// claims as not run when the checkpoint names the spec file: they are read
// from it. Without a spec file, or when the file cannot be read, they are
// unknown, and the report and its claims line say so instead of "no
// claims".
func TestLoad_UnfinishedClaimsFromSpecFile(t *testing.T) {
	out := t.TempDir()
	withFile := func(dir, id, file string) {
		cp, _, err := results.OpenCheckpoint(filepath.Join(dir, ".checkpoint"), results.CheckpointHeader{SpecID: id, Profile: "quick", Seed: 9, Build: "b@v1", SpecFile: file})
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Append("a", []results.Row{{"x": "1"}}); err != nil {
			t.Fatal(err)
		}
		cp.Close()
	}
	withFile(filepath.Join(out, "t", "quick-seed9"), "t", "t.toml")    // fixtureClaims knows it: 2 claims
	withFile(filepath.Join(out, "g", "quick-seed9"), "g", "gone.toml") // cannot be read
	withFile(filepath.Join(out, "o", "quick-seed9"), "o", "")          // an older build's checkpoint
	r, err := Load(out, Options{Claims: fixtureClaims})
	if err != nil {
		t.Fatal(err)
	}
	if r.Counts != (Counts{NotRun: 2}) || r.UnknownClaims() != 2 {
		t.Errorf("counts %+v, %d unknown; want 2 not run, 2 unknown", r.Counts, r.UnknownClaims())
	}
	for _, u := range r.Unfinished {
		switch u.SpecID {
		case "t":
			if !u.ClaimsFromSpec || len(u.Claims) != 2 || !strings.Contains(u.NotRunText(), "the 2 claims its spec file t.toml transcribes now") {
				t.Errorf("t: %v claims, %q", len(u.Claims), u.NotRunText())
			}
		default:
			if u.ClaimsKnown() || !strings.Contains(u.NotRunText(), "unknown") {
				t.Errorf("%s: claims %v, %q", u.SpecID, u.Claims, u.NotRunText())
			}
		}
	}
	dir, err := r.Write()
	if err != nil {
		t.Fatal(err)
	}
	if md := read(t, filepath.Join(dir, "report.md")); !strings.Contains(md, "**Claims:** ⛔ 2 not run (and the claims of 2 runs that did not finish, unknown: no record of their spec)") {
		t.Errorf("report.md's claims line:\n%s", md[:min(len(md), 600)])
	}
}

// TestLoad_DamagedCheckpoint: a folder holding a checkpoint whose header
// cannot be read, with no record of its attempt and no finished run, is
// never left out of the report: it is named, its claims unknown and said
// so.
func TestLoad_DamagedCheckpoint(t *testing.T) {
	out := t.TempDir()
	dir := filepath.Join(out, "cv13-adult", "quick-seed2013")
	if err := os.MkdirAll(filepath.Join(dir, ".checkpoint"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".checkpoint", "units.jsonl"), []byte(`{"format":2,"spec_id":"cv13-ad`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Load(out, Options{Claims: fixtureClaims})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Unfinished) != 1 || r.UnknownClaims() != 1 {
		t.Fatalf("%d unfinished, %d with unknown claims; want 1, 1", len(r.Unfinished), r.UnknownClaims())
	}
	u := r.Unfinished[0]
	if u.SpecID != "cv13-adult" || u.Profile != "quick" || u.Seed != 2013 || !strings.Contains(u.Headline(), "damaged checkpoint") {
		t.Errorf("%s %s %d: %q", u.SpecID, u.Profile, u.Seed, u.Headline())
	}
	dir2, err := r.Write()
	if err != nil {
		t.Fatal(err)
	}
	if md := read(t, filepath.Join(dir2, "report.md")); !strings.Contains(md, "cv13-adult") || !strings.Contains(md, "damaged checkpoint") {
		t.Errorf("report.md does not name the damaged run:\n%s", md)
	}
}

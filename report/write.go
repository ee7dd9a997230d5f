package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dprepro/dprepro/claims"
	"github.com/dprepro/dprepro/results"
)

// Dir is the folder of OUT that Write writes into.
const Dir = "report"

// Write writes the report into OUT/report/: index.html (one page, inline
// CSS, no script, no network), report.md (the same in Markdown),
// analysis.md (the written analyses, when the report has them) and
// figures/, a copy of every figure the pages show, so that the folder
// can be moved or archived whole. The figures of an earlier report there
// are removed first. It returns the folder.
func (r *Report) Write() (string, error) {
	dir := filepath.Join(r.Out, Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	figDir := filepath.Join(dir, "figures")
	if err := os.RemoveAll(figDir); err != nil {
		return "", err
	}
	for _, f := range r.figures() {
		if err := copyFile(filepath.Join(dir, filepath.FromSlash(f.Src)), f.Orig); err != nil {
			return "", err
		}
	}
	var page, md bytes.Buffer
	if err := r.WriteHTML(&page); err != nil {
		return "", err
	}
	if err := r.WriteMarkdown(&md); err != nil {
		return "", err
	}
	if r.Analyses != nil {
		if err := results.WriteFileAtomic(filepath.Join(dir, "analysis.md"), r.Analyses.Source); err != nil {
			return "", err
		}
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, "report.md"), md.Bytes()); err != nil {
		return "", err
	}
	return dir, results.WriteFileAtomic(filepath.Join(dir, "index.html"), page.Bytes())
}

// figures lists every figure the report shows.
func (r *Report) figures() []Figure {
	var fs []Figure
	for _, p := range r.Papers {
		for _, run := range p.Runs {
			fs = append(fs, run.Figures...)
		}
		fs = append(fs, p.Figures...)
	}
	return fs
}

func copyFile(dst, src string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// mark is a verdict's sign in Markdown.
var mark = map[string]string{
	claims.Held: "✅", claims.NotHeld: "❌", claims.Inconclusive: "⚠️", claims.Synthetic: "🧪", claims.Missing: "⬜", NotRun: "⛔",
}

// countsLine is "❌ 2 not held · ✅ 5 held" (verdicts counted zero left out).
func countsLine(c Counts) string {
	var parts []string
	for _, v := range countOrder {
		if n := countOf(c, v); n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d %s", mark[v], n, v))
		}
	}
	if len(parts) == 0 {
		return "no claims"
	}
	return strings.Join(parts, " · ")
}

// analysisMD is the "why" of a claim that is not held, in Markdown.
func analysisMD(c *Claim) string {
	switch {
	case c.Anchor != "" && c.Gist != "":
		return MarkdownText(c.Gist) + " [analysis](analysis.md#" + c.Anchor + ")"
	case c.Anchor != "":
		return "[analysis](analysis.md#" + c.Anchor + ")"
	case c.Analysis != "":
		return "see " + cellCode(c.Analysis)
	}
	return "**no analysis written yet**"
}

// atEach describes a claim's verdicts by x: "✅ 3, 5 · ❌ 1, 2".
func atEach(c *Claim) string {
	var parts []string
	for _, v := range verdictOrder {
		if xs := c.At(v); len(xs) > 0 {
			parts = append(parts, mark[v]+" "+xlist(xs))
		}
	}
	return strings.Join(parts, " · ")
}

// dataMD describes a run's datasets in Markdown (escaped).
func dataMD(ds []results.DatasetInfo) string {
	var parts []string
	for _, d := range ds {
		switch {
		case standIn(d) != "":
			parts = append(parts, "**"+MarkdownText(d.Name+": SYNTHETIC stand-in for "+standIn(d))+"**")
		case d.Source == "real":
			parts = append(parts, MarkdownText(d.Name+": real"))
		default:
			parts = append(parts, MarkdownText(d.Name+": simulated by design"))
		}
		if d.Selection != nil {
			parts[len(parts)-1] += " (**non-private predictor selection**)"
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// WriteMarkdown writes the report as Markdown: the content of index.html,
// with the figures as images under figures/ and the analyses linked in
// analysis.md beside it. Text from specs, manifests and errors is escaped
// (see MarkdownText): it holds no HTML and no Markdown of its own.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	builds := make([]string, 0)
	for _, id := range buildsOf(r) {
		builds = append(builds, mdCode(id))
	}
	p("# Reproduction report\n\n")
	p("%s in %s; profile %s; built by %s. Written by `dprepro report`; `index.html` beside this file shows the same.\n\n",
		runsLine(r), mdCode(r.Out), MarkdownText(profilesOf(r)), strings.Join(builds, ", "))
	writeUnfinishedTopMD(&b, r)
	p("> **Simulation, not hardened DP.** Noise comes from seeded pseudo-random streams unless a run says otherwise: right for research, wrong for protecting real data.\n\n")
	claimsLine := countsLine(r.Counts)
	if n := r.UnknownClaims(); n > 0 {
		claimsLine += fmt.Sprintf(" (and the claims of %d %s that did not finish, unknown: no record of %s spec)", n, plural(n, "run", "runs"), plural(n, "its", "their"))
	}
	p("**Claims:** %s\n\n", claimsLine)
	p("A claim is ❌ not held when the data contradict it at some swept value x, ⚠️ inconclusive when at some x they neither confirm nor contradict it, ✅ held when it holds at every x the run decided, 🧪 synthetic when its data were a synthetic stand-in (never held), ⬜ missing when the run has none of its cells (the reason says which of the dataset, method, metric or x it did not run), ⛔ not run when its run did not finish.\n\n")

	p("## At a glance\n\n| run | profile · seed | data | ❌ not held | ⚠️ inconclusive | ✅ held | 🧪 synthetic | ⬜ missing | ⛔ not run |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, pp := range r.Papers {
		p("| **%s** | | | | | | | | |\n", MarkdownText(pp.Label))
		for _, u := range pp.Unfinished {
			data := "⛔ **" + MarkdownText(u.State) + "**"
			if u.Earlier != nil {
				data += " (earlier run below, not counted)"
			}
			p("| [%s](#%s) | %s · %d | %s | 0 | 0 | 0 | 0 | 0 | %d |\n", MarkdownText(u.SpecID), unfinishedAnchor(u), MarkdownText(u.Profile), u.Seed, data, len(u.Claims))
		}
		for _, run := range pp.Runs {
			if run.Superseded != nil {
				continue
			}
			c := run.Counts
			p("| [%s](#%s) | %s · %d | %s | %d | %d | %d | %d | %d | %d |\n", MarkdownText(run.Manifest.Spec.ID), mdAnchor(run), MarkdownText(run.Manifest.Profile), run.Manifest.Seed,
				dataMD(run.Manifest.Datasets), c.NotHeld, c.Inconclusive, c.Held, c.Synthetic, c.Missing, c.NotRun)
		}
	}
	p("\n## What did not reproduce, and why\n\n")
	if len(r.NotHeld) == 0 {
		p("%s\n\n", MarkdownText(r.NoneNotHeld()))
	} else {
		p("| run | claim | statement | not held at | why |\n|---|---|---|---|---|\n")
		for _, c := range r.NotHeld {
			p("| %s | %s (%s) | %s | %s = %s | %s |\n", MarkdownText(c.Run.Manifest.Spec.ID), cellCode(c.ID), MarkdownText(c.Source), MarkdownText(c.Statement), MarkdownText(c.Run.XName), xlist(c.At(claims.NotHeld)), analysisMD(c))
		}
		p("\n")
		if len(r.Unfinished) > 0 {
			p("Not listed here: the %s of the %d %s that did not finish were not run (see the top).\n\n", nclaims(r.Counts.NotRun), len(r.Unfinished), plural(len(r.Unfinished), "run", "runs"))
		}
	}
	for _, pp := range r.Papers {
		p("## %s\n\n", MarkdownText(pp.Label))
		if pp.Reference != "" {
			p("%s\n\n", MarkdownText(pp.Reference))
		}
		p("**Claims:** %s\n\n", countsLine(pp.Counts))
		for _, u := range pp.Unfinished {
			writeUnfinishedMD(&b, u)
		}
		for _, run := range pp.Runs {
			writeRunMD(&b, run)
		}
		if len(pp.Figures) > 0 {
			p("### %s\n\n", MarkdownText(pp.ExtraTitle))
			for _, f := range pp.Figures {
				p("![%s](%s)\n\n", MarkdownText(f.Caption), f.Src)
			}
		}
	}
	p("## Known deviations\n\nEach run's spec notes (above) say how it departs from its paper; lines starting \"Deviation:\" mark the departures. The hand-written list for every paper is the section \"Known deviations from the papers\" of the source tree's `docs/reproduce.md`.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeUnfinishedTopMD writes the list of the runs that did not finish,
// at the top of report.md.
func writeUnfinishedTopMD(b *strings.Builder, r *Report) {
	if len(r.Unfinished) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	n := len(r.Unfinished)
	p("## ⛔ %d %s did not finish: this report is incomplete\n\n", n, plural(n, "run", "runs"))
	if r.Counts.NotRun > 0 {
		p("Their %s counted as ⛔ not run: no data of these runs decided them.", nclaims(r.Counts.NotRun)+plural(r.Counts.NotRun, " is", " are"))
	} else {
		p("Their specs transcribe no claims (or none is known), so no claim is counted as not run; their results are missing all the same.")
	}
	p(" Nothing further down stands in for them.\n\n")
	for _, u := range r.Unfinished {
		p("- [**%s**](#%s) (%s, seed %d; folder %s): **%s**.", MarkdownText(u.SpecID), unfinishedAnchor(u), MarkdownText(u.Profile), u.Seed, mdCode(u.Dir), MarkdownText(u.Headline()))
		p(" Not run: %s. %s", MarkdownText(u.NotRunText()), MarkdownText(u.Advice()))
		if u.Earlier != nil {
			p(" The earlier run in its folder is shown, not counted.")
		}
		p("\n")
	}
	p("\n")
	for _, u := range r.Unfinished {
		if u.Error != "" {
			p("Error of %s (%s):\n\n%s\n", MarkdownText(u.SpecID), mdCode(u.Dir), mdBlock("text", u.Error))
		}
		if note := u.FailuresNote(); note != "" {
			p("%s\n\n", MarkdownText(note))
		}
	}
}

// unfinishedAnchor is the GitHub anchor of an unfinished run's heading in
// report.md.
func unfinishedAnchor(u *Unfinished) string {
	return slug(u.SpecID + " " + u.Profile + " seed " + fmt.Sprint(u.Seed) + " " + u.State)
}

// writeUnfinishedMD writes the section of a run that did not finish.
func writeUnfinishedMD(b *strings.Builder, u *Unfinished) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("### %s %s seed %d %s\n\n", MarkdownText(u.SpecID), MarkdownText(u.Profile), u.Seed, MarkdownText(u.State))
	if u.Title != "" {
		p("%s. ", MarkdownText(u.Title))
	}
	p("Folder %s, profile **%s**, seed %d", mdCode(u.Dir), MarkdownText(u.Profile), u.Seed)
	if a := u.Attempt; a != nil {
		p(", by %s (PID %d on %s), build %s", mdCode(a.Command), a.PID, MarkdownText(a.Host), mdCode(a.Build))
	}
	p(".\n\n> ⛔ **%s.** Not run: %s. %s\n\n", MarkdownText(u.Headline()), MarkdownText(u.NotRunText()), MarkdownText(u.Advice()))
	if u.Error != "" {
		p("%s\n", mdBlock("text", u.Error))
	}
	if note := u.FailuresNote(); note != "" {
		p("%s\n\n", MarkdownText(note))
	}
	if note := u.EarlierNote(); note != "" {
		p("> ⚠️ %s\n\n", MarkdownText(note))
	}
	if len(u.Claims) > 0 {
		p("#### Claims not run\n\n| claim | source | statement |\n|---|---|---|\n")
		for _, c := range u.Claims {
			p("| %s | %s | %s |\n", cellCode(c.ID), MarkdownText(c.Source), MarkdownText(c.Statement))
		}
		p("\n")
	}
}

// mdAnchor is the GitHub anchor of a run's heading in report.md.
func mdAnchor(run *Run) string {
	return slug(run.Manifest.Spec.ID + " " + run.Manifest.Profile + " seed " + fmt.Sprint(run.Manifest.Seed))
}

func writeRunMD(b *strings.Builder, run *Run) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	m := run.Manifest
	p("### %s %s seed %d\n\n", MarkdownText(m.Spec.ID), MarkdownText(m.Profile), m.Seed)
	if note := run.SupersededNote(); note != "" {
		p("> ⛔ **%s**\n\n", MarkdownText(note))
	}
	p("%s. Folder %s, profile **%s**, seed %d, %d units, %.1f s; data: %s.\n\n", MarkdownText(m.Spec.Title), mdCode(run.Dir), MarkdownText(m.Profile), m.Seed, m.Units.Total, m.WallSeconds, dataMD(m.Datasets))
	for _, n := range append(append([]string{}, run.Notes...), m.Warnings...) {
		p("> ⚠️ %s\n\n", MarkdownText(n))
	}
	x := MarkdownText(run.XName)
	if x == "" {
		x = "x"
	}
	if len(run.Claims) == 0 {
		p("No claims of the paper are transcribed for this spec.\n\n")
	} else {
		p("#### Claims\n\n| verdict | claim | statement | at each %s | why not held, or not run |\n|---|---|---|---|---|\n", x)
		for _, c := range run.Claims {
			why := "—"
			switch {
			case c.Verdict == claims.NotHeld:
				why = analysisMD(c)
			case len(c.At(claims.Missing)) > 0: // wholly or at some x
				why = "⬜ " + MarkdownText(c.MissingWhy())
			}
			p("| %s %s | %s (%s; %s) | %s | %s | %s |\n", mark[c.Verdict], MarkdownText(c.Verdict), cellCode(c.ID), MarkdownText(c.Source), MarkdownText(c.Rule), MarkdownText(c.Statement), atEach(c), why)
		}
		p("\n")
	}
	for _, t := range run.Matches {
		p("#### Paper vs ours: %s, %s (%s)\n\nEach cell: the published value, then ours with its 95%% CI.", MarkdownText(t.Metric), MarkdownText(t.Dataset), MarkdownText(t.Source))
		if len(t.NotRun) > 0 {
			p(" Published also at %s = %s, not run at this profile.", x, xlist(t.NotRun))
		}
		if len(t.RunXs) > 0 {
			p(" **The run has none of the published %s**: it ran %s = %s.", x, x, xlist(t.RunXs))
		}
		if t.Synthetic {
			p(" **Ours are on a synthetic stand-in**, not the paper's data.")
		}
		p("\n\n| method |")
		for _, v := range t.Xs {
			p(" %s = %s |", x, xval(v))
		}
		p("\n|---|%s\n", strings.Repeat("---:|", len(t.Xs)))
		for _, row := range t.Rows {
			p("| %s |", MarkdownText(row.Claim.Method))
			for _, c := range row.Cells {
				switch {
				case c == nil:
					p(" |")
				case c.Verdict == claims.Missing:
					p(" paper %s · ours — %s |", num(c.Paper), mark[c.Verdict])
				default:
					p(" paper %s · ours **%s** [%s, %s] %s |", num(c.Paper), num(c.Ours), num(c.Low), num(c.High), mark[c.Verdict])
				}
			}
			p("\n")
		}
		p("\n")
	}
	if len(run.Figures) > 0 {
		p("#### Figures\n\n")
		for _, f := range run.Figures {
			p("![%s](%s)\n\n", MarkdownText(f.Caption), f.Src)
		}
	}
	for _, t := range run.Tables {
		p("#### %s\n\n%s\n\n", mdCode(t.Name), mdNoHTML(strings.TrimSpace(t.Markdown)))
	}
	if len(m.Audits) > 0 {
		p("#### Privacy audits\n\n")
		p("Each audited method's empirical lower bound ε_LB on its ε (one-sided Clopper–Pearson) beside the ε it claims; rows in %s.\n\n", mdCode(results.AuditFile))
		p("| method | setting | claimed | ε_LB | releases per side | confidence | verdict |\n|---|---|---|---|---|---|---|\n")
		for _, a := range auditRows(m.Audits) {
			v := MarkdownText(a.Verdict)
			if a.Violated {
				v = "**" + v + "**"
			}
			p("| %s | %s | %s | %s | %s | %s | %s |\n", cellCode(a.Method), MarkdownText(a.Setting), MarkdownText(a.Claimed), a.Lower, a.Releases, a.Confidence, v)
		}
		p("\n")
	}
	p("#### Privacy ledger\n\n")
	if len(m.Ledger) == 0 {
		p("This run releases nothing private (its manifest has no ledger).\n\n")
	} else {
		p("| method | setting | total | charges | composition |\n|---|---|---|---|---|\n")
		for _, e := range m.Ledger {
			var cs []string
			for _, c := range e.Components {
				ch := fmt.Sprintf("%s (%s): %s — %s", c.Part, c.Data, chargeOf(c), c.Release)
				if n := chargeNotes(c); n != "" {
					ch += " (" + n + ")"
				}
				cs = append(cs, ch)
			}
			p("| %s | %s | %s | %s | %s |\n", cellCode(e.Method), MarkdownText(e.Setting), MarkdownText(totalOf(e.Total)), MarkdownText(strings.Join(cs, "; ")), MarkdownText(e.Rule))
		}
		p("\n")
	}
	p("#### Provenance\n\n")
	p("- build %s, %s %s/%s, %d workers\n", mdCode(m.Build.Identity()), MarkdownText(m.GoVersion), MarkdownText(m.GOOS), MarkdownText(m.GOARCH), m.Workers)
	p("- spec %s (kind %s), file sha256 %s, resolved sha256 %s\n", mdCode(m.Spec.File), mdCode(m.Spec.Kind), mdCode(m.Spec.FileSHA256), mdCode(m.Spec.Hash))
	p("- profile %s, seed %d; %d units (%d computed, %d from a checkpoint); started %s UTC\n", MarkdownText(m.Profile), m.Seed, m.Units.Total, m.Units.Computed, m.Units.Resumed, m.Start.UTC().Format("2006-01-02 15:04:05"))
	for _, n := range m.Noise {
		p("- noise: %s\n", MarkdownText(n))
	}
	for _, d := range m.Datasets {
		p("- dataset %s: %s, n = %d, d = %d", MarkdownText(d.Name), dataMD([]results.DatasetInfo{d}), d.N, d.D)
		for _, f := range d.Files {
			verified := "no pinned digest"
			if f.Verified {
				verified = "verified against the pinned digest"
			}
			p("; %s sha256 %s (%s), %d records, %d dropped", mdCode(f.Name), mdCode(f.SHA256), verified, f.Records, f.Dropped)
			if f.Missing == "level" {
				p(" (data.missing = \"level\": %d of %d read, %d kept with a missing value as a level)", f.Records, f.Read, f.MissingLevel)
			}
		}
		if d.Generator != "" {
			p("; generator %s", mdCode(d.Generator))
		}
		if s := d.Selection; s != nil {
			p("; **non-private preprocessing**: %s: kept %d of %d attributes (%s), dropped %s",
				MarkdownText(s.Statement), len(s.Kept), len(s.Candidates), MarkdownText(strings.Join(s.Kept, ", ")), MarkdownText(listOrNone(s.Dropped)))
		}
		p("\n")
	}
	p("\n")
	if m.Notes != "" {
		p("#### Spec notes and deviations\n\n%s\n", mdBlock("text", strings.TrimSpace(m.Notes)))
	}
}

// listOrNone joins xs with commas, or says "none".
func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

package report

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"image"
	_ "image/png" // figures are PNG: their size decides their layout
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dprepro/dprepro/claims"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
)

// ErrNoRuns is returned by Load for a folder that holds no run, finished
// or not.
var ErrNoRuns = errors.New("no finished run")

// Options configures Load.
type Options struct {
	// Analyses is the document the claims' analysis links point into;
	// nil: no link resolves, and each is shown as written.
	Analyses *Analyses
	// Claims returns the [[claims]] tables of a run's spec file as the
	// manifest names it (results.SpecInfo.File), for their analysis
	// links: the current ones, so that an analysis written after the run
	// shows. Nil means experiments.ClaimsOf.
	Claims func(specFile string) ([]experiments.ClaimSpec, error)
	// Extra are figures drawn across runs, each shown with the paper of
	// the runs of its kind.
	Extra []ExtraFigures
	// MaxDepth is how many folders below OUT runs are looked for; zero
	// means 3 (OUT/<spec id>/<profile>-seed<seed>/ is two).
	MaxDepth int
}

// ExtraFigures is a folder of figures drawn across the runs of one kind
// (dprepro's OUT/wkl-figures/<profile>/).
type ExtraFigures struct {
	Kind  string // the kind of the runs they were drawn from
	Dir   string // the folder holding the *.png files
	Title string // their heading
}

// Report is what Load read from an output folder: the runs grouped by
// the paper they reproduce.
type Report struct {
	// Out is the output folder, as given to Load.
	Out string
	// Papers are the groups of runs, those with claims first.
	Papers []*Paper
	// Unfinished are the run folders whose latest attempt did not finish
	// (failed, not run, interrupted, killed, never started), shown at the
	// top of the report; their claims are counted as not run.
	Unfinished []*Unfinished
	// Counts counts the claims of every run by verdict, and those of the
	// runs that did not finish as not run.
	Counts Counts
	// NotHeld lists every claim whose verdict is not held.
	NotHeld []*Claim
	// Analyses is Options.Analyses.
	Analyses *Analyses
}

// NoneNotHeld is what the report says when no claim is not held: that no
// claim is contradicted, or — when none could be decided at all (every one
// on stand-in data or at x the runs lack) — that nothing was decided, so
// an all-stand-in run never reads like a pass.
func (r *Report) NoneNotHeld() string {
	c := r.Counts
	var s string
	if c.Held+c.NotHeld+c.Inconclusive == 0 {
		s = "No claim could be decided: every claim of these runs was on synthetic stand-in data or at values the runs do not have, so nothing here confirms or contradicts the papers."
		if len(r.Unfinished) > 0 {
			s = "No claim could be decided: every claim of these runs was on synthetic stand-in data, at values the runs do not have, or in a run that did not finish, so nothing here confirms or contradicts the papers."
		}
	} else {
		s = "No claim is contradicted by the data of these runs."
	}
	if n := len(r.Unfinished); n > 0 {
		s += fmt.Sprintf(" But %d %s did not finish: %s %s not run (see the top).", n, plural(n, "run", "runs"), nclaims(c.NotRun), plural(c.NotRun, "was", "were"))
	}
	return s
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Paper is the runs of one reproduced paper (those whose manifests have
// the same spec.paper).
type Paper struct {
	ID        string // an HTML id
	Label     string // short: "Chaudhuri & Vinterbo 2013"
	Reference string // the spec's paper field
	Runs      []*Run
	// Unfinished are the runs of the paper that did not finish.
	Unfinished []*Unfinished
	Counts     Counts
	Figures    []Figure // drawn across its runs
	// ExtraTitle heads Figures.
	ExtraTitle string
}

// Run is one finished run folder.
type Run struct {
	ID       string // an HTML id
	Dir      string // relative to OUT, slash-separated
	Manifest *results.Manifest
	Claims   []*Claim
	Counts   Counts
	Matches  []*MatchTable
	Figures  []Figure
	Tables   []Table
	// XName names the swept value of the run's claims ("alpha", "eps1"),
	// from summary.csv.
	XName string
	// Notes are what the report could not read of the run (an unreadable
	// claims.csv, a spec whose claims are gone); shown with the run.
	Notes []string
	// Superseded is the later attempt at this run's folder that did not
	// finish; non-nil: the run is shown but its claims are not counted.
	Superseded *Unfinished
}

// Decided returns the run's claims that its data decided: held, not
// held or inconclusive.
func (run *Run) Decided() []*Claim {
	var cs []*Claim
	for _, c := range run.Claims {
		if c.Verdict != claims.Synthetic && c.Verdict != claims.Missing {
			cs = append(cs, c)
		}
	}
	return cs
}

// Undecided returns the run's claims on synthetic data or missing.
func (run *Run) Undecided() []*Claim {
	var cs []*Claim
	for _, c := range run.Claims {
		if c.Verdict == claims.Synthetic || c.Verdict == claims.Missing {
			cs = append(cs, c)
		}
	}
	return cs
}

// Claim is one claim of a run with its verdict at each x.
type Claim struct {
	Run                         *Run
	ID, Source, Statement, Rule string
	Dataset, Method, Metric     string
	Cells                       []*Cell
	Verdict                     string // the claim's: see claimVerdict
	Analysis                    string // the link as written in the spec, "" for none
	Anchor                      string // the analysis section's anchor, when Analysis resolves
	Gist                        string // that section's gist (Analyses.Gist)
	HTMLID                      string // its row's id in index.html
	order                       int    // in claims.csv
}

// At returns the x values at which the claim's verdict is v.
func (c *Claim) At(v string) []float64 {
	var xs []float64
	for _, cell := range c.Cells {
		if cell.Verdict == v {
			xs = append(xs, cell.X)
		}
	}
	return xs
}

// MissingWhy says why the claim's missing cells are missing: their
// distinct reasons (claims.Reasons), joined by "; ", or, for a
// claims.csv written before the reason column, that it does not say.
func (c *Claim) MissingWhy() string {
	var whys []string
	for _, cell := range c.Cells {
		if cell.Verdict != claims.Missing {
			continue
		}
		why := cell.Reason
		if why == "" {
			why = "not run (this claims.csv predates the reason column: dprepro claims re-decides it)"
		}
		if !slices.Contains(whys, why) {
			whys = append(whys, why)
		}
	}
	return strings.Join(whys, "; ")
}

// Cell is one row of claims.csv: a claim at one x (NaN for a trend).
type Cell struct {
	X, Paper, Ours, Low, High float64
	Verdict                   string
	// Reason says why a missing verdict is missing (claims.Reasons);
	// empty otherwise, and in a claims.csv written before the column.
	Reason string
}

// MatchTable lays out a run's match claims of one metric and dataset as
// the paper's table: one row per claim (method), one column per x, the
// published value and ours in each cell.
type MatchTable struct {
	Metric, Dataset, Source string
	Xs                      []float64 // the columns shown
	NotRun                  []float64 // published x the run does not have
	// RunXs are the x the run has for the metric when it has none of the
	// published ones (summary.csv).
	RunXs     []float64
	Synthetic bool // some cell is on a synthetic stand-in
	Rows      []MatchRow
}

// MatchRow is one method's row of a MatchTable; a nil cell has no
// published value at that x.
type MatchRow struct {
	Claim *Claim
	Cells []*Cell
}

// Figure is one PNG figure of a run (or drawn across runs).
type Figure struct {
	Src     string // its path relative to OUT/report/ once written
	Orig    string // the file it is copied from
	Caption string
	Width   int // pixels
	Height  int
	Wide    bool // much wider than tall: shown across the page
}

// Table is a Markdown table the run wrote (tables/*.md).
type Table struct {
	Name     string
	Markdown string
}

// Counts counts claims by verdict; NotRun counts the claims of runs that
// did not finish.
type Counts struct {
	Held, NotHeld, Inconclusive, Synthetic, Missing int
	NotRun                                          int
}

// Add counts one claim of verdict v.
func (c *Counts) Add(v string) {
	switch v {
	case claims.Held:
		c.Held++
	case claims.NotHeld:
		c.NotHeld++
	case claims.Inconclusive:
		c.Inconclusive++
	case claims.Synthetic:
		c.Synthetic++
	case NotRun:
		c.NotRun++
	default:
		c.Missing++
	}
}

// Plus returns the sum of c and d.
func (c Counts) Plus(d Counts) Counts {
	return Counts{c.Held + d.Held, c.NotHeld + d.NotHeld, c.Inconclusive + d.Inconclusive, c.Synthetic + d.Synthetic, c.Missing + d.Missing, c.NotRun + d.NotRun}
}

// Total is the number of claims counted.
func (c Counts) Total() int {
	return c.Held + c.NotHeld + c.Inconclusive + c.Synthetic + c.Missing + c.NotRun
}

// verdictOrder ranks verdicts, the one a reader must see first first.
var verdictOrder = []string{claims.NotHeld, claims.Inconclusive, claims.Held, claims.Synthetic, claims.Missing}

// countOrder is the order of the counts shown: the verdicts, then the
// claims of runs that did not finish.
var countOrder = append(slices.Clip(verdictOrder), NotRun)

// claimVerdict is a claim's verdict from its verdicts at each x: not held
// when it is not held at some x; else inconclusive when it is so at some
// x; else held when it is held at some x (the others not run); else
// synthetic or missing.
func claimVerdict(cells []*Cell) string {
	for _, v := range verdictOrder {
		for _, c := range cells {
			if c.Verdict == v {
				return v
			}
		}
	}
	return claims.Missing
}

// FindRuns returns the finished run folders under root (those holding a
// manifest.json, written last by a run): root itself when it is one, else
// those up to maxDepth levels down, not below a run and not in folders
// whose name starts with a dot, in lexical order.
func FindRuns(root string, maxDepth int) ([]string, error) {
	return walkRuns(root, maxDepth, isRun)
}

// walkRuns returns the folders under root for which isRun holds, as
// FindRuns describes.
func walkRuns(root string, maxDepth int, isRun func(string) bool) ([]string, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", root)
	}
	var out []string
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		if isRun(dir) {
			out = append(out, dir)
			return nil
		}
		if depth == maxDepth {
			return nil
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				if err := walk(filepath.Join(dir, e.Name()), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	return out, nil
}

func isRun(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "manifest.json"))
	return err == nil && !fi.IsDir()
}

// Load reads every finished run under out (see FindRuns) and every run
// folder whose latest attempt did not finish (Folder.Unfinished), and
// groups them by paper. It fails when out holds no run of either kind or a
// manifest is unreadable (an unreadable attempt record makes its folder
// one that did not finish); what it cannot read of a run otherwise
// becomes one of the run's Notes.
func Load(out string, o Options) (*Report, error) {
	if o.MaxDepth == 0 {
		o.MaxDepth = 3
	}
	if o.Claims == nil {
		o.Claims = experiments.ClaimsOf
	}
	dirs, err := walkRuns(out, o.MaxDepth, isFolder)
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s: %w (a folder with manifest.json, at most %d levels down)", out, ErrNoRuns, o.MaxDepth)
	}
	r := &Report{Out: out, Analyses: o.Analyses}
	byPaper := map[string]*Paper{}
	paperOf := func(paper, kind, id string) *Paper {
		key := paper
		switch {
		case key == "" && kind != "":
			key = "kind " + kind
		case key == "":
			key = "spec " + id
		}
		p := byPaper[key]
		if p == nil {
			p = &Paper{Reference: paper}
			byPaper[key] = p
			r.Papers = append(r.Papers, p)
		}
		return p
	}
	for _, dir := range dirs {
		f, err := ReadFolder(dir)
		if err != nil {
			return nil, err
		}
		var run *Run
		if f.Manifest != nil {
			if run, err = loadRun(out, dir, f.Manifest, o); err != nil {
				return nil, err
			}
			p := paperOf(run.Manifest.Spec.Paper, run.Manifest.Spec.Kind, run.Manifest.Spec.ID)
			p.Runs = append(p.Runs, run)
		}
		if !f.Unfinished() {
			if run == nil {
				continue // cannot be: a folder is finished or not
			}
			p := paperOf(run.Manifest.Spec.Paper, run.Manifest.Spec.Kind, run.Manifest.Spec.ID)
			p.Counts = p.Counts.Plus(run.Counts)
			r.Counts = r.Counts.Plus(run.Counts)
			continue
		}
		// The latest attempt did not finish: the spec's claims are not
		// run, whatever an earlier run in the folder decided.
		u := f.unfinished(out, dir)
		u.claimsFromSpec(o.Claims)
		if run != nil {
			u.Earlier, run.Superseded = run, u
			if u.Title == "" { // a checkpoint without a record
				u.Title, u.Paper, u.Kind = run.Manifest.Spec.Title, run.Manifest.Spec.Paper, run.Manifest.Spec.Kind
			}
		}
		p := paperOf(u.Paper, u.Kind, u.SpecID)
		p.Unfinished = append(p.Unfinished, u)
		r.Unfinished = append(r.Unfinished, u)
		c := Counts{NotRun: len(u.Claims)}
		p.Counts = p.Counts.Plus(c)
		r.Counts = r.Counts.Plus(c)
	}
	for _, p := range r.Papers {
		sort.SliceStable(p.Runs, func(i, j int) bool {
			a, b := p.Runs[i].Manifest.Spec.ID, p.Runs[j].Manifest.Spec.ID
			if a != b {
				return a < b
			}
			return p.Runs[i].Dir < p.Runs[j].Dir
		})
		sort.SliceStable(p.Unfinished, func(i, j int) bool { return p.Unfinished[i].Dir < p.Unfinished[j].Dir })
		p.Label = paperLabel(p)
	}
	sort.SliceStable(r.Papers, func(i, j int) bool {
		a, b := r.Papers[i], r.Papers[j]
		if (a.Counts.Total() > 0) != (b.Counts.Total() > 0) {
			return a.Counts.Total() > 0
		}
		return a.Label < b.Label
	})
	for i, p := range r.Papers {
		p.ID = fmt.Sprintf("paper-%d", i+1)
		for _, run := range p.Runs {
			if run.Superseded != nil {
				continue // not counted
			}
			for _, c := range run.Claims {
				if c.Verdict == claims.NotHeld {
					r.NotHeld = append(r.NotHeld, c)
				}
			}
		}
	}
	for _, e := range o.Extra {
		if err := r.addExtra(out, e); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// yearTitle is the authors and year at the head of a spec title:
// "Wang, Kifer & Lee 2019" of "Wang, Kifer & Lee 2019, Table 3 (Adult)".
var yearTitle = regexp.MustCompile(`^(.*?\b(?:19|20)\d\d)\b`)

// paperLabel is a short name for p: the authors and year its first run's
// title starts with, else that title (of its first run that did not
// finish when it has no finished run).
func paperLabel(p *Paper) string {
	var t, id, kind string
	ids := map[string]bool{}
	for _, run := range p.Runs {
		ids[run.Manifest.Spec.ID], kind = true, run.Manifest.Spec.Kind
	}
	for _, u := range p.Unfinished {
		ids[u.SpecID], kind = true, cmp.Or(kind, u.Kind)
	}
	if p.Reference == "" && len(ids) > 1 {
		// Specs that name no paper are grouped by kind: no one spec's
		// title stands for the others.
		return "Specs of kind " + cmp.Or(kind, "unknown") + " that name no paper"
	}
	if len(p.Runs) > 0 {
		t, id = p.Runs[0].Manifest.Spec.Title, p.Runs[0].Manifest.Spec.ID
	} else {
		t, id = p.Unfinished[0].Title, p.Unfinished[0].SpecID
	}
	if g := yearTitle.FindStringSubmatch(t); g != nil {
		return g[1]
	}
	if t == "" {
		return id
	}
	return t
}

// addExtra adds the figures of e to the paper of the first run of kind
// e.Kind; none is added when no run is of that kind.
func (r *Report) addExtra(out string, e ExtraFigures) error {
	for _, p := range r.Papers {
		for _, run := range p.Runs {
			if run.Manifest.Spec.Kind != e.Kind {
				continue
			}
			rel, err := filepath.Rel(out, e.Dir)
			if err != nil {
				rel = filepath.Base(e.Dir)
			}
			figs, err := figures(e.Dir, filepath.ToSlash(rel), e.Title)
			if err != nil {
				return err
			}
			p.Figures = append(p.Figures, figs...)
			p.ExtraTitle = e.Title
			return nil
		}
	}
	return nil
}

// loadRun reads one finished run folder, whose manifest is m.
func loadRun(out, dir string, m *results.Manifest, o Options) (*Run, error) {
	rel, err := filepath.Rel(out, dir)
	if err != nil || rel == "." {
		rel = filepath.Base(dir)
	}
	run := &Run{Dir: filepath.ToSlash(rel), Manifest: m}
	run.ID = "run-" + htmlSafe(run.Dir)
	if err := run.readClaims(filepath.Join(dir, "claims.csv")); err != nil {
		run.Notes = append(run.Notes, err.Error())
	}
	if len(run.Claims) > 0 {
		links, err := analysisLinks(o.Claims, m.Spec.File)
		if err != nil {
			run.Notes = append(run.Notes, fmt.Sprintf("the links to written analyses could not be read: %v", err))
		}
		for _, c := range run.Claims {
			c.Analysis = links[c.ID]
			c.Anchor, _ = o.Analyses.Resolve(c.Analysis)
			c.Gist = o.Analyses.Gist(c.Anchor)
		}
	}
	sum, _ := results.ReadSummaryCSV(filepath.Join(dir, "summary.csv"))
	if len(sum) > 0 {
		run.XName = sum[0].XName
	}
	run.Matches = matchTables(run.Claims, sum)
	if run.Figures, err = figures(filepath.Join(dir, "figures"), run.Dir, m.Spec.Title); err != nil {
		return nil, err
	}
	mds, _ := filepath.Glob(filepath.Join(dir, "tables", "*.md"))
	sort.Strings(mds)
	for _, f := range mds {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		run.Tables = append(run.Tables, Table{Name: "tables/" + filepath.Base(f), Markdown: string(b)})
	}
	return run, nil
}

// analysisLinks maps claim id to its analysis link in the spec file.
func analysisLinks(read func(string) ([]experiments.ClaimSpec, error), file string) (map[string]string, error) {
	links := map[string]string{}
	if file == "" {
		return links, errors.New("the manifest names no spec file")
	}
	cs, err := read(file)
	if err != nil {
		return links, err
	}
	for _, c := range cs {
		if c.Analysis != nil {
			links[c.ID] = strings.TrimSpace(*c.Analysis)
		}
	}
	return links, nil
}

// readClaims reads claims.csv (absent: a spec without claims).
func (run *Run) readClaims(file string) error {
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return fmt.Errorf("claims.csv: %w", err)
	}
	var col func(string) int
	ok := len(recs) > 0
	if ok {
		col, ok = claims.Header(recs[0]) // the legacy header has no reason
	}
	if !ok {
		return fmt.Errorf("claims.csv is not of this build's format (header %q): its claims are not shown", recs[:min(1, len(recs))])
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	byID := map[string]*Claim{}
	for _, rec := range recs[1:] {
		id := rec[col("claim_id")]
		c := byID[id]
		if c == nil {
			c = &Claim{Run: run, ID: id, Source: rec[col("source")], Statement: rec[col("statement")], Rule: rec[col("rule")],
				Dataset: rec[col("dataset")], Method: rec[col("method")], Metric: rec[col("metric")]}
			c.HTMLID = "claim-" + htmlSafe(run.Dir) + "-" + htmlSafe(id)
			c.order = len(run.Claims)
			byID[id] = c
			run.Claims = append(run.Claims, c)
		}
		cell := &Cell{X: num(rec[col("x")]), Paper: num(rec[col("paper")]), Ours: num(rec[col("ours")]),
			Low: num(rec[col("ci_low")]), High: num(rec[col("ci_high")]), Verdict: rec[col("verdict")]}
		if i := col("reason"); i >= 0 {
			cell.Reason = rec[i]
		}
		c.Cells = append(c.Cells, cell)
	}
	for _, c := range run.Claims {
		c.Verdict = claimVerdict(c.Cells)
		run.Counts.Add(c.Verdict)
	}
	// The claims a reader must see first, first; the spec's order within
	// a verdict.
	sort.SliceStable(run.Claims, func(i, j int) bool {
		return slices.Index(verdictOrder, run.Claims[i].Verdict) < slices.Index(verdictOrder, run.Claims[j].Verdict)
	})
	return nil
}

// matchTables lays out the match claims of a run as the paper's tables.
func matchTables(cs []*Claim, sum []results.SummaryRow) []*MatchTable {
	var out []*MatchTable
	byKey := map[string]*MatchTable{}
	var order []*Claim
	for _, c := range cs {
		if c.Rule == experiments.RuleMatch {
			order = append(order, c)
		}
	}
	// Rows in the spec's order (cs is sorted by verdict).
	sort.SliceStable(order, func(i, j int) bool { return order[i].order < order[j].order })
	for _, c := range order {
		key := c.Metric + "\x00" + c.Dataset
		t := byKey[key]
		if t == nil {
			t = &MatchTable{Metric: c.Metric, Dataset: c.Dataset, Source: c.Source}
			byKey[key] = t
			out = append(out, t)
		}
		if c.Source != t.Source && !strings.Contains(t.Source, c.Source) {
			t.Source += "; " + c.Source
		}
		t.Rows = append(t.Rows, MatchRow{Claim: c})
	}
	for _, t := range out {
		run, all := map[float64]bool{}, map[float64]bool{}
		for _, row := range t.Rows {
			for _, cell := range row.Claim.Cells {
				all[cell.X] = true
				if cell.Verdict != claims.Missing {
					run[cell.X] = true
				}
			}
		}
		if len(run) == 0 {
			seen := map[float64]bool{}
			for _, r := range sum {
				if r.Metric == t.Metric && (t.Dataset == "" || r.Dataset == t.Dataset) && !seen[r.X] {
					seen[r.X] = true
					t.RunXs = append(t.RunXs, r.X)
				}
			}
			sort.Float64s(t.RunXs)
		}
		for _, row := range t.Rows {
			for _, cell := range row.Claim.Cells {
				t.Synthetic = t.Synthetic || cell.Verdict == claims.Synthetic
			}
		}
		for x := range all {
			if run[x] || len(run) == 0 {
				t.Xs = append(t.Xs, x)
			} else {
				t.NotRun = append(t.NotRun, x)
			}
		}
		sort.Float64s(t.Xs)
		sort.Float64s(t.NotRun)
		for i, row := range t.Rows {
			cells := make([]*Cell, len(t.Xs))
			for _, cell := range row.Claim.Cells {
				if k := slices.Index(t.Xs, cell.X); k >= 0 {
					cells[k] = cell
				}
			}
			t.Rows[i].Cells = cells
		}
	}
	return out
}

// figures lists the PNG files of dir, to be copied to
// figures/<rel>/ beside the report.
func figures(dir, rel, title string) ([]Figure, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	sort.Strings(files)
	var out []Figure
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		cfg, _, err := image.DecodeConfig(fh)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		name := filepath.Base(f)
		out = append(out, Figure{
			Src:     path.Join("figures", rel, name),
			Orig:    f,
			Caption: strings.TrimSuffix(name, ".png") + " — " + title,
			Width:   cfg.Width, Height: cfg.Height,
			// Twice as wide as tall: a row of panels, shown across the page.
			Wide: cfg.Width > 2*cfg.Height,
		})
	}
	return out, nil
}

// htmlSafe maps s to letters, digits, '-' and '_' for an HTML id.
func htmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/kinds/cicoverage"
	"github.com/dprepro/dprepro/kinds/expostsweep"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// minDataShare is the least share of its tile, each way, that a panel's
// data area keeps: below it, labels, titles or the legend eat the plot
// (as a two-line y label once squeezed a panel into its bottom quarter).
const minDataShare = 0.55

// checkPlotArea measures spec laid out from rows and reports each panel
// whose data area is under minDataShare of its tile either way.
func checkPlotArea(t *testing.T, what string, spec plots.FigureSpec, rows []results.SummaryRow) {
	t.Helper()
	_, _, areas, err := plots.Measure(spec, rows)
	if err != nil {
		t.Errorf("%s: %s: %v", what, spec.Name, err)
		return
	}
	for _, a := range areas {
		if d, tl := a.Data, a.Tile; d.Min.X < tl.Min.X-0.5 || d.Max.X > tl.Max.X+0.5 || d.Min.Y < tl.Min.Y-0.5 || d.Max.Y > tl.Max.Y+0.5 {
			t.Errorf("%s: %s, panel %q: data area %v spills out of its tile %v", what, spec.Name, a.Panel, d, tl)
		}
		w, h := a.Data.Size().X/a.Tile.Size().X, a.Data.Size().Y/a.Tile.Size().Y
		if w < minDataShare || h < minDataShare {
			t.Errorf("%s: %s, panel %q: data area %.0f%% × %.0f%% of its tile, want ≥ %.0f%% each way",
				what, spec.Name, a.Panel, 100*w, 100*h, 100*minDataShare)
		}
	}
}

// TestFigures_PlotArea lays out every figure of every built-in spec at
// the quick profile from its committed reference summary (a quick run on
// the real data), and the figures across runs, and fails when a panel's
// data area is under minDataShare of its tile. Every figure also states
// its profile once the runner completes its caption.
func TestFigures_PlotArea(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every built-in spec's data")
	}
	if err := registerBuiltins(); err != nil {
		t.Fatal(err)
	}
	// The groups of figures across runs (runner.AcrossRuns), as the
	// run command gathers them.
	type group struct {
		exps []runner.Experiment
		rows []results.SummaryRow
	}
	groups := map[runner.AcrossGroup]*group{}
	for _, id := range experiments.BuiltinIDs() {
		t.Run(id, func(t *testing.T) {
			s, err := runner.Kinds.LoadBuiltin(id, "quick")
			if err != nil {
				t.Fatal(err)
			}
			rows, err := results.ReadSummaryCSV(filepath.Join("..", "results", "reference", id, "summary.csv"))
			if err != nil {
				t.Fatalf("reference summary: %v", err)
			}
			exp, err := runner.Kinds.New(s, runner.DataOptions{DataDir: os.Getenv("DPREPRO_DATA")})
			if err != nil {
				t.Fatal(err)
			}
			if a, ok := exp.(runner.AcrossRuns); ok {
				if g, ok := a.Across(); ok {
					if groups[g] == nil {
						groups[g] = &group{}
					}
					groups[g].exps = append(groups[g].exps, exp)
					groups[g].rows = append(groups[g].rows, rows...)
				}
			}
			figs := exp.Figures()
			if len(figs) == 0 {
				t.Fatal("no figures")
			}
			for _, f := range figs {
				f.Caption = runner.FigureCaption(s, f.Caption)
				if f.Caption.Profile != "quick" {
					t.Errorf("%s: caption profile %q, want quick", f.Name, f.Caption.Profile)
				}
				checkPlotArea(t, id, f, rows)
			}
		})
	}
	// Ligett et al.'s figures for each calibration, and every one of
	// Wang, Kifer & Lee's Figures 1–4 (each has a panel the built-in
	// specs sweep).
	want := map[runner.AcrossGroup]int{
		{Folder: expostsweep.AcrossFolder, Sub: "paper"}:        1,
		{Folder: expostsweep.AcrossFolder, Sub: "authors-code"}: 1,
		{Folder: cicoverage.AcrossFolder}:                       len(cicoverage.PaperFigures()),
	}
	for g, n := range want {
		if groups[g] == nil {
			t.Errorf("no built-in run joins the figures across runs %v", g)
		}
		if groups[g] == nil || len(groups[g].exps) < 2 {
			continue
		}
		figs, _ := groups[g].exps[0].(runner.AcrossRuns).AcrossFigures(groups[g].exps, groups[g].rows)
		if len(figs) < n {
			t.Errorf("%s/%s: %d figures, want at least %d", g.Folder, g.Sub, len(figs), n)
		}
		for _, f := range figs {
			f.Caption.Profile = "quick"
			checkPlotArea(t, filepath.Join(g.Folder, g.Sub), f, groups[g].rows)
		}
	}
}

package runner

import (
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
)

// AcrossGroup names a set of figures drawn across runs: the folder under
// the output folder that holds them (e.g. "wkl-figures"), and a subfolder
// under its <profile>[-seed<S>][-secure] folder ("" for none; e.g. a
// calibration). Runs with equal groups are drawn together.
type AcrossGroup struct {
	Folder, Sub string
}

// AcrossRuns is implemented by an experiment whose finished runs are drawn
// together with the other runs of their group in figures across runs: a
// paper's figures that put the sweeps of several specs in one panel (Wang,
// Kifer & Lee's Figures 1–4, Ligett et al.'s Figures 1–4). The command
// that ran them (run, reproduce) draws a group of two runs or more, into
// OUT/<Folder>/<profile>[-seed<S>][-secure]/<Sub>/, when every run of the
// command finished.
type AcrossRuns interface {
	// Across returns the group the run joins, or false when it joins none
	// (a variant of a paper's protocol, whose curves would be a second
	// curve of the same method in the paper's panels).
	Across() (AcrossGroup, bool)
	// AcrossFigures returns the figures of a group of runs (this one
	// among them, all of this kind, in the order they ran) from their
	// summaries, rows, and a title for the command's message (e.g.
	// "Wang, Kifer & Lee Figures 1-4 across 3 runs").
	AcrossFigures(group []Experiment, rows []results.SummaryRow) (figs []plots.FigureSpec, title string)
}

// AcrossKind is implemented by a kind whose runs are drawn across runs
// (AcrossRuns): Folder is the folder of its figures under an output
// folder, which no spec id may take (Registry.Register reserves it,
// experiments.ReserveID), and ReportTitle the heading of those figures
// in the report ("" keeps them out of it).
type AcrossKind interface {
	AcrossFolder() (folder, reportTitle string)
}

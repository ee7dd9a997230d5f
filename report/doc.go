// Package report turns an output folder of runs into a report a reader
// can take in at a glance: what reproduced, what did not, and why.
//
// [Load] finds the finished runs under OUT as `dprepro check` does
// (folders holding manifest.json, OUT/<spec id>/<run>/) and reads each
// one's manifest.json, claims.csv, summary.csv, figures/*.png and
// tables/*.md, and every run folder whose latest attempt did not finish
// ([Folder], [Unfinished]); [Report.Write] writes OUT/report/:
//
//	index.html   one page, inline CSS, no script, nothing from the network
//	report.md    the same in Markdown
//	analysis.md  the written analyses the "not held" verdicts link to
//	figures/     a copy of every figure shown (PNG), so the folder moves whole
//
// # Content
//
// Runs are grouped by the paper they reproduce (the manifest's
// spec.paper). The page opens, in red, with every run that did not finish
// (see below), then the verdicts counted, a table of every
// run (its data, real or a SYNTHETIC stand-in, and its claims by
// verdict) and a table of every claim that is not held with the gist of
// its written analysis, or "no analysis written yet". Per run follow its
// claims (each with its verdict at every swept value), the match claims
// laid out as the paper's table with the published value and ours (95%
// CI) in each cell, the figures, the run's tables, its privacy ledger,
// its provenance (build, spec file and hashes, profile, seed, data files
// with SHA-256, noise) and the spec's notes, where its deviations from the
// paper are written.
//
// # Runs that did not finish
//
// A run folder tells by itself whether its latest attempt finished: the
// command that runs it keeps results.Attempt (attempt.json) there until
// manifest.json is written, with its state (queued, running, failed, not
// run, interrupted, not started, shard done) and its error; a checkpoint
// with neither is an attempt by a build that kept no record. Such a folder
// is never left out of the report, whichever process writes it: it is
// named at the top with its error and what did not run, and its spec's
// claims are counted as [NotRun] in the totals and its paper's counts. A
// finished run the folder still holds from before the attempt (the runner
// keeps it until a new run has every unit) is shown, marked, and not
// counted. For a record that says queued or running, the folder's lock
// (runner.HeldBy) tells a process at work from one killed without a word
// ([NoHolder]); when more units failed than the error names, the report
// says where the error of every one is (the record's failures).
//
// # Markdown
//
// report.md escapes all text from specs, manifests and errors as
// index.html does ([MarkdownText]): it shows as written, never as HTML, a
// link, an image, a heading or a cell of its own.
//
// # Verdicts
//
// A claim's verdict is the worst of its verdicts at each x (package
// claims): not held when it is not held at some x; else inconclusive when
// it is so at some x; else held when it is held at some x the run has;
// else synthetic, or missing. Claims on synthetic data or missing are
// shown folded: no data of the paper decided them; a missing one with the
// reason its claims.csv gives (Claim.MissingWhy).
//
// # Analyses
//
// A claim's analysis link (experiments.ClaimSpec.Analysis, e.g.
// "docs/analysis.md#cv13-magic-maxabs-s5-mse-stability-lt-alphasplit") is read
// from the current spec, not the run, so that an analysis written after
// the run shows. A link into the [Analyses] document resolves to its
// section (by GitHub's anchor of the heading), shown in the page; the
// section's first paragraph, when it starts in bold, is its gist.
package report

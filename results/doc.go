// Package results holds the output side of a run: the tidy row type, the
// long-format summary schema shared by every experiment, atomic CSV and JSON
// writers, the per-unit checkpoint that lets an interrupted run resume, and
// the manifest (provenance and privacy ledger).
//
// # Files of a run (OUT/<spec id>/)
//
//	spec.toml       the resolved spec (profile applied)
//	rows.csv        one row per replicate unit output, tidy
//	summary.csv     SummaryColumns, one row per (dataset, method, x, metric)
//	figures/        PNG and SVG figures
//	manifest.json   provenance and the privacy ledger; written last, so its
//	                presence marks a finished run
//	.checkpoint/    per-unit results of a run in progress (JSON lines)
//
// Every file is written atomically: to a temporary file in the same
// directory, synced, then renamed over the target.
package results

// Package plots draws the paper figures from summary rows with gonum/plot.
//
// # No statistics
//
// Every number drawn comes from a [results.SummaryRow]: the line and
// markers from Mean, the error bar from CILow..CIHigh. Nothing is averaged,
// resampled or smoothed here (in particular plotutil.MeanAndConf95 is not
// used); intervals are computed by core/metrics before the rows are written.
//
// # Layout
//
// A figure ([FigureSpec]) is one metric against x, one panel per dataset
// tiled left to right (or in Columns, or in the paper's order of
// sub-figures with Panels), one line per method. Render adds the figure
// title above the panels, under it a caption stating the profile, the
// replicates per point and what the error bars are ([Caption]), and a
// shared legend to the right of the panels, so the legend never covers
// data. With FigureSpec.MetricPanels a figure instead shows several metrics
// of one dataset side by side (one panel each), and FigureSpec.Reference
// draws one method, such as a non-private fit, as a horizontal line in
// every panel.
//
// # Reading values off a figure
//
// A method is drawn with one colour and marker in every panel, and in
// every figure of a paper when its kind passes a style table
// ([FigureSpec.Styles], [PaletteStyle]). The x axis is ticked at the swept
// values only (a label is left out only where it would touch its
// neighbour), and a linear y axis carries five to ten round labels. Jitter
// keeps every point nearer its own x than any other swept value and within
// [MaxJitterSpan] of the x range. Labels too long for their side are
// wrapped, then set smaller; a y label is drawn centred on its data area,
// once per row of panels when all panels share it. [Measure] returns where
// each panel's data area falls, for tests that labels leave it room.
//
// # What the numbers are, privacy-wise
//
// Each method's legend entry says the privacy notion of its points
// ([FigureSpec.Notions]: "pure ε-DP", "(ε, δ)-DP, δ = …", "ρ-zCDP, ρ =
// …", "ex-post ε", "not private"), and "declared by the method" for an
// external or Go-extension method whose guarantee the harness does not
// audit; the runner reads them off the run's privacy ledger
// ([LedgerNotions]). Points whose fits returned more privacy loss than the
// level on the x axis are ringed in black ([FigureSpec.Marks]), with one
// legend entry for the rings.
//
// # Values a figure cannot show
//
// No row leaves a figure without a word. On a log y axis a mean ≤ 0 (an
// empirical tail of 0: no draw beyond the threshold) is drawn at the
// panel's floor, half a decade below its smallest positive value and
// ticked "0" on the axis, as the series' marker over a downward arrow,
// with one legend entry for that marker; the line breaks there instead
// of running across it, and an error bar whose lower end is ≤ 0 runs down
// to the floor. A row with no finite value, or with x ≤ 0 on a log x
// axis, is not drawn, and its line breaks there too. The caption's note
// names every such row by panel, series and x ([FigureSpec.LogY]).
//
// # Synthetic data
//
// A panel with any row whose DataSource is "synthetic" is titled
// "<dataset> (SYNTHETIC data, not a real file)" in dark red, so that
// figures made from stand-ins or simulations cannot be mistaken for
// reproductions on the real data.
//
// # Errors
//
// Build and Render return errors for invalid specs, rows that do not match
// the metric, and duplicate cells; they never panic on user input.
package plots

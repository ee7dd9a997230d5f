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
// tiled left to right, one line per method. Methods keep the same color,
// marker and jitter slot in every panel. Render adds the figure title above
// the panels and a shared legend to their right, so the legend never covers
// data. With FigureSpec.MetricPanels a figure instead shows several metrics
// of one dataset side by side (one panel each), and FigureSpec.Reference
// draws one method, such as a non-private fit, as a horizontal line in
// every panel.
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

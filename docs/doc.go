// Package docs holds, built into the binary, the written analyses of the
// claims whose verdict is "not held" (analysis.md), so that `dprepro
// report` can show each analysis beside its verdict wherever it runs.
package docs

import _ "embed"

// Analysis is the text of analysis.md: Markdown, one section per claim
// that is not held, headed "<spec id>: <claim id>".
//
//go:embed analysis.md
var Analysis []byte

// AnalysisPath is where Analysis lives in the repository: a claim's
// analysis link (experiments.ClaimSpec.Analysis) names this path and a
// section's anchor, e.g. "docs/analysis.md#cv13-magic-maxabs-s5-mse-stability-lt-alphasplit".
const AnalysisPath = "docs/analysis.md"

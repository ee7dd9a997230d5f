package plots

import (
	"image/color"
	"maps"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Style is how one method is drawn: the colour of its line, markers and
// error bars, its marker and its line pattern. A kind keeps one table of
// styles per paper, keyed by method ([FigureSpec.Styles]), so that a
// method looks the same in every figure of that paper.
type Style struct {
	Color  color.Color      // required
	Shape  draw.GlyphDrawer // required
	Dashes []vg.Length      // nil: solid
}

// palette holds dark colours that stay legible with thin error bars and
// are told apart from the grey reference lines.
var palette = []color.Color{
	color.RGBA{R: 31, G: 100, B: 180, A: 255}, // blue
	color.RGBA{R: 205, G: 35, B: 40, A: 255},  // red
	color.RGBA{R: 30, G: 140, B: 50, A: 255},  // green
	color.RGBA{R: 235, G: 120, B: 0, A: 255},  // orange
	color.RGBA{R: 120, G: 70, B: 170, A: 255}, // purple
	color.RGBA{R: 130, G: 80, B: 60, A: 255},  // brown
	color.RGBA{R: 210, G: 60, B: 160, A: 255}, // magenta
	color.RGBA{R: 0, G: 150, B: 160, A: 255},  // teal
	color.RGBA{R: 150, G: 150, B: 20, A: 255}, // olive
	color.RGBA{R: 20, G: 30, B: 90, A: 255},   // navy
}

// PaletteColor returns colour i of the package's palette (cycling).
func PaletteColor(i int) color.Color { return palette[i%len(palette)] }

// PaletteShape returns marker i of the package's markers (cycling through
// plotutil's shapes: ring, square, triangle, plus, filled circle, …).
func PaletteShape(i int) draw.GlyphDrawer { return plotutil.Shape(i) }

// PaletteStyle returns style i of the palette: colour i and marker i,
// solid. Entries 0..len(palette)−1 differ in colour.
func PaletteStyle(i int) Style { return Style{Color: PaletteColor(i), Shape: PaletteShape(i)} }

// variantDashes are the line patterns of the variants of a method (and of
// the metrics of a several-metric figure): solid, dashed, dotted,
// dash-dotted.
var variantDashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(1.5), vg.Points(2)}, {vg.Points(6), vg.Points(2), vg.Points(2), vg.Points(2)}}

// VariantDashes returns line pattern j of the variants of one method
// (solid, dashed, dotted, dash-dotted, cycling): the curves of a method's
// parameter settings share its colour and differ in their lines.
func VariantDashes(j int) []vg.Length { return variantDashes[j%len(variantDashes)] }

// methodStyles returns the style of each series label. bases[i] is the
// method of label i and variants[i] the index of its metric in a
// several-metric figure (line pattern variants[i]). A label or its method
// found in table takes that style. Otherwise methods of the form
// "<method>/<variant>" (a cv-tuning spec with several learners:
// "alphaSplit/noisy-gd") take the colour of <method> (from table, or the
// palette slot of <method> when every label is so formed) and the marker
// and line pattern of <variant>, so that both can be read off the figure.
// Other methods get, in their order of first appearance, the palette
// styles whose colours no entry of table takes.
func methodStyles(labels, bases []string, variants []int, table map[string]Style) []Style {
	out := make([]Style, len(labels))
	var pairBases, pairVariants, plain []string
	paired := len(bases) > 0
	for _, b := range bases {
		m, v, ok := strings.Cut(b, "/")
		if !ok {
			paired = false
			continue
		}
		if !slices.Contains(pairBases, m) {
			pairBases = append(pairBases, m)
		}
		if !slices.Contains(pairVariants, v) {
			pairVariants = append(pairVariants, v)
		}
	}
	// Palette slots whose colour no table entry takes, for the methods
	// without one.
	var free []int
	for i := range palette {
		if !slices.ContainsFunc(slices.Collect(maps.Values(table)), func(st Style) bool { return st.Color == palette[i] }) {
			free = append(free, i)
		}
	}
	if len(free) == 0 {
		free = []int{0}
	}
	for i, l := range labels {
		if st, ok := table[l]; ok {
			out[i] = st
			continue
		}
		b := bases[i]
		var st Style
		m, v, isPair := strings.Cut(b, "/")
		_, known := table[m]
		switch s, ok := table[b]; {
		case ok:
			st = s
		case isPair && (paired || known):
			base := table[m]
			if !known {
				base = PaletteStyle(slices.Index(pairBases, m))
			}
			vi := slices.Index(pairVariants, v)
			st = Style{Color: base.Color, Shape: PaletteShape(vi), Dashes: variantDashes[vi%len(variantDashes)]}
		default:
			j := slices.Index(plain, b)
			if j < 0 {
				j = len(plain)
				plain = append(plain, b)
			}
			st = PaletteStyle(free[j%len(free)])
		}
		if variants[i] > 0 {
			st.Dashes = variantDashes[variants[i]%len(variantDashes)]
		}
		out[i] = st
	}
	return out
}

package plots

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"
)

// ciBar is one confidence interval [Low, High] drawn at X.
type ciBar struct {
	X, Low, High float64
}

// ciBars adapts intervals to plotter.YErrorBars (plotter.XYer and
// plotter.YErrorer). Each bar is anchored at its lower end with errors
// (0, High−Low), so it spans exactly [Low, High]: YErrorBars draws
// y − |low| .. y + |high|, which would be wrong for an interval anchored at
// the mean that does not contain the mean.
type ciBars []ciBar

func (b ciBars) Len() int                         { return len(b) }
func (b ciBars) XY(i int) (x, y float64)          { return b[i].X, b[i].Low }
func (b ciBars) YError(i int) (low, high float64) { return 0, b[i].High - b[i].Low }

// hLine is a horizontal reference line across the whole data area. Its
// y value counts in the y range (so the line is always visible) and it
// leaves the x range alone.
type hLine struct {
	Y float64
	draw.LineStyle
}

// Plot implements plot.Plotter.
func (h *hLine) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(h.Y)
	if y < c.Min.Y || y > c.Max.Y {
		return
	}
	c.StrokeLine2(h.LineStyle, c.Min.X, y, c.Max.X, y)
}

// DataRange implements plot.DataRanger. The x range is empty (+Inf, −Inf),
// which plot.Add's min/max ignore.
func (h *hLine) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), h.Y, h.Y
}

// Thumbnail implements plot.Thumbnailer.
func (h *hLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(h.LineStyle, c.Min.X, y, c.Max.X, y)
}

// logTicks marks a log10 axis: major ticks at powers of ten, minor ticks at
// their 2..9 multiples. It differs from plot.LogTicks in two ways: the first
// decade is found with floor (plot.LogTicks truncates log10(min) toward zero,
// so a range such as [0.2, 0.8] gets no ticks at all), and when fewer than
// three labelled powers of ten fall inside the range the 1-2-5 multiples
// inside it are labelled too (and if that still leaves fewer than two
// labels, all multiples), so short ranges such as ε ∈ [0.05, 2] get more
// than two labels and no range gets fewer than two when avoidable.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0 && max >= min) || math.IsInf(max, 0) {
		return nil
	}
	lo, hi := int(math.Floor(math.Log10(min))), int(math.Ceil(math.Log10(max)))
	var ticks []plot.Tick
	for e := lo; e <= hi; e++ {
		p := math.Pow(10, float64(e))
		for m := 1; m <= 9; m++ {
			if e == hi && m > 1 {
				break
			}
			t := plot.Tick{Value: float64(m) * p}
			if m == 1 {
				t.Label = formatTick(t.Value)
			}
			ticks = append(ticks, t)
		}
	}
	inside := func(v float64) bool { return v >= min*(1-1e-12) && v <= max*(1+1e-12) }
	count := func() (n int) {
		for _, t := range ticks {
			if t.Label != "" && inside(t.Value) {
				n++
			}
		}
		return n
	}
	for _, pass := range []struct {
		mults []int
		below int // apply when fewer labels than this are inside
	}{{[]int{2, 5}, 3}, {[]int{3, 4, 6, 7, 8, 9}, 2}} {
		if count() >= pass.below {
			continue
		}
		mults := pass.mults
		for i, t := range ticks {
			m := int(math.Round(t.Value / math.Pow(10, math.Floor(math.Log10(t.Value)+1e-12))))
			if inside(t.Value) && slices.Contains(mults, m) {
				ticks[i].Label = formatTick(t.Value)
			}
		}
	}
	return ticks
}

// formatTick prints a tick value with at most 3 significant digits, so
// that 3·0.1 shows as 0.3.
func formatTick(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }

var (
	_ plot.Plotter     = (*hLine)(nil)
	_ plot.DataRanger  = (*hLine)(nil)
	_ plot.Thumbnailer = (*hLine)(nil)
)

package plots

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
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

// floorTicks marks a log10 axis with a floor (FigureSpec.LogY): the ticks
// of logTicks above the floor's band, and one tick at Floor labelled
// Label ("0"), where the panel draws its means ≤ 0. The band is the lower
// half, in log units, of the half decade between the floor and the
// smallest positive value shown; no other tick falls in it, so that no
// number can be read off a point at the floor.
type floorTicks struct {
	Floor float64
	Label string
}

// Ticks implements plot.Ticker.
func (f floorTicks) Ticks(min, max float64) []plot.Tick {
	band := f.Floor * math.Pow(10, 0.25)
	ticks := []plot.Tick{{Value: f.Floor, Label: f.Label}}
	for _, t := range (logTicks{}).Ticks(math.Max(min, band), max) {
		if t.Value >= band {
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// logTicks marks a log10 axis: major ticks at powers of ten, minor ticks at
// their 2..9 multiples. It differs from plot.LogTicks in two ways: the first
// decade is found with floor (plot.LogTicks truncates log10(min) toward zero,
// so a range such as [0.2, 0.8] gets no ticks at all), and when fewer than
// four labelled powers of ten fall inside the range the 1-2-5 multiples
// inside it are labelled too (and if that still leaves fewer than three
// labels, all multiples), so short ranges such as ε ∈ [0.05, 2] get more
// than three labels and no range gets fewer than three when avoidable.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0 && max >= min) || math.IsInf(max, 0) {
		return nil
	}
	lo, hi := int(math.Floor(math.Log10(min))), int(math.Ceil(math.Log10(max)))
	if hi-lo > 10 {
		// A wide range: a labelled power of ten every step decades, about
		// eight in all, and no minor ticks (thousands of them would grey
		// the panel out).
		step := (hi - lo + 7) / 8
		var ticks []plot.Tick
		for e := lo - lo%step; e <= hi; e += step {
			ticks = append(ticks, plot.Tick{Value: math.Pow(10, float64(e)), Label: formatTick(math.Pow(10, float64(e)))})
		}
		return ticks
	}
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
	}{{[]int{2, 5}, 4}, {[]int{3, 4, 6, 7, 8, 9}, 3}} {
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

// formatTick prints a tick value with at most 4 significant digits, so
// that 3·0.1 shows as 0.3, whole numbers in full up to 99,999 and as
// thousands ("450k") up to a million, in exponent form only outside
// [10⁻⁴, 10⁶).
func formatTick(v float64) string {
	a := math.Abs(v)
	switch {
	case v == math.Trunc(v) && a >= 1e5 && a < 1e6 && math.Mod(v, 1000) == 0:
		return strconv.FormatFloat(v/1000, 'f', -1, 64) + "k"
	case v == math.Trunc(v) && a < 1e6:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1e-4 && a < 1e6:
		return strconv.FormatFloat(roundSig(v, 4), 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// roundSig rounds v to n significant digits.
func roundSig(v float64, n int) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// sweptTicks marks an x axis at the swept values of a panel and nowhere
// else: a labelled tick at each value, left to right, except where its
// label would touch the previous label at the axis length Length (the
// value then keeps an unlabelled tick). Length zero labels every value.
type sweptTicks struct {
	Values []float64 // distinct, sorted
	Log    bool
	Style  text.Style // of the tick labels, to measure them
	Length vg.Length  // of the axis as drawn
}

// tickGap is the least space between two tick labels.
const tickGap = vg.Length(4)

// Ticks implements plot.Ticker.
func (t *sweptTicks) Ticks(min, max float64) []plot.Tick {
	fwd := func(x float64) float64 { return x }
	if t.Log {
		fwd = math.Log10
	}
	span := fwd(max) - fwd(min)
	ticks := make([]plot.Tick, 0, len(t.Values))
	last := vg.Length(math.Inf(-1)) // right end of the last label
	for _, v := range t.Values {
		if v < min || v > max {
			continue
		}
		tk := plot.Tick{Value: v, Label: formatTick(v)}
		if t.Length > 0 && span > 0 {
			at := vg.Length((fwd(v)-fwd(min))/span) * t.Length
			w := t.Style.Width(tk.Label)
			if at-w/2 < last+tickGap {
				tk.Label = ""
			} else {
				last = at + w/2
			}
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

// linearTicks labels a linear axis with 5 to 10 round values (steps of 1,
// 2, 2.5 or 5 times a power of ten), so that values can be read off the
// axis; plot.DefaultTicks often gives two or three.
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) || math.IsInf(max-min, 0) {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	const want = 5
	var step float64
	var decimals int
	for e := math.Floor(math.Log10(max-min)) + 1; ; e-- {
		p := math.Pow(10, e)
		found := false
		for _, m := range []float64{5, 2.5, 2, 1} {
			s := m * p
			if math.Floor(max/s)-math.Ceil(min/s)+1 >= want {
				step, found = s, true
				decimals = max0(-int(e))
				if m == 2.5 {
					decimals = max0(1 - int(e))
				}
				break
			}
		}
		if found || e < -300 {
			break
		}
	}
	if step == 0 {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	var ticks []plot.Tick
	for k := math.Ceil(min / step); k*step <= max*(1+1e-12)+1e-300; k++ {
		v := k * step
		if v == 0 {
			v = 0 // not −0 (k = Ceil of a small negative), which would be labelled "-0.00"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
		// A minor tick half way, when it falls inside.
		if h := v + step/2; h <= max {
			ticks = append(ticks, plot.Tick{Value: h})
		}
	}
	if h := math.Ceil(min/step)*step - step/2; h >= min {
		ticks = append(ticks, plot.Tick{Value: h})
	}
	return ticks
}

func max0(i int) int { return max(i, 0) }

// diagLine is a y = x reference line, drawn only where it lies inside the
// axes. Its data range is [Min, Max] on y (and nothing on x), so that the
// y axis includes the line over the x range of the data.
type diagLine struct {
	Min, Max float64
	draw.LineStyle
}

// Plot implements plot.Plotter.
func (d *diagLine) Plot(c draw.Canvas, p *plot.Plot) {
	lo, hi := math.Max(p.X.Min, p.Y.Min), math.Min(p.X.Max, p.Y.Max)
	if !(hi > lo) {
		return
	}
	trX, trY := p.Transforms(&c)
	// Sampled, so that the line is right on any pair of scales.
	const n = 64
	pts := make([]vg.Point, 0, n+1)
	for i := 0; i <= n; i++ {
		v := lo + (hi-lo)*float64(i)/n
		if _, ok := p.X.Scale.(plot.LogScale); ok {
			v = lo * math.Pow(hi/lo, float64(i)/n)
		}
		pts = append(pts, vg.Point{X: trX(v), Y: trY(v)})
	}
	c.StrokeLines(d.LineStyle, c.ClipLinesXY(pts)...)
}

// DataRange implements plot.DataRanger.
func (d *diagLine) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), d.Min, d.Max
}

// Thumbnail implements plot.Thumbnailer.
func (d *diagLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(d.LineStyle, c.Min.X, y, c.Max.X, y)
}

var (
	_ plot.Plotter     = (*diagLine)(nil)
	_ plot.DataRanger  = (*diagLine)(nil)
	_ plot.Thumbnailer = (*diagLine)(nil)
	_ plot.Ticker      = (*sweptTicks)(nil)
	_ plot.Ticker      = linearTicks{}
	_ plot.Plotter     = (*hLine)(nil)
	_ plot.DataRanger  = (*hLine)(nil)
	_ plot.Thumbnailer = (*hLine)(nil)
)

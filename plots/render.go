package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dprepro/dprepro/results"
)

// PNGDPI is the resolution of the PNG files written by Render.
const PNGDPI = 150

// Render draws spec from rows (filtered to spec.Metric) and writes
// dir/<Name>.png and dir/<Name>.svg, creating dir if needed.
//
// The image holds spec.Title on top, the caption under it (profile,
// replicates per point, what the bars are, then Caption.Note), the panels
// of [Build] in a grid with their data areas aligned, and one legend for
// the whole figure in a strip to the right of the panels. Each panel is
// spec.Width × spec.Height inches. spec.Caption.Profile is required.
//
// Each file is written atomically: to a temporary file in dir that is then
// renamed over the target, so readers never see a partial figure. The two
// files are not replaced together. On error no temporary file is left.
func Render(dir string, spec FigureSpec, rows []results.SummaryRow) error {
	if err := checkName(spec.Name); err != nil {
		return fmt.Errorf("plots: render: %w", err)
	}
	if spec.Caption.Profile == "" {
		return fmt.Errorf("plots: render %q: caption profile: required (every figure states the profile it was run with)", spec.Name)
	}
	fig, err := build(spec, rows)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("plots: render %q: %w", spec.Name, err)
	}
	l := newFigureLayout(spec, fig)

	img := vgimg.NewWith(vgimg.UseWH(l.width, l.height), vgimg.UseDPI(PNGDPI))
	l.draw(draw.New(img))
	if err := writeAtomic(dir, spec.Name+".png", vgimg.PngCanvas{Canvas: img}); err != nil {
		return fmt.Errorf("plots: render %q: %w", spec.Name, err)
	}

	svg := vgsvg.New(l.width, l.height)
	l.draw(draw.New(svg))
	if err := writeAtomic(dir, spec.Name+".svg", svg); err != nil {
		return fmt.Errorf("plots: render %q: %w", spec.Name, err)
	}
	return nil
}

// Area is where one panel of a laid-out figure sits, in points from the
// bottom left of the image.
type Area struct {
	Panel string       // the panel's key (its title)
	Tile  vg.Rectangle // the panel's share of the image: its axes, labels and title included
	Data  vg.Rectangle // the data area inside the axes
}

// Measure lays spec out from rows as Render does and returns the size of
// the image and where each panel and its data area fall, writing nothing:
// for tests that labels, titles and legends leave the data room.
func Measure(spec FigureSpec, rows []results.SummaryRow) (width, height vg.Length, areas []Area, err error) {
	fig, err := build(spec, rows)
	if err != nil {
		return 0, 0, nil, err
	}
	l := newFigureLayout(spec, fig)
	c := draw.Canvas{Canvas: &recorder.Canvas{}, Rectangle: vg.Rectangle{Max: vg.Point{X: l.width, Y: l.height}}}
	canvases, tiles := l.place(c)
	for i, p := range l.fig.panels {
		r, col := i/l.cols, i%l.cols
		areas = append(areas, Area{
			Panel: l.fig.data.Panels[i].Dataset,
			Tile:  tiles[r][col].Rectangle,
			Data:  p.DataCanvas(canvases[r][col]).Rectangle,
		})
	}
	return l.width, l.height, areas, nil
}

// checkName rejects file stems that are empty or would leave dir.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("figure name: required")
	case name == "." || name == ".." || strings.ContainsAny(name, `/\`):
		return fmt.Errorf("figure name %q: must be a plain file name", name)
	}
	return nil
}

// figureLayout places the title, caption, panels and legend of one figure.
type figureLayout struct {
	fig           *figure
	title         string
	titleStyle    text.Style
	caption       string // wrapped to the figure's width; the note below it
	captionStyle  text.Style
	legend        plot.Legend
	panelW        vg.Length
	panelH        vg.Length
	headH         vg.Length // title and caption
	legendW       vg.Length
	width, height vg.Length
	rows, cols    int // the grid of panels, filled row by row
}

const (
	figurePad = vg.Length(6)  // points around the figure and between parts
	panelGap  = vg.Length(14) // points between panels
)

func newFigureLayout(spec FigureSpec, fig *figure) *figureLayout {
	l := &figureLayout{fig: fig, title: spec.Title}
	l.panelW, l.panelH = panelSize(spec)
	l.titleStyle = text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, 14),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
	l.captionStyle = l.titleStyle
	l.captionStyle.Font = font.From(plot.DefaultFont, 11)
	l.captionStyle.Color = color.Gray{Y: 40}

	l.legend = plot.NewLegend()
	l.legend.Top, l.legend.Left = true, true
	l.legend.TextStyle.Font.Size = vg.Points(11)
	l.legend.Padding = vg.Points(4)
	l.legend.ThumbnailWidth = vg.Points(28)
	for _, e := range fig.legend {
		l.legend.Add(e.name, e.thumbs...)
	}
	if len(fig.legend) > 0 {
		l.legendW = l.legend.Rectangle(draw.Canvas{}).Size().X + 2*figurePad
	}

	l.cols = len(fig.panels)
	if spec.Columns > 0 && spec.Columns < l.cols {
		l.cols = spec.Columns
	}
	l.rows = (len(fig.panels) + l.cols - 1) / l.cols
	n, r := vg.Length(l.cols), vg.Length(l.rows)
	l.width = n*l.panelW + (n-1)*panelGap + l.legendW + 2*figurePad
	if l.title != "" {
		// Widen a narrow figure (one panel) rather than clip a long title.
		l.width = max(l.width, l.titleStyle.Width(l.title)+2*figurePad)
	}
	// The caption and note wrap to the width.
	inner := l.width - 2*figurePad
	var lines []string
	for _, part := range []string{fig.caption, fig.note} {
		if part != "" {
			lines = append(lines, wrap(part, l.captionStyle, inner)...)
		}
	}
	l.caption = strings.Join(lines, "\n")
	if l.title != "" {
		l.headH += l.titleStyle.Height(l.title) + figurePad/2
	}
	if l.caption != "" {
		l.headH += l.captionStyle.Height(l.caption) + figurePad
	}
	l.height = r*l.panelH + (r-1)*panelGap + l.headH + 2*figurePad
	return l
}

// place lays the panels out on c (the whole image) and returns each
// panel's canvas and its tile, by row and column. The tiles split the body
// evenly; within them the data areas are aligned, a column sharing its
// left and right edges and a row its bottom and top, each edge the
// farthest in that any panel's labels push it. (plot.Align, which instead
// evens out the data areas' sizes, assumes that a data area shrinks one
// for one with its canvas; with tick labels that stick out past the axis
// ends it does not, and panels then spill out of their tiles into the
// legend.)
func (l *figureLayout) place(c draw.Canvas) (canvases, tiles [][]draw.Canvas) {
	c = draw.Crop(c, figurePad, -figurePad, figurePad, -figurePad)
	body := draw.Crop(c, 0, -l.legendW, 0, -l.headH)
	for _, p := range l.fig.panels {
		p.Legend = plot.NewLegend() // the shared legend replaces per-panel ones
	}
	t := draw.Tiles{Rows: l.rows, Cols: l.cols, PadX: panelGap, PadY: panelGap}
	tiles = make([][]draw.Canvas, l.rows)
	canvases = make([][]draw.Canvas, l.rows)
	for r := range tiles {
		tiles[r] = make([]draw.Canvas, l.cols)
		canvases[r] = make([]draw.Canvas, l.cols)
		for col := range tiles[r] {
			tiles[r][col] = t.At(body, col, r)
		}
	}
	// own is the part of a panel's tile its plot draws in: right of its y
	// label, which draw draws.
	own := func(i int) draw.Canvas {
		return draw.Crop(tiles[i/l.cols][i%l.cols], l.yLabelWidth(l.fig.panels[i], l.fig.yLabels[i]), 0, 0, 0)
	}
	for pass := 0; pass < 2; pass++ {
		// The edges the labels of each column and row push farthest in.
		left, right := make([]vg.Length, l.cols), make([]vg.Length, l.cols)
		bottom, top := make([]vg.Length, l.rows), make([]vg.Length, l.rows)
		for i, p := range l.fig.panels {
			r, col := i/l.cols, i%l.cols
			tile := tiles[r][col]
			d := p.DataCanvas(own(i))
			left[col] = max(left[col], d.Min.X-tile.Min.X)
			right[col] = max(right[col], tile.Max.X-d.Max.X)
			bottom[r] = max(bottom[r], d.Min.Y-tile.Min.Y)
			top[r] = max(top[r], tile.Max.Y-d.Max.Y)
		}
		for i, p := range l.fig.panels {
			r, col := i/l.cols, i%l.cols
			tile := tiles[r][col]
			want := vg.Rectangle{
				Min: vg.Point{X: tile.Min.X + left[col], Y: tile.Min.Y + bottom[r]},
				Max: vg.Point{X: tile.Max.X - right[col], Y: tile.Max.Y - top[r]},
			}
			if xt := l.fig.xTicks[i]; xt != nil {
				xt.Length = want.Max.X - want.Min.X // the x ticks are spaced for the drawn axis
			}
			// The canvas whose data area is want: a data area moves
			// nearly one for one with its canvas's edges, so a few
			// corrections come close. gonum/plot pads for the one label
			// that sticks out farthest, so the area can jump as the
			// canvas moves; the closest canvas tried whose data area
			// stays in the tile is kept.
			cv, best, bestCost := own(i), own(i), vg.Length(math.Inf(1))
			for range 8 {
				d := p.DataCanvas(cv)
				if in(d.Rectangle, tile.Rectangle) {
					cost := abs(d.Min.X-want.Min.X) + abs(d.Max.X-want.Max.X) + abs(d.Min.Y-want.Min.Y) + abs(d.Max.Y-want.Max.Y)
					if cost < bestCost {
						best, bestCost = cv, cost
					}
				}
				cv.Min.X += want.Min.X - d.Min.X
				cv.Max.X += want.Max.X - d.Max.X
				cv.Min.Y += want.Min.Y - d.Min.Y
				cv.Max.Y += want.Max.Y - d.Max.Y
			}
			if bestCost < vg.Length(math.Inf(1)) {
				cv = best
			}
			canvases[r][col] = cv
		}
	}
	return canvases, tiles
}

// in reports whether r lies in outer, to a tenth of a point.
func in(r, outer vg.Rectangle) bool {
	const slack = 0.1
	return r.Min.X >= outer.Min.X-slack && r.Max.X <= outer.Max.X+slack && r.Min.Y >= outer.Min.Y-slack && r.Max.Y <= outer.Max.Y+slack
}

func abs(x vg.Length) vg.Length { return max(x, -x) }

// draw draws the whole figure onto c.
func (l *figureLayout) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	canvases, tiles := l.place(c)
	c = draw.Crop(c, figurePad, -figurePad, figurePad, -figurePad)

	top := c.Max.Y
	if l.title != "" {
		c.FillText(l.titleStyle, vg.Point{X: c.Center().X, Y: top}, l.title)
		top -= l.titleStyle.Height(l.title) + figurePad/2
	}
	if l.caption != "" {
		c.FillText(l.captionStyle, vg.Point{X: c.Center().X, Y: top}, l.caption)
	}
	for i, p := range l.fig.panels {
		cv := canvases[i/l.cols][i%l.cols]
		p.Draw(cv)
		if label := l.fig.yLabels[i]; label != "" {
			// As gonum/plot draws a y label, but centred on the data area.
			st := p.Y.Label.TextStyle
			st.Rotation += math.Pi / 2
			st.XAlign, st.YAlign = draw.XCenter, draw.YBottom
			x := tiles[i/l.cols][i%l.cols].Min.X + p.Y.Label.TextStyle.Height(label)
			dc := p.DataCanvas(cv)
			cv.FillText(st, vg.Point{X: x - st.FontExtents().Descent, Y: dc.Center().Y}, label)
		}
	}

	if l.legendW > 0 {
		// Top of the legend level with the top of the panels' data areas.
		top := l.fig.panels[0].DataCanvas(canvases[0][0]).Max.Y
		lc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: c.Max.X - l.legendW + figurePad, Y: c.Min.Y},
			Max: vg.Point{X: c.Max.X, Y: top},
		}}
		l.legend.Draw(lc)
	}
}

// yLabelWidth is the room a y label takes left of its panel: the label's
// lines, its descent and the axis's label padding.
func (l *figureLayout) yLabelWidth(p *plot.Plot, label string) vg.Length {
	if label == "" {
		return 0
	}
	st := p.Y.Label.TextStyle
	return st.Height(label) + st.FontExtents().Descent + p.Y.Label.Padding
}

// wrap breaks s at spaces into lines no wider than w in style st (a word
// longer than w keeps a line of its own).
func wrap(s string, st text.Style, w vg.Length) []string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		words := strings.Fields(para)
		line := ""
		for _, word := range words {
			switch try := line + " " + word; {
			case line == "":
				line = word
			case st.Width(try) <= w:
				line = try
			default:
				lines = append(lines, line)
				line = word
			}
		}
		lines = append(lines, line)
	}
	return lines
}

// fitLabels makes the axis labels and the title of a panel fit the panel:
// a label longer than its side is wrapped onto two lines, then set
// smaller (down to 8 points) until it fits.
func fitLabels(p *plot.Plot, panelW, panelH vg.Length) {
	fit(&p.Y.Label.Text, &p.Y.Label.TextStyle, 0.75*panelH)
	fit(&p.X.Label.Text, &p.X.Label.TextStyle, 0.9*panelW)
	fit(&p.Title.Text, &p.Title.TextStyle, 0.95*panelW)
}

func fit(s *string, st *text.Style, w vg.Length) {
	if *s == "" || st.Width(*s) <= w {
		return
	}
	orig := strings.ReplaceAll(*s, "\n", " ")
	if strings.Contains(*s, "\n") {
		orig = *s // keep given line breaks (a panel title's synthetic mark)
	}
	for size := st.Font.Size; size >= vg.Points(8); size -= vg.Points(1) {
		st.Font.Size = size
		lines := wrap(orig, *st, w)
		if len(lines) <= 2+strings.Count(orig, "\n") && st.Width(strings.Join(lines, "\n")) <= w {
			*s = strings.Join(lines, "\n")
			return
		}
	}
	*s = strings.Join(wrap(orig, *st, w), "\n")
}

// writeAtomic writes w to dir/name through a temporary file in dir and a
// rename.
func writeAtomic(dir, name string, w io.WriterTo) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	// CreateTemp makes the file 0600; figures are ordinary readable outputs.
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

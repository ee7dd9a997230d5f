package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dprepro/dprepro/results"
)

// PNGDPI is the resolution of the PNG files written by Render.
const PNGDPI = 150

// Render draws spec from rows (filtered to spec.Metric) and writes
// dir/<Name>.png and dir/<Name>.svg, creating dir if needed.
//
// The image holds spec.Title on top, the panels of [Build] tiled left to
// right with their data areas aligned, and one legend for the whole figure
// in a strip to the right of the panels. Each panel is
// spec.Width × spec.Height inches.
//
// Each file is written atomically: to a temporary file in dir that is then
// renamed over the target, so readers never see a partial figure. The two
// files are not replaced together. On error no temporary file is left.
func Render(dir string, spec FigureSpec, rows []results.SummaryRow) error {
	if err := checkName(spec.Name); err != nil {
		return fmt.Errorf("plots: render: %w", err)
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

// figureLayout places the title, panels and legend of one figure.
type figureLayout struct {
	fig           *figure
	title         string
	titleStyle    text.Style
	legend        plot.Legend
	panelW        vg.Length
	panelH        vg.Length
	titleH        vg.Length
	legendW       vg.Length
	width, height vg.Length
	rows, cols    int // the grid of panels, filled row by row
}

const (
	figurePad = vg.Length(6)  // points around the figure and between parts
	panelGap  = vg.Length(14) // points between panels
)

func newFigureLayout(spec FigureSpec, fig *figure) *figureLayout {
	w, h := spec.Width, spec.Height
	if w == 0 {
		w = DefaultWidth
	}
	if h == 0 {
		h = DefaultHeight
	}
	l := &figureLayout{
		fig:    fig,
		title:  spec.Title,
		panelW: vg.Length(w) * vg.Inch,
		panelH: vg.Length(h) * vg.Inch,
	}
	l.titleStyle = text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, 14),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
	if l.title != "" {
		l.titleH = l.titleStyle.Rectangle(l.title).Size().Y + figurePad
	}

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
		l.width = max(l.width, l.titleStyle.Rectangle(l.title).Size().X+2*figurePad)
	}
	l.height = r*l.panelH + (r-1)*panelGap + l.titleH + 2*figurePad
	return l
}

// draw draws the whole figure onto c.
func (l *figureLayout) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, figurePad, -figurePad, figurePad, -figurePad)

	if l.title != "" {
		c.FillText(l.titleStyle, vg.Point{X: c.Center().X, Y: c.Max.Y}, l.title)
	}
	body := draw.Crop(c, 0, -l.legendW, 0, -l.titleH)

	for _, p := range l.fig.panels {
		p.Legend = plot.NewLegend() // the shared legend replaces per-panel ones
	}
	grid := make([][]*plot.Plot, l.rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, l.cols)
	}
	for i, p := range l.fig.panels {
		grid[i/l.cols][i%l.cols] = p
	}
	tiles := draw.Tiles{Rows: l.rows, Cols: l.cols, PadX: panelGap, PadY: panelGap}
	canvases := plot.Align(grid, tiles, body)
	for i, p := range l.fig.panels {
		p.Draw(canvases[i/l.cols][i%l.cols])
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

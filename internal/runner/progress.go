package runner

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress reports units done on a writer (stderr): a redrawn bar when the
// writer is a terminal, otherwise a heartbeat line every Interval with units
// done, rate and ETA (CI logs).
type Progress struct {
	w        io.Writer
	label    string
	total    int
	start    time.Time
	tty      bool
	interval time.Duration

	mu       sync.Mutex
	done     int
	resumed  int
	last     time.Time
	finished bool
}

// NewProgress returns a progress reporter for total units of which resumed
// were already finished. interval zero means 5 s.
func NewProgress(w io.Writer, label string, total, resumed int, interval time.Duration) *Progress {
	if interval <= 0 {
		interval = 5 * time.Second
	}
	p := &Progress{w: w, label: label, total: total, done: resumed, resumed: resumed,
		start: time.Now(), interval: interval, tty: isTerminal(w)}
	p.last = p.start
	if !p.tty {
		fmt.Fprintf(w, "dprepro: %s: %d units (%d already done)\n", label, total, resumed)
	} else {
		p.draw(time.Now())
	}
	return p
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Add records n more finished units.
func (p *Progress) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	now := time.Now()
	if p.tty {
		if now.Sub(p.last) >= 100*time.Millisecond || p.done == p.total {
			p.draw(now)
			p.last = now
		}
		return
	}
	if now.Sub(p.last) >= p.interval {
		p.heartbeat(now)
		p.last = now
	}
}

func (p *Progress) rateETA(now time.Time) (rate float64, eta time.Duration) {
	el := now.Sub(p.start).Seconds()
	computed := p.done - p.resumed
	if el > 0 && computed > 0 {
		rate = float64(computed) / el
		eta = time.Duration(float64(p.total-p.done) / rate * float64(time.Second))
	}
	return rate, eta
}

func (p *Progress) heartbeat(now time.Time) {
	rate, eta := p.rateETA(now)
	pct := 100 * float64(p.done) / float64(max(p.total, 1))
	fmt.Fprintf(p.w, "dprepro: %s: %d/%d units (%.0f%%), %.2f units/s, ETA %s\n",
		p.label, p.done, p.total, pct, rate, eta.Round(time.Second))
}

func (p *Progress) draw(now time.Time) {
	const width = 30
	frac := float64(p.done) / float64(max(p.total, 1))
	n := int(frac * width)
	rate, eta := p.rateETA(now)
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d %.1f/s ETA %s ", p.label,
		strings.Repeat("#", n), strings.Repeat("-", width-n), p.done, p.total, rate, eta.Round(time.Second))
}

// Finish prints the final line.
func (p *Progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	p.finished = true
	now := time.Now()
	if p.tty {
		p.draw(now)
		fmt.Fprintln(p.w)
		return
	}
	fmt.Fprintf(p.w, "dprepro: %s: %d/%d units in %s\n", p.label, p.done, p.total, now.Sub(p.start).Round(time.Millisecond))
}

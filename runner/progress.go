package runner

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// ttyInterval is the redraw period of the bar on a terminal.
const ttyInterval = 200 * time.Millisecond

// Progress reports units done on a writer (stderr), redrawn on a timer so
// that a slow unit does not freeze the display: on a terminal a bar redrawn
// every 200 ms (and when a unit finishes), otherwise a heartbeat line every
// Interval (CI logs). Both show the elapsed time, units done of the total,
// the percentage, the rate of units computed in this run and the ETA, which
// reads "unknown" until a unit of this run has finished.
//
// A Progress is safe for concurrent use. Finish stops its timer; nothing is
// written after Finish returns.
type Progress struct {
	w        io.Writer
	label    string
	total    int
	start    time.Time
	tty      bool
	interval time.Duration
	now      func() time.Time

	stop chan struct{} // closed by Finish
	done chan struct{} // closed when the timer goroutine has returned

	mu       sync.Mutex
	units    int // units done, resumed included
	resumed  int
	last     time.Time // last draw on a terminal
	finished bool
}

// NewProgress returns a progress reporter for total units of which resumed
// were already finished, and starts its timer. interval is the heartbeat
// period when w is not a terminal; zero means 5 s. Call Finish to stop it.
func NewProgress(w io.Writer, label string, total, resumed int, interval time.Duration) *Progress {
	tty := isTerminal(w)
	period := interval
	if period <= 0 {
		period = 5 * time.Second
	}
	if tty {
		period = ttyInterval
	}
	t := time.NewTicker(period)
	return newProgress(w, label, total, resumed, period, tty, time.Now, t.C, t.Stop)
}

// newProgress is NewProgress with the clock, the terminal test and the
// timer given (tests drive tick by hand). stopTick, if not nil, is called
// when the timer goroutine ends.
func newProgress(w io.Writer, label string, total, resumed int, interval time.Duration, tty bool,
	now func() time.Time, tick <-chan time.Time, stopTick func()) *Progress {
	p := &Progress{w: w, label: label, total: total, units: resumed, resumed: resumed,
		tty: tty, interval: interval, now: now, stop: make(chan struct{}), done: make(chan struct{})}
	p.start = now()
	p.last = p.start
	if tty {
		p.draw(p.start)
	} else {
		fmt.Fprintf(w, "dprepro: %s: %d units (%d already done)\n", label, total, resumed)
	}
	go p.loop(tick, stopTick)
	return p
}

// loop redraws on every tick until Finish.
func (p *Progress) loop(tick <-chan time.Time, stopTick func()) {
	defer close(p.done)
	if stopTick != nil {
		defer stopTick()
	}
	for {
		select {
		case <-p.stop:
			return
		case <-tick:
			p.mu.Lock()
			if !p.finished {
				now := p.now()
				if p.tty {
					p.draw(now)
					p.last = now
				} else {
					p.heartbeat(now)
				}
			}
			p.mu.Unlock()
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Add records n more finished units. On a terminal the bar is redrawn at
// once (at most every 100 ms); heartbeat lines come from the timer only.
func (p *Progress) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.units += n
	if !p.tty || p.finished {
		return
	}
	now := p.now()
	if now.Sub(p.last) >= 100*time.Millisecond || p.units == p.total {
		p.draw(now)
		p.last = now
	}
}

// status returns the elapsed time, the percentage, the rate of units
// computed in this run (units/s) and the ETA ("unknown" before the first
// computed unit, since no rate is known yet).
func (p *Progress) status(now time.Time) (elapsed time.Duration, pct, rate float64, eta string) {
	elapsed = now.Sub(p.start)
	pct = 100 * float64(p.units) / float64(max(p.total, 1))
	computed := p.units - p.resumed
	eta = "unknown"
	if s := elapsed.Seconds(); s > 0 && computed > 0 {
		rate = float64(computed) / s
		left := time.Duration(float64(p.total-p.units) / rate * float64(time.Second))
		eta = left.Round(time.Second).String()
	}
	return elapsed, pct, rate, eta
}

func (p *Progress) heartbeat(now time.Time) {
	el, pct, rate, eta := p.status(now)
	fmt.Fprintf(p.w, "dprepro: %s: %d/%d units (%.0f%%), elapsed %s, %.2f units/s, ETA %s\n",
		p.label, p.units, p.total, pct, el.Round(time.Second), rate, eta)
}

func (p *Progress) draw(now time.Time) {
	const width = 30
	el, pct, rate, eta := p.status(now)
	n := min(width, max(0, int(pct/100*width)))
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d %3.0f%% %s %.1f/s ETA %s ", p.label,
		strings.Repeat("#", n), strings.Repeat("-", width-n), p.units, p.total, pct, el.Round(time.Second), rate, eta)
}

// Finish stops the timer and prints the final line. Later calls do
// nothing.
func (p *Progress) Finish() {
	p.mu.Lock()
	if p.finished {
		p.mu.Unlock()
		return
	}
	p.finished = true
	close(p.stop)
	now := p.now()
	if p.tty {
		p.draw(now)
		fmt.Fprintln(p.w)
	} else {
		fmt.Fprintf(p.w, "dprepro: %s: %d/%d units in %s\n", p.label, p.units, p.total, now.Sub(p.start).Round(time.Millisecond))
	}
	p.mu.Unlock()
	<-p.done // the goroutine sees finished (or stop) and writes nothing more
}

package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// profiler writes the pprof profiles of a command that runs units
// (--cpuprofile, --memprofile; issue 27): the CPU profile covers the
// command from its flags' check to its end, the heap profile is written
// at the end after a garbage collection (runtime.GC), so it shows the
// memory still in use and, as pprof's alloc_space/alloc_objects sample
// types, everything the run allocated. Read them with `go tool pprof FILE`
// (or -top, -http=:8080).
type profiler struct {
	cpuPath, memPath string
	cpu, mem         *os.File
}

// start creates both files (so that a bad path is refused, exit 2, before
// any work) and starts the CPU profile.
func (p *profiler) start() error {
	create := func(flag, path string) (*os.File, error) {
		if path == "" {
			return nil, nil
		}
		f, err := os.Create(path)
		if err != nil {
			return nil, usagef("--%s: cannot write the profile: %v", flag, err)
		}
		return f, nil
	}
	var err error
	if p.cpu, err = create("cpuprofile", p.cpuPath); err != nil {
		return err
	}
	if p.mem, err = create("memprofile", p.memPath); err != nil {
		p.cpu.Close()
		p.cpu = nil
		return err
	}
	if p.cpu != nil {
		if err := pprof.StartCPUProfile(p.cpu); err != nil {
			p.cpu.Close()
			p.cpu = nil
			if p.mem != nil {
				p.mem.Close()
				p.mem = nil
			}
			return usagef("--cpuprofile %s: %v", p.cpuPath, err)
		}
	}
	return nil
}

// stop ends the CPU profile and writes the heap profile; a no-op when
// none was started. It says on stderr where they are.
func (p *profiler) stop(stderr io.Writer) error {
	var errs []error
	if p.cpu != nil {
		pprof.StopCPUProfile()
		if err := p.cpu.Close(); err != nil {
			errs = append(errs, fmt.Errorf("--cpuprofile %s: %w", p.cpuPath, err))
		} else {
			fmt.Fprintf(stderr, "dprepro: CPU profile written to %s (go tool pprof %s)\n", p.cpuPath, p.cpuPath)
		}
		p.cpu = nil
	}
	if p.mem != nil {
		runtime.GC() // the heap profile is of the last completed GC
		err := pprof.WriteHeapProfile(p.mem)
		if cerr := p.mem.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--memprofile %s: %w", p.memPath, err))
		} else {
			fmt.Fprintf(stderr, "dprepro: heap profile written to %s (go tool pprof %s)\n", p.memPath, p.memPath)
		}
		p.mem = nil
	}
	return errors.Join(errs...)
}

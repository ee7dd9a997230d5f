package cli

import (
	"context"
	"flag"
	"io"
	"strings"
	"testing"
)

// TestHelp: `dprepro -h`, `dprepro help`, `dprepro help CMD` and
// `dprepro CMD -h` print on stdout with exit 0; a command's help lists
// exactly the flags it accepts.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"data", "-h"}, {"help", "data"}} {
		code, stdout, stderr := dprepro(t, args...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "usage") && !strings.Contains(stdout, "Usage") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	for _, c := range commands {
		name := strings.Fields(c.name)
		for _, args := range [][]string{append([]string{"help"}, c.name), append(append([]string{}, name...), "-h")} {
			if c.run == nil && args[0] != "help" {
				continue
			}
			code, stdout, stderr := dprepro(t, args...)
			if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "usage: dprepro "+c.synopsis+"\n") {
				t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
				continue
			}
			if c.run == nil {
				continue
			}
			// The flags listed are exactly those the command parses.
			var hr helpRequest
			err := c.run(context.Background(), []string{"-h"}, io.Discard, io.Discard)
			if !asHelp(err, &hr) {
				t.Fatalf("%s -h: %v", c.name, err)
			}
			hr.fs.VisitAll(func(f *flag.Flag) {
				if !strings.Contains(stdout, "  -"+f.Name+" ") && !strings.Contains(stdout, "  -"+f.Name+"\n") {
					t.Errorf("%q does not list -%s", args, f.Name)
				}
			})
		}
	}
	// Flags a command refuses are not in its help.
	for _, c := range []struct{ cmd, flag string }{{"merge", "-shard "}, {"merge", "-shard-count"}, {"audit", "-shard"}, {"reproduce", "-shard"}, {"check", "-workers"}} {
		_, stdout, _ := dprepro(t, "help", c.cmd)
		if strings.Contains(stdout, c.flag) {
			t.Errorf("help %s lists %s, which it does not accept", c.cmd, c.flag)
		}
	}
	if code, _, stderr := dprepro(t, "help", "nosuch"); code != 2 || !strings.Contains(stderr, `unknown command "nosuch"`) {
		t.Errorf("help nosuch: exit %d, %q", code, stderr)
	}
}

func asHelp(err error, hr *helpRequest) bool {
	h, ok := err.(helpRequest)
	if ok {
		*hr = h
	}
	return ok
}

// TestUsageExamples runs every example of the usage text, as a user would
// type it, from an empty directory (the built-in specs and references
// make them work anywhere): each must exit 0.
func TestUsageExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the examples")
	}
	_, after, ok := strings.Cut(usage, "Examples:\n")
	if !ok {
		t.Fatal("the usage text has no Examples section")
	}
	t.Chdir(t.TempDir())
	n := 0
	for _, line := range strings.Split(after, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "dprepro ") {
			continue
		}
		n++
		args := strings.Fields(line)[1:]
		code, stdout, stderr := dprepro(t, args...)
		if code != 0 {
			t.Errorf("%s: exit %d\n%s\n%s", line, code, stdout, stderr)
		}
	}
	if n < 5 {
		t.Errorf("only %d examples found", n)
	}
}

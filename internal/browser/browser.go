// Package browser finds, for tests, a headless Chromium to load the HTML
// report in (Debian's chromium package; scripts/debian-deps.sh installs
// it), and drives it with its own command-line switches: --dump-dom to
// read the page after it loaded, --screenshot to take a picture of it.
package browser

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/internal/testdeps"
	"time"
)

// candidates are the browsers tried in order: Debian's and Ubuntu's
// Chromium, then Google Chrome.
var candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Find returns the path of a Chromium, or "" and why none was found.
func Find() (string, string) {
	var why []string
	for _, c := range candidates {
		p, err := exec.LookPath(c)
		if err != nil {
			why = append(why, c+": not found")
			continue
		}
		return p, ""
	}
	return "", strings.Join(why, "; ")
}

// Require returns a Chromium's path. Without one the test is skipped
// with the reason, except under CI (CI=true), where it fails: CI installs
// chromium (.ci/run runs scripts/debian-deps.sh) and must run these tests.
func Require(t testing.TB) string {
	t.Helper()
	p, why := Find()
	if p == "" {
		msg := "no headless Chromium (" + why + "); install Debian's chromium (apt-get install chromium, or scripts/debian-deps.sh)"
		testdeps.Missing(t, msg)
	}
	return p
}

// args returns the switches every call passes: headless, no sandbox (the
// tests may run as root, where Chromium refuses its sandbox), no GPU, no
// network beyond the page's own files, a fixed window and a profile in a
// temporary folder.
func args(profile string, width, height int, extra ...string) []string {
	return append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--hide-scrollbars", "--user-data-dir=" + profile,
		fmt.Sprintf("--window-size=%d,%d", width, height),
	}, extra...)
}

// run runs Chromium with a minute's limit and returns its stdout.
func run(t testing.TB, chromium string, a []string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, chromium, a...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", chromium, strings.Join(a, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// DumpDOM loads url in a window width×height pixels and returns the DOM
// once the page has loaded (its images too), after its load handlers ran.
func DumpDOM(t testing.TB, chromium, url string, width, height int) []byte {
	t.Helper()
	return run(t, chromium, args(t.TempDir(), width, height, "--dump-dom", url))
}

// Screenshot loads url in a window width×height pixels and saves what
// the window shows as a PNG at file.
func Screenshot(t testing.TB, chromium, url, file string, width, height int) {
	t.Helper()
	run(t, chromium, args(t.TempDir(), width, height, "--screenshot="+file, url))
	if fi, err := os.Stat(file); err != nil || fi.Size() == 0 {
		t.Fatalf("screenshot %s: not written (%v)", file, err)
	}
}

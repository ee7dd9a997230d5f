package cli

import (
	"encoding/json"
	"flag"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/internal/browser"
	"github.com/dprepro/dprepro/results"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "TestReportInBrowser: report every built-in spec (reproduce --profile quick, about a minute) and save the screenshot as docs/report-screenshot.png")

// checkScript runs in the page once it has loaded: it records every image
// (loaded or not), opens every <details>, then records every link, and
// every element that reaches past the window's width or whose content is
// cut off (an overflow other than visible with content wider than the
// box), into the body's data-check attribute, which --dump-dom returns.
const checkScript = `<script>
window.addEventListener("load", () => {
  const r = {images: [], links: [], missingAnchors: [], overflow: [], resources: []};
  for (const img of document.images) r.images.push({src: img.getAttribute("src"), ok: img.complete && img.naturalWidth > 0});
  document.querySelectorAll("details").forEach(d => d.open = true);
  for (const a of document.querySelectorAll("a[href]")) {
    const h = a.getAttribute("href");
    r.links.push(h);
    if (h.startsWith("#") && !document.getElementById(decodeURIComponent(h.slice(1)))) r.missingAnchors.push(h);
  }
  for (const el of document.querySelectorAll("[src], link[href], script[src]")) r.resources.push(el.getAttribute("src") || el.getAttribute("href"));
  const W = document.documentElement.clientWidth;
  r.viewport = W;
  r.pageWidth = document.documentElement.scrollWidth;
  const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().replace(/\s+/g, ".") : "") + ' "' + (el.textContent || "").trim().slice(0, 40) + '"';
  for (const el of document.body.querySelectorAll("*")) {
    const b = el.getBoundingClientRect();
    if (b.width === 0 && b.height === 0) continue;
    if (b.right > W + 1 || b.left < -1) r.overflow.push(name(el) + " spans x = " + Math.round(b.left) + ".." + Math.round(b.right) + " of " + W);
    const ox = getComputedStyle(el).overflowX;
    if (ox !== "visible" && el.scrollWidth > el.clientWidth + 1) r.overflow.push(name(el) + " cut off: content " + el.scrollWidth + " px wide in " + el.clientWidth);
  }
  document.body.setAttribute("data-check", JSON.stringify(r));
});
</script>`

// pageCheck is what checkScript records.
type pageCheck struct {
	Images []struct {
		Src string `json:"src"`
		OK  bool   `json:"ok"`
	} `json:"images"`
	Links          []string `json:"links"`
	MissingAnchors []string `json:"missingAnchors"`
	Overflow       []string `json:"overflow"`
	Resources      []string `json:"resources"`
	Viewport       int      `json:"viewport"`
	PageWidth      int      `json:"pageWidth"`
}

var dataCheck = regexp.MustCompile(`data-check="([^"]*)"`)

// TestReportInBrowser runs three real specs at the quick profile (on the
// real data when $DPREPRO_DATA names it, else on labelled stand-ins),
// writes their report, and loads OUT/report/index.html in headless
// Chromium at 1280 px: every image loads, every link resolves (a file
// beside the page, or an element of it), nothing reaches past the window
// or is cut off with every <details> open, and nothing is fetched from
// the network. It takes a screenshot of the top of the page (with
// -update-screenshot: of every built-in spec's report, into docs/).
func TestReportInBrowser(t *testing.T) {
	chromium := browser.Require(t)
	out := t.TempDir()
	data := os.Getenv("DPREPRO_DATA")
	if *updateScreenshot {
		// The real binary, stamped with its VCS revision (-buildvcs=true),
		// so the report's header names the build the screenshot shows
		// rather than the test binary's "(devel)".
		cmd := exec.Command(buildBinary(t), "reproduce", "--profile", "quick", "--out", out, "--workers", "2", "--data-dir", data, "--heartbeat", "1m")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("reproduce: %v: %s", err, b)
		}
	} else {
		if code, _, stderr := dprepro(t, "run", "cv13-magic-maxabs", "wkl-table3-adult", "wkl-table4-bank", "--profile", "quick", "--out", out, "--workers", "2", "--data-dir", data); code != 0 {
			t.Fatalf("run: exit %d: %s", code, stderr)
		}
		// A run that failed, with a long unbroken line in its error: the
		// list at the top must fit the window as well.
		long := "/" + strings.Repeat("very-long-folder-name/", 30) + "workers.log"
		if err := results.WriteAttempt(filepath.Join(out, "failed", "quick-seed1"), &results.Attempt{State: results.AttemptFailed,
			Error: "failed: 1 of 4 units failed (the workers' stderr is in " + long + "):\nunit a: boom", Spec: results.SpecInfo{ID: "failed", Title: "A failed run"},
			Profile: "quick", Seed: 1, Claims: []results.AttemptClaim{{ID: "c", Source: "Table 1", Statement: "a claim " + long}}}); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := dprepro(t, "report", out)
		if code != 0 || !strings.Contains(stdout, "index.html") {
			t.Fatalf("report: exit %d: %s%s", code, stdout, stderr)
		}
	}
	dir := filepath.Join(out, "report")
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.md")); err != nil {
		t.Error(err)
	}
	// The check runs in a copy of the page beside it (same folder: the
	// same relative links).
	probe := filepath.Join(dir, "check.html")
	if err := os.WriteFile(probe, []byte(strings.Replace(string(page), "</body>", checkScript+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := browser.DumpDOM(t, chromium, fileURL(probe), 1280, 900)
	os.Remove(probe)
	m := dataCheck.FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the page's check did not run (no data-check in the DOM Chromium returned, %d bytes)", len(dom))
	}
	var c pageCheck
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Images) == 0 {
		t.Error("the report shows no figure")
	}
	for _, img := range c.Images {
		if !img.OK {
			t.Errorf("image %s did not load", img.Src)
		}
	}
	for _, a := range c.MissingAnchors {
		t.Errorf("link %s: no element of that id in the page", a)
	}
	for _, l := range c.Links {
		if strings.HasPrefix(l, "#") {
			continue
		}
		u, err := url.Parse(l)
		if err != nil || u.Scheme != "" || u.Host != "" {
			t.Errorf("link %q is not a file beside the report", l)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(u.Path))); err != nil {
			t.Errorf("link %q: %v", l, err)
		}
	}
	for _, r := range c.Resources {
		if u, err := url.Parse(r); err != nil || u.Scheme != "" || u.Host != "" {
			t.Errorf("the page loads %q: a report must load nothing from the network", r)
		}
	}
	if c.PageWidth > c.Viewport {
		t.Errorf("the page is %d px wide in a %d px window", c.PageWidth, c.Viewport)
	}
	for i, o := range c.Overflow {
		if i == 10 {
			t.Errorf("… and %d more elements past the window or cut off", len(c.Overflow)-i)
			break
		}
		t.Errorf("at 1280 px: %s", o)
	}
	if !*updateScreenshot && !strings.Contains(string(page), `<section class="failed" id="unfinished">`) {
		t.Error("index.html does not name the failed run at its top")
	}
	if data != "" {
		// cv13-magic-maxabs's quick run on the real data has claims that
		// are not held, and their analyses are written (docs/analysis.md).
		for _, want := range []string{`class="v notheld"`, `href="#analysis-cv13-magic-maxabs-s5-auc-stability-gt-alphasplit"`, `id="analysis-cv13-magic-maxabs-s5-auc-stability-gt-alphasplit"`} {
			if !strings.Contains(string(page), want) {
				t.Errorf("index.html lacks %s", want)
			}
		}
	}
	shot := filepath.Join(t.TempDir(), "report-screenshot.png")
	if *updateScreenshot {
		shot = filepath.Join("..", "docs", "report-screenshot.png")
	}
	browser.Screenshot(t, chromium, fileURL(filepath.Join(dir, "index.html")), shot, 1280, 1900)
	t.Logf("screenshot: %s", shot)
}

func fileURL(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// TestReport_Usage: report refuses a missing folder, a folder without
// runs and a wrong argument count with exit 2; reproduce writes the
// report at its end unless --no-report.
func TestReport_Usage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "name one output folder"},
		{[]string{"report", "a", "b"}, "name one output folder"},
		{[]string{"report", filepath.Join(t.TempDir(), "nosuch")}, "is not a folder"},
		{[]string{"report", t.TempDir()}, "no finished run"},
		{[]string{"report", "--bogus", "x"}, "flag provided but not defined"},
	} {
		if code, _, stderr := dprepro(t, c.args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
	specs := t.TempDir()
	if err := os.WriteFile(filepath.Join(specs, "tiny.toml"), []byte(tinySpec), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, noReport := range []bool{false, true} {
		out := t.TempDir()
		args := []string{"reproduce", "--specs", specs, "--out", out, "--data-dir", os.Getenv("DPREPRO_DATA")}
		if noReport {
			args = append(args, "--no-report")
		}
		code, stdout, stderr := dprepro(t, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		_, err := os.Stat(filepath.Join(out, "report", "index.html"))
		if noReport != os.IsNotExist(err) || noReport == strings.Contains(stdout, "report: wrote") {
			t.Errorf("%q: report written: %v (stdout %q)", args, err, stdout)
		}
	}
}

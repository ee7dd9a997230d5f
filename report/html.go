package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dprepro/dprepro/claims"
	"github.com/dprepro/dprepro/results"
)

// WriteHTML writes the report as one HTML page: inline CSS, no script, no
// network; its figures are the files Figure.Src names relative to it.
func (r *Report) WriteHTML(w io.Writer) error {
	return pageTemplate.Execute(w, r)
}

// num formats a value for a table: four significant digits, "—" for NaN.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "−∞"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// xval formats a swept value; NaN is a trend over all of them.
func xval(x float64) string {
	if math.IsNaN(x) {
		return "trend"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// xlist formats swept values: "0.3, 0.6, 1".
func xlist(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = xval(x)
	}
	return strings.Join(s, ", ")
}

// vclass is the CSS class of a verdict.
func vclass(v string) string {
	switch v {
	case claims.Held:
		return "held"
	case claims.NotHeld:
		return "notheld"
	case claims.Inconclusive:
		return "inconclusive"
	case claims.Synthetic:
		return "synthetic"
	case NotRun:
		return "notrun"
	}
	return "missing"
}

// cellTitle describes a verdict at one x for a tooltip.
func cellTitle(c *Cell, rule string) string {
	what := "ours"
	switch rule {
	case "greater", "less":
		what = "difference ours − theirs"
	case "increasing", "decreasing":
		what = "last − first mean"
	}
	s := fmt.Sprintf("x = %s: %s; %s %s [%s, %s]", xval(c.X), c.Verdict, what, num(c.Ours), num(c.Low), num(c.High))
	if !math.IsNaN(c.Paper) {
		s += "; paper " + num(c.Paper)
	}
	return s
}

// guarantee formats a composed privacy guarantee.
func guarantee(notion string, eps, delta results.Float, rho *results.Float, private bool) string {
	if !private || notion == "none" {
		return "not private"
	}
	e := float64(eps)
	switch {
	case rho != nil && notion == "approx-dp":
		// A ρ-zCDP claim booked as the (ε, δ) it implies: both.
		return fmt.Sprintf("(ε = %s, δ = %s) from ρ = %s (zCDP)", num(e), num(float64(delta)), num(float64(*rho)))
	case rho != nil:
		return "ρ = " + num(float64(*rho)) + " (zCDP)"
	case float64(delta) > 0:
		return fmt.Sprintf("(ε = %s, δ = %s)", num(e), num(float64(delta)))
	case notion == "ex-post":
		return "ex-post ε = " + num(e)
	}
	return "ε = " + num(e)
}

func totalOf(g results.PrivacyGuarantee) string {
	return guarantee(g.Notion, g.Epsilon, g.Delta, g.Rho, g.Private)
}

func chargeOf(c results.LedgerCharge) string {
	return guarantee(c.Notion, c.Epsilon, c.Delta, c.Rho, c.Private)
}

// chargeNotes says, after a charge, whose word its guarantee is and what
// the method claimed where that differs from what is booked; "" when
// neither applies.
func chargeNotes(c results.LedgerCharge) string {
	var s []string
	switch {
	case c.DeclaredBy != "" && strings.Contains(c.Release, "declared by the method "+c.DeclaredBy):
		s = append(s, "not checked by the harness") // the release already says whose word it is
	case c.DeclaredBy != "":
		s = append(s, "declared by the method "+c.DeclaredBy+", not checked by the harness")
	}
	if c.Claimed != "" {
		s = append(s, "claimed: "+c.Claimed)
	}
	return strings.Join(s, "; ")
}

// auditRow is one line of a run's table of privacy audits
// (results.Manifest.Audits): ε_LB beside the ε the method claimed.
type auditRow struct {
	Method, Setting, Claimed, Lower, Releases, Confidence, Verdict string
	Violated                                                       bool
}

// auditRows lays out a run's audits, one line each.
func auditRows(as []results.MethodAudit) []auditRow {
	out := make([]auditRow, len(as))
	for i, a := range as {
		claimed := "ε = " + num(float64(a.ClaimedEpsilon))
		if a.ClaimedDelta > 0 {
			claimed = fmt.Sprintf("(ε = %s, δ = %s)", num(float64(a.ClaimedEpsilon)), num(float64(a.ClaimedDelta)))
		}
		out[i] = auditRow{Method: a.Method, Setting: a.Setting, Claimed: claimed, Lower: num(float64(a.EpsilonLower)),
			Releases: strconv.Itoa(a.Releases), Confidence: num(a.Confidence), Verdict: a.Verdict, Violated: a.Violated}
	}
	return out
}

// standIn reports whether a dataset replaced a real file with a
// synthetic stand-in; simulated data by design (a known density) is not
// one.
func standIn(d results.DatasetInfo) string {
	if d.Source != "real" {
		return d.Params["stand_in_for"]
	}
	return ""
}

// short cuts a digest to its first 16 characters.
func short(s string) string {
	if len(s) > 16 {
		return s[:16] + "…"
	}
	return s
}

// cellRule is a verdict at one x with its claim's rule, for a template.
type cellRule struct {
	Cell *Cell
	Rule string
}

// countOf returns c's count of verdict v.
func countOf(c Counts, v string) int {
	switch v {
	case claims.Held:
		return c.Held
	case claims.NotHeld:
		return c.NotHeld
	case claims.Inconclusive:
		return c.Inconclusive
	case claims.Synthetic:
		return c.Synthetic
	case NotRun:
		return c.NotRun
	}
	return c.Missing
}

// profilesOf lists the profiles of r's runs, finished or not: "quick,
// paper".
func profilesOf(r *Report) string {
	seen := map[string]bool{}
	var ps []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			ps = append(ps, p)
		}
	}
	for _, p := range r.Papers {
		for _, run := range p.Runs {
			add(run.Manifest.Profile)
		}
		for _, u := range p.Unfinished {
			add(u.Profile)
		}
	}
	return strings.Join(ps, ", ")
}

// runsOf counts r's finished runs that are counted (not superseded by an
// attempt that did not finish).
func runsOf(r *Report) int {
	n := 0
	for _, p := range r.Papers {
		for _, run := range p.Runs {
			if run.Superseded == nil {
				n++
			}
		}
	}
	return n
}

// nclaims is "1 claim" or "n claims".
func nclaims(n int) string {
	return fmt.Sprintf("%d %s", n, plural(n, "claim", "claims"))
}

// runsLine says how many runs the report holds: "3 runs", or "3 finished
// runs and 2 that did not finish".
func runsLine(r *Report) string {
	n := runsOf(r)
	if len(r.Unfinished) == 0 {
		return fmt.Sprintf("%d %s", n, plural(n, "run", "runs"))
	}
	s := fmt.Sprintf("%d finished %s", n, plural(n, "run", "runs"))
	earlier := 0
	for _, u := range r.Unfinished {
		if u.Earlier != nil {
			earlier++
		}
	}
	if earlier > 0 {
		s += fmt.Sprintf(" (and %d earlier %s, shown but not counted)", earlier, plural(earlier, "one", "ones"))
	}
	return s + fmt.Sprintf(" and %d that did not finish", len(r.Unfinished))
}

// buildsOf lists the builds that made r's runs.
func buildsOf(r *Report) []string {
	seen := map[string]bool{}
	var bs []string
	add := func(b string) {
		if b != "" && !seen[b] {
			seen[b] = true
			bs = append(bs, b)
		}
	}
	for _, p := range r.Papers {
		for _, run := range p.Runs {
			add(run.Manifest.Build.Identity())
		}
		for _, u := range p.Unfinished {
			if u.Attempt != nil {
				add(u.Attempt.Build)
			} else {
				add(u.checkpointBuild)
			}
		}
	}
	if len(bs) == 0 {
		return []string{"an unknown build"}
	}
	return bs
}

var funcs = template.FuncMap{
	"num": num, "xval": xval, "xlist": xlist, "vclass": vclass, "cellTitle": cellTitle,
	"total": totalOf, "charge": chargeOf, "chargeNotes": chargeNotes, "standIn": standIn, "short": short,
	"audits":     auditRows,
	"analysisID": htmlID,
	"verdicts":   func() []string { return countOrder },
	"count":      countOf,
	"undecidedCounts": func(cs []*Claim) []string {
		var c Counts
		for _, x := range cs {
			c.Add(x.Verdict)
		}
		var out []string
		if c.Synthetic > 0 {
			out = append(out, fmt.Sprintf("%d on synthetic stand-in data", c.Synthetic))
		}
		if c.Missing > 0 {
			out = append(out, fmt.Sprintf("%d missing, each with the reason", c.Missing))
		}
		return out
	},
	"pair": func(c *Cell, rule string) cellRule { return cellRule{c, rule} },
	"mdtable": func(s string) template.HTML {
		return mdHTML{shift: 4, idPrefix: "t-", link: func(string) (string, bool) { return "", false }}.render(s)
	},
	"analysesHTML": func(a *Analyses) template.HTML { return a.html() },
	"notes":        func(s string) []string { return strings.Split(strings.TrimSpace(s), "\n\n") },
	"profiles":     profilesOf, "runs": runsOf, "builds": buildsOf, "runsLine": runsLine, "nclaims": nclaims,
	"synthRuns": func(p *Paper) int {
		n := 0
		for _, run := range p.Runs {
			for _, d := range run.Manifest.Datasets {
				if standIn(d) != "" {
					n++
					break
				}
			}
		}
		return n
	},
}

var pageTemplate = template.Must(template.New("page").Funcs(funcs).Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dprepro report</title>
<style>
:root { --held:#1a7f37; --held-bg:#dafbe1; --notheld:#cf222e; --notheld-bg:#ffebe9; --inc:#9a6700; --inc-bg:#fff8c5;
  --syn:#8250df; --syn-bg:#fbefff; --mis:#57606a; --mis-bg:#eaeef2; --line:#d0d7de; --notrun:#82071e; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color:#1f2328; margin:0; background:#f6f8fa; }
main { max-width: 1200px; margin: 0 auto; padding: 16px 24px 48px; background:#fff; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 21px; margin: 32px 0 8px; padding-top: 8px; border-top: 2px solid var(--line); }
h3 { font-size: 17px; margin: 24px 0 6px; }
h4 { font-size: 15px; margin: 16px 0 6px; }
p { margin: 6px 0; }
a { color:#0969da; }
code, .mono { font: 12.5px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; overflow-wrap: anywhere; }
.muted { color:#57606a; }
.small { font-size: 13px; }
.wrap { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0 10px; font-size: 13.5px; }
th, td { border: 1px solid var(--line); padding: 4px 7px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { background:#f6f8fa; font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.full { width: 100%; }
tr.group th { background:#eef1f4; font-size: 14px; }
.v { display:inline-block; padding: 1px 7px; border-radius: 10px; font-size: 12.5px; font-weight: 600; white-space: nowrap; }
.v.held { color:var(--held); background:var(--held-bg); }
.v.notheld { color:#fff; background:var(--notheld); }
.v.inconclusive { color:var(--inc); background:var(--inc-bg); }
.v.synthetic { color:var(--syn); background:var(--syn-bg); }
.v.missing { color:var(--mis); background:var(--mis-bg); }
td.held { background:var(--held-bg); } td.notheld { background:var(--notheld-bg); } td.inconclusive { background:var(--inc-bg); }
td.synthetic { background:var(--syn-bg); } td.missing { background:#fafbfc; color:#8c959f; }
td.c0 { color:#8c959f; }
.x { display:inline-block; min-width: 2.2em; text-align:center; margin: 1px; padding: 0 4px; border-radius: 4px; font-size: 12px; }
.x.held { background:var(--held-bg); color:var(--held); } .x.notheld { background:var(--notheld); color:#fff; font-weight:600; }
.x.inconclusive { background:var(--inc-bg); color:var(--inc); } .x.synthetic { background:var(--syn-bg); color:var(--syn); }
.x.missing { background:var(--mis-bg); color:#8c959f; }
.bar { display:flex; width: 160px; height: 14px; border-radius: 3px; overflow: hidden; background:#f6f8fa; border:1px solid var(--line); }
.bar span { display:block; height:100%; }
.bar .held { background:var(--held); } .bar .notheld { background:var(--notheld); } .bar .inconclusive { background:#d4a72c; }
.bar .synthetic { background:var(--syn); } .bar .missing { background:#d0d7de; }
.totals { display:flex; flex-wrap: wrap; gap: 8px; margin: 10px 0; }
.total { border-radius: 8px; padding: 6px 14px; font-size: 14px; }
.total b { font-size: 22px; display:block; }
.total.held { background:var(--held-bg); color:var(--held); } .total.notheld { background:var(--notheld-bg); color:var(--notheld); }
.total.inconclusive { background:var(--inc-bg); color:var(--inc); } .total.synthetic { background:var(--syn-bg); color:var(--syn); }
.total.missing { background:var(--mis-bg); color:var(--mis); }
.flag { display:inline-block; padding: 0 6px; border-radius: 4px; font-size: 12px; font-weight: 600; }
.flag.real { background:var(--held-bg); color:var(--held); } .flag.standin { background:var(--notheld); color:#fff; }
.flag.sim { background:var(--mis-bg); color:var(--mis); }
.noanalysis { color:var(--notheld); font-weight: 600; }
.gist { font-size: 13px; }
table.fixed { table-layout: fixed; }
table.fixed code { font-size: 12px; }
.at { margin-bottom: 3px; }
.nowrap, td.nw { white-space: nowrap; }
.warn { background:var(--inc-bg); border-left: 4px solid #d4a72c; padding: 6px 10px; margin: 8px 0; }
.claim { color:#7d4e00; font-style: italic; }
.disclaimer { background:#f6f8fa; border-left: 4px solid var(--line); padding: 6px 10px; font-size: 13.5px; }
.figs { display:grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 12px; margin: 8px 0; }
figure { margin:0; border:1px solid var(--line); border-radius: 6px; padding: 6px; background:#fff; min-width: 0; }
figure.wide { grid-column: 1 / -1; }
figure img { display:block; max-width:100%; height:auto; margin: 0 auto; }
figcaption { font-size: 12.5px; color:#57606a; margin-top: 4px; overflow-wrap: anywhere; }
details { margin: 6px 0; border:1px solid var(--line); border-radius: 6px; padding: 4px 10px; }
summary { cursor: pointer; font-weight: 600; }
article.run { margin: 12px 0 28px; }
.meta { font-size: 13.5px; color:#424a53; }
.statement { max-width: 520px; }
.notes p { white-space: pre-wrap; font-size: 13px; }
nav { font-size: 14px; margin: 8px 0; }
nav ul { display: inline; padding: 0; margin: 0; }
nav li { display: inline; }
nav li + li::before { content: " · "; color: #8c959f; }
.analyses h3 { font-size: 16px; border-top: 1px solid var(--line); padding-top: 10px; }
.analyses h4 { font-size: 15px; }
.v.notrun { color:#fff; background:var(--notrun); }
td.notrun { background:var(--notheld-bg); color:var(--notrun); font-weight:600; }
.bar .notrun { background:var(--notrun); }
.total.notrun { background:var(--notheld-bg); color:var(--notrun); border:1px solid var(--notrun); }
.flag.failed { background:var(--notrun); color:#fff; }
section.failed { background:var(--notheld-bg); border: 2px solid var(--notheld); border-radius: 6px; padding: 4px 14px 8px; margin: 12px 0; color:#1f2328; }
section.failed h2 { color:var(--notheld); border-top: none; margin: 6px 0; padding-top: 0; }
section.failed li { margin: 8px 0; }
pre.err { white-space: pre-wrap; overflow-wrap: anywhere; font: 12.5px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; background:#fff; border:1px solid #ffcecb; border-radius: 4px; padding: 6px 8px; margin: 4px 0; color:var(--notheld); }
article.unfinished { border-left: 4px solid var(--notheld); padding-left: 12px; }
</style>
</head>
<body>
<main>
<h1>Reproduction report</h1>
<p class="meta">{{runsLine .}} in <code>{{.Out}}</code>; profile {{profiles .}}; built by {{range $i, $b := builds .}}{{if $i}}, {{end}}<code>{{$b}}</code>{{end}}.
Written by <code>dprepro report</code> from the run folders’ <code>claims.csv</code>, <code>manifest.json</code>, figures and tables.</p>
{{if .Unfinished}}<section class="failed" id="unfinished">
<h2>{{len .Unfinished}} {{if eq (len .Unfinished) 1}}run{{else}}runs{{end}} did not finish: this report is incomplete</h2>
<p>{{if .Counts.NotRun}}Their {{nclaims .Counts.NotRun}} {{if eq .Counts.NotRun 1}}is{{else}}are{{end}} counted as <span class="v notrun">not run</span>: no data of these runs decided them.{{else}}Their specs transcribe no claims (or none is known), so no claim is counted as not run; their results are missing all the same.{{end}} Nothing further down stands in for them.</p>
<ul>{{range .Unfinished}}<li><a href="#{{.ID}}"><b>{{.SpecID}}</b></a> <span class="small">({{.Profile}}, seed {{.Seed}}; folder <code>{{.Dir}}</code>)</span>: <b>{{.Headline}}</b>.
{{with .Error}}<pre class="err">{{.}}</pre>{{end}}{{with .FailuresNote}}<div class="small">{{.}}</div>{{end}}
<div class="small"><b>Not run:</b> {{.NotRunText}}. {{.Advice}}{{if .Earlier}} <a href="#{{.Earlier.ID}}">The earlier run in its folder</a> is shown, not counted.{{end}}</div></li>
{{end}}</ul>
</section>
{{end}}
<p class="disclaimer"><b>Simulation, not hardened DP.</b> Noise comes from seeded pseudo-random streams unless a run says otherwise (its provenance lists the noise): right for research, wrong for protecting real data.</p>

<div class="totals">{{range verdicts}}<div class="total {{vclass .}}"><b>{{count $.Counts .}}</b>{{.}}</div>{{end}}</div>
<p class="small muted">Claims of the papers, each decided on the run’s own uncertainty at every swept value x it covers (package <code>claims</code>).
A claim is <span class="v notheld">not held</span> when the data contradict it at some x, <span class="v inconclusive">inconclusive</span> when at some x they neither confirm nor contradict it,
<span class="v held">held</span> when it holds at every x the run decided, <span class="v synthetic">synthetic</span> when its data were a synthetic stand-in (never held),
<span class="v missing">missing</span> when the run has none of its cells, with the reason: the dataset, method, metric or x it did not run (a quick profile sweeps fewer values), or no values,
and <span class="v notrun">not run</span> when its run did not finish (failed, interrupted, killed or never started). Hover over an x for our value and its 95% CI.</p>

<nav><b>Contents:</b> <ul>
{{if .Unfinished}}<li><a href="#unfinished">Runs that did not finish</a></li>{{end}}
<li><a href="#overview">At a glance</a></li>
<li><a href="#not-held">What did not reproduce, and why</a></li>
{{range .Papers}}<li><a href="#{{.ID}}">{{.Label}}</a></li>{{end}}
{{if .Analyses}}<li><a href="#analyses">Written analyses</a></li>{{end}}
<li><a href="#deviations">Known deviations</a></li>
</ul></nav>

<h2 id="overview">At a glance</h2>
<div class="wrap"><table class="full">
<thead><tr><th>run</th><th>profile · seed</th><th>data</th><th>claims</th>{{range verdicts}}<th class="n">{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Papers}}<tr class="group"><th colspan="10"><a href="#{{.ID}}">{{.Label}}</a></th></tr>
{{range .Unfinished}}<tr><td class="nw"><a href="#{{.ID}}">{{.SpecID}}</a></td><td class="small nw">{{.Profile}} · {{.Seed}}</td>
<td class="small"><span class="flag failed">{{.State}}</span>{{with .Earlier}} <a href="#{{.ID}}">earlier run</a>, not counted{{end}}</td>
<td>{{with len .Claims}}<div class="bar" title="{{nclaims .}} not run"><span class="notrun" style="flex-grow: 1"></span></div>{{else}}<span class="small muted">{{if .ClaimsKnown}}no claims{{else}}claims unknown{{end}}</span>{{end}}</td>
{{$n := len .Claims}}{{range verdicts}}{{if eq . "not run"}}<td class="n {{if $n}}notrun{{else}}c0{{end}}">{{$n}}</td>{{else}}<td class="n c0">0</td>{{end}}{{end}}</tr>
{{end}}{{range .Runs}}{{if not .Superseded}}{{$c := .Counts}}<tr><td class="nw"><a href="#{{.ID}}">{{.Manifest.Spec.ID}}</a></td><td class="small nw">{{.Manifest.Profile}} · {{.Manifest.Seed}}</td>
<td class="small">{{range .Manifest.Datasets}}{{if standIn .}}<span class="flag standin" title="synthetic stand-in">{{.Name}}: stand-in</span> {{else if eq .Source "real"}}<span class="flag real">{{.Name}}</span> {{else}}<span class="flag sim">{{.Name}}: simulated</span> {{end}}{{with .Selection}}<span class="flag standin" title="{{.Statement}}">non-private selection</span> {{end}}{{else}}<span class="muted">none</span>{{end}}</td>
<td>{{if $c.Total}}<div class="bar" title="{{$c.Total}} claims">{{range $v := verdicts}}{{with count $c $v}}<span class="{{vclass $v}}" style="flex-grow: {{.}}"></span>{{end}}{{end}}</div>{{else}}<span class="small muted">no claims</span>{{end}}</td>
{{range verdicts}}{{$n := count $c .}}<td class="n {{if $n}}{{vclass .}}{{else}}c0{{end}}">{{$n}}</td>{{end}}</tr>
{{end}}{{end}}{{end}}
</tbody></table></div>

<h2 id="not-held">What did not reproduce, and why</h2>
{{if .NotHeld}}<p class="small">Every claim that is not held, with the written analysis of why (or a note that none is written yet).</p>
<div class="wrap"><table class="full fixed">
<colgroup><col style="width: 12%"><col style="width: 19%"><col style="width: 27%"><col style="width: 16%"><col style="width: 26%"></colgroup>
<thead><tr><th>run</th><th>claim</th><th>statement</th><th>not held at</th><th>why (written analysis)</th></tr></thead><tbody>
{{range .NotHeld}}<tr><td><a href="#{{.Run.ID}}">{{.Run.Manifest.Spec.ID}}</a></td><td><a href="#{{.HTMLID}}"><code>{{.ID}}</code></a><br><span class="small muted">{{.Source}}</span></td>
<td class="statement small">{{.Statement}}</td><td class="small">{{$c := .}}{{range .Cells}}{{if eq .Verdict "not held"}}<div class="at">{{with $c.Run.XName}}{{.}} = {{end}}{{xval .X}}: {{template "value" (pair . $c.Rule)}}</div>{{end}}{{end}}</td>
<td class="why">{{template "analysis" .}}</td></tr>
{{end}}</tbody></table></div>
{{else}}<p>{{.NoneNotHeld}}</p>{{end}}
{{if and .NotHeld .Unfinished}}<p class="warn">Not listed here: the {{nclaims .Counts.NotRun}} of the {{len .Unfinished}} {{if eq (len .Unfinished) 1}}run{{else}}runs{{end}} that did not finish were not run (<a href="#unfinished">see the top</a>).</p>{{end}}

{{range .Papers}}
<h2 id="{{.ID}}">{{.Label}}</h2>
{{if .Reference}}<p class="small muted">{{.Reference}}</p>{{end}}
<p>{{$p := .}}{{range $v := verdicts}}{{with count $p.Counts $v}}<span class="v {{vclass $v}}">{{.}} {{$v}}</span> {{end}}{{end}}{{if not .Counts.Total}}<span class="muted">No claims of this paper are transcribed.</span>{{end}}
{{with synthRuns .}}<span class="flag standin">{{.}} run(s) on synthetic stand-ins</span>{{end}}</p>
{{range .Unfinished}}{{template "unfinished" .}}{{end}}
{{range .Runs}}{{template "run" .}}{{end}}
{{if .Figures}}<h3>{{.ExtraTitle}}</h3><div class="figs">{{range .Figures}}{{template "figure" .}}{{end}}</div>{{end}}
{{end}}

{{if .Analyses}}<h2 id="analyses">Written analyses</h2>
<p class="small muted">From <code>{{.Analyses.Path}}</code> of the build that wrote this report. A claim’s <code>analysis</code> key in its spec links here.</p>
<div class="analyses">{{analysesHTML .Analyses}}</div>{{end}}

<h2 id="deviations">Known deviations</h2>
<p>Each run’s spec notes (under the run, “Spec notes”) say how it departs from its paper; lines starting “Deviation:” mark the departures. The hand-written list for every paper is the section “Known deviations from the papers” of the source tree’s <code>docs/reproduce.md</code>.</p>
</main>
</body>
</html>
{{define "analysis"}}{{if .Anchor}}{{if .Gist}}<span class="gist">{{.Gist}}</span> {{end}}<a href="#{{analysisID .Anchor}}">analysis&nbsp;→</a>{{else if .Analysis}}<span class="small">see <code>{{.Analysis}}</code></span>{{else}}<span class="noanalysis">no analysis written yet</span>{{end}}{{end}}
{{define "value"}}{{if eq .Rule "match"}}ours <b>{{num .Cell.Ours}}</b> [{{num .Cell.Low}}, {{num .Cell.High}}] vs paper {{num .Cell.Paper}}{{else if or (eq .Rule "greater") (eq .Rule "less")}}difference <b>{{num .Cell.Ours}}</b> [{{num .Cell.Low}}, {{num .Cell.High}}]{{else}}<b>{{num .Cell.Ours}}</b> [{{num .Cell.Low}}, {{num .Cell.High}}]{{end}}{{end}}
{{define "claims"}}<div class="wrap"><table class="full fixed">
<colgroup><col style="width: 9%"><col style="width: 20%"><col style="width: 33%"><col style="width: 17%"><col style="width: 21%"></colgroup>
<thead><tr><th>verdict</th><th>claim</th><th>statement</th><th>at each {{with (index . 0).Run.XName}}{{.}}{{else}}x{{end}}</th><th>why not held, or not run</th></tr></thead><tbody>
{{range .}}<tr id="{{.HTMLID}}"><td><span class="v {{vclass .Verdict}}">{{.Verdict}}</span></td>
<td><code>{{.ID}}</code><br><span class="small muted">{{.Source}} · {{.Rule}} · {{.Method}} · {{.Metric}}</span></td>
<td class="statement small">{{.Statement}}</td>
<td class="xs">{{$c := .}}{{range .Cells}}{{if ne .Verdict "missing"}}<span class="x {{vclass .Verdict}}" title="{{cellTitle . $c.Rule}}">{{xval .X}}</span>{{end}}{{end}}{{with .At "missing"}} <span class="x missing" title="{{xlist .}}: {{$c.MissingWhy}}">{{if eq (len .) (len $c.Cells)}}none of {{len .}} run{{else}}+{{len .}} not run{{end}}</span>{{end}}</td>
<td>{{if eq .Verdict "not held"}}{{template "analysis" .}}{{else if .At "missing"}}<span class="small">{{.MissingWhy}}</span>{{else}}<span class="muted small">—</span>{{end}}</td></tr>
{{end}}</tbody></table></div>{{end}}
{{define "figure"}}<figure{{if .Wide}} class="wide"{{end}}><a href="{{.Src}}"><img src="{{.Src}}" alt="{{.Caption}}" width="{{.Width}}" height="{{.Height}}"></a><figcaption>{{.Caption}}</figcaption></figure>{{end}}
{{define "unfinished"}}<article class="run unfinished" id="{{.ID}}">
<h3>{{.SpecID}} {{with .Title}}<span class="muted small">— {{.}}</span> {{end}}<span class="v notrun">{{.State}}</span></h3>
<p class="meta">folder <code>{{.Dir}}</code> · profile <b>{{.Profile}}</b> · seed {{.Seed}}{{with .Attempt}} · by <code>{{.Command}}</code> (PID {{.PID}} on {{.Host}}), build <code>{{.Build}}</code>{{end}}</p>
<p><b>{{.Headline}}</b>.</p>
{{with .Error}}<pre class="err">{{.}}</pre>{{end}}
{{with .FailuresNote}}<p class="small">{{.}}</p>{{end}}
<p class="small"><b>Not run:</b> {{.NotRunText}}. {{.Advice}}</p>
{{with .EarlierNote}}<p class="warn">{{.}}</p>{{end}}
{{with .Claims}}<details><summary>{{nclaims (len .)}} not run</summary><div class="wrap"><table class="full fixed">
<colgroup><col style="width: 25%"><col style="width: 20%"><col style="width: 55%"></colgroup>
<thead><tr><th>claim</th><th>source</th><th>statement</th></tr></thead><tbody>
{{range .}}<tr><td><code>{{.ID}}</code>{{if or .Method .Metric}}<br><span class="small muted">{{.Method}} · {{.Metric}}</span>{{end}}</td><td class="small">{{.Source}}</td><td class="statement small">{{.Statement}}</td></tr>
{{end}}</tbody></table></div></details>{{end}}
</article>
{{end}}
{{define "run"}}{{$run := .}}{{$m := .Manifest}}
<article class="run" id="{{.ID}}">
<h3>{{$m.Spec.ID}} <span class="muted small">— {{$m.Spec.Title}}</span></h3>
{{with .Superseded}}<p class="warn"><b>{{$run.SupersededNote}}</b></p>{{end}}
<p class="meta">folder <code>{{.Dir}}</code> · profile <b>{{$m.Profile}}</b> · seed {{$m.Seed}} · {{$m.Units.Total}} units · {{printf "%.1f" $m.WallSeconds}} s
· data: {{range $m.Datasets}}{{if standIn .}}<span class="flag standin">{{.Name}}: SYNTHETIC stand-in for {{standIn .}}</span> {{else if eq .Source "real"}}<span class="flag real">{{.Name}}: real</span> {{else}}<span class="flag sim">{{.Name}}: simulated by design</span> {{end}}{{else}}none{{end}}
{{if $m.SecureNoise}}· <b>secure noise</b>{{end}}</p>
{{range .Notes}}<p class="warn">{{.}}</p>{{end}}
{{range $m.Warnings}}<p class="warn">{{.}}</p>{{end}}
{{if .Claims}}<h4>Claims</h4>
{{with .Decided}}{{template "claims" .}}{{else}}<p class="small">No claim is decided by this run.</p>{{end}}
{{with .Undecided}}<details><summary>{{len .}} claims not decided by this run ({{range $i, $v := undecidedCounts .}}{{if $i}}, {{end}}{{$v}}{{end}})</summary>
{{template "claims" .}}</details>{{end}}
{{else}}<p class="small muted">No claims of the paper are transcribed for this spec.</p>{{end}}
{{range .Matches}}<h4>Paper vs ours: {{.Metric}}{{if .Dataset}}, {{.Dataset}}{{end}} <span class="muted small">({{.Source}})</span></h4>
<p class="small muted">Each cell: the published value, then ours with its 95% CI; coloured by the verdict at that {{if $run.XName}}{{$run.XName}}{{else}}x{{end}}.{{if .NotRun}} Published also at {{$run.XName}} = {{xlist .NotRun}}, not run at this profile.{{end}}{{if .RunXs}} <b>The run has none of the published {{$run.XName}}</b>: it ran {{$run.XName}} = {{xlist .RunXs}}.{{end}}{{if .Synthetic}} <b>Ours are on a synthetic stand-in</b>, not the paper’s data.{{end}}</p>
<div class="wrap"><table>
<thead><tr><th>method</th>{{range .Xs}}<th class="n">{{if $run.XName}}{{$run.XName}} = {{end}}{{xval .}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr><th><a href="#{{.Claim.HTMLID}}">{{.Claim.Method}}</a></th>{{range .Cells}}{{if .}}<td class="n {{vclass .Verdict}}">paper {{num .Paper}}<br>{{if eq .Verdict "missing"}}ours —{{else}}ours <b>{{num .Ours}}</b> <span class="small">[{{num .Low}}, {{num .High}}]</span>{{end}}</td>{{else}}<td></td>{{end}}{{end}}</tr>
{{end}}</tbody></table></div>
{{end}}
{{if .Figures}}<h4>Figures</h4><div class="figs">{{range .Figures}}{{template "figure" .}}{{end}}</div>{{end}}
{{if .Tables}}<details><summary>Tables written by the run ({{len .Tables}})</summary>{{range .Tables}}<p class="small muted"><code>{{.Name}}</code></p>{{mdtable .Markdown}}{{end}}</details>{{end}}
{{with audits $m.Audits}}<h4>Privacy audits</h4>
<p class="small muted">Each audited method’s empirical lower bound ε_LB on its ε (one-sided Clopper–Pearson, methods/learneraudit) beside the ε it claims; “claim violated” when ε_LB exceeds the claim. Rows in <code>audit.csv</code>.</p>
<div class="wrap"><table class="small"><thead><tr><th>method</th><th>setting</th><th>claimed</th><th class="n">ε_LB</th><th class="n">releases per side</th><th class="n">confidence</th><th>verdict</th></tr></thead><tbody>
{{range .}}<tr><td><code>{{.Method}}</code></td><td>{{.Setting}}</td><td>{{.Claimed}}</td><td class="n"><b>{{.Lower}}</b></td><td class="n">{{.Releases}}</td><td class="n">{{.Confidence}}</td><td class="{{if .Violated}}notheld{{else}}held{{end}}">{{.Verdict}}</td></tr>
{{end}}</tbody></table></div>{{end}}
<details><summary>Privacy ledger ({{len $m.Ledger}} releases)</summary>
{{if $m.Ledger}}<div class="wrap"><table class="full small">
<thead><tr><th>method</th><th>setting</th><th>total</th><th>charges</th><th>composition</th></tr></thead><tbody>
{{range $m.Ledger}}<tr><td><code>{{.Method}}</code></td><td>{{.Setting}}</td><td>{{total .Total}}</td>
<td>{{range .Components}}<div><b>{{.Part}}</b> ({{.Data}}): {{charge .}} — {{.Release}}{{with chargeNotes .}} <span class="claim">({{.}})</span>{{end}}</div>{{end}}</td><td>{{.Rule}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="small muted">This run releases nothing private (its manifest has no ledger).</p>{{end}}
</details>
<details><summary>Provenance</summary>
<div class="wrap"><table class="full small"><tbody>
<tr><th>build</th><td><code>{{$m.Build.Identity}}</code> · {{$m.GoVersion}} {{$m.GOOS}}/{{$m.GOARCH}} · {{$m.Workers}} workers</td></tr>
<tr><th>spec</th><td><code>{{$m.Spec.File}}</code> · kind <code>{{$m.Spec.Kind}}</code> · file sha256 <code title="{{$m.Spec.FileSHA256}}">{{short $m.Spec.FileSHA256}}</code> · resolved <code title="{{$m.Spec.Hash}}">{{short $m.Spec.Hash}}</code></td></tr>
<tr><th>profile, seed</th><td>{{$m.Profile}}, {{$m.Seed}} · units {{$m.Units.Total}} ({{$m.Units.Computed}} computed, {{$m.Units.Resumed}} from a checkpoint) · {{$m.Start.UTC.Format "2006-01-02 15:04:05"}} UTC</td></tr>
<tr><th>noise</th><td>{{range $m.Noise}}<div>{{.}}</div>{{end}}</td></tr>
{{range $m.Datasets}}<tr><th>{{.Name}}</th><td>{{if standIn .}}<span class="flag standin">SYNTHETIC stand-in for {{standIn .}}</span>{{if .Params.reason}} {{.Params.reason}}{{end}}{{else if eq .Source "real"}}<span class="flag real">real</span>{{else}}<span class="flag sim">simulated by design</span>{{end}}
n = {{.N}}, d = {{.D}}{{if .Subsample}}, subsample {{.Subsample}}{{end}}{{if .Generator}} · generator <code>{{.Generator}}</code>{{end}}
{{range .Files}}<div><code>{{.Name}}</code> sha256 <code>{{.SHA256}}</code> {{if .Verified}}(verified against the pinned digest){{else}}(no pinned digest){{end}} · {{.Records}} records, {{.Dropped}} dropped{{if eq .Missing "level"}} (data.missing = "level": {{.Records}} of {{.Read}} read, {{.MissingLevel}} kept with a missing value as a level){{end}}</div>{{end}}
<div class="small muted">{{.Preproc}}</div>{{with .Selection}}<div class="small"><span class="flag standin">non-private preprocessing</span> <b>{{.Statement}}</b>: kept {{len .Kept}} of {{len .Candidates}} attributes ({{range $i, $a := .Kept}}{{if $i}}, {{end}}{{$a}}{{end}}); dropped {{if .Dropped}}{{range $i, $a := .Dropped}}{{if $i}}, {{end}}{{$a}}{{end}}{{else}}none{{end}} · final model: {{.Columns}} treatment-coded columns, rank {{.Rank}}, deviance {{printf "%.2f" .Deviance}}{{if not .Converged}} · a fit did not converge{{end}}</div>{{end}}{{if .Scaling}}<div class="small"><b>{{.Scaling}}</b>{{with .Public}} · row bound R = {{printf "%.4g" .RowBound}} · {{.ClippedValues}} values clipped to their ranges, {{.OutOfDomain}} levels outside their lists, {{.ClippedRows}} rows clipped: {{.ClippedRecords}} of {{.Records}} records changed{{end}}</div>{{end}}</td></tr>{{end}}
{{range $m.ExternalMethods}}<tr><th>method {{.Name}}</th><td>external: <code>{{range .Command}}{{.}} {{end}}</code>{{if .Version}} · version {{.Version}}{{end}}{{range .Files}}<div><code>{{.Path}}</code> <code>{{short .SHA256}}</code></div>{{end}}</td></tr>{{end}}
</tbody></table></div>
</details>
{{if $m.Notes}}<details><summary>Spec notes and deviations</summary><div class="notes">{{range notes $m.Notes}}<p>{{.}}</p>{{end}}</div></details>{{end}}
</article>
{{end}}
`

package audit

import (
	"fmt"
	"html/template"
	"strings"
)

// finding is one line of a page's failures block.
type finding struct {
	Rule   string // data-rule of an audit page's line: the rule's ID
	Client string // data-client of the comparison's line: the audit's folder name
	Fail   bool
	Text   string
}

// failures is the block both pages open with: one line per failed rule
// (an audit) or per audit (the comparison), each with its evidence in one
// line (failureLine), before any table.
type failures struct {
	ID      string // the list's HTML id
	Heading string
	None    string // said when Items is empty
	Items   []finding
}

// auditFailures is an audit page's failures block: its failed rules in
// report order.
func auditFailures(rep Report) failures {
	f := failures{ID: "failures", Heading: "Failures", None: "None: every rule passed or does not apply."}
	for _, r := range rep.Rules {
		if r.Verdict == Fail {
			f.Items = append(f.Items, finding{Rule: r.ID, Fail: true, Text: failureLine(r)})
		}
	}
	return f
}

// clientFailures is the comparison's failures block: one line per audit
// (findingLine), failed or not.
func clientFailures(c Comparison) failures {
	f := failures{ID: "findings", Heading: "Failures first", None: "No audit of a third-party client."}
	for _, r := range c.Rows {
		f.Items = append(f.Items, finding{Client: r.Worker + "-" + r.Profile, Fail: !r.Pass, Text: findingLine(r)})
	}
	return f
}

// markdown writes the block as a Markdown section.
func (f failures) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "## %s\n\n", f.Heading)
	if len(f.Items) == 0 {
		fmt.Fprintf(b, "%s\n\n", f.None)
		return
	}
	for _, it := range f.Items {
		fmt.Fprintf(b, "- %s\n", strings.ReplaceAll(it.Text, "\n", " ")) // a list item: no cell to escape
	}
	b.WriteString("\n")
}

// pageFuncs are the functions of both pages' templates.
var pageFuncs = template.FuncMap{
	"cpu":            cpuCell,
	"ms":             msCell,
	"own":            ownMS,
	"figuresIntro":   func() string { return figuresIntro },
	"cgroup":         cgroupCell,
	"dash":           dash,
	"f1":             func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"f3":             func(v float64) string { return fmt.Sprintf("%.3f", v) },
	"svg":            func(s string) template.HTML { return template.HTML(s) }, // our own charts (gonum/plot output), never user input
	"verdict":        verdictLine,
	"finding":        findingLine,
	"auditFailures":  auditFailures,
	"clientFailures": clientFailures,
	"fixText":        fixText,
	"fixSummary":     fixSummary,
	"fixedLines":     fixedLines,
	"fixClass": func(f FixCheck) string {
		switch {
		case f.Folder == "":
			return "na"
		case f.Verified:
			return "pass"
		}
		return "fail"
	},
	"class": func(v string) string {
		switch v {
		case Pass:
			return "pass"
		case Fail:
			return "fail"
		}
		return "na"
	},
}

// pageParts are the templates both pages share: "head" (the document's
// head, its title the argument: one inline style sheet, no script,
// nothing fetched) and "failures" (a failures value).
const pageParts = `{{define "head"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; max-width: 90rem; }
h1 { font-size: 1.5rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: #17612a; font-weight: bold; }
.fail { color: #b3261e; font-weight: bold; }
.na { color: #666; }
li { margin-bottom: 0.4rem; }
li.pass, li.fail { font-weight: normal; }
.banner { padding: 0.6rem 1rem; border-radius: 4px; }
.banner.pass { background: #e6f4ea; }
.banner.fail { background: #fce8e6; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; }
figure { margin: 0; }
figure svg { width: 28rem; height: auto; }
figcaption { font-size: 0.85rem; color: #555; }
</style>
</head>{{end}}
{{define "failures"}}<h2>{{.Heading}}</h2>
{{if .Items}}<ul id="{{.ID}}">
{{range .Items}}<li class="{{if .Fail}}fail{{else}}pass{{end}}"{{if .Rule}} data-rule="{{.Rule}}"{{end}}{{if .Client}} data-client="{{.Client}}"{{end}}>{{.Text}}</li>
{{end}}</ul>{{else}}<p id="{{.ID}}" class="pass">{{.None}}</p>{{end}}{{end}}`

// newPage parses body (a page's <body>, which calls {{template "head"}}
// and {{template "failures"}}) with the shared parts and functions.
func newPage(name, body string) *template.Template {
	t := template.Must(template.New(name).Funcs(pageFuncs).Parse(pageParts))
	return template.Must(t.Parse(body))
}

// text/template's builtins that make a new string (print, printf, println, html, js, urlquery),
// each answering exactly as Go's own but held to the object's budget (budget.go): before it
// builds anything, it refuses a result whose bound (fmtbound.go) is over what the object's
// expansion may still build, and what it builds is taken from that budget. The other builtins
// (and, or, not, call, index, slice, len, eq, ne, lt, le, gt, ge) make no string: index and slice
// share their argument's bytes. No other function is in the map (no sprig).
package main

import (
	"fmt"
	"text/template"
)

// At most how many bytes each escaper writes per byte it escapes: html "&#34;", js "\u003C", urlquery "%3C".
const (
	htmlGrowth     = 5
	jsGrowth       = 6
	urlqueryGrowth = 3
)

// budgetRef is the budget of the destination being expanded: a request's templates are parsed
// once, with these functions, and run for each of its destinations in turn.
type budgetRef struct{ b *budget }

// boundedFuncs are the builtins above, taking from ref's budget.
func boundedFuncs(ref *budgetRef) template.FuncMap {
	// build makes a string whose length is at most bound, if the budget has room for it.
	build := func(bound int, make func() string) (string, error) {
		if bound > ref.b.built {
			return "", ref.b.build(bound)
		}
		s := make()
		return s, ref.b.build(len(s))
	}
	// The escapers format their arguments as print does (one string argument as it is), then escape.
	escaper := func(growth int, escape func(...any) string) func(...any) (string, error) {
		return func(args ...any) (string, error) {
			bound := printBound(args)
			if bound < unbounded/(growth+1) {
				bound *= growth + 1 // the formatted arguments, then their escaped text
			} else {
				bound = unbounded
			}
			return build(bound, func() string { return escape(args...) })
		}
	}
	return template.FuncMap{
		"print": func(args ...any) (string, error) {
			return build(printBound(args), func() string { return fmt.Sprint(args...) })
		},
		"printf": func(format string, args ...any) (string, error) {
			return build(printfBound(format, args), func() string { return fmt.Sprintf(format, args...) })
		},
		"println": func(args ...any) (string, error) {
			return build(printBound(args), func() string { return fmt.Sprintln(args...) })
		},
		"html":     escaper(htmlGrowth, template.HTMLEscaper),
		"js":       escaper(jsGrowth, template.JSEscaper),
		"urlquery": escaper(urlqueryGrowth, template.URLQueryEscaper),
	}
}

// The bounds of one object's expansion for one destination (the expansions of all its leaves
// share them), so that no template, whatever it asks for, holds the helper or its memory:
//   - written: what its templates write, at most the object limit (500 KiB); the writer refuses
//     the write that would pass it, which stops the template there.
//   - built: what the builtins that make strings (funcs.go) return, written or kept in a
//     variable, at most builtPerObject times the object limit (2,048,000 bytes); each builtin
//     refuses, before it builds anything, a result whose bound (fmtbound.go) is over what is left.
//     Only those builtins make strings (index and slice share their argument's bytes), so the
//     strings a template holds are bounded too.
//   - time: the request's deadline (the object's time limit, 2 s, less what the object's earlier
//     requests took). Go's text/template has no step counter, so every template body and every
//     range body is made to begin with a step, an action that writes "", and the writer checks
//     the clock at every write: a template cannot loop or recurse without writing. (Between two
//     steps a template runs its own text once, with strings the budgets bound.)
package main

import (
	"fmt"
	"text/template"
	"text/template/parse"
	"time"
)

// builtPerObject: a string built once and written counts twice (once built, once written), and a
// template may build its pieces in a few steps.
const builtPerObject = 4

// budget is what one destination's expansions may still write and build, and until when.
type budget struct {
	written, built int // left
	limit          int // the object limit, for messages
	deadline       time.Time
	millis         int  // the object's time limit, for messages
	stopped        bool // a limit was reached: the later leaves are not run
}

func newBudget(limit int, deadline time.Time, millis int) *budget {
	return &budget{written: limit, built: builtPerObject * limit, limit: limit, deadline: deadline, millis: millis}
}

// build takes n bytes from what may be built, or says why not.
func (b *budget) build(n int) error {
	if n > b.built {
		b.stopped = true
		return fmt.Errorf("the object's expansion would build strings over the limit of %d bytes", builtPerObject*b.limit)
	}
	b.built -= n
	return nil
}

// limitedWriter writes into buf what the budget allows, while there is time; a write that would
// pass the limit, or comes after the deadline, fails, which stops the template there
// (text/template ends execution on a write error, and reports that error as it is).
type limitedWriter struct {
	buf    []byte
	budget *budget
	name   string
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if time.Now().After(w.budget.deadline) {
		w.budget.stopped = true
		return 0, fmt.Errorf("template: %s: the object's expansion took over %d ms", w.name, w.budget.millis)
	}
	if len(p) > w.budget.written {
		w.budget.written, w.budget.stopped = 0, true
		return 0, fmt.Errorf("template: %s: the object's expansion is over the limit of %d bytes", w.name, w.budget.limit)
	}
	w.budget.written -= len(p)
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// step is an action that writes "": nothing, but through the writer, which checks the clock.
var step = template.Must(template.New("step").Parse(`{{""}}`)).Tree.Root.Nodes[0]

// addSteps makes every template of t's set (its own and those it defines) and every range body
// in them begin with a step.
func addSteps(t *template.Template) {
	for _, tt := range t.Templates() {
		if tt.Tree != nil && tt.Tree.Root != nil {
			addRangeSteps(tt.Tree.Root)
			tt.Tree.Root.Nodes = append([]parse.Node{step}, tt.Tree.Root.Nodes...)
		}
	}
}

func addRangeSteps(n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n != nil {
			for _, kid := range n.Nodes {
				addRangeSteps(kid)
			}
		}
	case *parse.IfNode:
		addRangeSteps(n.List)
		addRangeSteps(n.ElseList)
	case *parse.WithNode:
		addRangeSteps(n.List)
		addRangeSteps(n.ElseList)
	case *parse.RangeNode:
		addRangeSteps(n.List)
		addRangeSteps(n.ElseList)
		n.List.Nodes = append([]parse.Node{step}, n.List.Nodes...)
	}
}

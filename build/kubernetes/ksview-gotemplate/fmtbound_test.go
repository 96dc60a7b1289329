// fmtbound.go's bounds are never under what fmt writes: checked against fmt itself over 200,000
// random formats (flags, widths, precisions, "*", "[n]", every verb, malformed directives) and
// argument lists of every kind a template can pass; and they are close for plain use (a builtin
// must not refuse what fits).
package main

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
	"text/template"
)

var boundArgs = []any{
	"", "ascii", "é😀\x80\x01\u2028", strings.Repeat("<&'\"\x00é", 50), 0, -9223372036854775808, 42, 7, -3, uint8(200),
	1.5, math.MaxFloat64, -math.SmallestNonzeroFloat64, math.NaN(), math.Inf(-1), complex(math.MaxFloat64, -1e-300), 3i,
	true, false, nil, map[string]string{}, map[string]string{"clusterName": "wec1", "zone": "é\x80<>", "": ""},
	[]byte("bytes\xff"), []any{1, "a", nil},
}

func randomFormat(r *rand.Rand) string {
	var b strings.Builder
	for n := r.Intn(6); n >= 0; n-- {
		if r.Intn(3) == 0 {
			b.WriteString([]string{"x", "é", " - ", ""}[r.Intn(4)])
		}
		b.WriteByte('%')
		for f := r.Intn(3); f > 0; f-- {
			b.WriteByte("#0+- "[r.Intn(5)])
		}
		if r.Intn(4) == 0 {
			fmt.Fprintf(&b, "[%d]", r.Intn(5))
		}
		switch r.Intn(4) {
		case 0:
			fmt.Fprint(&b, r.Intn(40))
		case 1:
			b.WriteByte('*')
		}
		if r.Intn(3) == 0 {
			b.WriteByte('.')
			if r.Intn(4) == 0 {
				fmt.Fprintf(&b, "[%d]", r.Intn(5))
			}
			switch r.Intn(3) {
			case 0:
				fmt.Fprint(&b, r.Intn(40))
			case 1:
				b.WriteByte('*')
			}
		}
		if r.Intn(15) > 0 { // else the directive has no verb
			b.WriteString([]string{"v", "s", "d", "q", "x", "X", "o", "O", "b", "c", "U", "e", "E", "f", "F", "g", "G", "t", "T", "p", "%", "w", "z", "é"}[r.Intn(24)])
		}
	}
	return b.String()
}

func TestFmtBoundsAreNeverUnder(t *testing.T) {
	r := rand.New(rand.NewSource(24))
	for i := 0; i < 200_000; i++ {
		format := randomFormat(r)
		args := make([]any, r.Intn(5))
		for j := range args {
			args[j] = boundArgs[r.Intn(len(boundArgs))]
			if r.Intn(4) == 0 { // a "*" argument
				args[j] = r.Intn(81) - 40
			}
		}
		if n, bound := len(fmt.Sprintf(format, args...)), printfBound(format, args); n > bound {
			t.Fatalf("printf %q %#v: %d bytes, bound %d", format, args, n, bound)
		}
		if n, bound := len(fmt.Sprintln(args...)), printBound(args); n > bound {
			t.Fatalf("println %#v: %d bytes, bound %d", args, n, bound)
		}
		for name, growth := range map[string]int{"html": htmlGrowth, "js": jsGrowth, "urlquery": urlqueryGrowth} {
			escape := template.FuncMap{"html": template.HTMLEscaper, "js": template.JSEscaper, "urlquery": template.URLQueryEscaper}[name].(func(...any) string)
			if n, bound := len(escape(args...)), growth*printBound(args); n > bound {
				t.Fatalf("%s %#v: %d bytes, bound %d", name, args, n, bound)
			}
		}
	}
	// Widths as fmt reads them: up to 9,999,999 written, 1e6 from an argument.
	for _, c := range []struct {
		format string
		args   []any
	}{{"%9999999d", []any{0}}, {"%*d", []any{-1000000, 0}}, {"%.9999999f", []any{1.0}}, {"%[2]*[1]v", []any{map[string]string{"a": "b", "c": "d"}, 1000000}}} {
		if n, bound := len(fmt.Sprintf(c.format, c.args...)), printfBound(c.format, c.args); n > bound {
			t.Errorf("printf %q: %d bytes, bound %d", c.format, n, bound)
		}
	}
}

func TestFmtBoundsAreCloseForPlainUse(t *testing.T) {
	big := strings.Repeat("y", 100_000)
	if bound := printfBound("%s-%s.%d", []any{big, "x", 7}); bound > len(big)+1000 {
		t.Errorf("printf of a 100,000-byte string: bound %d", bound)
	}
	if bound := printBound([]any{big, map[string]string{"k": big}}); bound > 2*len(big)+1000 {
		t.Errorf("print of two 100,000-byte strings: bound %d", bound)
	}
}

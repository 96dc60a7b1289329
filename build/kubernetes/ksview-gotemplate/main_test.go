// Go-level tests of the helper's bounds (handle, the whole request-to-answer path): a template
// bomb is stopped at the object's limit without building its output, a variable doubled by
// printf is refused, printf's widths are refused before fmt builds them (in one call, or spread
// over variables and loop iterations), a template that loops or recurses without writing stops at
// the object's time limit and the next request is served, the answer frame stays within its
// limit, messages are capped, a request can lower the limits and never raise them, and the
// bounded builtins answer as Go's own.
// Run by test/unit/template-expander.test.ts (`go test ./ksview-gotemplate`).
package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"text/template"
	"time"
)

type answer struct {
	Results []struct {
		Object json.RawMessage `json:"object"`
		Error  string          `json:"error"`
		Errors []string        `json:"errors"`
	} `json:"results"`
	Error string `json:"error"`
}

func ask(t *testing.T, req map[string]any) (answer, int) {
	t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	raw := handle(body)
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("answer is not JSON: %v", err)
	}
	return a, len(raw)
}

func props(n int) []map[string]string {
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = map[string]string{"clusterName": fmt.Sprintf("wec%d", i+1)}
	}
	return out
}

// The bomb: ten values of {{range 8000}} over a 1,000-byte body (80 MB per destination).
func TestTemplateBombStopsAtTheObjectLimit(t *testing.T) {
	data := map[string]string{}
	for i := 0; i < 10; i++ {
		data[fmt.Sprintf("k%d", i)] = "{{range 8000}}" + strings.Repeat("x", 1000) + "{{end}}"
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	a, size := ask(t, map[string]any{"object": map[string]any{"data": data}, "properties": props(2)})
	runtime.ReadMemStats(&after)
	if len(a.Results) != 2 {
		t.Fatalf("%d results", len(a.Results))
	}
	for i, r := range a.Results {
		want := []string{"template: $.data.k0: the object's expansion is over the limit of 512000 bytes"}
		if fmt.Sprint(r.Errors) != fmt.Sprint(want) || r.Object != nil {
			t.Errorf("destination %d: errors %q, want %q (one: the later leaves are not run)", i, r.Errors, want)
		}
	}
	if size > 64<<10 {
		t.Errorf("answer of %d bytes", size)
	}
	// The output is never built past the limit: a few times 500 KiB allocated, not 160 MB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("expanding the bomb allocated %d bytes", alloc)
	}
}

func TestAVariableDoubledByPrintfIsRefused(t *testing.T) {
	a, _ := ask(t, map[string]any{
		"object":     map[string]any{"a": `{{$x := "0123456789abcdef"}}{{range 40}}{{$x = printf "%s%s" $x $x}}{{end}}{{len $x}}`},
		"properties": props(1),
	})
	want := `template: $.a:1:47: executing "$.a" at <printf "%s%s" $x $x>: error calling printf: the object's expansion would build strings over the limit of 2048000 bytes`
	if a.Results[0].Error != want {
		t.Errorf("error %q, want %q", a.Results[0].Error, want)
	}
}

func TestExpansionsOfOneObjectShareOneBudget(t *testing.T) {
	// Each leaf alone fits (600 bytes), the two together do not (limit 1,000).
	obj := map[string]any{"a": `{{range 6}}` + strings.Repeat("a", 100) + `{{end}}`, "b": `{{range 6}}` + strings.Repeat("b", 100) + `{{end}}`}
	a, _ := ask(t, map[string]any{"object": obj, "properties": props(1), "limits": map[string]int{"object": 1000}})
	if want := "template: $.b: the object's expansion is over the limit of 1000 bytes"; a.Results[0].Error != want {
		t.Errorf("error %q, want %q", a.Results[0].Error, want)
	}
	// Under the limit, the same object expands.
	a, _ = ask(t, map[string]any{"object": obj, "properties": props(1), "limits": map[string]int{"object": 2000}})
	if a.Results[0].Error != "" || !strings.Contains(string(a.Results[0].Object), strings.Repeat("b", 600)) {
		t.Errorf("result %+v", a.Results[0])
	}
}

func TestTheAnswerStaysWithinItsLimit(t *testing.T) {
	obj := map[string]any{"a": `{{.clusterName}}` + strings.Repeat("z", 900)}
	a, size := ask(t, map[string]any{"object": obj, "properties": props(3), "limits": map[string]int{"object": 1000, "answer": 2500}})
	if a.Results[0].Error != "" || a.Results[1].Error != "" {
		t.Fatalf("the first two fit: %q %q", a.Results[0].Error, a.Results[1].Error)
	}
	if want := "template: $: not expanded: the answer to this request would be over 2500 bytes"; a.Results[2].Error != want {
		t.Errorf("third: %q, want %q", a.Results[2].Error, want)
	}
	if size > 2500 {
		t.Errorf("answer of %d bytes, over 2500", size)
	}
}

func TestAnObjectWithoutTemplatesOverTheLimitIsRefused(t *testing.T) {
	obj := map[string]any{"a": strings.Repeat("p", 2000)}
	a, _ := ask(t, map[string]any{"object": obj, "properties": props(2), "limits": map[string]int{"object": 1000}})
	for _, r := range a.Results {
		if want := "template: $: the object is 2008 bytes, over the limit of 1000"; r.Error != want {
			t.Errorf("error %q, want %q", r.Error, want)
		}
	}
}

func TestARequestCannotRaiseTheLimits(t *testing.T) {
	obj := map[string]any{"a": `{{range 600}}` + strings.Repeat("r", 1000) + `{{end}}`}
	a, _ := ask(t, map[string]any{"object": obj, "properties": props(1), "limits": map[string]int{"object": 64 << 20, "answer": 1 << 30}})
	if want := "template: $.a: the object's expansion is over the limit of 512000 bytes"; a.Results[0].Error != want {
		t.Errorf("error %q, want %q", a.Results[0].Error, want)
	}
}

func TestMessagesOfOneDestinationAreCapped(t *testing.T) {
	leaves := make([]string, 5000)
	for i := range leaves {
		leaves[i] = "{{ .missing }}"
	}
	a, _ := ask(t, map[string]any{"object": map[string]any{"a": leaves}, "properties": props(1)})
	errs := a.Results[0].Errors
	total := 0
	for _, e := range errs {
		total += len(e)
	}
	if total > 64<<10+100 || !strings.HasPrefix(errs[len(errs)-1], "… and ") || !strings.HasSuffix(errs[len(errs)-1], " more errors") {
		t.Errorf("%d messages, %d bytes, last %q", len(errs), total, errs[len(errs)-1])
	}
	if want := fmt.Sprintf("… and %d more errors", 5000-(len(errs)-1)); errs[len(errs)-1] != want {
		t.Errorf("last %q, want %q", errs[len(errs)-1], want)
	}
}

// The builtins, bounded, answer exactly as Go's own, widths, precisions, argument indexes and *
// widths included (through handle: the expanded object holds what Go's template writes).
func TestBoundedBuiltinsAnswerAsGosOwn(t *testing.T) {
	tmpls := []string{
		`{{print 1 "a" 2}}|{{printf "%05d-%q" 7 "x"}}|{{println "l" 3}}|{{html "<a&b>"}}|{{js "it's <x>"}}|{{urlquery "a b&c"}}`,
		`{{printf "%[2]*[1]d|%-8.3f|%+q|% #x|%*s|%.*s" 12 9 3.14159 "é\x01" "ab" -6 "r" 2 "xyz"}}`,
		`{{printf "%v %T %d %s %x" . . 1.5 .clusterName (index .clusterName 0)}}|{{printf "%!" }}|{{printf "%d %d" 1}}|{{printf "%d" 1 2 "x"}}|{{printf "%[3]d" 1}}`,
		`{{print . 1 2 "s" nil true}}{{println . 3i}}{{html . "<"}}{{js . 1}}{{urlquery . "&"}}`,
	}
	for _, tmpl := range tmpls {
		data := map[string]string{"clusterName": "wec1", "zone": "<eu & \"west\">"}
		var gos strings.Builder
		if err := template.Must(template.New("t").Parse(tmpl)).Execute(&gos, data); err != nil {
			t.Fatal(err)
		}
		a, _ := ask(t, map[string]any{"object": map[string]any{"a": tmpl}, "properties": []map[string]string{data}})
		want, _ := json.Marshal(map[string]string{"a": gos.String()})
		if string(a.Results[0].Object) != string(want) {
			t.Errorf("%s:\nours %s (%q)\nGo's %s", tmpl, a.Results[0].Object, a.Results[0].Error, want)
		}
	}
}

// The finding's bomb: 200 widths of 999,999 in one printf, kept in a variable (so nothing is
// written), asked for 200 MB of fmt's buffer. printf refuses it before fmt builds anything.
func TestAPrintfWidthBombIsRefusedBeforeItIsBuilt(t *testing.T) {
	format := strings.Repeat("%0999999d", 200)
	tmpl := `{{$x := printf "` + format + `"` + strings.Repeat(" 0", 200) + `}}ok`
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	a, _ := ask(t, map[string]any{"object": map[string]any{"a": tmpl}, "properties": props(1)})
	runtime.ReadMemStats(&after)
	want := `error calling printf: the object's expansion would build strings over the limit of 2048000 bytes`
	if r := a.Results[0]; r.Object != nil || !strings.HasPrefix(r.Error, `template: $.a:1:8: executing "$.a" at <printf`) || !strings.HasSuffix(r.Error, want) {
		t.Errorf("result %.300s / %q, want the error %q", r.Object, r.Error, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("refusing the bomb allocated %d bytes", alloc)
	}
}

// Each string a builtin builds counts against the object's budget, written or not: widths spread
// over variables, or over a loop's iterations, stop at the budget (2,048,000 bytes: two strings
// of a million bytes fit, a third does not).
func TestStringsKeptInVariablesCountAgainstTheObjectsBudget(t *testing.T) {
	for tmpl, want := range map[string]string{
		strings.Repeat(`{{$x := printf "%0999999d" 0}}`, 200) + `ok`: `template: $.a:1:68: executing "$.a" at <printf "%0999999d" 0>: error calling printf: the object's expansion would build strings over the limit of 2048000 bytes`,
		`{{range 200}}{{$x := printf "%0999999d" 0}}{{end}}ok`:       `template: $.a:1:21: executing "$.a" at <printf "%0999999d" 0>: error calling printf: the object's expansion would build strings over the limit of 2048000 bytes`,
		`{{range 200}}{{$x := print $}}{{end}}`:                      `template: $.a:1:21: executing "$.a" at <print $>: error calling print: the object's expansion would build strings over the limit of 2048000 bytes`,
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		a, _ := ask(t, map[string]any{"object": map[string]any{"a": tmpl}, "properties": []map[string]string{{"p": strings.Repeat("v", 100_000)}}})
		runtime.ReadMemStats(&after)
		if a.Results[0].Error != want {
			t.Errorf("%.60s…: error %q, want %q", tmpl, a.Results[0].Error, want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Errorf("%.60s…: allocated %d bytes", tmpl, alloc)
		}
	}
}

// askWithin is ask, failing the test when handle has not answered within d (the goroutine is
// left running: a helper without a time bound never stops).
func askWithin(t *testing.T, d time.Duration, req map[string]any) answer {
	t.Helper()
	done := make(chan answer, 1)
	go func() {
		body, _ := json.Marshal(req)
		var a answer
		_ = json.Unmarshal(handle(body), &a)
		done <- a
	}()
	select {
	case a := <-done:
		return a
	case <-time.After(d):
		t.Fatalf("no answer within %v", d)
		return answer{}
	}
}

// Templates that loop or recurse without writing a byte (a billion squared iterations; 2^40
// template calls) stop at the object's time limit, lowered here to 300 ms, with a message, for
// every destination together; the next request is served as usual.
func TestALoopThatWritesNothingStopsAtTheObjectsTimeLimit(t *testing.T) {
	for _, tmpl := range []string{
		`{{range 1000000000}}{{range 1000000000}}{{end}}{{end}}`,
		`{{define "t"}}{{if .}}{{template "t" (slice . 1)}}{{template "t" (slice . 1)}}{{end}}{{end}}{{template "t" "` + strings.Repeat("x", 40) + `"}}`,
	} {
		start := time.Now()
		a := askWithin(t, 10*time.Second, map[string]any{"object": map[string]any{"a": tmpl, "b": "{{.clusterName}}"}, "properties": props(3), "limits": map[string]int{"millis": 300}})
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%.40s…: answered in %v", tmpl, took)
		}
		for i, r := range a.Results {
			if want := []string{"template: $.a: the object's expansion took over 300 ms"}; fmt.Sprint(r.Errors) != fmt.Sprint(want) {
				t.Errorf("%.40s…: destination %d: errors %q, want %q", tmpl, i, r.Errors, want)
			}
		}
		a = askWithin(t, 10*time.Second, map[string]any{"object": map[string]any{"a": "{{.clusterName}}"}, "properties": props(1), "limits": map[string]int{"millis": 300}})
		if want := `{"a":"wec1"}`; string(a.Results[0].Object) != want {
			t.Errorf("next request: %s %q, want %s", a.Results[0].Object, a.Results[0].Error, want)
		}
	}
}

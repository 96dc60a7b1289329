// Go-level tests of the helper's bounds (handle, the whole request-to-answer path): a template
// bomb is stopped at the object's limit without building its output, a variable doubled by
// printf is refused, the answer frame stays within its limit, messages are capped, a request can
// lower the limits and never raise them, and the bounded builtins answer as Go's own.
// Run by test/unit/template-expander.test.ts (`go test ./ksview-gotemplate`).
package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"text/template"
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
	want := `template: $.a:1:47: executing "$.a" at <printf "%s%s" $x $x>: error calling printf: the arguments of printf are over the limit of 512000 bytes`
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

func TestBoundedBuiltinsAnswerAsGosOwn(t *testing.T) {
	tmpl := `{{print 1 "a" 2}}|{{printf "%05d-%q" 7 "x"}}|{{println "l" 3}}|{{html "<a&b>"}}|{{js "it's <x>"}}|{{urlquery "a b&c"}}`
	ours, err := template.New("t").Funcs(boundedFuncs(maxObject)).Parse(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	gos := template.Must(template.New("t").Parse(tmpl))
	var a, b strings.Builder
	if err := ours.Execute(&a, nil); err != nil {
		t.Fatal(err)
	}
	if err := gos.Execute(&b, nil); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("ours %q, Go's %q", a.String(), b.String())
	}
}

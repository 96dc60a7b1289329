// Command ksview-gotemplate expands KubeStellar's templates (annotation
// control.kubestellar.io/expand-templates: "true") for ksview serve's placement controller, with
// Go's own text/template, the way KubeStellar's transport controller does it: every leaf string
// of the object (never a map key) that contains "{{" is parsed as a template named after where it
// sits (the destination's name root, then ".key" and "[index]" steps), with
// Option("missingkey=error"), and executed with the destination's properties (a map of strings)
// as data. A string without "{{" is left as it is, unparsed, as KubeStellar leaves it. Errors are
// Go's own messages, which carry the template's name and so the place in the object.
//
// Protocol, on stdin and stdout, one request at a time, in order: a frame is a 4-byte big-endian
// length and that many bytes. A request frame holds JSON
//
//	{"object": <any JSON>, "properties": [{"clusterName": "wec1", ...}, ...], "names": ["$", ...], "spentMillis": 0}
//
// with one property map per destination; "names" (optional, default "$" for each) gives each
// destination's name root; "spentMillis" (optional) is how long the same object's earlier requests
// took (a caller asks for many destinations in several requests). The answer frame holds JSON
// {"results": [...], "millis": <how long this request's expansions took>}, one result per
// destination in the same order: {"object": <expanded JSON>} or {"error": "<first message>",
// "errors": ["<every message, in document order>"]}. A request that cannot be read is answered
// {"error": "<message>"}. Object key order is kept. EOF on stdin ends the program.
//
// Bounds (a template is written by whoever may write the object, and may ask for any amount of
// output, memory or time: {{range 8000}}…{{end}}, {{$x := printf "%0999999d" 0}},
// {{range 1000000000}}{{end}}): a request may lower them with
// "limits": {"object": <bytes>, "answer": <bytes>, "millis": <ms>}, never raise them. Reaching one
// is the destination's error, never the helper's end: the next request is served as usual.
//   - Per object and destination (budget.go): its expansions together (the sum over its leaves)
//     may write at most "object" bytes, 500 KiB by default (OCM's limit on a ManifestWork's
//     manifests: a bigger object could never be sent), and the expanded object as encoded must
//     fit too; the builtins that make strings (funcs.go: print, printf, println, html, js,
//     urlquery) may build at most 4 times that, written or kept in variables, and refuse a result
//     that could pass it before building any of it (fmt builds its whole output first).
//   - Per object, for all its destinations: its expansion may take at most "millis", 2 s by
//     default (less "spentMillis"), checked at every range iteration and template call; past it
//     every destination not expanded yet fails ("the object's expansion took over 2000 ms").
//   - Per answer: the whole answer frame stays under "answer" bytes, 16 MiB by default; a
//     destination whose result would not fit is answered with an error instead. Each
//     destination's messages are kept to 64 KiB ("… and N more errors").
//   - The process: a soft memory limit (memoryLimit, unless GOMEMLIMIT says otherwise) makes Go's
//     collector work harder before the helper grows past it.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"text/template"
	"time"

	"kubestellar-view/build/kubernetes/internal/frames"
)

// maxFrame bounds a request; a bigger one is skipped and answered with an error.
const maxFrame = 64 << 20

// maxObject bounds one destination's expanded object: OCM refuses a ManifestWork whose manifests
// are over 500 KiB (src/controllers/wrapping.ts MAX_MANIFESTS_BYTES), so more is never useful.
const maxObject = 500 * 1024

// maxAnswer bounds one answer frame (what ksview serve reads at once).
const maxAnswer = 16 << 20

// maxMessages bounds the messages kept for one destination.
const maxMessages = 64 << 10

// maxMillis bounds one object's expansion, for all its destinations: well under the 20 s after
// which ksview serve kills a helper that does not answer (src/controllers/template-expander.ts).
const maxMillis = 2000

// memoryLimit is the helper's soft memory limit: a request of 64 MiB, its tree and an answer of
// 16 MiB fit under it.
const memoryLimit = 512 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	if err := frames.Serve(os.Stdin, os.Stdout, maxFrame, handle); err != nil {
		fatal(err)
	}
}

type request struct {
	Object     json.RawMessage     `json:"object"`
	Properties []map[string]string `json:"properties"`
	Names      []string            `json:"names"`
	Limits     limits              `json:"limits"`
	Spent      int                 `json:"spentMillis"`
}

// limits are the request's bounds in bytes and ms; zero (or more than the defaults) is the default.
type limits struct {
	Object int `json:"object"`
	Answer int `json:"answer"`
	Millis int `json:"millis"`
}

func (l limits) orDefaults() limits {
	if l.Object <= 0 || l.Object > maxObject {
		l.Object = maxObject
	}
	if l.Answer <= 0 || l.Answer > maxAnswer {
		l.Answer = maxAnswer
	}
	if l.Millis <= 0 || l.Millis > maxMillis {
		l.Millis = maxMillis
	}
	return l
}

type result struct {
	Object json.RawMessage `json:"object,omitempty"`
	Error  string          `json:"error,omitempty"`
	Errors []string        `json:"errors,omitempty"`
}

// handle answers one request; whatever goes wrong inside becomes a top-level error.
func handle(body []byte) (answer []byte) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			answer = frames.ErrorAnswer(fmt.Errorf("internal error: %v", r))
		}
	}()
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		return frames.ErrorAnswer(fmt.Errorf("malformed request: %w", err))
	}
	if len(req.Object) == 0 {
		return frames.ErrorAnswer(errors.New("malformed request: no object"))
	}
	if req.Names != nil && len(req.Names) != len(req.Properties) {
		return frames.ErrorAnswer(fmt.Errorf("malformed request: %d names for %d property maps", len(req.Names), len(req.Properties)))
	}
	root, err := parseTree(req.Object)
	if err != nil {
		return frames.ErrorAnswer(fmt.Errorf("malformed request: object: %w", err))
	}
	lim := req.Limits.orDefaults()
	deadline := start.Add(time.Duration(lim.Millis-max(req.Spent, 0)) * time.Millisecond)
	name := func(i int) string {
		if req.Names != nil {
			return req.Names[i]
		}
		return "$"
	}
	results := make([]result, len(req.Properties))
	// What the answer's results may still take: the frame's bound less its wrapping.
	room := lim.Answer - len(`{"millis":2147483647,"results":[]}`)
	var plain []byte
	if !root.templated {
		// Nothing to expand: every destination gets the object as it is.
		var buf bytes.Buffer
		root.write(&buf, nil)
		plain = buf.Bytes()
	}
	parsed := map[templateKey]parsedTemplate{}
	ref := &budgetRef{}
	for i, props := range req.Properties {
		var r result
		switch {
		case plain != nil && len(plain) > lim.Object:
			r = failure([]string{fmt.Sprintf("template: %s: the object is %d bytes, over the limit of %d", name(i), len(plain), lim.Object)})
		case plain != nil:
			r = result{Object: plain}
		default:
			ref.b = newBudget(lim.Object, deadline, lim.Millis)
			r = expandFor(root, name(i), props, parsed, ref)
		}
		if size := r.size(); size+1 > room {
			r = failure([]string{fmt.Sprintf("template: %s: not expanded: the answer to this request would be over %d bytes", name(i), lim.Answer)})
			if r.size()+1 > room {
				// Not even the message fits: the answer would be malformed; this cannot happen with
				// any answer bound over a few hundred bytes, and is reported as the request's error.
				return frames.ErrorAnswer(fmt.Errorf("the answer limit of %d bytes is too small", lim.Answer))
			}
		}
		room -= r.size() + 1
		results[i] = r
	}
	// Rounded up: a caller adding the requests' times never counts less than they took.
	took := (time.Since(start) + time.Millisecond - 1) / time.Millisecond
	b, err := json.Marshal(map[string]any{"results": results, "millis": int64(took)})
	if err != nil {
		return frames.ErrorAnswer(err)
	}
	return b
}

// failure is a destination's result for its messages, kept to maxMessages bytes in all.
func failure(errs []string) result {
	kept, total := errs, 0
	for i, e := range errs {
		total += len(e)
		if total > maxMessages && i > 0 {
			kept = append(errs[:i:i], fmt.Sprintf("… and %d more errors", len(errs)-i))
			break
		}
	}
	return result{Error: kept[0], Errors: kept}
}

// size is what the result takes in the answer (its JSON, as json.Marshal writes it).
func (r result) size() int {
	if r.Object != nil {
		return len(`{"object":}`) + len(r.Object)
	}
	n := len(`{"error":,"errors":[]}`) + jsonLen(r.Error)
	for _, e := range r.Errors {
		n += jsonLen(e) + 1
	}
	return n
}

func jsonLen(s string) int {
	b, _ := json.Marshal(s) // a string always marshals
	return len(b)
}

// node is one JSON value of the object, in document order.
type node struct {
	kind      byte // 'o' object, 'a' array, 's' string, 'v' number, bool or null
	keys      []string
	kids      []*node
	str       string
	raw       string // the literal of a 'v' node
	templated bool   // a string at or under this node contains "{{"
}

func parseTree(raw []byte) (*node, error) {
	// json.Valid bounds the nesting depth (the recursion below then cannot run away).
	if !json.Valid(raw) {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		return nil, errors.New("invalid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return parseValue(dec)
}

func parseValue(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &node{}
		switch t {
		case '{':
			n.kind = 'o'
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("object key is %T", k)
				}
				kid, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key)
				n.kids = append(n.kids, kid)
				n.templated = n.templated || kid.templated
			}
		case '[':
			n.kind = 'a'
			for dec.More() {
				kid, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				n.kids = append(n.kids, kid)
				n.templated = n.templated || kid.templated
			}
		default:
			return nil, fmt.Errorf("unexpected %v", t)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &node{kind: 's', str: t, templated: strings.Contains(t, "{{")}, nil
	case json.Number:
		return &node{kind: 'v', raw: t.String()}, nil
	case bool:
		return &node{kind: 'v', raw: strconv.FormatBool(t)}, nil
	case nil:
		return &node{kind: 'v', raw: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %T", tok)
}

// write encodes the tree, taking each string through replace when one is given.
func (n *node) write(buf *bytes.Buffer, replace func(*node) string) {
	switch n.kind {
	case 'o':
		buf.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			n.kids[i].write(buf, replace)
		}
		buf.WriteByte('}')
	case 'a':
		buf.WriteByte('[')
		for i, kid := range n.kids {
			if i > 0 {
				buf.WriteByte(',')
			}
			kid.write(buf, replace)
		}
		buf.WriteByte(']')
	case 's':
		if replace != nil && n.templated {
			writeString(buf, replace(n))
		} else {
			writeString(buf, n.str)
		}
	default:
		buf.WriteString(n.raw)
	}
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always marshals
	buf.Write(b)
}

// templateKey names a parse: two strings may share a name (keys holding dots), never a key.
type templateKey struct{ name, text string }

type parsedTemplate struct {
	tmpl *template.Template
	err  error
}

// expandFor expands every templated string for one destination, within ref's budget (one for all
// its leaves), and the object as encoded must fit in its limit too. Templates are parsed once per
// name (destinations that share a name root share them).
func expandFor(root *node, nameRoot string, props map[string]string, parsed map[templateKey]parsedTemplate, ref *budgetRef) result {
	var errs []string
	expanded := map[*node]string{}
	b := ref.b
	var walk func(n *node, name string)
	walk = func(n *node, name string) {
		// Past a limit every later leaf would fail the same way: one message says it.
		if !n.templated || b.stopped {
			return
		}
		switch n.kind {
		case 'o':
			for i, k := range n.keys {
				walk(n.kids[i], name+"."+k)
			}
		case 'a':
			for i, kid := range n.kids {
				walk(kid, name+"["+strconv.Itoa(i)+"]")
			}
		case 's':
			s, err := expandString(name, n.str, props, parsed, ref)
			if err != nil {
				errs = append(errs, err.Error())
			}
			expanded[n] = s
		}
	}
	walk(root, nameRoot)
	if len(errs) > 0 {
		return failure(errs)
	}
	var buf bytes.Buffer
	root.write(&buf, func(n *node) string { return expanded[n] })
	if buf.Len() > b.limit {
		return failure([]string{fmt.Sprintf("template: %s: the expanded object is %d bytes, over the limit of %d", nameRoot, buf.Len(), b.limit)})
	}
	return result{Object: buf.Bytes()}
}

// expandString is one leaf string's expansion; a failed parse yields "" (as in KubeStellar).
func expandString(name, input string, props map[string]string, parsed map[templateKey]parsedTemplate, ref *budgetRef) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("template: %s: %v", name, r)
		}
	}()
	key := templateKey{name, input}
	p, ok := parsed[key]
	if !ok {
		p.tmpl, p.err = template.New(name).Option("missingkey=error").Funcs(boundedFuncs(ref)).Parse(input)
		if p.err == nil {
			addSteps(p.tmpl)
		}
		parsed[key] = p
	}
	if p.err != nil {
		return "", p.err
	}
	w := &limitedWriter{budget: ref.b, name: name}
	err = p.tmpl.Execute(w, props)
	var execErr template.ExecError
	if errors.As(err, &execErr) {
		// KubeStellar reports the wrapped error; its text is the same.
		err = execErr.Err
	}
	return string(w.buf), err
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "ksview-gotemplate: %v\n", err)
	os.Exit(1)
}

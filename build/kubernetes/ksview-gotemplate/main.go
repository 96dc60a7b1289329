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
//	{"object": <any JSON>, "properties": [{"clusterName": "wec1", ...}, ...], "names": ["$", ...]}
//
// with one property map per destination; "names" (optional, default "$" for each) gives each
// destination's name root. The answer frame holds JSON {"results": [...]}, one result per
// destination in the same order: {"object": <expanded JSON>} or {"error": "<first message>",
// "errors": ["<every message, in document order>"]}. A request that cannot be read is answered
// {"error": "<message>"}. Object key order is kept. EOF on stdin ends the program.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/template"

	"kubestellar-view/build/kubernetes/internal/frames"
)

// maxFrame bounds a request; a bigger one is skipped and answered with an error.
const maxFrame = 64 << 20

// maxExpansion bounds what one string may expand to: no Kubernetes object holds more, and a
// template such as {{range 1000000000}} must not exhaust memory.
const maxExpansion = 8 << 20

func main() {
	if err := frames.Serve(os.Stdin, os.Stdout, maxFrame, handle); err != nil {
		fatal(err)
	}
}

type request struct {
	Object     json.RawMessage     `json:"object"`
	Properties []map[string]string `json:"properties"`
	Names      []string            `json:"names"`
}

type result struct {
	Object json.RawMessage `json:"object,omitempty"`
	Error  string          `json:"error,omitempty"`
	Errors []string        `json:"errors,omitempty"`
}

// handle answers one request; whatever goes wrong inside becomes a top-level error.
func handle(body []byte) (answer []byte) {
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
	results := make([]result, len(req.Properties))
	if !root.templated {
		// Nothing to expand: every destination gets the object as it is.
		var buf bytes.Buffer
		root.write(&buf, nil)
		for i := range results {
			results[i].Object = buf.Bytes()
		}
	} else {
		parsed := map[templateKey]parsedTemplate{}
		for i, props := range req.Properties {
			name := "$"
			if req.Names != nil {
				name = req.Names[i]
			}
			results[i] = expandFor(root, name, props, parsed)
		}
	}
	b, err := json.Marshal(map[string]any{"results": results})
	if err != nil {
		return frames.ErrorAnswer(err)
	}
	return b
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

// expandFor expands every templated string for one destination. Templates are parsed once per
// name (destinations that share a name root share them).
func expandFor(root *node, nameRoot string, props map[string]string, parsed map[templateKey]parsedTemplate) result {
	var errs []string
	expanded := map[*node]string{}
	var walk func(n *node, name string)
	walk = func(n *node, name string) {
		if !n.templated {
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
			s, err := expandString(name, n.str, props, parsed)
			if err != nil {
				errs = append(errs, err.Error())
			}
			expanded[n] = s
		}
	}
	walk(root, nameRoot)
	if len(errs) > 0 {
		return result{Error: errs[0], Errors: errs}
	}
	var buf bytes.Buffer
	root.write(&buf, func(n *node) string { return expanded[n] })
	return result{Object: buf.Bytes()}
}

// expandString is one leaf string's expansion; a failed parse yields "" (as in KubeStellar).
func expandString(name, input string, props map[string]string, parsed map[templateKey]parsedTemplate) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("template: %s: %v", name, r)
		}
	}()
	key := templateKey{name, input}
	p, ok := parsed[key]
	if !ok {
		p.tmpl, p.err = template.New(name).Option("missingkey=error").Parse(input)
		parsed[key] = p
	}
	if p.err != nil {
		return "", p.err
	}
	w := &limitedWriter{limit: maxExpansion, name: name}
	err = p.tmpl.Execute(w, props)
	var execErr template.ExecError
	if errors.As(err, &execErr) {
		// KubeStellar reports the wrapped error; its text is the same.
		err = execErr.Err
	}
	return w.buf.String(), err
}

type limitedWriter struct {
	buf   bytes.Buffer
	limit int
	name  string
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.limit {
		return 0, fmt.Errorf("template: %s: the expansion is over %d bytes", w.name, w.limit)
	}
	return w.buf.Write(p)
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "ksview-gotemplate: %v\n", err)
	os.Exit(1)
}

// Command ksview-protojson decodes Kubernetes protobuf request bodies into JSON for ksview serve,
// which stores some kinds denatured and so must read what typed clients (kubectl create
// clusterrole, client-go clientsets) send in protobuf. It uses client-go's own scheme, so every
// built-in kind of this Kubernetes version decodes exactly as kube-apiserver would decode it.
//
// Protocol, on stdin and stdout, one request at a time, in order: a frame is a 4-byte big-endian
// length and that many bytes. A request frame holds a protobuf body as sent to kube-apiserver
// (with its "k8s\x00" magic prefix). Each answer frame holds JSON: {"object": <the object with
// apiVersion and kind>} or {"error": "<message>"}. EOF on stdin ends the program.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"kubestellar-view/build/kubernetes/internal/frames"
)

const maxFrame = 16 << 20

func main() {
	decoder := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	if err := frames.Serve(os.Stdin, os.Stdout, maxFrame, func(body []byte) []byte { return decode(decoder, body) }); err != nil {
		fatal(err)
	}
}

func decode(decoder *protobuf.Serializer, body []byte) []byte {
	obj, gvk, err := decoder.Decode(body, nil, nil)
	var answer any
	if err != nil {
		answer = map[string]string{"error": err.Error()}
	} else {
		obj.GetObjectKind().SetGroupVersionKind(*gvk)
		answer = map[string]any{"object": obj}
	}
	b, err := json.Marshal(answer)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return b
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "ksview-protojson: %v\n", err)
	os.Exit(1)
}

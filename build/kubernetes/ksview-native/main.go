// Command ksview-native runs Kubernetes' own code for the kinds ksview serve stores denatured, so
// that they read and write exactly as natively: decoding (strict, with kube's messages), patches
// (JSON, merge, strategic merge with the Go types' patch metadata), defaulting, each kind's
// registry strategy (create and update rules, validation, CEL compilation of admission
// policies), field ownership and server-side apply (the apiserver's field manager with the
// kinds' OpenAPI), and encoding (canonical quantities, omitempty and null as natively).
//
// It is a k8s.io/apiserver GenericAPIServer with the real registries of k8s.io/kubernetes and
// k8s.io/kube-aggregator, whose storage is one object per request (storage.go): ksview serve
// sends the live object with the request, the registry does what kube-apiserver would, and the
// answer is the object to store (header X-Ksview-Write: create, update or none) or the Status
// kube-apiserver would give. ksview serve stores it in the WDS and answers the client.
//
// Served on a unix socket (--socket), HTTP/1.1, to ksview serve only (no authentication: the
// socket's directory is private to its user):
//   - a write as kube-apiserver takes it (POST, PUT, PATCH under /api or /apis), with header
//     X-Ksview-Live-Length: n, the body then being n bytes of the live object (JSON) followed by
//     the request's own body; n = 0 when there is no live object;
//   - POST /ksview/normalize?apiVersion=<group/version>: a JSON array of objects read from
//     storage, answered with each one as kube-apiserver would show it (defaulted, re-encoded),
//     or why it cannot be decoded: [{"object": ...} | {"error": "..."}, ...], in order;
//   - GET /healthz.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	restclient "k8s.io/client-go/rest"
	"k8s.io/component-base/compatibility"
	baseversion "k8s.io/component-base/version"
	aggregatoropenapi "k8s.io/kube-aggregator/pkg/generated/openapi"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

const liveLengthHeader = "X-Ksview-Live-Length"

// maxBody is kube-apiserver's limit on a request body (3 MiB), twice: the live object and the body.
const maxBody = 2*3*1024*1024 + 1024

// restOptions gives every registry the one-object storage, with the codec of the kind's scheme.
type restOptions struct{}

func (restOptions) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	// The codec of the one-object storage: decodes the live object (any version) to the internal
	// type, and encodes in the group's preferred version (dry runs copy objects through it).
	versions := legacyscheme.Scheme.PrioritizedVersionsForGroup(resource.Group)
	return generic.RESTOptions{
		StorageConfig: &storagebackend.ConfigForResource{
			Config:        storagebackend.Config{Codec: legacyscheme.Codecs.LegacyCodec(versions...)},
			GroupResource: resource,
		},
		Decorator:      oneObjectDecorator,
		ResourcePrefix: resource.Group + "/" + resource.Resource,
	}, nil
}

func openAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := generatedopenapi.GetOpenAPIDefinitions(ref)
	for k, v := range aggregatoropenapi.GetOpenAPIDefinitions(ref) {
		defs[k] = v
	}
	return defs
}

func newServer(d *wds) (*genericapiserver.GenericAPIServer, error) {
	cfg := genericapiserver.NewConfig(legacyscheme.Codecs)
	cfg.EffectiveVersion = compatibility.NewEffectiveVersionFromString(baseversion.Get().GitVersion, "", "")
	cfg.LoopbackClientConfig = &restclient.Config{}
	cfg.ExternalAddress = "ksview-native.invalid:443" // never dialled: links are not served
	namer := openapinamer.NewDefinitionNamer(legacyscheme.Scheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openAPIDefinitions, namer)
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openAPIDefinitions, namer)
	cfg.SkipOpenAPIInstallation = true
	// Writes that create (apply, or PUT of a missing object) ask the authorizer for "create" here;
	// the WDS decides for real when ksview serve stores the object as the caller.
	cfg.Authorization.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	cfg.BuildHandlerChainFunc = func(h http.Handler, c *genericapiserver.Config) http.Handler {
		h = withExchange(h)
		h = withUser(h)
		h = genericapifilters.WithWarningRecorder(h)
		h = genericapifilters.WithRequestInfo(h, c.RequestInfoResolver)
		h = genericapifilters.WithRequestReceivedTimestamp(h)
		h = genericfilters.WithPanicRecovery(h, c.RequestInfoResolver)
		return genericapifilters.WithAuditInit(h)
	}
	server, err := cfg.Complete(nil).New("ksview-native", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	for _, g := range groups(restOptions{}) {
		if g.name == "rbac.authorization.k8s.io" {
			withEscalationChecks(g.storage, d)
		}
		info := g.apiGroupInfo()
		if g.name == "" {
			err = server.InstallLegacyAPIGroup("/api", &info)
		} else {
			err = server.InstallAPIGroup(&info)
		}
		if err != nil {
			return nil, fmt.Errorf("installing group %q: %w", g.name, err)
		}
	}
	return server, nil
}

// withExchange takes the live object off the front of a write's body and puts it in the
// context for the storage.
func withExchange(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := r.Header.Get(liveLengthHeader)
		if n == "" {
			http.Error(w, "missing "+liveLengthHeader, http.StatusBadRequest)
			return
		}
		length, err := strconv.Atoi(n)
		body, readErr := io.ReadAll(io.LimitReader(r.Body, maxBody))
		if err != nil || readErr != nil || length < 0 || length > len(body) {
			http.Error(w, "bad "+liveLengthHeader, http.StatusBadRequest)
			return
		}
		x := &exchange{w: w}
		if length > 0 {
			x.live = body[:length]
		}
		rest := body[length:]
		r.Body = io.NopCloser(bytes.NewReader(rest))
		r.ContentLength = int64(len(rest))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x)))
	})
}

// normalize answers objects read from storage as kube-apiserver shows them: decoded with the
// scheme's defaulting into the internal type, then encoded in the requested version. Each item is
// answered on its own, {"object": <as shown>} or {"error": "<why it cannot be read>"}: one object
// the WDS holds in a shape Kubernetes cannot decode (written around the view) never hides the
// others.
func normalize(w http.ResponseWriter, r *http.Request) {
	gv, err := schema.ParseGroupVersion(r.URL.Query().Get("apiVersion"))
	var items []json.RawMessage
	if err == nil {
		err = json.NewDecoder(io.LimitReader(r.Body, 1<<30)).Decode(&items)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	codecs := legacyscheme.Codecs
	decoder := codecs.UniversalDecoder()
	encoder := codecs.LegacyCodec(gv)
	var out, one bytes.Buffer
	out.WriteByte('[')
	for i, item := range items {
		if i > 0 {
			out.WriteByte(',')
		}
		one.Reset()
		obj, _, err := decoder.Decode(item, nil, nil)
		if err == nil {
			err = encoder.Encode(obj, &one)
		}
		if err != nil {
			msg, _ := json.Marshal(err.Error())
			out.WriteString(`{"error":`)
			out.Write(msg)
			out.WriteByte('}')
			continue
		}
		out.WriteString(`{"object":`)
		out.Write(bytes.TrimRight(one.Bytes(), "\n"))
		out.WriteByte('}')
	}
	out.WriteByte(']')
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out.Bytes())
}

func main() {
	socket := flag.String("socket", "", "the unix socket to serve on (required)")
	kubeconfig := flag.String("kubeconfig", "", "the WDS's kubeconfig (ksview serve's identity), for the RBAC escalation checks; without it every RBAC write that needs them is refused")
	kubecontext := flag.String("context", "", "the context of --kubeconfig (default: its current context)")
	flag.Parse()
	if *socket == "" {
		fail(errors.New("--socket is required"))
	}
	var d *wds
	if *kubeconfig != "" {
		var err error
		if d, err = newWDS(context.Background(), *kubeconfig, *kubecontext); err != nil {
			fail(err)
		}
	}
	server, err := newServer(d)
	if err != nil {
		fail(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("POST /ksview/normalize", normalize)
	mux.Handle("/", server.Handler)
	_ = os.Remove(*socket)
	ln, err := net.Listen("unix", *socket)
	if err != nil {
		fail(err)
	}
	srv := &http.Server{Handler: mux, MaxHeaderBytes: 1 << 20}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-stop; _ = srv.Close() }()
	// ksview serve watches stdin: when it goes, so does this helper (no orphan after a crash).
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); _ = srv.Close() }()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fail(err)
	}
	_ = os.Remove(*socket)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "ksview-native: %v\n", err)
	os.Exit(1)
}

// Command clientgo is a small client-go program that integration tests run to check that real
// Go clients work against the servers under test.
//
// Usage:
//
//	clientgo --kubeconfig PATH --context NAME --namespace NS <list|watch> [--timeout 60s] [--wait-for NAME]
//	clientgo --kubeconfig PATH --context NAME [--namespace NS] informer --resource GROUP/VERSION/RESOURCE
//	         [--wait-for NAME --wait-type ADDED|UPDATED|DELETED] [--timeout 60s]
//
// Contract:
//   - list: lists ConfigMaps in NS with the typed clientset and prints one JSON line
//     {"names":[...],"resourceVersion":"..."} on stdout, then exits 0.
//   - watch: watches ConfigMaps in NS with the typed clientset (no informer). Prints {"ready":true}
//     once the watch is established, then one JSON line per event
//     {"type":"ADDED","name":"x","apiVersion":"v1","kind":"ConfigMap"}, where apiVersion and kind
//     are the decoded object's TypeMeta as received (empty strings when it is empty). With
//     --wait-for NAME it exits 0 right after the first event for an object of that name.
//     It exits 1 after --timeout, or if the server ends the watch.
//   - informer: a dynamic shared informer (client-go's dynamicinformer, as controllers use it) on
//     any resource, in NS (all namespaces when --namespace is ""); prints
//     {"synced":true,"names":[...],"resourceVersion":"..."} once its cache has synced (names as
//     <namespace>/<name> or <name>, sorted; the resourceVersion of its last list), then one line
//     per handler call {"type":"ADDED|UPDATED|DELETED","namespace":"","name":"x","resourceVersion":"1"}.
//     With --wait-for NAME it exits 0 right after the first event of --wait-type (UPDATED unless
//     told) for that name. It exits 1 after --timeout.
//   - Any error: one line on stderr, exit 1.
//
// Each stdout line is one write to the unbuffered os.Stdout, so readers see it at once.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	fs := flag.NewFlagSet("clientgo", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by fail
	kubeconfig := fs.String("kubeconfig", "", "path to the kubeconfig file")
	kubeContext := fs.String("context", "", "kubeconfig context to use")
	namespace := fs.String("namespace", "default", "namespace of the ConfigMaps")
	timeout := fs.Duration("timeout", 60*time.Second, "give up after this long")
	waitFor := fs.String("wait-for", "", "watch, informer: exit 0 after the first event for this name")
	waitType := fs.String("wait-type", "UPDATED", "informer: the event type --wait-for waits for")
	resource := fs.String("resource", "", "informer: GROUP/VERSION/RESOURCE (core: /v1/RESOURCE)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		fail(err)
	}
	// Flags may also follow the command, as in "watch --wait-for hello".
	cmd := fs.Arg(0)
	if err := fs.Parse(fs.Args()[min(1, fs.NArg()):]); err != nil {
		fail(err)
	} else if fs.NArg() > 0 {
		fail(fmt.Errorf("unexpected arguments %q", fs.Args()))
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	var err error
	switch cmd {
	case "list":
		err = list(ctx, *kubeconfig, *kubeContext, *namespace)
	case "watch":
		err = watchConfigMaps(ctx, *kubeconfig, *kubeContext, *namespace, *waitFor)
	case "informer":
		err = runInformer(ctx, *kubeconfig, *kubeContext, *namespace, *resource, *waitFor, *waitType)
	default:
		err = fmt.Errorf("unknown command %q: want list, watch or informer", cmd)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "clientgo: %v\n", err)
	os.Exit(1)
}

func restConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext},
	).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	return config, nil
}

func newClient(kubeconfig, kubeContext string) (*kubernetes.Clientset, error) {
	config, err := restConfig(kubeconfig, kubeContext)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(config)
}

// printJSON writes v as one JSON line in a single write.
func printJSON(v any) error {
	b, err := json.Marshal(v)
	if err == nil {
		_, err = os.Stdout.Write(append(b, '\n'))
	}
	return err
}

func list(ctx context.Context, kubeconfig, kubeContext, namespace string) error {
	client, err := newClient(kubeconfig, kubeContext)
	if err != nil {
		return err
	}
	cms, err := client.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing configmaps: %w", err)
	}
	names := make([]string, 0, len(cms.Items))
	for _, cm := range cms.Items {
		names = append(names, cm.Name)
	}
	return printJSON(struct {
		Names           []string `json:"names"`
		ResourceVersion string   `json:"resourceVersion"`
	}{names, cms.ResourceVersion})
}

type event struct {
	Type       watch.EventType `json:"type"`
	Name       string          `json:"name"`
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
}

func watchConfigMaps(ctx context.Context, kubeconfig, kubeContext, namespace, waitFor string) error {
	client, err := newClient(kubeconfig, kubeContext)
	if err != nil {
		return err
	}
	w, err := client.CoreV1().ConfigMaps(namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("starting watch: %w", err)
	}
	defer w.Stop()
	if err := printJSON(map[string]bool{"ready": true}); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("watch: %w", ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok {
				if ctx.Err() != nil {
					return fmt.Errorf("watch: %w", ctx.Err())
				}
				return errors.New("watch: the server closed the watch")
			}
			if ev.Type == watch.Error {
				return fmt.Errorf("watch error event: %w", apierrors.FromObject(ev.Object))
			}
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok {
				return fmt.Errorf("watch event %s: unexpected object %T", ev.Type, ev.Object)
			}
			// As decoded, not filled in: empty strings when the object's TypeMeta is empty.
			apiVersion, kind := ev.Object.GetObjectKind().GroupVersionKind().ToAPIVersionAndKind()
			if err := printJSON(event{ev.Type, cm.Name, apiVersion, kind}); err != nil {
				return err
			}
			if waitFor != "" && cm.Name == waitFor {
				return nil
			}
		}
	}
}

type informerEvent struct {
	Type            string `json:"type"`
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	ResourceVersion string `json:"resourceVersion"`
}

// runInformer runs a dynamic shared informer on one resource and prints what its handlers see.
func runInformer(ctx context.Context, kubeconfig, kubeContext, namespace, resource, waitFor, waitType string) error {
	parts := strings.Split(resource, "/")
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return fmt.Errorf("--resource %q: want GROUP/VERSION/RESOURCE", resource)
	}
	gvr := schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}
	config, err := restConfig(kubeconfig, kubeContext)
	if err != nil {
		return err
	}
	client, err := dynamic.NewForConfig(config)
	if err != nil {
		return err
	}
	// The informer stops before the factory's Shutdown waits for it (defers run last first).
	ctx, stop := context.WithCancel(ctx)
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, namespace, nil)
	defer factory.Shutdown()
	defer stop()
	informer := factory.ForResource(gvr).Informer()
	synced := make(chan struct{})
	done := make(chan error, 1)
	finish := func(err error) { // the first result wins; later ones never block a handler
		select {
		case done <- err:
		default:
		}
	}
	emit := func(t string, obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			finish(fmt.Errorf("%s: unexpected object %T", t, obj))
			return
		}
		if err := printJSON(informerEvent{t, u.GetNamespace(), u.GetName(), u.GetResourceVersion()}); err != nil {
			finish(err)
			return
		}
		select {
		case <-synced:
			if waitFor != "" && u.GetName() == waitFor && t == waitType {
				finish(nil)
			}
		default:
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { emit("ADDED", obj) },
		UpdateFunc: func(_, obj any) { emit("UPDATED", obj) },
		DeleteFunc: func(obj any) { emit("DELETED", obj) },
	}); err != nil {
		return err
	}
	if err := informer.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		fmt.Fprintf(os.Stderr, "clientgo: informer: %v\n", err)
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return fmt.Errorf("informer: cache not synced: %w", ctx.Err())
	}
	names := []string{}
	for _, key := range informer.GetStore().ListKeys() {
		names = append(names, key)
	}
	sort.Strings(names)
	// Events from here on may end the wait, including one handled while the line below is written.
	close(synced)
	if err := printJSON(map[string]any{"synced": true, "names": names, "resourceVersion": informer.LastSyncResourceVersion()}); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		if waitFor == "" {
			return fmt.Errorf("informer: %w", ctx.Err())
		}
		return fmt.Errorf("informer: no %s event for %q: %w", waitType, waitFor, ctx.Err())
	}
}

// Command clientgo is a small client-go program that integration tests run to check that real
// Go clients work against the servers under test.
//
// Usage:
//
//	clientgo --kubeconfig PATH --context NAME --namespace NS <list|watch> [--timeout 60s] [--wait-for NAME]
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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	fs := flag.NewFlagSet("clientgo", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by fail
	kubeconfig := fs.String("kubeconfig", "", "path to the kubeconfig file")
	kubeContext := fs.String("context", "", "kubeconfig context to use")
	namespace := fs.String("namespace", "default", "namespace of the ConfigMaps")
	timeout := fs.Duration("timeout", 60*time.Second, "give up after this long")
	waitFor := fs.String("wait-for", "", "watch: exit 0 after the first event for this name")
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
	default:
		err = fmt.Errorf("unknown command %q: want list or watch", cmd)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "clientgo: %v\n", err)
	os.Exit(1)
}

func newClient(kubeconfig, kubeContext string) (*kubernetes.Clientset, error) {
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext},
	).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
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

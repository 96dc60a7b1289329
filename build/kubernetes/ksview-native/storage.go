package main

// The storage under every registry of this helper: not a database, one object per request. ksview
// serve reads the live object from the WDS and sends it with the request (exchange.live); the
// real registry (strategy, validation, field manager) runs against it as against etcd, and what it
// would write is recorded (exchange.write) for ksview serve to store. Reads other than of the one
// live object, lists and watches are never asked of it: ksview serve answers those itself.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// writeHeader tells ksview serve what the registry wrote: "create", "update" or "none".
const writeHeader = "X-Ksview-Write"

type exchangeKey struct{}

// exchange is one request's storage: the live object as ksview serve read it (JSON, native
// version; nil when there is none) and the response, on which the write is reported.
type exchange struct {
	live []byte
	w    http.ResponseWriter
}

func exchangeFrom(ctx context.Context) (*exchange, error) {
	x, ok := ctx.Value(exchangeKey{}).(*exchange)
	if !ok {
		return nil, errors.New("no live object was exchanged for this request")
	}
	return x, nil
}

var errNotServed = errors.New("ksview-native serves writes only: reads, lists and watches are ksview serve's")

// oneObject is a storage.Interface over the request's exchange.
type oneObject struct {
	codec     runtime.Codec
	newFunc   func() runtime.Object
	versioner storage.Versioner
}

func oneObjectDecorator(config *storagebackend.ConfigForResource, _ string, _ func(runtime.Object) (string, error),
	newFunc func() runtime.Object, _ func() runtime.Object, _ storage.AttrFunc, _ storage.IndexerFuncs,
	_ *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
	return &oneObject{codec: config.Codec, newFunc: newFunc, versioner: storage.APIObjectVersioner{}}, func() {}, nil
}

// liveObject decodes the exchanged object as etcd's would be: defaulted, converted to internal.
func (s *oneObject) liveObject(ctx context.Context) (*exchange, runtime.Object, error) {
	x, err := exchangeFrom(ctx)
	if err != nil || x.live == nil {
		return x, nil, err
	}
	obj, _, err := s.codec.Decode(x.live, nil, s.newFunc())
	if err != nil {
		return x, nil, fmt.Errorf("decoding the live object: %w", err)
	}
	return x, obj, nil
}

func copyInto(src, dst runtime.Object) error {
	sv, dv := reflect.ValueOf(src), reflect.ValueOf(dst)
	if sv.Type() != dv.Type() {
		return fmt.Errorf("cannot copy %T into %T", src, dst)
	}
	dv.Elem().Set(sv.Elem())
	return nil
}

func (s *oneObject) Versioner() storage.Versioner { return s.versioner }

func (s *oneObject) Create(ctx context.Context, key string, obj, out runtime.Object, _ uint64) error {
	x, live, err := s.liveObject(ctx)
	if err != nil {
		return err
	}
	if live != nil {
		return storage.NewKeyExistsError(key, 0)
	}
	// As etcd3's store: the registry must not hand over an object with a version.
	if version, err := s.versioner.ObjectResourceVersion(obj); err == nil && version != 0 {
		return errors.New("resourceVersion should not be set on objects to be created")
	}
	x.w.Header().Set(writeHeader, "create")
	return copyInto(obj.DeepCopyObject(), out)
}

func (s *oneObject) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	_, live, err := s.liveObject(ctx)
	if err != nil {
		return err
	}
	if live == nil {
		if opts.IgnoreNotFound {
			return copyInto(s.newFunc(), objPtr)
		}
		return storage.NewKeyNotFoundError(key, 0)
	}
	return copyInto(live, objPtr)
}

func (s *oneObject) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, _ runtime.Object) error {
	x, live, err := s.liveObject(ctx)
	if err != nil {
		return err
	}
	var existing runtime.Object
	var rv uint64
	if live == nil {
		if !ignoreNotFound {
			return storage.NewKeyNotFoundError(key, 0)
		}
		existing = s.newFunc()
	} else {
		existing = live.DeepCopyObject()
		if rv, err = s.versioner.ObjectResourceVersion(live); err != nil {
			return err
		}
		if err := preconditions.Check(key, existing); err != nil {
			return err
		}
	}
	updated, _, err := tryUpdate(existing, storage.ResponseMeta{ResourceVersion: rv})
	if err != nil {
		return err
	}
	switch {
	case live == nil:
		x.w.Header().Set(writeHeader, "create")
	case apiequality.Semantic.DeepEqual(live, updated):
		// As etcd3's store, an update that changes nothing is not written.
		x.w.Header().Set(writeHeader, "none")
	default:
		x.w.Header().Set(writeHeader, "update")
	}
	if live != nil {
		if err := s.versioner.UpdateObject(updated, rv); err != nil {
			return err
		}
	}
	return copyInto(updated, destination)
}

func (s *oneObject) Delete(context.Context, string, runtime.Object, *storage.Preconditions, storage.ValidateObjectFunc, runtime.Object, storage.DeleteOptions) error {
	return errNotServed
}

func (s *oneObject) Watch(context.Context, string, storage.ListOptions) (watch.Interface, error) {
	return nil, errNotServed
}

func (s *oneObject) GetList(context.Context, string, storage.ListOptions, runtime.Object) error {
	return errNotServed
}

func (s *oneObject) Count(string) (int64, error) { return 0, errNotServed }

func (s *oneObject) ReadinessCheck() error { return nil }

func (s *oneObject) RequestWatchProgress(context.Context) error { return errNotServed }

func (s *oneObject) GetCurrentResourceVersion(context.Context) (uint64, error) {
	return 0, errNotServed
}

package main

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/apis/rbac"
)

// stubStorage stands for the helper's registry under the policybased storages: it "writes"
// whatever reaches it.
type stubStorage struct {
	rest.StandardStorage
	old runtime.Object
}

func (s *stubStorage) Create(_ context.Context, obj runtime.Object, _ rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	return obj, nil
}

func (s *stubStorage) Update(ctx context.Context, _ string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc, _ rest.ValidateObjectUpdateFunc, _ bool, _ *metav1.UpdateOptions) (runtime.Object, bool, error) {
	obj, err := objInfo.UpdatedObject(ctx, s.old)
	return obj, false, err
}

func checkedStorage(d *wds, old runtime.Object) map[string]rest.Storage {
	storage := map[string]rest.Storage{}
	for _, r := range []string{"clusterroles", "clusterrolebindings", "roles", "rolebindings"} {
		storage[r] = &stubStorage{old: old}
	}
	withEscalationChecks(storage, d)
	return storage
}

func as(name string, groups ...string) context.Context {
	return genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: name, Groups: groups})
}

func denaturedClusterRole(name string, labels map[string]interface{}, selector map[string]interface{}, rules ...interface{}) *unstructured.Unstructured {
	meta := map[string]interface{}{"name": storedName(name)}
	if labels != nil {
		meta["labels"] = labels
	}
	obj := map[string]interface{}{"apiVersion": "denatured.kubestellar.io/v1", "kind": "ClusterRole", "metadata": meta, "rules": rules}
	if selector != nil {
		obj["aggregationRule"] = map[string]interface{}{"clusterRoleSelectors": []interface{}{map[string]interface{}{"matchLabels": selector}}}
	}
	return &unstructured.Unstructured{Object: obj}
}

var everything = map[string]interface{}{"apiGroups": []interface{}{"*"}, "resources": []interface{}{"*"}, "verbs": []interface{}{"*"}}

// Hole A: a binding to an aggregated ClusterRole grants, in the WECs, the rules of every
// ClusterRole its selectors match (kube's clusterrole-aggregation controller fills them there),
// denatured or native, whichever of the two is the aggregated one.
func TestBindingToAggregatedRoleWeighsWhatItAggregates(t *testing.T) {
	nativeEdit := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "edit-like"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"example.com/aggregate-to-edit-like": "true"}}}}}
	d, _, _ := newTestWDS(t, nativeEdit)
	for _, o := range []*unstructured.Unstructured{
		// a denatured aggregated role, and a denatured role its selector matches
		denaturedClusterRole("gatherer", nil, map[string]interface{}{"example.com/gather": "true"}),
		denaturedClusterRole("big", map[string]interface{}{"example.com/gather": "true"}, nil, everything),
		// a denatured role the WDS's native aggregated role's selector matches
		denaturedClusterRole("sneaky", map[string]interface{}{"example.com/aggregate-to-edit-like": "true"}, nil, everything),
	} {
		if err := d.denaturedClusterRoles.GetStore().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	storage := checkedStorage(d, nil)
	for _, role := range []string{"gatherer", "edit-like"} {
		ctx := genericapirequest.WithRequestInfo(as("mallory"), &genericapirequest.RequestInfo{Resource: "clusterrolebindings"})
		binding := &rbac.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
			RoleRef:  rbac.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
			Subjects: []rbac.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "mallory"}}}
		_, err := storage["clusterrolebindings"].(rest.Creater).Create(ctx, binding, nil, &metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("binding mallory to %s (which aggregates everything): err %v, want Forbidden", role, err)
		}
	}
	rules, err := d.GetRoleReferenceRules(as("x"), rbacv1.RoleRef{Kind: "ClusterRole", Name: "big"}, "")
	if err != nil || len(rules) != 1 {
		t.Errorf("a role without aggregationRule is its own rules: %+v, %v", rules, err)
	}
}

// Hole B: a denatured role named like a native role of the WDS (so of the WECs) is merged into it
// by the agent's apply; writing one is weighed by the native role's rules too.
func TestSameNameRoleWeighsTheNativeRole(t *testing.T) {
	native := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cluster-admin"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	nativeRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "ns-admin", Namespace: "ns"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	d, _, _ := newTestWDS(t, native, nativeRole)
	if err := d.ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	labelled := func(name string) *rbac.ClusterRole {
		return &rbac.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}}}
	}
	old := &rbac.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cluster-admin"}}
	storage := checkedStorage(d, old)
	create := func(ctx context.Context, obj runtime.Object, resource string) error {
		_, err := storage[resource].(rest.Creater).Create(ctx, obj, nil, &metav1.CreateOptions{})
		return err
	}
	update := func(ctx context.Context, obj runtime.Object) error {
		_, _, err := storage["clusterroles"].(rest.Updater).Update(ctx, "cluster-admin", rest.DefaultUpdatedObjectInfo(obj), nil, nil, false, &metav1.UpdateOptions{})
		return err
	}
	err := create(as("mallory"), labelled("cluster-admin"), "clusterroles")
	if !apierrors.IsForbidden(err) || err.Error() == "" {
		t.Errorf("mallory creates a denatured cluster-admin: err %v, want Forbidden", err)
	} else if want := `clusterroles.rbac.authorization.k8s.io "cluster-admin" is forbidden: user "mallory" (groups=[]) is attempting to grant RBAC permissions not currently held:`; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("message %q, want it to start %q", err.Error(), want)
	}
	if err := update(as("mallory"), labelled("cluster-admin")); !apierrors.IsForbidden(err) {
		t.Errorf("mallory updates the denatured cluster-admin: err %v, want Forbidden", err)
	}
	role := &rbac.Role{ObjectMeta: metav1.ObjectMeta{Name: "ns-admin", Namespace: "ns"}}
	if err := create(genericapirequest.WithNamespace(as("mallory"), "ns"), role, "roles"); !apierrors.IsForbidden(err) {
		t.Errorf("mallory creates a denatured Role named like a native one: err %v, want Forbidden", err)
	}
	for _, ok := range []context.Context{as("allowed"), as("root", "system:masters")} {
		// kube asks `escalate` of the request's resource
		ok = genericapirequest.WithRequestInfo(ok, &genericapirequest.RequestInfo{IsResourceRequest: true, APIGroup: "rbac.authorization.k8s.io", APIVersion: "v1", Resource: "clusterroles", Verb: "create", Name: "cluster-admin"})
		if err := create(ok, labelled("cluster-admin"), "clusterroles"); err != nil {
			t.Errorf("with escalate, or system:masters: err %v", err)
		}
	}
	if err := create(as("mallory"), labelled("not-native"), "clusterroles"); err != nil {
		t.Errorf("a name the WDS has no native role of: err %v", err)
	}
	gcOnly := old.DeepCopy()
	gcOnly.Finalizers = []string{"example.com/f"}
	if err := update(as("mallory"), gcOnly); err != nil {
		t.Errorf("a metadata-only (GC fields) update is not re-checked: err %v", err)
	}
}

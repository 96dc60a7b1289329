package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	rbacvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"
	rbacauthorizer "k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
)

// The stored name is the one ksview serve computes (src/storage/denatured-translation.ts).
func TestStoredName(t *testing.T) {
	for native, stored := range map[string]string{
		"view":          "view",
		"cluster-admin": "cluster-admin",
		// sha256("system:aggregate-to-view"), first 40 hex digits, as the TypeScript computes it.
		"system:aggregate-to-view":      "kv-" + sha40("system:aggregate-to-view"),
		"kv-" + strings.Repeat("a", 40): "kv-" + sha40("kv-"+strings.Repeat("a", 40)),
	} {
		if got := storedName(native); got != stored {
			t.Errorf("storedName(%q) = %q, want %q", native, got, stored)
		}
	}
}

func sha40(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:40]
}

func newTestWDS(t *testing.T, objects ...runtime.Object) (*wds, *fake.Clientset, *[]authorizationv1.SubjectAccessReviewSpec) {
	client := fake.NewSimpleClientset(objects...)
	var asked []authorizationv1.SubjectAccessReviewSpec
	client.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		asked = append(asked, sar.Spec)
		allowed := sar.Spec.User == "allowed"
		return true, &authorizationv1.SubjectAccessReview{Status: authorizationv1.SubjectAccessReviewStatus{Allowed: allowed}}, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	r := factory.Rbac().V1()
	resolver := rbacvalidation.NewDefaultRuleResolver(
		&rbacauthorizer.RoleGetter{Lister: r.Roles().Lister()}, &rbacauthorizer.RoleBindingLister{Lister: r.RoleBindings().Lister()},
		&rbacauthorizer.ClusterRoleGetter{Lister: r.ClusterRoles().Lister()}, &rbacauthorizer.ClusterRoleBindingLister{Lister: r.ClusterRoleBindings().Lister()})
	synced := []cache.InformerSynced{r.Roles().Informer().HasSynced, r.RoleBindings().Informer().HasSynced, r.ClusterRoles().Informer().HasSynced, r.ClusterRoleBindings().Informer().HasSynced}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	factory.Start(ctx.Done())
	denatured := func() cache.SharedIndexInformer {
		return cache.NewSharedIndexInformer(&cache.ListWatch{}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	}
	d := &wds{client: client, native: resolver, nativeRoles: r.Roles().Lister(), nativeClusterRoles: r.ClusterRoles().Lister(), synced: synced, denaturedRoles: denatured(), denaturedClusterRoles: denatured(), denials: utilcache.NewLRUExpireCache(10),
		readStored: func(context.Context, string) ([]byte, error) {
			return nil, apierrors.NewNotFound(schema.GroupResource{Group: denaturedGroup, Resource: "clusterroles"}, "x")
		}}
	return d, client, &asked
}

// escalate and bind are asked of the denatured resource, by its stored name; a denial is
// remembered, an allow never is.
func TestAuthorizeAsksTheDenaturedResource(t *testing.T) {
	d, _, asked := newTestWDS(t)
	ctx := context.Background()
	bind := func(who string) authorizer.Decision {
		dec, _, err := d.Authorize(ctx, authorizer.AttributesRecord{User: &user.DefaultInfo{Name: who, Groups: []string{"g"}}, Verb: "bind",
			APIGroup: "rbac.authorization.k8s.io", APIVersion: "*", Resource: "clusterroles", Name: "system:aggregate-to-view", ResourceRequest: true})
		if err != nil {
			t.Fatal(err)
		}
		return dec
	}
	if bind("mallory") != authorizer.DecisionNoOpinion {
		t.Fatal("mallory may not bind")
	}
	want := authorizationv1.ResourceAttributes{Verb: "bind", Group: "denatured.kubestellar.io", Version: "*", Resource: "clusterroles", Name: storedName("system:aggregate-to-view")}
	if len(*asked) != 1 || *(*asked)[0].ResourceAttributes != want || (*asked)[0].User != "mallory" || (*asked)[0].Groups[0] != "g" {
		t.Fatalf("asked %+v", *asked)
	}
	bind("mallory")
	if len(*asked) != 1 {
		t.Fatalf("a denial is remembered: asked %d times", len(*asked))
	}
	for i := 0; i < 2; i++ {
		if bind("allowed") != authorizer.DecisionAllow {
			t.Fatal("allowed may bind")
		}
	}
	if len(*asked) != 3 {
		t.Fatalf("an allow is asked every time: asked %d times", len(*asked))
	}
}

// A binding's role is the denatured role's rules with the WDS's native role's; NotFound as
// kube-apiserver words it when neither exists.
func TestRoleReferenceRules(t *testing.T) {
	native := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "both"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}
	d, _, _ := newTestWDS(t, native)
	stored := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "denatured.kubestellar.io/v1", "kind": "ClusterRole",
		"metadata": map[string]interface{}{"name": "both"}, "rules": []interface{}{map[string]interface{}{"apiGroups": []interface{}{"*"}, "resources": []interface{}{"*"}, "verbs": []interface{}{"*"}}}}}
	if err := d.denaturedClusterRoles.GetStore().Add(stored); err != nil {
		t.Fatal(err)
	}
	ctx := genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{Resource: "clusterrolebindings"})
	rules, err := d.GetRoleReferenceRules(ctx, rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "both"}, "")
	if err != nil || len(rules) != 2 || rules[0].Verbs[0] != "*" || rules[1].Resources[0] != "pods" {
		t.Fatalf("rules %+v, err %v", rules, err)
	}
	_, err = d.GetRoleReferenceRules(ctx, rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "neither"}, "")
	if !apierrors.IsNotFound(err) || err.Error() != `clusterrolebindings.rbac.authorization.k8s.io "neither" not found` {
		t.Fatalf("err %v", err)
	}
}

package main

// Kubernetes' RBAC privilege-escalation prevention for the denatured Role, ClusterRole, RoleBinding
// and ClusterRoleBinding: the four registries are wrapped in k8s.io/kubernetes'
// pkg/registry/rbac/*/policybased, exactly as kube-apiserver wraps them (pkg/registry/rbac/rest).
// What kube-apiserver gives those wrappers from its own process, this helper takes from the WDS:
//   - the user of the write: sent by ksview serve with each request (X-Ksview-User, JSON), the
//     authenticated caller of the view or the userInfo of a direct write's AdmissionReview;
//   - the authorizer asked for `escalate` and `bind`: a SubjectAccessReview to the WDS (ksview
//     serve's identity) asked of the denatured resource: group rbac.authorization.k8s.io becomes
//     denatured.kubestellar.io, the resource and namespace stay, the name is the stored name
//     (./names.go) — RBAC on denatured objects names them as the WDS stores them. An allowed
//     answer is never cached (a revoked right stops at once); a denial is remembered for
//     denyTTL (1 s), which can only delay a new grant, never let a revoked one pass;
//   - the rule resolver (pkg/registry/rbac/validation.DefaultRuleResolver) over informers of the
//     WDS's native RBAC: "the user holds these rules" is what the WDS grants;
//   - for a binding's roleRef, the role as the fleet will hold it: the union of the rules of the
//     denatured role of that name and of the WDS's native role of that name; NotFound, as
//     kube-apiserver's, when neither exists. Denatured roles are read from an informer (as the
//     native ones), and from the WDS itself when the informer has none of that name (not synced
//     yet, or the role was created a moment ago).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

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
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubernetes/pkg/apis/rbac"
	clusterrolepolicybased "k8s.io/kubernetes/pkg/registry/rbac/clusterrole/policybased"
	clusterrolebindingpolicybased "k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding/policybased"
	rolepolicybased "k8s.io/kubernetes/pkg/registry/rbac/role/policybased"
	rolebindingpolicybased "k8s.io/kubernetes/pkg/registry/rbac/rolebinding/policybased"
	rbacvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"
	rbacauthorizer "k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
)

// userHeader carries the user of a write: {"name","uid","groups","extra"}.
const userHeader = "X-Ksview-User"

const denaturedGroup = "denatured.kubestellar.io"

// sarTimeout bounds one SubjectAccessReview; a WDS that does not answer refuses (no decision).
const sarTimeout = 10 * time.Second

type wireUser struct {
	Name   string              `json:"name"`
	UID    string              `json:"uid"`
	Groups []string            `json:"groups"`
	Extra  map[string][]string `json:"extra"`
}

// withUser puts the user ksview serve sent into the request's context, as kube-apiserver's
// authentication filter does. A write without one has no user: Kubernetes' checks then refuse
// every escalation (no user, no rights).
func withUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get(userHeader)
		if v == "" {
			next.ServeHTTP(w, r)
			return
		}
		var u wireUser
		if err := json.Unmarshal([]byte(v), &u); err != nil || u.Name == "" {
			http.Error(w, "bad "+userHeader, http.StatusBadRequest)
			return
		}
		info := &user.DefaultInfo{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
		next.ServeHTTP(w, r.WithContext(genericapirequest.WithUser(r.Context(), info)))
	})
}

// wds is what the escalation checks ask of the WDS.
type wds struct {
	client kubernetes.Interface
	// native resolves a user's rules from the WDS's native RBAC (informers).
	native *rbacvalidation.DefaultRuleResolver
	synced []cache.InformerSynced
	// denaturedRoles and denaturedClusterRoles: informers of the stored denatured roles.
	denaturedRoles, denaturedClusterRoles cache.SharedIndexInformer
	// denials: SubjectAccessReviews answered "no", by their question, for denyTTL.
	denials *utilcache.LRUExpireCache
	// readStored GETs a path of the WDS (a denatured role the informer does not have).
	readStored func(ctx context.Context, path string) ([]byte, error)
}

// denyTTL is how long a denial is remembered; denyEntries bounds how many are.
const (
	denyTTL     = time.Second
	denyEntries = 10000
)

// syncWait bounds how long a write waits for the informers' first sync.
const syncWait = 10 * time.Second

// ready waits for the informers' first sync: until then nobody's rules are known, and the check
// answers 503 rather than refuse or allow on an empty cache. They start with the helper, before
// `ksview serve --register` may have granted their rights: so the helper starts all the same.
func (d *wds) ready(ctx context.Context) error {
	for _, s := range d.synced {
		if !s() {
			ctx, cancel := context.WithTimeout(ctx, syncWait)
			defer cancel()
			if !cache.WaitForCacheSync(ctx.Done(), d.synced...) {
				return apierrors.NewServiceUnavailable("the WDS's RBAC is not read yet (ksview serve's identity needs list and watch on rbac.authorization.k8s.io); try again")
			}
			return nil
		}
	}
	return nil
}

// newWDS connects to the WDS with the kubeconfig (ksview serve's identity) and starts informers of
// its native RBAC.
func newWDS(ctx context.Context, kubeconfig, kubecontext string) (*wds, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubecontext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("the WDS kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.UserAgent = "ksview-native"
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	r := factory.Rbac().V1()
	resolver := rbacvalidation.NewDefaultRuleResolver(
		&rbacauthorizer.RoleGetter{Lister: r.Roles().Lister()},
		&rbacauthorizer.RoleBindingLister{Lister: r.RoleBindings().Lister()},
		&rbacauthorizer.ClusterRoleGetter{Lister: r.ClusterRoles().Lister()},
		&rbacauthorizer.ClusterRoleBindingLister{Lister: r.ClusterRoleBindings().Lister()},
	)
	synced := []cache.InformerSynced{
		r.Roles().Informer().HasSynced, r.RoleBindings().Informer().HasSynced,
		r.ClusterRoles().Informer().HasSynced, r.ClusterRoleBindings().Informer().HasSynced,
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	denatured := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	roles := denatured.ForResource(schema.GroupVersionResource{Group: denaturedGroup, Version: "v1", Resource: "roles"}).Informer()
	clusterRoles := denatured.ForResource(schema.GroupVersionResource{Group: denaturedGroup, Version: "v1", Resource: "clusterroles"}).Informer()
	factory.Start(ctx.Done())
	denatured.Start(ctx.Done())
	return &wds{client: client, native: resolver, synced: synced, denaturedRoles: roles, denaturedClusterRoles: clusterRoles,
		denials: utilcache.NewLRUExpireCache(denyEntries),
		readStored: func(ctx context.Context, path string) ([]byte, error) {
			return client.Discovery().RESTClient().Get().AbsPath(path).Do(ctx).Raw()
		}}, nil
}

// Authorize asks the WDS, with a SubjectAccessReview, whether the user may do this to the
// denatured resource that stands for the native one.
func (d *wds) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	u := a.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, "no user", nil
	}
	group := a.GetAPIGroup()
	name := a.GetName()
	if group == rbac.GroupName {
		group = denaturedGroup
		if name != "" {
			name = storedName(name)
		}
	}
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range u.GetExtra() {
		extra[k] = v
	}
	spec := authorizationv1.SubjectAccessReviewSpec{
		User: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: a.GetNamespace(), Verb: a.GetVerb(), Group: group, Version: a.GetAPIVersion(),
			Resource: a.GetResource(), Subresource: a.GetSubresource(), Name: name,
		},
	}
	key, err := json.Marshal(spec)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	if reason, denied := d.denials.Get(string(key)); denied {
		return authorizer.DecisionNoOpinion, reason.(string), nil
	}
	ctx, cancel := context.WithTimeout(ctx, sarTimeout)
	defer cancel()
	res, err := d.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	if res.Status.Allowed {
		return authorizer.DecisionAllow, res.Status.Reason, nil
	}
	d.denials.Add(string(key), res.Status.Reason, denyTTL)
	return authorizer.DecisionNoOpinion, res.Status.Reason, nil
}

// RulesFor and VisitRulesFor: the user's rules as the WDS's RBAC grants them.
func (d *wds) RulesFor(ctx context.Context, u user.Info, namespace string) ([]rbacv1.PolicyRule, error) {
	if err := d.ready(ctx); err != nil {
		return nil, err
	}
	return d.native.RulesFor(ctx, u, namespace)
}

func (d *wds) VisitRulesFor(ctx context.Context, u user.Info, namespace string, visitor func(fmt.Stringer, *rbacv1.PolicyRule, error) bool) {
	if err := d.ready(ctx); err != nil {
		visitor(nil, nil, err)
		return
	}
	d.native.VisitRulesFor(ctx, u, namespace, visitor)
}

// denaturedRules reads the denatured role (kind Role or ClusterRole): its rules, and whether it
// exists; from the informer, else from the WDS now. Its stored form keeps the native fields
// (rules) as they are.
func (d *wds) denaturedRules(ctx context.Context, kind, namespace, name string) ([]rbacv1.PolicyRule, bool, error) {
	informer, key := d.denaturedClusterRoles, storedName(name)
	if kind == "Role" {
		informer, key = d.denaturedRoles, namespace+"/"+storedName(name)
	}
	if obj, found, err := informer.GetStore().GetByKey(key); err == nil && found {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			var role struct {
				Rules []rbacv1.PolicyRule `json:"rules"`
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &role); err != nil {
				return nil, false, fmt.Errorf("reading the denatured %s %q: %w", kind, name, err)
			}
			return role.Rules, true, nil
		}
	}
	path := "/apis/" + denaturedGroup + "/v1"
	if kind == "Role" {
		path += "/namespaces/" + namespace + "/roles/" + storedName(name)
	} else {
		path += "/clusterroles/" + storedName(name)
	}
	raw, err := d.readStored(ctx, path)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the denatured %s %q: %w", kind, name, err)
	}
	var role struct {
		Rules []rbacv1.PolicyRule `json:"rules"`
	}
	if err := json.Unmarshal(raw, &role); err != nil {
		return nil, false, fmt.Errorf("reading the denatured %s %q: %w", kind, name, err)
	}
	return role.Rules, true, nil
}

// GetRoleReferenceRules: the rules a binding to roleRef grants in the fleet, the denatured role's
// and the WDS's native role's together (the conservative choice: either may be what a WEC holds).
func (d *wds) GetRoleReferenceRules(ctx context.Context, roleRef rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	var resource string
	switch roleRef.Kind {
	case "Role":
		resource = "roles"
	case "ClusterRole":
		resource = "clusterroles"
	default:
		return nil, fmt.Errorf("unsupported role reference kind: %q", roleRef.Kind)
	}
	if err := d.ready(ctx); err != nil {
		return nil, err
	}
	denatured, found, err := d.denaturedRules(ctx, roleRef.Kind, namespace, roleRef.Name)
	if err != nil {
		return nil, err
	}
	native, err := d.native.GetRoleReferenceRules(ctx, roleRef, namespace)
	switch {
	case apierrors.IsNotFound(err) && !found:
		// As kube-apiserver says it: its registry's getter names the resource of the request
		// (clusterrolebindings for a ClusterRoleBinding's missing ClusterRole), not the role's.
		if info, ok := genericapirequest.RequestInfoFrom(ctx); ok && info.Resource != "" {
			resource = info.Resource
		}
		return nil, apierrors.NewNotFound(rbac.Resource(resource), roleRef.Name)
	case err != nil && !apierrors.IsNotFound(err):
		return nil, err
	}
	return append(append([]rbacv1.PolicyRule{}, denatured...), native...), nil
}

// withEscalationChecks wraps the RBAC registries in Kubernetes' policybased storages. Without a
// WDS (no --kubeconfig) they are wrapped all the same with a WDS that answers nothing: every
// escalation is refused, never allowed unchecked.
func withEscalationChecks(storage map[string]rest.Storage, d *wds) {
	var a authorizer.Authorizer = noWDS{}
	var r rbacvalidation.AuthorizationRuleResolver = noWDS{}
	if d != nil {
		a, r = d, d
	}
	storage["clusterroles"] = clusterrolepolicybased.NewStorage(storage["clusterroles"].(rest.StandardStorage), a, r)
	storage["clusterrolebindings"] = clusterrolebindingpolicybased.NewStorage(storage["clusterrolebindings"].(rest.StandardStorage), a, r)
	storage["roles"] = rolepolicybased.NewStorage(storage["roles"].(rest.StandardStorage), a, r)
	storage["rolebindings"] = rolebindingpolicybased.NewStorage(storage["rolebindings"].(rest.StandardStorage), a, r)
}

// noWDS stands for a WDS this helper was given no connection to.
type noWDS struct{}

var errNoWDS = apierrors.NewServiceUnavailable("ksview-native has no connection to the WDS (--kubeconfig): RBAC escalation cannot be checked")

func (noWDS) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionNoOpinion, "", errNoWDS
}
func (noWDS) RulesFor(context.Context, user.Info, string) ([]rbacv1.PolicyRule, error) {
	return nil, errNoWDS
}
func (noWDS) VisitRulesFor(_ context.Context, _ user.Info, _ string, visitor func(fmt.Stringer, *rbacv1.PolicyRule, error) bool) {
	visitor(nil, nil, errNoWDS)
}
func (noWDS) GetRoleReferenceRules(context.Context, rbacv1.RoleRef, string) ([]rbacv1.PolicyRule, error) {
	return nil, errNoWDS
}

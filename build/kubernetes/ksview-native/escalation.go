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
//     yet, or the role was created a moment ago). For a ClusterRole that aggregates (its own or
//     its native namesake's aggregationRule), also the rules of every ClusterRole, denatured or
//     native, its selectors match, and transitively: kube's clusterrole-aggregation controller
//     fills them in the WECs, over the denatured roles too (nothing aggregates them in the WDS).
//   - a denatured Role or ClusterRole named like a native role of the WDS is merged into it by
//     the agent's apply: writing one also requires the native role's rules (./samename.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
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
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
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
	// nativeRoles and nativeClusterRoles: listers of the WDS's native roles (the resolver's).
	nativeRoles        rbaclisters.RoleLister
	nativeClusterRoles rbaclisters.ClusterRoleLister
	synced             []cache.InformerSynced
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
	return &wds{client: client, native: resolver, nativeRoles: r.Roles().Lister(), nativeClusterRoles: r.ClusterRoles().Lister(), synced: synced, denaturedRoles: roles, denaturedClusterRoles: clusterRoles,
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

// denaturedRole reads the denatured role (kind Role or ClusterRole; a Role is read into a
// ClusterRole, which has its fields and one more), and whether it exists; from the informer, else
// from the WDS now. Its stored form keeps the native fields (labels, rules, aggregationRule).
func (d *wds) denaturedRole(ctx context.Context, kind, namespace, name string) (*rbacv1.ClusterRole, bool, error) {
	informer, key := d.denaturedClusterRoles, storedName(name)
	if kind == "Role" {
		informer, key = d.denaturedRoles, namespace+"/"+storedName(name)
	}
	if obj, found, err := informer.GetStore().GetByKey(key); err == nil && found {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			role := &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
				return nil, false, fmt.Errorf("reading the denatured %s %q: %w", kind, name, err)
			}
			return role, true, nil
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
	role := &rbacv1.ClusterRole{}
	if err := json.Unmarshal(raw, role); err != nil {
		return nil, false, fmt.Errorf("reading the denatured %s %q: %w", kind, name, err)
	}
	return role, true, nil
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
	denaturedRole, found, err := d.denaturedRole(ctx, roleRef.Kind, namespace, roleRef.Name)
	if err != nil {
		return nil, err
	}
	var denatured []rbacv1.PolicyRule
	if found {
		denatured = denaturedRole.Rules
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
	rules := append(append([]rbacv1.PolicyRule{}, denatured...), native...)
	if roleRef.Kind != "ClusterRole" {
		return rules, nil
	}
	aggregated, err := d.aggregatedRules(roleRef.Name, denaturedRole)
	if err != nil {
		return nil, err
	}
	// As the aggregation controller, each rule once: a native aggregated role already holds what
	// the native roles it selects hold, and a refusal then names the rules as kube-apiserver does.
	seen := make(map[string]bool, len(rules))
	for i := range rules {
		seen[rules[i].String()] = true
	}
	for i := range aggregated {
		if key := aggregated[i].String(); !seen[key] {
			seen[key] = true
			rules = append(rules, aggregated[i])
		}
	}
	return rules, nil
}

// fleetClusterRole is a ClusterRole as the fleet holds it: the denatured one and the WDS's native
// one of the same name (either may be nil), which the agent's apply merges in a WEC.
type fleetClusterRole struct{ denatured, native *rbacv1.ClusterRole }

func (f *fleetClusterRole) each() []*rbacv1.ClusterRole {
	var out []*rbacv1.ClusterRole
	for _, r := range []*rbacv1.ClusterRole{f.denatured, f.native} {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

// matches: whether any selector matches the labels of either role, or of the two merged (the
// denatured one's over the native one's, as the agent's apply leaves them).
func (f *fleetClusterRole) matches(selectors []labels.Selector) bool {
	merged := labels.Set{}
	sets := []labels.Set{}
	for _, r := range []*rbacv1.ClusterRole{f.native, f.denatured} {
		if r != nil {
			sets = append(sets, labels.Set(r.Labels))
			for k, v := range r.Labels {
				merged[k] = v
			}
		}
	}
	for _, sel := range selectors {
		for _, set := range append(sets, merged) {
			if sel.Matches(set) {
				return true
			}
		}
	}
	return false
}

// aggregatedRules: what kube's clusterrole-aggregation controller puts into the ClusterRole of
// that name in a WEC, where it runs over the denatured roles too: for each of its selectors
// (denatured or native role's aggregationRule; metav1.LabelSelectorAsSelector, as the controller)
// the rules of every other ClusterRole, denatured or native, whose labels match; and, as the
// controller converges, of what those aggregate in turn (each role once: cycles end). Nothing is
// listed unless the role aggregates. denatured is the denatured role as read (nil if none).
func (d *wds) aggregatedRules(name string, denatured *rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	start := &fleetClusterRole{denatured: denatured}
	if native, err := d.nativeClusterRoles.Get(name); err == nil {
		start.native = native
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	aggregates := func(f *fleetClusterRole) bool {
		for _, r := range f.each() {
			if r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0 {
				return true
			}
		}
		return false
	}
	if !aggregates(start) {
		return nil, nil
	}
	// Every ClusterRole of the fleet, by stored name (one key for a native name and its denatured
	// form).
	roles := map[string]*fleetClusterRole{}
	at := func(key string) *fleetClusterRole {
		if roles[key] == nil {
			roles[key] = &fleetClusterRole{}
		}
		return roles[key]
	}
	for _, obj := range d.denaturedClusterRoles.GetStore().List() {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		role := &rbacv1.ClusterRole{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
			return nil, fmt.Errorf("reading the denatured ClusterRole %q: %w", u.GetName(), err)
		}
		at(u.GetName()).denatured = role
	}
	natives, err := d.nativeClusterRoles.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, role := range natives {
		at(storedName(role.Name)).native = role
	}
	startKey := storedName(name)
	roles[startKey] = start
	keys := make([]string, 0, len(roles))
	for k := range roles {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var rules []rbacv1.PolicyRule
	done := map[string]bool{startKey: true}
	for queue := []string{startKey}; len(queue) > 0; queue = queue[1:] {
		var selectors []labels.Selector
		for _, r := range roles[queue[0]].each() {
			if r.AggregationRule == nil {
				continue
			}
			for i := range r.AggregationRule.ClusterRoleSelectors {
				sel, err := metav1.LabelSelectorAsSelector(&r.AggregationRule.ClusterRoleSelectors[i])
				if err != nil {
					return nil, fmt.Errorf("the aggregationRule of ClusterRole %q: %w", r.Name, err)
				}
				selectors = append(selectors, sel)
			}
		}
		if len(selectors) == 0 {
			continue
		}
		for _, key := range keys {
			if done[key] || !roles[key].matches(selectors) {
				continue
			}
			done[key] = true
			for _, r := range roles[key].each() {
				rules = append(rules, r.Rules...)
			}
			queue = append(queue, key)
		}
	}
	return rules, nil
}

// nativeRoleRules: the rules of the WDS's native role (kind Role or ClusterRole) of that
// namespace and name, and whether it exists.
func (d *wds) nativeRoleRules(ctx context.Context, kind, namespace, name string) ([]rbacv1.PolicyRule, bool, error) {
	if err := d.ready(ctx); err != nil {
		return nil, false, err
	}
	var rules []rbacv1.PolicyRule
	var err error
	if kind == "Role" {
		var role *rbacv1.Role
		if role, err = d.nativeRoles.Roles(namespace).Get(name); err == nil {
			rules = role.Rules
		}
	} else {
		var role *rbacv1.ClusterRole
		if role, err = d.nativeClusterRoles.Get(name); err == nil {
			rules = role.Rules
		}
	}
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return rules, true, nil
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
	var n nativeRoleReader = noWDS{}
	if d != nil {
		n = d
	}
	storage["clusterroles"] = &sameNameClusterRoles{clusterrolepolicybased.NewStorage(storage["clusterroles"].(rest.StandardStorage), a, r),
		sameName{kind: "ClusterRole", groupResource: rbac.Resource("clusterroles"), authorizer: a, resolver: r, natives: n}}
	storage["clusterrolebindings"] = clusterrolebindingpolicybased.NewStorage(storage["clusterrolebindings"].(rest.StandardStorage), a, r)
	storage["roles"] = &sameNameRoles{rolepolicybased.NewStorage(storage["roles"].(rest.StandardStorage), a, r),
		sameName{kind: "Role", groupResource: rbac.Resource("roles"), authorizer: a, resolver: r, natives: n}}
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
func (noWDS) nativeRoleRules(context.Context, string, string, string) ([]rbacv1.PolicyRule, bool, error) {
	return nil, false, errNoWDS
}
func (noWDS) GetRoleReferenceRules(context.Context, rbacv1.RoleRef, string) ([]rbacv1.PolicyRule, error) {
	return nil, errNoWDS
}

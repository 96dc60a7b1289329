package main

// A denatured Role or ClusterRole named like a native role of the WDS (so, of the WECs: e.g.
// cluster-admin) is applied by the agent onto that role, server-side: its labels and annotations
// merge into the WEC's object, whose rules stay. Natively, kube-apiserver weighs an update of
// cluster-admin by the whole resulting object; so here, creating or updating such a denatured
// role also requires the writer to hold the native role's rules (ConfirmNoEscalation, refused in
// kube's Forbidden words), unless kube's own checks let them escalate (system:masters, or the
// `escalate` verb). As kube's policybased storages, an update that changes only the fields the
// garbage collector writes is not weighed again. This sits around kube's policybased storage,
// whose other methods it keeps.

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	kapihelper "k8s.io/kubernetes/pkg/apis/core/helper"
	rbacregistry "k8s.io/kubernetes/pkg/registry/rbac"
	clusterrolepolicybased "k8s.io/kubernetes/pkg/registry/rbac/clusterrole/policybased"
	rolepolicybased "k8s.io/kubernetes/pkg/registry/rbac/role/policybased"
	rbacvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"
)

// nativeRoleReader reads the WDS's native role of a kind, namespace and name.
type nativeRoleReader interface {
	nativeRoleRules(ctx context.Context, kind, namespace, name string) ([]rbacv1.PolicyRule, bool, error)
}

type sameName struct {
	kind          string
	groupResource schema.GroupResource
	authorizer    authorizer.Authorizer
	resolver      rbacvalidation.AuthorizationRuleResolver
	natives       nativeRoleReader
}

func (s sameName) exempt(ctx context.Context) bool {
	return rbacregistry.EscalationAllowed(ctx) || rbacregistry.RoleEscalationAuthorized(ctx, s.authorizer)
}

// check: the writer holds the rules of the native role the object will be merged into, if any.
func (s sameName) check(ctx context.Context, obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	namespace := m.GetNamespace()
	if namespace == "" && s.kind == "Role" {
		namespace = genericapirequest.NamespaceValue(ctx)
	}
	rules, found, err := s.natives.nativeRoleRules(ctx, s.kind, namespace, m.GetName())
	if err != nil || !found {
		return err
	}
	if err := rbacvalidation.ConfirmNoEscalation(ctx, s.resolver, rules); err != nil {
		return apierrors.NewForbidden(s.groupResource, m.GetName(), err)
	}
	return nil
}

func (s sameName) create(ctx context.Context, obj runtime.Object) error {
	if s.exempt(ctx) {
		return nil
	}
	return s.check(ctx, obj)
}

func (s sameName) updated(ctx context.Context, objInfo rest.UpdatedObjectInfo) rest.UpdatedObjectInfo {
	if s.exempt(ctx) {
		return objInfo
	}
	return rest.WrapUpdatedObjectInfo(objInfo, func(ctx context.Context, obj, old runtime.Object) (runtime.Object, error) {
		if rbacregistry.IsOnlyMutatingGCFields(obj, old, kapihelper.Semantic) {
			return obj, nil
		}
		return obj, s.check(ctx, obj)
	})
}

type sameNameClusterRoles struct {
	*clusterrolepolicybased.Storage
	sameName sameName
}

func (r *sameNameClusterRoles) Create(ctx context.Context, obj runtime.Object, v rest.ValidateObjectFunc, o *metav1.CreateOptions) (runtime.Object, error) {
	if err := r.sameName.create(ctx, obj); err != nil {
		return nil, err
	}
	return r.Storage.Create(ctx, obj, v, o)
}

func (r *sameNameClusterRoles) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, cv rest.ValidateObjectFunc, uv rest.ValidateObjectUpdateFunc, force bool, o *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.Storage.Update(ctx, name, r.sameName.updated(ctx, objInfo), cv, uv, force, o)
}

type sameNameRoles struct {
	*rolepolicybased.Storage
	sameName sameName
}

func (r *sameNameRoles) Create(ctx context.Context, obj runtime.Object, v rest.ValidateObjectFunc, o *metav1.CreateOptions) (runtime.Object, error) {
	if err := r.sameName.create(ctx, obj); err != nil {
		return nil, err
	}
	return r.Storage.Create(ctx, obj, v, o)
}

func (r *sameNameRoles) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, cv rest.ValidateObjectFunc, uv rest.ValidateObjectUpdateFunc, force bool, o *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.Storage.Update(ctx, name, r.sameName.updated(ctx, objInfo), cv, uv, force, o)
}

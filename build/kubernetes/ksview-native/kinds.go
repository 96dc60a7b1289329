package main

// The kinds ksview serve may store denatured, each with Kubernetes' own registry (strategy:
// defaulting is the scheme's, then PrepareForCreate/Update, Validate/ValidateUpdate, warnings,
// status and reset fields) from k8s.io/kubernetes and k8s.io/kube-aggregator.

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	apiregistrationinstall "k8s.io/kube-aggregator/pkg/apis/apiregistration/install"
	apiserviceetcd "k8s.io/kube-aggregator/pkg/registry/apiservice/etcd"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	mapstore "k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicy/storage"
	mapbstore "k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicybinding/storage"
	mwcstore "k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingwebhookconfiguration/storage"
	vapstore "k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicy/storage"
	vapbstore "k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicybinding/storage"
	vwcstore "k8s.io/kubernetes/pkg/registry/admissionregistration/validatingwebhookconfiguration/storage"
	limitrangestore "k8s.io/kubernetes/pkg/registry/core/limitrange/storage"
	resourcequotastore "k8s.io/kubernetes/pkg/registry/core/resourcequota/storage"
	serviceaccountstore "k8s.io/kubernetes/pkg/registry/core/serviceaccount/storage"
	flowschemastore "k8s.io/kubernetes/pkg/registry/flowcontrol/flowschema/storage"
	plcstore "k8s.io/kubernetes/pkg/registry/flowcontrol/prioritylevelconfiguration/storage"
	clusterrolestore "k8s.io/kubernetes/pkg/registry/rbac/clusterrole/storage"
	clusterrolebindingstore "k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding/storage"
	rolestore "k8s.io/kubernetes/pkg/registry/rbac/role/storage"
	rolebindingstore "k8s.io/kubernetes/pkg/registry/rbac/rolebinding/storage"

	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
)

func init() {
	// kube-aggregator has a scheme of its own; legacyscheme learns apiregistration too, so one
	// scheme (codecs, OpenAPI namer, errors) knows every kind served here.
	apiregistrationinstall.Install(legacyscheme.Scheme)
}

// noResolver stands where kube-apiserver resolves an admission policy's paramKind for its
// authorization check, which ksview-native does not make (the WDS authorizes the write).
type noResolver struct{}

func (noResolver) Resolve(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	return schema.GroupVersionResource{}, fmt.Errorf("resources are not resolved here (%s)", gvk)
}

type group struct {
	name    string
	storage map[string]rest.Storage
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func groups(opts generic.RESTOptionsGetter) []group {
	vap, vapStatus := must2(vapstore.NewREST(opts, nil, noResolver{}))
	fs, fsStatus := must2(flowschemastore.NewREST(opts))
	plc, plcStatus := must2(plcstore.NewREST(opts))
	rq, rqStatus := must2(resourcequotastore.NewREST(opts))
	apiservice := apiserviceetcd.NewREST(legacyscheme.Scheme, opts)
	return []group{
		{"", map[string]rest.Storage{
			"limitranges":           must(limitrangestore.NewREST(opts)),
			"resourcequotas":        rq,
			"resourcequotas/status": rqStatus,
			"serviceaccounts":       must(serviceaccountstore.NewREST(opts, nil, nil, 0, nil, nil, nil, false, 0)),
		}},
		{"rbac.authorization.k8s.io", map[string]rest.Storage{
			"clusterroles":        must(clusterrolestore.NewREST(opts)),
			"clusterrolebindings": must(clusterrolebindingstore.NewREST(opts)),
			"roles":               must(rolestore.NewREST(opts)),
			"rolebindings":        must(rolebindingstore.NewREST(opts)),
		}},
		{"admissionregistration.k8s.io", map[string]rest.Storage{
			"validatingwebhookconfigurations":    must(vwcstore.NewREST(opts)),
			"mutatingwebhookconfigurations":      must(mwcstore.NewREST(opts)),
			"validatingadmissionpolicies":        vap,
			"validatingadmissionpolicies/status": vapStatus,
			"validatingadmissionpolicybindings":  must(vapbstore.NewREST(opts, nil, nil, noResolver{})),
			"mutatingadmissionpolicies":          must(mapstore.NewREST(opts, nil, noResolver{})),
			"mutatingadmissionpolicybindings":    must(mapbstore.NewREST(opts, nil, nil, noResolver{})),
		}},
		{"flowcontrol.apiserver.k8s.io", map[string]rest.Storage{
			"flowschemas":                        fs,
			"flowschemas/status":                 fsStatus,
			"prioritylevelconfigurations":        plc,
			"prioritylevelconfigurations/status": plcStatus,
		}},
		{"apiregistration.k8s.io", map[string]rest.Storage{
			"apiservices":        apiservice,
			"apiservices/status": apiserviceetcd.NewStatusREST(legacyscheme.Scheme, apiservice),
		}},
	}
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}

// apiGroupInfo serves a group's storage at every version the scheme has for each kind.
func (g group) apiGroupInfo() genericapiserver.APIGroupInfo {
	scheme := legacyscheme.Scheme
	info := genericapiserver.NewDefaultAPIGroupInfo(g.name, scheme, legacyscheme.ParameterCodec, legacyscheme.Codecs)
	for _, gv := range scheme.PrioritizedVersionsForGroup(g.name) {
		for resource, s := range g.storage {
			gvks, _, err := scheme.ObjectKinds(s.New())
			if err != nil || len(gvks) == 0 {
				continue
			}
			if !scheme.Recognizes(gv.WithKind(gvks[0].Kind)) {
				continue
			}
			if info.VersionedResourcesStorageMap[gv.Version] == nil {
				info.VersionedResourcesStorageMap[gv.Version] = map[string]rest.Storage{}
			}
			info.VersionedResourcesStorageMap[gv.Version][resource] = s
		}
	}
	return info
}

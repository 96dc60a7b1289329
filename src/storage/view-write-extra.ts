// How the WDS tells the view's own writes of denatured.kubestellar.io objects from writes made
// straight to it: the view impersonates the user on every request, and on the writes its store
// makes it adds one user extra, VIEW_WRITE_EXTRA. The WDS's admission webhook for direct writes
// (./denatured-admission.ts, registered with a matchCondition on this extra) is then not called
// for them: they were checked by the view already (Kubernetes' registry in ksview-native), and
// are not paid for twice.
//
// Why nobody else can forge it: kube-apiserver puts an extra in a request's user only from its
// authenticator (an admin's configuration: front-proxy headers from the aggregator, structured
// authentication's claim mappings) or from impersonation, which it authorizes as the verb
// `impersonate` on `userextras/<key>` in authentication.k8s.io for the requesting identity. A user
// of the view cannot send it through the view (the view drops every Impersonate-* header a client
// sends and denatured.kubestellar.io is hidden there); a user talking to the WDS directly can set it
// only holding that right, which only the view's own identity is granted
// (kubestellar-view:impersonator, charts/kubestellar-view/files/wds/rbac.yaml). Whoever holds it may impersonate anyone
// anyway, so it opens nothing new.

export const VIEW_WRITE_EXTRA = 'view.kubestellar.io/admitted-by';
export const VIEW_WRITE_EXTRA_VALUE = 'ksview-serve';

/** The header adding the extra to an impersonated request (keys are percent-encoded in header names). */
export const VIEW_WRITE_HEADERS: Readonly<Record<string, string>> = {
  [`impersonate-extra-${encodeURIComponent(VIEW_WRITE_EXTRA)}`]: VIEW_WRITE_EXTRA_VALUE,
};

/** The CEL matchCondition that sends every write but the view's own to the webhook. */
export const NOT_A_VIEW_WRITE = `!has(request.userInfo.extra) || !('${VIEW_WRITE_EXTRA}' in request.userInfo.extra)`;

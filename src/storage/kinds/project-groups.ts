// The API groups of kubestellar-view itself. They are never part of the view (../kind-categories.ts),
// and the objects that make them exist in the WDS (their CRDs and APIServices) are the WDS's own,
// never sent (src/controllers/placement/system-objects.ts, ./api-service.ts).
export const HIDDEN_GROUPS: ReadonlySet<string> = new Set([
  'control.kubestellar.io', 'denatured.kubestellar.io', 'view.kubestellar.io',
]);

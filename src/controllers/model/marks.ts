// What the status controller marks a WDS object with when it returns the WECs' state into it
// (../status/returned-state.ts). These marks are about the WDS object itself, so placement
// neither reacts to them nor sends them to the clusters (./wrapping.ts strips them).
export const EXECUTING_COUNT_LABEL = 'kubestellar.io/executing-count';
export const RETURNED_FROM_ANNOTATION = 'view.kubestellar.io/status-returned-from';

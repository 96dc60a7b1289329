//go:build tools

// Package tools pins the Kubernetes commands this module builds, so `go mod tidy` keeps
// every package they need in go.sum.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	// The real nodes of `ksview spaces up --real-nodes` (src/spaces/node-binaries.ts).
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubelet"
)

//go:build tools

// Package tools pins the kwok command this module builds, so `go mod tidy` keeps every package
// it needs in go.sum.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"

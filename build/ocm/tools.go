//go:build tools

// Package tools pins the OCM command this module builds (`work`, whose `agent` subcommand is OCM's
// work agent), so `go mod tidy` keeps every package it needs in go.sum.
package tools

import _ "open-cluster-management.io/ocm/cmd/work"

//go:build tools

// Package tools pins KWOK (sigs.k8s.io/kwok), which simulates kubelets (node heartbeats,
// pod phases by stages) against a real kube-apiserver, so go mod tidy keeps its dependencies.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)

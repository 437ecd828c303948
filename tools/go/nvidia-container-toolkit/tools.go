//go:build tools

// Package tools pins NVIDIA's container toolkit CLI (nvidia-ctk) and its runtime (used in CDI mode
// by tools/mock-cluster.sh) so that go mod tidy keeps its
// dependencies in go.sum.
package tools

import (
	_ "github.com/NVIDIA/nvidia-container-toolkit/cmd/nvidia-container-runtime"
	_ "github.com/NVIDIA/nvidia-container-toolkit/cmd/nvidia-ctk"
)

//go:build tools

// Package tools pins NVIDIA's container toolkit CLI (nvidia-ctk) so that go mod tidy keeps its
// dependencies in go.sum.
package tools

import (
	_ "github.com/NVIDIA/nvidia-container-toolkit/cmd/nvidia-ctk"
)

//go:build tools

// Package tools pins NVIDIA's device plugin (with its built-in GPU feature discovery) so that
// go mod tidy keeps their dependencies in go.sum.
package tools

import (
	_ "github.com/NVIDIA/k8s-device-plugin/cmd/gpu-feature-discovery"
	_ "github.com/NVIDIA/k8s-device-plugin/cmd/nvidia-device-plugin"
)

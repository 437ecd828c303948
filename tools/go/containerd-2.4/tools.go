//go:build tools

// Package tools pins the containerd commands this module builds (containerd 2.x reads CDI
// specs; Debian 12's containerd 1.6 does not), so that go mod tidy keeps their dependencies.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)

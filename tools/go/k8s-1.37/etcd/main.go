// Command etcd starts the etcd server (go.etcd.io/etcd/server/v3, the
// version kube-apiserver's own go.mod names), for the test control plane.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }

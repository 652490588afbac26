// Command etcd is the etcd server, built from go.etcd.io/etcd/server/v3.
//
// The server/v3 module has no main package: the etcd binary's own main
// (go.etcd.io/etcd/v3, the repository root) is exactly this call.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}

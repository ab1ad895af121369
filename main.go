// Command minisched serves a live, interactive view of Kubernetes scheduling
// cycles: `go run .` starts an embedded etcd and kube-apiserver, minisched
// (a real scheduler on the scheduling framework) and the dashboard.
package main

import "minisched/app"

func main() { app.Main() }

package k8sapiserver

import (
	"sync"
	_ "unsafe" // for go:linkname

	"go.uber.org/zap"
	_ "k8s.io/apiserver/pkg/storage/storagebackend/factory" // defines the logger below
)

// apiserverEtcdClientLogger is the logger of the apiserver's etcd clients: a
// package variable of its storage factory that writes JSON to stderr, at
// info level whatever ETCD_CLIENT_DEBUG says, and no option reaches.
// Every request a client cancels while the apiserver is in etcd (a
// controller or the scheduler stopping mid-write, a browser closing) prints
// a warning there. Upstream's own TODO (kubernetes#111476) is to pass a
// logger per client; until then this is the one way to keep it quiet.
//
//go:linkname apiserverEtcdClientLogger k8s.io/apiserver/pkg/storage/storagebackend/factory.etcd3ClientLogger
var apiserverEtcdClientLogger *zap.Logger

var quietOnce sync.Once

// quietEtcdClients silences the apiserver's etcd clients, for the process:
// every control plane in it shares them. Call it before the apiserver
// builds its storage.
func quietEtcdClients() {
	quietOnce.Do(func() { apiserverEtcdClientLogger = zap.NewNop() })
}

package k8sapiserver
import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/pkg/scheduler"
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "github.com/labstack/echo/v4"
	_ "github.com/gorilla/websocket"
)

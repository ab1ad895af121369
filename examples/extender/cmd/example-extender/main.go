// Command example-extender serves the example scheduler extender
// (minisched/examples/extender) on loopback, for kube-scheduler or minisched
// to call:
//
//	go run ./examples/extender/cmd/example-extender --addr 127.0.0.1:8888 --kubeconfig <data dir>/kubeconfig
//
// then give the scheduler a configuration with
//
//	extenders:
//	- urlPrefix: http://127.0.0.1:8888/
//	  filterVerb: filter
//	  prioritizeVerb: prioritize
//	  weight: 5
//	  preemptVerb: preempt
//
// (and bindVerb: bind, with --kubeconfig, to let it bind).
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"minisched/examples/extender"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8888", "address to listen on; keep it on loopback")
	kubeconfig := flag.String("kubeconfig", "", "a kubeconfig to bind pods with (the bind verb); none: bind is refused")
	flag.Parse()
	if err := run(*addr, *kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "example-extender:", err)
		os.Exit(1)
	}
}

func run(addr, kubeconfig string) error {
	srv := &extender.Server{}
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return fmt.Errorf("reading %s: %w", kubeconfig, err)
		}
		if srv.Client, err = kubernetes.NewForConfig(cfg); err != nil {
			return err
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	log.Printf("example extender on http://%s/ (verbs: filter, prioritize, preempt, bind)", l.Addr())
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

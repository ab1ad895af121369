package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minisched/app"
	"minisched/snapshot"
)

// importCopy times the copy of a cluster into minisched: a source control
// plane with nodes and pods (most bound, as in a running cluster), read with
// snapshot.Collect (what --import-from does), then created in a second,
// empty one with snapshot.Load.
func importCopy(args []string) error {
	fs := flagSet("import")
	nodes := fs.Int("nodes", 5000, "nodes in the source")
	pods := fs.Int("pods", 50000, "pods in the source")
	pending := fs.Float64("pending", 0.1, "the share of the pods left pending")
	_ = fs.Parse(args)
	ctx := context.Background()
	start := func() (*app.Instance, error) {
		f := app.DefaultFlags()
		f.Addr, f.Paused = "127.0.0.1:0", true
		return app.Start(ctx, f, quiet)
	}
	source, err := start()
	if err != nil {
		return err
	}
	defer source.Close()
	began := time.Now()
	if err := workload(ctx, source.Client, *nodes, 0, ""); err != nil {
		return err
	}
	bound := int(float64(*pods) * (1 - *pending))
	if err := parallel(*pods, func(i int) error {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("pod-%05d", i), Labels: map[string]string{"app": fmt.Sprintf("app-%d", i%13)}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("10m"), v1.ResourceMemory: resource.MustParse("32Mi")}}}}}}
		if i < bound {
			p.Spec.NodeName = fmt.Sprintf("node-%04d", i%*nodes)
		}
		_, err := source.Client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("creating the source's pods: %w", err)
	}
	fmt.Printf("source: %d nodes, %d pods (%d bound) created in %.1fs\n", *nodes, *pods, bound, time.Since(began).Seconds())

	began = time.Now()
	reader, err := kubernetes.NewForConfig(snapshot.ReadOnly(source.RESTConfig))
	if err != nil {
		return err
	}
	doc, err := snapshot.Collect(ctx, reader, snapshot.CollectOptions{})
	if err != nil {
		return err
	}
	collected := time.Since(began)
	size, _ := json.Marshal(doc)
	fmt.Printf("collect: %.1fs, %d nodes and %d pods, %.1f MB as JSON\n", collected.Seconds(), len(doc.Nodes), len(doc.Pods), float64(len(size))/1e6)

	dest, err := start()
	if err != nil {
		return err
	}
	defer dest.Close()
	began = time.Now()
	counts, err := snapshot.Load(ctx, dest.Client, doc, snapshot.LoadOptions{})
	if err != nil {
		return err
	}
	loaded := time.Since(began)
	fmt.Printf("load: %.1fs, %d nodes, %d bound and %d pending pods\n", loaded.Seconds(), counts.Nodes, counts.BoundPods, counts.PendingPods)
	fmt.Printf("import: %d nodes and %d pods copied in %.1fs (collect %.1fs + load %.1fs)\n", *nodes, *pods, (collected + loaded).Seconds(), collected.Seconds(), loaded.Seconds())
	return nil
}

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

// importCopy times the copy of a cluster into minisched as --import-from
// makes it, against the embedded apiserver's own write rate: a source
// control plane, bare (no controllers, no kubelets: only the writes), is
// filled with nodes and pods (most bound, as in a running cluster) by
// parallel writers; then a minisched with the default flags starts with
// --import-from on it, which reads the source (snapshot.Collect through a
// client that only sends GETs) and creates the copy with its controllers
// and kubelets paused (snapshot.Load). The ratio is the fill's time over
// the import's: 1 would copy as fast as the apiserver takes the writes.
func importCopy(args []string) error {
	fs := flagSet("import")
	nodes := fs.Int("nodes", 5000, "nodes in the source")
	pods := fs.Int("pods", 50000, "pods in the source")
	pending := fs.Float64("pending", 0.1, "the share of the pods left pending")
	_ = fs.Parse(args)
	ctx := context.Background()
	bare := app.DefaultFlags()
	bare.Addr, bare.Paused, bare.Controllers, bare.Kubelets = "127.0.0.1:0", true, "", false
	source, err := app.Start(ctx, bare, quiet)
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
	filled := time.Since(began)
	fmt.Printf("source: %d nodes, %d pods (%d bound) created in %.1fs by parallel writers, no controllers or kubelets\n", *nodes, *pods, bound, filled.Seconds())

	// The read alone, to see its share of the import.
	began = time.Now()
	reader, err := kubernetes.NewForConfig(snapshot.ReadOnly(source.RESTConfig))
	if err != nil {
		return err
	}
	doc, err := snapshot.Collect(ctx, reader, snapshot.CollectOptions{})
	if err != nil {
		return err
	}
	size, _ := json.Marshal(doc)
	fmt.Printf("collect alone: %.1fs, %d nodes and %d pods, %.1f MB as JSON\n", time.Since(began).Seconds(), len(doc.Nodes), len(doc.Pods), float64(len(size))/1e6)
	doc, size = nil, nil

	f := app.DefaultFlags()
	f.Addr, f.Paused, f.ImportFrom = "127.0.0.1:0", true, source.ControlPlane.KubeconfigPath()
	began = time.Now()
	dest, err := app.Start(ctx, f, quiet)
	if err != nil {
		return err
	}
	imported := time.Since(began)
	defer dest.Close()
	nodeList, err := dest.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	podList, err := dest.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	fmt.Printf("import: minisched --import-from ready in %.1fs with %d nodes and %d pods (start-up, read and load, controllers and kubelets paused while it loads)\n",
		imported.Seconds(), len(nodeList.Items), len(podList.Items))
	fmt.Printf("ratio: %.2f of the apiserver's own write rate (%.1fs / %.1fs)\n", filled.Seconds()/imported.Seconds(), filled.Seconds(), imported.Seconds())
	return nil
}

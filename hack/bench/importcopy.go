package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"minisched/app"
	"minisched/snapshot"
)

// importCopy times the copy of a cluster into minisched as --import-from
// makes it, against the embedded apiserver's own write rate. The source is
// a bare control plane (no controllers, no kubelets: only the writes) in a
// process of its own, as a real cluster is: in this one, its objects would
// burden the copy's garbage collector, which no real source does. It is
// filled with nodes and pods (most bound, as in a running cluster) by
// parallel writers; then a minisched with the default flags starts here
// with --import-from on it, which reads the source (snapshot.Collect
// through a client that only sends GETs) and creates the copy with its
// controllers and kubelets paused (snapshot.Load). The ratio is the fill's
// time over the import's: 1 would copy as fast as the apiserver takes the
// writes.
func importCopy(args []string) error {
	fs := flagSet("import")
	nodes := fs.Int("nodes", 5000, "nodes in the source")
	pods := fs.Int("pods", 50000, "pods in the source")
	pending := fs.Float64("pending", 0.1, "the share of the pods left pending")
	refill := fs.Bool("refill", false, "also time the collected objects written as they are, by the same parallel writers, into a second source: the share of the copy's objects in its time")
	_ = fs.Parse(args)
	ctx := context.Background()
	kubeconfig, stopSource, err := startSource()
	if err != nil {
		return err
	}
	defer stopSource()
	source, err := writer(kubeconfig)
	if err != nil {
		return err
	}
	began := time.Now()
	if err := workload(ctx, source, *nodes, 0, ""); err != nil {
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
		_, err := source.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("creating the source's pods: %w", err)
	}
	filled := time.Since(began)
	fmt.Printf("source: %d nodes, %d pods (%d bound) created in %.1fs by parallel writers, no controllers or kubelets, in a process of its own\n", *nodes, *pods, bound, filled.Seconds())

	// The read alone, to see its share of the import.
	began = time.Now()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	reader, err := snapshot.SourceClient(cfg)
	if err != nil {
		return err
	}
	doc, err := snapshot.Collect(ctx, reader, snapshot.CollectOptions{})
	if err != nil {
		return err
	}
	size, _ := json.Marshal(doc)
	fmt.Printf("collect alone: %.1fs, %d nodes and %d pods, %.1f MB as JSON\n", time.Since(began).Seconds(), len(doc.Nodes), len(doc.Pods), float64(len(size))/1e6)
	if *refill {
		took, err := refillCopy(ctx, doc)
		if err != nil {
			return err
		}
		fmt.Printf("refill: the collected objects written by the same parallel writers into a bare control plane in a process of its own in %.1fs\n", took.Seconds())
	}
	doc, size = nil, nil

	f := app.DefaultFlags()
	f.Addr, f.Paused, f.ImportFrom = "127.0.0.1:0", true, kubeconfig
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

// refillCopy writes the collected nodes and pods, with the metadata the
// load keeps (name, namespace, labels, annotations), into a second bare
// source by the fill's parallel writers: the copy's objects carry what the
// source's apiserver defaulted, which the fill's do not, and this times
// that difference apart from the load's own work.
func refillCopy(ctx context.Context, doc *snapshot.Document) (time.Duration, error) {
	kubeconfig, stop, err := startSource()
	if err != nil {
		return 0, err
	}
	defer stop()
	client, err := writer(kubeconfig)
	if err != nil {
		return 0, err
	}
	began := time.Now()
	if err := parallel(len(doc.Nodes), func(i int) error {
		n := doc.Nodes[i].DeepCopy()
		n.ObjectMeta = metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, Annotations: n.Annotations}
		_, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		return err
	}); err != nil {
		return 0, fmt.Errorf("refilling the nodes: %w", err)
	}
	if err := parallel(len(doc.Pods), func(i int) error {
		p := doc.Pods[i].DeepCopy()
		p.ObjectMeta = metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, Annotations: p.Annotations}
		_, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		return err
	}); err != nil {
		return 0, fmt.Errorf("refilling the pods: %w", err)
	}
	return time.Since(began), nil
}

// writer is a client of the source that writes as the embedded control
// plane's own clients do: in protobuf, with no client-side rate limit.
func writer(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.ContentType, cfg.QPS, cfg.Burst = runtime.ContentTypeProtobuf, 5000, 10000
	return kubernetes.NewForConfig(cfg)
}

// startSource starts the source control plane in a child process (this
// command's importSource) and returns its kubeconfig, and what stops it.
func startSource() (kubeconfig string, stop func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(self, "import-source")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("starting the source: %w", err)
	}
	stop = func() {
		_ = in.Close()
		_ = cmd.Wait()
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("the source did not start: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
}

// importSource runs the source for importCopy: a bare control plane whose
// kubeconfig it prints, until its standard input closes.
func importSource([]string) error {
	bare := app.DefaultFlags()
	bare.Addr, bare.Paused, bare.Controllers, bare.Kubelets = "127.0.0.1:0", true, "", false
	source, err := app.Start(context.Background(), bare, quiet)
	if err != nil {
		return err
	}
	defer source.Close()
	fmt.Println(source.ControlPlane.KubeconfigPath())
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

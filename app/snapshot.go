package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"minisched/cluster"
	"minisched/mirror"
	"minisched/server"
	"minisched/snapshot"
)

// checkImport refuses --load, --import-from and --mirror flags that cannot
// go together.
func (f *Flags) checkImport() error {
	if _, err := snapshot.ParsePods(f.ImportPods); err != nil {
		return fmt.Errorf("--import-pods: %w", err)
	}
	given := 0
	for _, v := range []string{f.Load, f.ImportFrom, f.Mirror} {
		if v != "" {
			given++
		}
	}
	switch {
	case given > 1:
		return errors.New("--load, --import-from and --mirror each fill the cluster: give one")
	case given > 0 && (f.Kubeconfig != "" || f.InCluster):
		return errors.New("--load, --import-from and --mirror fill the embedded cluster; attached to a real one (--kubeconfig, --in-cluster), minisched does not write it")
	case f.ImportFrom == "" && f.Mirror == "" && (f.ImportNamespaces != "" || f.ImportSelector != ""):
		return errors.New("--import-namespaces and --import-selector go with --import-from or --mirror")
	}
	return nil
}

// initialSnapshot is what the embedded cluster starts with: a snapshot
// file or a copy of a real cluster, read before anything starts, so that a
// bad file or a refused permission ends minisched at once.
type initialSnapshot struct {
	doc    *snapshot.Document
	source string
	// kind is load, import-from or mirror, as server.CopyOf names them.
	kind string
	at   time.Time
	// client reads the source cluster (read only), for --mirror.
	client kubernetes.Interface
}

// copyOf says, for the dashboard, what the cluster is a copy of; nil
// without a starting snapshot.
func (s *initialSnapshot) copyOf() *server.CopyOf {
	if s == nil {
		return nil
	}
	return &server.CopyOf{Kind: s.kind, Source: s.source, At: s.at}
}

func startingSnapshot(ctx context.Context, f Flags, log *slog.Logger) (*initialSnapshot, error) {
	switch {
	case f.Load != "":
		data, err := os.ReadFile(f.Load)
		if err != nil {
			return nil, fmt.Errorf("--load: %w", err)
		}
		doc, err := snapshot.Decode(data)
		if err != nil {
			return nil, fmt.Errorf("--load %s: %w", f.Load, err)
		}
		return &initialSnapshot{doc: doc, source: f.Load, kind: "load", at: time.Now()}, nil
	case f.ImportFrom != "" || f.Mirror != "":
		flag, kubeconfig, kind := "--import-from", f.ImportFrom, "import-from"
		if f.Mirror != "" {
			flag, kubeconfig, kind = "--mirror", f.Mirror, "mirror"
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, kubeconfig, err)
		}
		client, err := snapshot.SourceClient(cfg)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, kubeconfig, err)
		}
		pods, _ := snapshot.ParsePods(f.ImportPods) // checked with the flags
		began := time.Now()
		doc, err := snapshot.Collect(ctx, client, snapshot.CollectOptions{
			Namespaces: splitList(f.ImportNamespaces), Selector: f.ImportSelector, Pods: pods, WithoutWorkloads: f.Mirror != ""})
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, kubeconfig, err)
		}
		if len(doc.LeftOut) > 0 {
			log.Warn("the copy goes without what this identity may not list; their pods are copied as pods of their own",
				"leftOut", strings.Join(doc.LeftOut, ", "))
		}
		log.Info("read the cluster to copy", "apiserver", cfg.Host, "nodes", len(doc.Nodes), "pods", len(doc.Pods),
			"took", time.Since(began).Round(time.Millisecond))
		return &initialSnapshot{doc: doc, source: cfg.Host, kind: kind, at: time.Now(), client: client}, nil
	}
	return nil, nil
}

// config is the configuration the scheduler starts with: --scheduler-config
// when given, else the snapshot's when it has one, else cfg.
func (s *initialSnapshot) config(f Flags, cfg *config.KubeSchedulerConfiguration, schedulerName string) (*config.KubeSchedulerConfiguration, error) {
	if s == nil || f.SchedulerConfig != "" {
		return cfg, nil
	}
	own, err := s.doc.SchedulerConfig(schedulerName)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", s.source, err)
	case own != nil:
		return own, nil
	}
	return cfg, nil
}

// load fills the embedded cluster, which must be empty (a --data-dir that
// holds a cluster already is refused).
func (s *initialSnapshot) load(ctx context.Context, client kubernetes.Interface, pause func() func() error, srv *server.Server, f Flags, log *slog.Logger) error {
	if s == nil {
		return nil
	}
	began := time.Now()
	var counts snapshot.Counts
	err := srv.Journaled(*s.copyOf(), s.doc, s.doc.JSON, func() (err error) {
		counts, err = snapshot.Load(ctx, client, s.doc, snapshot.LoadOptions{MaxNodes: f.MaxNodes, MaxPods: f.MaxPods, Pause: pause})
		return err
	})
	if errors.Is(err, snapshot.ErrNotEmpty) {
		return fmt.Errorf("loading the copy of %s: %w (start with an empty --data-dir, or POST /api/v1/import?replace=true)", s.source, err)
	}
	if err != nil {
		return fmt.Errorf("loading the copy of %s: %w", s.source, err)
	}
	log.Info("copy loaded", "from", s.source, "nodes", counts.Nodes, "boundPods", counts.BoundPods, "pendingPods", counts.PendingPods,
		"took", time.Since(began).Round(time.Millisecond))
	return nil
}

// follow starts the mirror of the source once the copy is loaded: what
// changed there meanwhile is caught up by the mirror's first lists.
func (s *initialSnapshot) follow(ctx context.Context, into *cluster.Cluster, client kubernetes.Interface, f Flags, log *slog.Logger) (*mirror.Mirror, error) {
	began := time.Now()
	maxNodes, maxPods := into.Limits()
	m, err := mirror.Start(ctx, mirror.Options{Source: s.client, Copy: client, Namespaces: splitList(f.ImportNamespaces), Selector: f.ImportSelector,
		MaxNodes: maxNodes, MaxPods: maxPods})
	if err != nil {
		return nil, fmt.Errorf("--mirror %s: %w", f.Mirror, err)
	}
	log.Info("following the source", "apiserver", s.source, "took", time.Since(began).Round(time.Millisecond))
	return m, nil
}

package schedperf

// churn: objects made (and, in recreate mode, deleted again) in the
// background while the rest of the workload runs, as upstream's runner
// does (runChurnOp): every interval, each template once; until the
// workload ends.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

type churnOp struct {
	Opcode string `json:"opcode"`
	// Mode is create (up to Number rounds, or forever when 0) or recreate
	// (Number objects of each template live at once: each round deletes
	// the oldest and makes another).
	Mode                 string   `json:"mode"`
	Number               int      `json:"number"`
	IntervalMilliseconds int64    `json:"intervalMilliseconds"`
	Namespace            *string  `json:"namespace"`
	TemplatePaths        []string `json:"templatePaths"`
}

func (o *churnOp) validate() error {
	switch {
	case o.Mode != "create" && o.Mode != "recreate":
		return fmt.Errorf("churn: mode %q, want create or recreate", o.Mode)
	case o.Number < 0:
		return fmt.Errorf("churn: number %d is negative", o.Number)
	case o.Mode == "recreate" && o.Number == 0:
		return fmt.Errorf("churn: number must be set in recreate mode")
	case len(o.TemplatePaths) == 0:
		return fmt.Errorf("churn: templatePaths must name a template")
	}
	return nil
}

// churner is one template's object, made and deleted by one churn.
type churner struct {
	client dynamic.ResourceInterface
	obj    *unstructured.Unstructured
}

// make creates one object and returns its name, or "" when the apiserver
// refused it (upstream's churn goes on regardless).
func (c churner) make(ctx context.Context) string {
	live, err := c.client.Create(ctx, c.obj, metav1.CreateOptions{})
	if err != nil {
		return ""
	}
	return live.GetName()
}

func (c churner) delete(ctx context.Context, name string) error {
	err := c.client.Delete(ctx, name, metav1.DeleteOptions{})
	if err == nil || apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("churn: deleting %s: %w", name, err)
}

// churn starts the op in the background; it runs until the workload ends.
func (e *executor) churn(ctx context.Context, index int, o *churnOp) error {
	ns := fmt.Sprintf("namespace-%d", index)
	if o.Namespace != nil {
		ns = *o.Namespace
	}
	// Upstream makes the namespace without counting its pods in the
	// barriers' totals: the churned pods are not waited for.
	if _, err := e.o.Client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("churn: creating namespace %s: %w", ns, err)
	}
	churners := make([]churner, 0, len(o.TemplatePaths))
	for _, path := range o.TemplatePaths {
		mapping, obj, err := e.object(path, map[string]any{})
		if err != nil {
			return fmt.Errorf("churn: %w", err)
		}
		// The namespace applies to the namespaced kinds alone.
		var client dynamic.ResourceInterface = e.any.dynamic.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			client = e.any.dynamic.Resource(mapping.Resource).Namespace(ns)
		}
		churners = append(churners, churner{client: client, obj: obj})
	}
	interval := 500 * time.Millisecond
	if o.IntervalMilliseconds != 0 {
		interval = time.Duration(o.IntervalMilliseconds) * time.Millisecond
	}
	e.inBackground(ctx, func(ctx context.Context) error {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		rounds := o.Number
		if o.Mode == "create" && rounds == 0 {
			rounds = math.MaxInt
		}
		// live holds, in recreate mode, each template's Number names.
		live := make([][]string, len(churners))
		for i := range live {
			live[i] = make([]string, o.Number)
		}
		for round := 0; o.Mode == "recreate" || round < rounds; round++ {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
			for i, c := range churners {
				if o.Mode == "create" {
					c.make(ctx)
					continue
				}
				// Recreate: a slot holding an object has it deleted, an
				// empty one gets a new object, so each round alternates.
				slot := &live[i][round%o.Number]
				if *slot == "" {
					*slot = c.make(ctx)
					continue
				}
				if err := c.delete(ctx, *slot); err != nil {
					return err
				}
				*slot = ""
			}
		}
		return nil
	})
	return nil
}

// inBackground runs f beside the ops that follow, until it returns or the
// workload ends, which cancels its context (upstream's churn and its
// deletes that skip waiting run so).
func (e *executor) inBackground(ctx context.Context, f func(context.Context) error) {
	ctx, stop := context.WithCancel(ctx)
	e.background = append(e.background, stop)
	e.running.Add(1)
	go func() {
		defer e.running.Done()
		if err := f(ctx); err != nil && !errors.Is(err, context.Canceled) {
			e.failed.CompareAndSwap(nil, &err)
		}
	}()
}

// stopBackground ends what runs in the background and returns its first
// failure.
func (e *executor) stopBackground() error {
	for _, stop := range e.background {
		stop()
	}
	e.running.Wait()
	if err := e.failed.Load(); err != nil {
		return *err
	}
	return nil
}

package snapshot

// The loader creates a document's objects kind by kind, in the order they
// depend on each other, a few at a time.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"minisched/cluster"
)

type loader struct {
	client kubernetes.Interface
	// classes names the PriorityClasses this load created: a pod naming
	// one may be refused for a moment (cluster.WaitForClass).
	classes map[string]bool
	// claims maps each PersistentVolumeClaim created to its new uid, which
	// the PersistentVolume bound to it names; created keeps the claims
	// whose status is written once their volumes exist.
	claimsMu sync.Mutex
	claims   map[string]types.UID
	created  []v1.PersistentVolumeClaim
}

func (l *loader) load(ctx context.Context, doc *Document) (Counts, error) {
	var c Counts
	core, storage, res, apps := l.client.CoreV1(), l.client.StorageV1(), l.client.ResourceV1(), l.client.AppsV1()
	create := metav1.CreateOptions{}
	steps := []func() error{
		func() error {
			return each(ctx, doc.Namespaces, &c.Namespaces, "namespace", func(ctx context.Context, ns *v1.Namespace) error {
				return l.namespace(ctx, ns)
			})
		},
		func() error {
			return each(ctx, doc.PriorityClasses, &c.PriorityClasses, "PriorityClass", creator(l.client.SchedulingV1().PriorityClasses().Create))
		},
		func() error {
			return each(ctx, doc.RuntimeClasses, &c.RuntimeClasses, "RuntimeClass", creator(l.client.NodeV1().RuntimeClasses().Create))
		},
		func() error {
			return each(ctx, doc.StorageClasses, &c.StorageClasses, "StorageClass", creator(storage.StorageClasses().Create))
		},
		func() error {
			return each(ctx, doc.DeviceClasses, &c.DeviceClasses, "DeviceClass", creator(res.DeviceClasses().Create))
		},
		func() error {
			l.claims = map[string]types.UID{}
			return each(ctx, doc.PersistentVolumeClaims, &c.PersistentVolumeClaims, "PersistentVolumeClaim", func(ctx context.Context, pvc *v1.PersistentVolumeClaim) error {
				claims := core.PersistentVolumeClaims(pvc.Namespace)
				created, err := claims.Create(ctx, pvc, create)
				if err != nil {
					return err
				}
				l.claimsMu.Lock()
				l.claims[pvc.Namespace+"/"+pvc.Name] = created.UID
				if pvc.Status.Phase != "" {
					created.Status = pvc.Status
					l.created = append(l.created, *created)
				}
				l.claimsMu.Unlock()
				return nil
			})
		},
		func() error {
			return each(ctx, doc.PersistentVolumes, &c.PersistentVolumes, "PersistentVolume", func(ctx context.Context, pv *v1.PersistentVolume) error {
				if ref := pv.Spec.ClaimRef; ref != nil {
					ref.UID = l.claims[ref.Namespace+"/"+ref.Name]
				}
				created, err := core.PersistentVolumes().Create(ctx, pv, create)
				if err != nil || pv.Status.Phase == "" {
					return err
				}
				return writeStatus(ctx, core.PersistentVolumes(), created, func(v *v1.PersistentVolume) { v.Status = pv.Status })
			})
		},
		func() error {
			// A claim says Bound only once its volume exists: the
			// persistentvolume controller marks a Bound claim whose
			// volume it cannot find Lost.
			var none int
			return each(ctx, l.created, &none, "PersistentVolumeClaim status", func(ctx context.Context, created *v1.PersistentVolumeClaim) error {
				status := created.Status
				return writeStatus(ctx, core.PersistentVolumeClaims(created.Namespace), created, func(c *v1.PersistentVolumeClaim) { c.Status = status })
			})
		},
		func() error {
			return each(ctx, doc.CSINodes, &c.CSINodes, "CSINode", creator(storage.CSINodes().Create))
		},
		func() error {
			// The apiserver keeps a node's status on create, as the
			// cluster package's CreateNode says.
			return each(ctx, doc.Nodes, &c.Nodes, "node", creator(core.Nodes().Create))
		},
		func() error {
			return each(ctx, doc.ResourceSlices, &c.ResourceSlices, "ResourceSlice", creator(res.ResourceSlices().Create))
		},
		func() error {
			return each(ctx, doc.ResourceClaims, &c.ResourceClaims, "ResourceClaim", func(ctx context.Context, claim *resourcev1.ResourceClaim) error {
				claims := res.ResourceClaims(claim.Namespace)
				created, err := claims.Create(ctx, claim, create)
				if err != nil || claim.Status.Allocation == nil {
					return err
				}
				return writeStatus(ctx, claims, created, func(c *resourcev1.ResourceClaim) { c.Status = claim.Status })
			})
		},
		func() error {
			return each(ctx, doc.Deployments, &c.Deployments, "Deployment", inNamespace(func(ns string) func(context.Context, *appsv1.Deployment, metav1.CreateOptions) (*appsv1.Deployment, error) {
				return apps.Deployments(ns).Create
			}))
		},
		func() error {
			return each(ctx, doc.ReplicaSets, &c.ReplicaSets, "ReplicaSet", inNamespace(func(ns string) func(context.Context, *appsv1.ReplicaSet, metav1.CreateOptions) (*appsv1.ReplicaSet, error) {
				return apps.ReplicaSets(ns).Create
			}))
		},
		func() error {
			return each(ctx, doc.StatefulSets, &c.StatefulSets, "StatefulSet", inNamespace(func(ns string) func(context.Context, *appsv1.StatefulSet, metav1.CreateOptions) (*appsv1.StatefulSet, error) {
				return apps.StatefulSets(ns).Create
			}))
		},
		func() error {
			return each(ctx, doc.DaemonSets, &c.DaemonSets, "DaemonSet", inNamespace(func(ns string) func(context.Context, *appsv1.DaemonSet, metav1.CreateOptions) (*appsv1.DaemonSet, error) {
				return apps.DaemonSets(ns).Create
			}))
		},
		func() error {
			return each(ctx, doc.PodDisruptionBudgets, &c.PodDisruptionBudgets, "PodDisruptionBudget", inNamespace(func(ns string) func(context.Context, *policyv1.PodDisruptionBudget, metav1.CreateOptions) (*policyv1.PodDisruptionBudget, error) {
				return l.client.PolicyV1().PodDisruptionBudgets(ns).Create
			}))
		},
		func() error {
			// Bound pods first: a pending pod the scheduler places while
			// they are still coming would be placed on half the picture.
			var bound, pending []v1.Pod
			for _, p := range doc.Pods {
				if p.Spec.NodeName != "" {
					bound = append(bound, p)
				} else {
					pending = append(pending, p)
				}
			}
			err := each(ctx, bound, &c.BoundPods, "pod", l.pod)
			if err == nil {
				err = each(ctx, pending, &c.PendingPods, "pod", l.pod)
			}
			c.Pods = c.BoundPods + c.PendingPods
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// statusClient is the part of a typed client writeStatus needs.
type statusClient[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// writeStatus writes the status of an object just created, a call of its
// own (status is a subresource). A controller may have changed the object
// in between (the persistentvolume controller marks a claim at once), so a
// conflict reads it again and sets the status on the newer one.
func writeStatus[T metav1.Object](ctx context.Context, client statusClient[T], created T, set func(T)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		set(created)
		_, err := client.UpdateStatus(ctx, created, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			if latest, getErr := client.Get(ctx, created.GetName(), metav1.GetOptions{}); getErr == nil {
				created = latest
			}
		}
		return err
	})
}

// pod creates a pod; one with spec.nodeName is created bound (the
// apiserver accepts nodeName on create, and the scheduler leaves such a pod
// alone).
func (l *loader) pod(ctx context.Context, pod *v1.Pod) error {
	// Priority admission works both out from the pod's PriorityClass, and
	// refuses a pod that states other values than the class's.
	pod.Spec.Priority, pod.Spec.PreemptionPolicy = nil, nil
	create := func() error {
		_, err := l.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		return err
	}
	if l.classes[pod.Spec.PriorityClassName] {
		// A class this load created a moment ago may not have reached
		// the Priority admission's cache yet.
		return cluster.WaitForClass(ctx, create)
	}
	return create()
}

// namespace creates a namespace, or, for one every cluster has (default,
// kube-system), gives it the document's labels and annotations: rules
// such as pod affinity's namespaceSelector read them.
func (l *loader) namespace(ctx context.Context, ns *v1.Namespace) error {
	namespaces := l.client.CoreV1().Namespaces()
	_, err := namespaces.Create(ctx, ns, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	current, err := namespaces.Get(ctx, ns.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	current.Labels, current.Annotations = ns.Labels, ns.Annotations
	_, err = namespaces.Update(ctx, current, metav1.UpdateOptions{})
	return err
}

// inNamespace is creator for a namespaced kind: the object's namespace
// picks the client.
func inNamespace[T any, P metaObject[T]](create func(namespace string) func(context.Context, *T, metav1.CreateOptions) (*T, error)) func(context.Context, *T) error {
	return func(ctx context.Context, obj *T) error {
		_, err := create(P(obj).GetNamespace())(ctx, obj, metav1.CreateOptions{})
		return err
	}
}

// creator adapts a typed client's Create to each.
func creator[T any](create func(context.Context, *T, metav1.CreateOptions) (*T, error)) func(context.Context, *T) error {
	return func(ctx context.Context, obj *T) error {
		_, err := create(ctx, obj, metav1.CreateOptions{})
		return err
	}
}

// each runs do on every item, a few at a time, counts those done, and
// stops at the first failure, which it names.
func each[T any, P metaObject[T]](ctx context.Context, items []T, count *int, kind string, do func(context.Context, P) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var done atomic.Int64
	next := make(chan P)
	var wg sync.WaitGroup
	for range min(workers, len(items)) {
		wg.Go(func() {
			for obj := range next {
				if err := do(ctx, obj); err != nil {
					name := obj.GetName()
					if ns := obj.GetNamespace(); ns != "" {
						name = ns + "/" + name
					}
					cancel(fmt.Errorf("creating %s %s: %w", kind, name, err))
					continue
				}
				done.Add(1)
			}
		})
	}
feed:
	for i := range items {
		select {
		case next <- P(&items[i]):
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	*count = int(done.Load())
	return context.Cause(ctx)
}

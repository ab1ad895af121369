// Package provisioner is the embedded cluster's storage: a default
// StorageClass and the dynamic provisioner behind it. It acts as an
// external provisioner does towards kube-controller-manager's
// PersistentVolume controller: that controller marks a claim of the class
// with volume.kubernetes.io/storage-provisioner once the scheduler has
// picked a node (WaitForFirstConsumer); the provisioner then makes a
// node-local volume on that node, bound to the claim by claimRef, and the
// PV controller binds the two. A Released volume of a Delete class is
// deleted, as an external provisioner deletes its own. No data is stored:
// the volume is a record in the apiserver.
//
// The shape is etcd embed's: one Config, one Start, one Close.
package provisioner

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	volumehelpers "k8s.io/component-helpers/storage/volume"

	"minisched/cluster"
)

// Name is the provisioner of the default class, as StorageClasses name it.
const Name = "minisched.io/local"

// DefaultClassName is the default StorageClass's name, as kind's and
// minikube's is.
const DefaultClassName = "standard"

// isDefaultClass is the annotation the DefaultStorageClass admission plugin
// reads (k8s.io/kubernetes/pkg/apis/storage/util).
const isDefaultClass = "storageclass.kubernetes.io/is-default-class"

// volumeRoot is where the volumes would live on a node; it names them only.
const volumeRoot = "/var/lib/minisched/volumes"

// DefaultClass is the StorageClass the embedded cluster starts with: the
// default, WaitForFirstConsumer (a volume is made on the node the
// scheduler picks), deleted with its claim.
func DefaultClass() *storagev1.StorageClass {
	wait, reclaim := storagev1.VolumeBindingWaitForFirstConsumer, v1.PersistentVolumeReclaimDelete
	return &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: DefaultClassName,
			Labels:      map[string]string{cluster.BuiltInLabel: "true"},
			Annotations: map[string]string{isDefaultClass: "true"}},
		Provisioner: Name, VolumeBindingMode: &wait, ReclaimPolicy: &reclaim,
	}
}

// Config says where the provisioner works.
type Config struct {
	Client kubernetes.Interface
	// DefaultClass creates DefaultClass at Start when the cluster has no
	// default StorageClass.
	DefaultClass bool
}

// Provisioner is the running provisioner.
type Provisioner struct {
	client      kubernetes.Interface
	claims      corelisters.PersistentVolumeClaimLister
	volumes     corelisters.PersistentVolumeLister
	classes     storagelisters.StorageClassLister
	nodes       corelisters.NodeLister
	claimQueue  workqueue.TypedRateLimitingInterface[string]
	volumeQueue workqueue.TypedRateLimitingInterface[string]
	events      record.EventBroadcaster
	recorder    record.EventRecorder

	cancel context.CancelFunc
	done   sync.WaitGroup
}

// Start starts the provisioner and returns once its caches are synced.
func Start(ctx context.Context, cfg Config) (*Provisioner, error) {
	if cfg.Client == nil {
		return nil, errors.New("provisioner: no client")
	}
	if cfg.DefaultClass {
		if err := ensureDefaultClass(ctx, cfg.Client); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactory(cfg.Client, 0)
	p := &Provisioner{
		client: cfg.Client, cancel: cancel,
		claims:      factory.Core().V1().PersistentVolumeClaims().Lister(),
		volumes:     factory.Core().V1().PersistentVolumes().Lister(),
		classes:     factory.Storage().V1().StorageClasses().Lister(),
		nodes:       factory.Core().V1().Nodes().Lister(),
		claimQueue:  newQueue("provisioner-claims"),
		volumeQueue: newQueue("provisioner-volumes"),
		events:      record.NewBroadcaster(record.WithContext(ctx)),
	}
	p.events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cfg.Client.CoreV1().Events("")})
	p.recorder = p.events.NewRecorder(scheme.Scheme, v1.EventSource{Component: Name})
	enqueue := func(q workqueue.TypedRateLimitingInterface[string]) cache.ResourceEventHandlerFuncs {
		add := func(obj any) {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				q.Add(key)
			}
		}
		return cache.ResourceEventHandlerFuncs{AddFunc: add, UpdateFunc: func(_, cur any) { add(cur) }}
	}
	claimInformer := factory.Core().V1().PersistentVolumeClaims().Informer()
	volumeInformer := factory.Core().V1().PersistentVolumes().Informer()
	for _, h := range []struct {
		informer cache.SharedIndexInformer
		queue    workqueue.TypedRateLimitingInterface[string]
	}{{claimInformer, p.claimQueue}, {volumeInformer, p.volumeQueue}} {
		if _, err := h.informer.AddEventHandler(enqueue(h.queue)); err != nil {
			cancel()
			return nil, fmt.Errorf("provisioner: watching: %w", err)
		}
	}
	synced := []cache.InformerSynced{claimInformer.HasSynced, volumeInformer.HasSynced,
		factory.Storage().V1().StorageClasses().Informer().HasSynced, factory.Core().V1().Nodes().Informer().HasSynced}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		cancel()
		factory.Shutdown()
		p.events.Shutdown()
		return nil, fmt.Errorf("provisioner: caches did not sync: %w", context.Cause(ctx))
	}
	p.done.Go(func() {
		<-ctx.Done()
		p.claimQueue.ShutDown()
		p.volumeQueue.ShutDown()
		factory.Shutdown()
	})
	p.done.Go(func() { run(ctx, p.claimQueue, p.syncClaim) })
	p.done.Go(func() { run(ctx, p.volumeQueue, p.syncVolume) })
	return p, nil
}

// Close stops the provisioner and waits for it.
func (p *Provisioner) Close() {
	p.cancel()
	p.done.Wait()
	p.events.Shutdown()
}

// ensureDefaultClass creates DefaultClass unless some class is the default
// already (a person's own, or one a copy brought).
func ensureDefaultClass(ctx context.Context, client kubernetes.Interface) error {
	classes, err := client.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("provisioner: listing StorageClasses: %w", err)
	}
	for _, c := range classes.Items {
		if c.Annotations[isDefaultClass] == "true" {
			return nil
		}
	}
	_, err = client.StorageV1().StorageClasses().Create(ctx, DefaultClass(), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("provisioner: creating the default StorageClass: %w", err)
	}
	return nil
}

func newQueue(name string) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
}

// run works through a queue, one key at a time; a failed key is tried again
// with the queue's backoff.
func run(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], sync func(context.Context, string) error) {
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		if err := sync(ctx, key); err != nil && ctx.Err() == nil {
			q.AddRateLimited(key)
		} else {
			q.Forget(key)
		}
		q.Done(key)
	}
}

// syncClaim makes the volume of a claim the PV controller handed to this
// provisioner.
func (p *Provisioner) syncClaim(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	claim, err := p.claims.PersistentVolumeClaims(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !ours(claim) || claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil {
		return nil
	}
	volumeName := "pvc-" + string(claim.UID)
	if _, err := p.volumes.Get(volumeName); err == nil {
		return nil
	}
	class, err := p.classes.Get(volumehelpers.GetPersistentVolumeClaimClass(claim))
	if err != nil {
		return fmt.Errorf("provisioner: the class of claim %s: %w", key, err)
	}
	nodeName := claim.Annotations[volumehelpers.AnnSelectedNode]
	if nodeName == "" {
		// The volume lives on one node, which only the scheduler can pick.
		p.recorder.Eventf(claim, v1.EventTypeWarning, "ProvisioningFailed",
			"%s makes node-local volumes: its StorageClass %s needs volumeBindingMode WaitForFirstConsumer", Name, class.Name)
		return nil
	}
	node, err := p.nodes.Get(nodeName)
	if err != nil {
		return fmt.Errorf("provisioner: the selected node of claim %s: %w", key, err)
	}
	volume, err := newVolume(volumeName, claim, class, node)
	if err != nil {
		p.recorder.Event(claim, v1.EventTypeWarning, "ProvisioningFailed", err.Error())
		return nil
	}
	if _, err := p.client.CoreV1().PersistentVolumes().Create(ctx, volume, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("provisioner: creating volume %s for claim %s: %w", volumeName, key, err)
	}
	p.recorder.Eventf(claim, v1.EventTypeNormal, "ProvisioningSucceeded", "Successfully provisioned volume %s on node %s", volumeName, node.Name)
	return nil
}

// ours says whether the PV controller asked this provisioner for the claim.
func ours(claim *v1.PersistentVolumeClaim) bool {
	return claim.Annotations[volumehelpers.AnnStorageProvisioner] == Name ||
		claim.Annotations[volumehelpers.AnnBetaStorageProvisioner] == Name
}

// newVolume is the volume of claim on node: the size it asks, its access
// modes and volume mode, the class's reclaim policy and mount options, and
// node affinity to the node's hostname label, as a local volume has.
func newVolume(name string, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass, node *v1.Node) (*v1.PersistentVolume, error) {
	size, ok := claim.Spec.Resources.Requests[v1.ResourceStorage]
	if !ok {
		return nil, fmt.Errorf("claim %s/%s requests no storage", claim.Namespace, claim.Name)
	}
	hostname := node.Labels[v1.LabelHostname]
	if hostname == "" {
		return nil, fmt.Errorf("node %s has no %s label, which the volume's node affinity needs", node.Name, v1.LabelHostname)
	}
	reclaim := v1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{volumehelpers.AnnDynamicallyProvisioned: Name}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: size},
			AccessModes:                   claim.Spec.AccessModes,
			VolumeMode:                    claim.Spec.VolumeMode,
			StorageClassName:              class.Name,
			PersistentVolumeReclaimPolicy: reclaim,
			MountOptions:                  class.MountOptions,
			ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion},
			PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: path.Join(volumeRoot, name)}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{hostname}}},
			}}}},
		},
	}, nil
}

// syncVolume deletes a volume of this provisioner once its claim is gone
// and its reclaim policy says Delete: the PV controller leaves that to the
// provisioner that made it.
func (p *Provisioner) syncVolume(ctx context.Context, name string) error {
	volume, err := p.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if volume.Annotations[volumehelpers.AnnDynamicallyProvisioned] != Name || volume.Status.Phase != v1.VolumeReleased ||
		volume.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete || volume.DeletionTimestamp != nil {
		return nil
	}
	uid := volume.UID
	err = p.client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("provisioner: deleting released volume %s: %w", name, err)
	}
	return nil
}

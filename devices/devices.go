// Package devices is the embedded cluster's built-in DRA driver. A node
// asks for devices with an annotation; the driver publishes them in a
// ResourceSlice of its node, as a DRA driver's kubelet plugin does, and a
// DeviceClass selects them. DeviceClass, ResourceClaimTemplate and claim
// manifests then work end to end: kube-controller-manager's resourceclaim
// controller makes a pod's claims, the scheduler's DynamicResources plugin
// allocates devices from the slices, and the controller frees them with the
// pod. No device exists: a slice is a record in the apiserver.
//
// The shape is etcd embed's: one Config, one Start, one Close.
package devices

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// Driver is the driver's name, in its slices and its DeviceClass's selector.
const Driver = "devices.minisched.io"

// CountAnnotation on a node: how many devices its slice publishes (0 to
// MaxDevices); without it, none.
const CountAnnotation = "devices.minisched.io/count"

// MaxDevices bounds a node's devices; a ResourceSlice holds at most 128.
const MaxDevices = 64

// ClassName is the built-in DeviceClass, which selects every device of
// the driver.
const ClassName = Driver

// Class is the DeviceClass the embedded cluster starts with, labelled with
// the cluster's mark of what it made itself.
func Class(labels map[string]string) *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: ClassName, Labels: labels},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", Driver)}}}},
	}
}

// Count reads a node's CountAnnotation: 0 without it, an error for a value
// that is not a whole number from 0 to MaxDevices.
func Count(node *v1.Node) (int, error) {
	s, ok := node.Annotations[CountAnnotation]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > MaxDevices {
		return 0, fmt.Errorf("annotation %s of node %s is %q: want a whole number from 0 to %d", CountAnnotation, node.Name, s, MaxDevices)
	}
	return n, nil
}

// Config says where the driver works.
type Config struct {
	Client kubernetes.Interface
	// Class, when set, is created at Start if it does not exist.
	Class *resourcev1.DeviceClass
}

// Devices is the running driver.
type Devices struct {
	client   kubernetes.Interface
	nodes    corelisters.NodeLister
	slices   resourcelisters.ResourceSliceLister
	queue    workqueue.TypedRateLimitingInterface[string]
	events   record.EventBroadcaster
	recorder record.EventRecorder

	cancel context.CancelFunc
	done   sync.WaitGroup
}

// Start starts the driver and returns once its caches are synced.
func Start(ctx context.Context, cfg Config) (*Devices, error) {
	if cfg.Client == nil {
		return nil, errors.New("devices: no client")
	}
	if cfg.Class != nil {
		_, err := cfg.Client.ResourceV1().DeviceClasses().Create(ctx, cfg.Class, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("devices: creating DeviceClass %s: %w", cfg.Class.Name, err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	nodeFactory := informers.NewSharedInformerFactory(cfg.Client, 0)
	// Only this driver's slices: another driver's are its own business.
	sliceFactory := informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector(resourcev1.ResourceSliceSelectorDriver, Driver).String()
		}))
	d := &Devices{
		client: cfg.Client, cancel: cancel,
		nodes:  nodeFactory.Core().V1().Nodes().Lister(),
		slices: sliceFactory.Resource().V1().ResourceSlices().Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "devices"}),
		events: record.NewBroadcaster(record.WithContext(ctx)),
	}
	d.events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cfg.Client.CoreV1().Events("")})
	d.recorder = d.events.NewRecorder(scheme.Scheme, v1.EventSource{Component: Driver})
	nodeInformer := nodeFactory.Core().V1().Nodes().Informer()
	sliceInformer := sliceFactory.Resource().V1().ResourceSlices().Informer()
	node := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		switch o := obj.(type) {
		case *v1.Node:
			d.queue.Add(o.Name)
		case *resourcev1.ResourceSlice:
			if o.Spec.NodeName != nil {
				d.queue.Add(*o.Spec.NodeName)
			}
		}
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: node, UpdateFunc: func(_, cur any) { node(cur) }, DeleteFunc: node}
	for _, informer := range []cache.SharedIndexInformer{nodeInformer, sliceInformer} {
		if _, err := informer.AddEventHandler(handler); err != nil {
			cancel()
			return nil, fmt.Errorf("devices: watching: %w", err)
		}
	}
	nodeFactory.Start(ctx.Done())
	sliceFactory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), nodeInformer.HasSynced, sliceInformer.HasSynced) {
		cancel()
		nodeFactory.Shutdown()
		sliceFactory.Shutdown()
		d.events.Shutdown()
		return nil, fmt.Errorf("devices: caches did not sync: %w", context.Cause(ctx))
	}
	d.done.Go(func() {
		<-ctx.Done()
		d.queue.ShutDown()
		nodeFactory.Shutdown()
		sliceFactory.Shutdown()
	})
	d.done.Go(func() { d.run(ctx) })
	return d, nil
}

// Close stops the driver and waits for it.
func (d *Devices) Close() {
	d.cancel()
	d.done.Wait()
	d.events.Shutdown()
}

// run works through the queue; a node whose sync failed is tried again
// with the queue's backoff.
func (d *Devices) run(ctx context.Context) {
	for {
		name, shutdown := d.queue.Get()
		if shutdown {
			return
		}
		if err := d.sync(ctx, name); err != nil && ctx.Err() == nil {
			d.queue.AddRateLimited(name)
		} else {
			d.queue.Forget(name)
		}
		d.queue.Done(name)
	}
}

// SliceName is the name of node's slice.
func SliceName(node string) string { return node + "-" + Driver }

// sync makes node's slice what its annotation asks: none for no devices,
// a node that is gone or a bad value, which a Warning Event on the node
// names (kubectl describe node shows it).
func (d *Devices) sync(ctx context.Context, name string) error {
	var want *resourcev1.ResourceSlice
	node, err := d.nodes.Get(name)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	default:
		n, err := Count(node)
		if err != nil {
			d.recorder.Event(node, v1.EventTypeWarning, "InvalidDevices", err.Error()+": no devices published")
		} else if n > 0 {
			want = slice(node, n)
		}
	}
	have, err := d.slices.Get(SliceName(name))
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	api := d.client.ResourceV1().ResourceSlices()
	switch {
	case want == nil && have == nil:
		return nil
	case want == nil:
		err = api.Delete(ctx, have.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &have.UID}})
		if apierrors.IsNotFound(err) {
			return nil
		}
	case have == nil:
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
	case !same(have, want):
		// A new generation tells the scheduler the pool changed.
		update := have.DeepCopy()
		update.OwnerReferences = want.OwnerReferences
		update.Spec = want.Spec
		update.Spec.Pool.Generation = have.Spec.Pool.Generation + 1
		_, err = api.Update(ctx, update, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("devices: the slice of node %s: %w", name, err)
	}
	return nil
}

// slice is the slice node's n devices are published in: one pool named
// after the node, owned by the node so that it goes with it.
func slice(node *v1.Node, n int) *resourcev1.ResourceSlice {
	devices := make([]resourcev1.Device, n)
	for i := range devices {
		devices[i] = resourcev1.Device{Name: fmt.Sprintf("dev-%d", i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"index": {IntValue: ptr.To(int64(i))}}}
	}
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: SliceName(node.Name),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID, Controller: ptr.To(true)}}},
		Spec: resourcev1.ResourceSliceSpec{Driver: Driver, NodeName: ptr.To(node.Name),
			Pool:    resourcev1.ResourcePool{Name: node.Name, Generation: 1, ResourceSliceCount: 1},
			Devices: devices},
	}
}

// same says whether a slice publishes what want does, for the same node.
func same(have, want *resourcev1.ResourceSlice) bool {
	if len(have.OwnerReferences) != 1 || have.OwnerReferences[0].UID != want.OwnerReferences[0].UID ||
		ptr.Deref(have.Spec.NodeName, "") != ptr.Deref(want.Spec.NodeName, "") ||
		have.Spec.Pool.Name != want.Spec.Pool.Name || have.Spec.Pool.ResourceSliceCount != 1 {
		return false
	}
	return slices.EqualFunc(have.Spec.Devices, want.Spec.Devices, func(a, b resourcev1.Device) bool {
		return a.Name == b.Name && ptr.Deref(a.Attributes["index"].IntValue, -1) == ptr.Deref(b.Attributes["index"].IntValue, -1) && len(a.Attributes) == 1
	})
}

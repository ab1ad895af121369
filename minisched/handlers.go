package minisched

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"minisched/minisched/queue"
)

// Cluster events minisched raises from what its informers see.
var (
	nodeAdd    = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}
	nodeDelete = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Delete}
)

// addEventHandlers wires the informers to the queue and the cache, the way
// kube-scheduler's eventhandlers.go does: pending pods of its profiles go to
// the queue; assigned pods and nodes go to the cache and raise cluster events
// that may move waiting pods.
func (s *Scheduler) addEventHandlers() error {
	pods := s.factory.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(s.seen.Track("Pod", cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			pod, ok := obj.(*v1.Pod)
			if !ok {
				return
			}
			if s.responsibleFor(pod) && pod.Spec.NodeName == "" {
				s.addPendingPod(pod)
			}
			if pod.Spec.NodeName != "" {
				s.addAssignedPod(pod)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			oldPod, newPod := oldObj.(*v1.Pod), newObj.(*v1.Pod)
			switch {
			case oldPod.Spec.NodeName != "":
				s.updateAssignedPod(oldPod, newPod)
			case newPod.Spec.NodeName != "":
				// A binding: the pod joins the cache. It should not be in the
				// queue any more; if another component bound it, it leaves.
				s.addAssignedPod(newPod)
				if s.responsibleFor(oldPod) {
					s.deletePendingPod(oldPod, true)
				}
			case s.responsibleFor(oldPod):
				s.updatePendingPod(oldPod, newPod)
			}
		},
		DeleteFunc: func(obj any) {
			pod, stale := podOf(obj)
			if pod == nil {
				return
			}
			// A tombstone may carry a stale pod: clean up both ways.
			if stale || pod.Spec.NodeName != "" {
				s.deleteAssignedPod(pod)
			}
			if (stale || pod.Spec.NodeName == "") && s.responsibleFor(pod) {
				s.deletePendingPod(pod, false)
			}
		},
	})); err != nil {
		return fmt.Errorf("watching pods: %w", err)
	}

	if utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload) {
		if err := s.addPodGroupEventHandlers(); err != nil {
			return err
		}
	}

	if _, err := s.factory.Core().V1().Nodes().Informer().AddEventHandler(s.seen.Track("Node", cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			node := nodeOf(obj)
			if node == nil {
				return
			}
			s.cache.AddNode(s.logger, node)
			s.queue.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, node, nil)
		},
		UpdateFunc: func(oldObj, newObj any) {
			oldNode, newNode := oldObj.(*v1.Node), newObj.(*v1.Node)
			s.cache.UpdateNode(s.logger, oldNode, newNode)
			for _, ev := range framework.NodeSchedulingPropertiesChange(newNode, oldNode) {
				s.queue.MoveAllToActiveOrBackoffQueue(ev, oldNode, newNode, nil)
			}
		},
		DeleteFunc: func(obj any) {
			node := nodeOf(obj)
			if node == nil {
				return
			}
			if err := s.cache.RemoveNode(s.logger, node); err != nil {
				s.logger.Error(err, "Removing a node from the cache", "node", klog.KObj(node))
			}
			s.queue.MoveAllToActiveOrBackoffQueue(nodeDelete, node, nil, nil)
		},
	})); err != nil {
		return fmt.Errorf("watching nodes: %w", err)
	}
	return nil
}

// addObjectEventHandlers raises the cluster events of the other objects that
// plugins registered for (volumes, storage, devices, custom resources), so
// that a pod rejected by, say, VolumeBinding moves when the volume it waits
// for appears.
func (s *Scheduler) addObjectEventHandlers(registered map[string][]fwk.ClusterEventWithHint) error {
	wanted := map[fwk.EventResource]bool{}
	for _, events := range registered {
		for _, e := range events {
			wanted[e.Event.Resource] = true
		}
	}
	f := s.factory
	informers := map[fwk.EventResource]func() cache.SharedIndexInformer{
		fwk.PersistentVolume:      f.Core().V1().PersistentVolumes().Informer,
		fwk.PersistentVolumeClaim: f.Core().V1().PersistentVolumeClaims().Informer,
		fwk.StorageClass:          f.Storage().V1().StorageClasses().Informer,
		fwk.CSINode:               f.Storage().V1().CSINodes().Informer,
		fwk.CSIDriver:             f.Storage().V1().CSIDrivers().Informer,
		fwk.CSIStorageCapacity:    f.Storage().V1().CSIStorageCapacities().Informer,
		fwk.VolumeAttachment:      f.Storage().V1().VolumeAttachments().Informer,
	}
	if s.dra != nil {
		informers[fwk.ResourceClaim] = nil // from the assume cache, below
		informers[fwk.ResourceSlice] = nil // from the slice tracker
		informers[fwk.DeviceClass] = f.Resource().V1().DeviceClasses().Informer
	}
	for resource, informer := range informers {
		if !wanted[resource] && !wanted[fwk.WildCard] {
			continue
		}
		var handler cache.ResourceEventHandler = s.raiser(resource)
		var err error
		switch resource {
		case fwk.ResourceClaim:
			// Fired on Assume and Restore too, as upstream's are.
			s.dra.claims.AddEventHandler(handler)
		case fwk.ResourceSlice:
			// Fired when a DeviceTaintRule changes a slice's devices too.
			_, err = s.dra.slices.AddEventHandler(handler)
		case fwk.DeviceClass:
			// The DRA manager's cache of extended resource names sees a
			// class before the queue does ("chaining", as upstream), so
			// that a pod asking for example.com/gpu finds its class.
			if utilfeature.DefaultFeatureGate.Enabled(features.DRAExtendedResource) {
				classes := s.dra.manager.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache)
				classes.AddEventHandler(handler)
				handler = classes
			}
			_, err = informer().AddEventHandler(handler)
		default:
			_, err = informer().AddEventHandler(handler)
		}
		if err != nil {
			return fmt.Errorf("watching %s: %w", resource, err)
		}
	}
	for resource := range wanted {
		if _, ok := informers[resource]; ok || builtIn[resource] {
			continue
		}
		if err := s.watchCustomResource(resource); err != nil {
			return err
		}
	}
	return nil
}

// builtIn are the resources whose events come from elsewhere: the pod and
// node handlers above, pod groups (not modelled), and the DRA kinds when
// DRA is off.
var builtIn = map[fwk.EventResource]bool{
	fwk.Pod: true, fwk.AssignedPod: true, fwk.UnscheduledPod: true, fwk.TargetPod: true, fwk.Node: true, fwk.WildCard: true,
	fwk.PodGroup: true, fwk.CompositePodGroup: true, fwk.ResourceClaim: true, fwk.ResourceSlice: true, fwk.DeviceClass: true,
}

// watchCustomResource raises the events of a resource no typed informer
// serves, as upstream does: an out-of-tree plugin registers it as
// <plural>.<version>.<group> (widgets.v1.example.com), and a dynamic
// informer watches it. Without it, a pod such a plugin rejected would wait
// for the five-minute flush.
func (s *Scheduler) watchCustomResource(resource fwk.EventResource) error {
	// As upstream: at least three parts, the first a plural.
	if strings.Count(string(resource), ".") < 2 {
		s.logger.Error(nil, "Incorrect event registration: want <plural>.<version>.<group>", "resource", resource)
		return nil
	}
	if s.dynFactory == nil {
		if s.opts.RESTConfig == nil {
			s.logger.Info("No REST config for a dynamic informer: the resource's events are not watched", "resource", resource)
			return nil
		}
		client, err := dynamic.NewForConfig(s.opts.RESTConfig)
		if err != nil {
			return fmt.Errorf("building a dynamic client for %s: %w", resource, err)
		}
		s.dynFactory = dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	}
	gvr, _ := schema.ParseResourceArg(string(resource))
	if _, err := s.dynFactory.ForResource(*gvr).Informer().AddEventHandler(s.raiser(resource)); err != nil {
		return fmt.Errorf("watching %s: %w", resource, err)
	}
	return nil
}

// raiser turns an informer's notifications of resource into cluster events
// for the queue.
func (s *Scheduler) raiser(resource fwk.EventResource) cache.ResourceEventHandlerFuncs {
	raise := func(action fwk.ActionType, oldObj, newObj any) {
		s.queue.MoveAllToActiveOrBackoffQueue(fwk.ClusterEvent{Resource: resource, ActionType: action}, oldObj, newObj, nil)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { raise(fwk.Add, nil, obj) },
		UpdateFunc: func(oldObj, newObj any) { raise(fwk.Update, oldObj, newObj) },
		DeleteFunc: func(obj any) { raise(fwk.Delete, unwrap(obj), nil) },
	}
}

// podOf unwraps a pod, also from the tombstone of a missed delete; stale
// says it came from a tombstone.
func podOf(obj any) (pod *v1.Pod, stale bool) {
	_, stale = obj.(cache.DeletedFinalStateUnknown)
	pod, _ = unwrap(obj).(*v1.Pod)
	return pod, stale
}

func (s *Scheduler) responsibleFor(pod *v1.Pod) bool { return s.profileOf(pod) != nil }

// updatePendingPod hands an update of a pending pod to the queue. A pod
// whose nominated node changed counts as deleted from that node for the
// pods of lower or equal priority, which treated it as placed there.
// addPendingPod queues a pod to schedule. The cache counts it in its pod
// group, if it has one; its arrival may then complete its group (a gang
// waiting for its minimum), so it is also a cluster event.
func (s *Scheduler) addPendingPod(pod *v1.Pod) {
	s.cache.AddPodGroupMember(pod)
	// The queue records the pod's nomination too, even when gated.
	s.queue.Add(pod)
	if utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload) {
		s.queue.MoveAllToActiveOrBackoffQueue(framework.EventUnscheduledPodAdd, nil, pod, nil)
	}
}

func (s *Scheduler) updatePendingPod(oldPod, newPod *v1.Pod) {
	if oldPod.ResourceVersion == newPod.ResourceVersion {
		return
	}
	s.syncWithDispatcher(newPod)
	s.cache.UpdatePodGroupMember(s.logger, oldPod, newPod)
	if assumed, _ := s.cache.IsAssumedPod(newPod); assumed {
		if newPod.DeletionTimestamp != nil && oldPod.DeletionTimestamp == nil {
			s.assumedPodDeleted(newPod)
		}
		return
	}
	s.queue.Update(oldPod, newPod, framework.PodSchedulingPropertiesChange(newPod, oldPod, true))
	if old := oldPod.Status.NominatedNodeName; old != "" && old != newPod.Status.NominatedNodeName {
		s.queue.MoveAllToActiveOrBackoffQueue(queue.AssignedPodDelete, oldPod, nil, lowerOrEqualPriority(oldPod))
	}
}

// deletePendingPod takes a pending pod out of the queue. inBinding says the
// pod did not go away but was bound: the binding cycle raises what events
// that needs.
func (s *Scheduler) deletePendingPod(pod *v1.Pod, inBinding bool) {
	s.queue.Delete(pod) // and its nomination
	if inBinding {
		return
	}
	if assumed, _ := s.cache.IsAssumedPod(pod); assumed {
		s.assumedPodDeleted(pod)
		return
	}
	s.cache.RemovePodGroupMember(pod)
	if pod.Status.NominatedNodeName != "" {
		s.queue.MoveAllToActiveOrBackoffQueue(queue.AssignedPodDelete, pod, nil, lowerOrEqualPriority(pod))
	}
}

// assumedPodDeleted frees the room a deleted pod holds in its binding cycle:
// a pod waiting at Permit is rejected (its binding cycle cleans up); one
// further on leaves the cache at once.
func (s *Scheduler) assumedPodDeleted(pod *v1.Pod) {
	cached, err := s.cache.GetPod(pod)
	if err != nil {
		return // already forgotten
	}
	// The profiles share one map of waiting pods: any framework finds it.
	if !s.order[0].fw.RejectWaitingPod(cached.UID) {
		if err := s.cache.RemoveAssumedPod(s.logger, cached); err != nil {
			s.logger.Error(err, "Removing an assumed pod from the cache", "pod", klog.KObj(cached))
		}
	}
	s.queue.MoveAllToActiveOrBackoffQueue(queue.AssignedPodDelete, cached, nil, nil)
}

func (s *Scheduler) addAssignedPod(pod *v1.Pod) {
	if err := s.cache.AddPod(s.logger, pod); err != nil {
		s.logger.Error(err, "Adding an assigned pod to the cache", "pod", klog.KObj(pod))
	}
	s.queue.MoveAllToActiveOrBackoffQueue(queue.AssignedPodAdd, nil, pod, nil)
}

func (s *Scheduler) updateAssignedPod(oldPod, newPod *v1.Pod) {
	s.syncWithDispatcher(newPod)
	if err := s.cache.UpdatePod(s.logger, oldPod, newPod); err != nil {
		s.logger.Error(err, "Updating an assigned pod in the cache", "pod", klog.KObj(newPod))
	}
	for _, ev := range framework.PodSchedulingPropertiesChange(newPod, oldPod, false) {
		s.queue.MoveAllToActiveOrBackoffQueue(ev, oldPod, newPod, nil)
	}
}

func (s *Scheduler) deleteAssignedPod(pod *v1.Pod) {
	if err := s.cache.RemovePod(s.logger, pod); err != nil {
		s.logger.Error(err, "Removing an assigned pod from the cache", "pod", klog.KObj(pod))
	}
	s.queue.MoveAllToActiveOrBackoffQueue(queue.AssignedPodDelete, pod, nil, nil)
}

// lowerOrEqualPriority selects the pods a nominated pod held room against.
func lowerOrEqualPriority(pod *v1.Pod) func(*v1.Pod) bool {
	priority := corev1helpers.PodPriority(pod)
	return func(p *v1.Pod) bool { return corev1helpers.PodPriority(p) <= priority }
}

func nodeOf(obj any) *v1.Node {
	node, _ := unwrap(obj).(*v1.Node)
	return node
}

// unwrap returns the object in the tombstone of a missed delete, or obj.
func unwrap(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

// addPodGroupEventHandlers keeps the cache's and the queue's PodGroup
// objects (GenericWorkload), and raises their events: a PodGroup that
// appears, or lowers its minimum, may let its pods go.
func (s *Scheduler) addPodGroupEventHandlers() error {
	ev := func(a fwk.ActionType) fwk.ClusterEvent {
		return fwk.ClusterEvent{Resource: fwk.PodGroup, ActionType: a}
	}
	_, err := s.factory.Scheduling().V1beta1().PodGroups().Informer().AddEventHandler(s.seen.Track("PodGroup", cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			pg, ok := obj.(*schedulingv1beta1.PodGroup)
			if !ok {
				return
			}
			s.cache.AddPodGroup(pg)
			s.queue.AddPodGroup(pg)
			s.queue.MoveAllToActiveOrBackoffQueue(ev(fwk.Add), nil, pg, nil)
		},
		UpdateFunc: func(oldObj, newObj any) {
			oldPG, newPG := oldObj.(*schedulingv1beta1.PodGroup), newObj.(*schedulingv1beta1.PodGroup)
			if oldPG.ResourceVersion == newPG.ResourceVersion {
				return
			}
			s.cache.UpdatePodGroup(s.logger, oldPG, newPG)
			s.queue.UpdatePodGroup(newPG)
			s.queue.MoveAllToActiveOrBackoffQueue(ev(fwk.Update), oldPG, newPG, nil)
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			pg, ok := obj.(*schedulingv1beta1.PodGroup)
			if !ok {
				return
			}
			s.cache.RemovePodGroup(s.logger, pg)
			s.queue.DeletePodGroup(pg)
			s.queue.MoveAllToActiveOrBackoffQueue(ev(fwk.Delete), pg, nil, nil)
		},
	}))
	if err != nil {
		return fmt.Errorf("watching pod groups: %w", err)
	}
	return nil
}

package minisched

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Cluster events minisched raises from what its informers see.
var (
	nodeAdd              = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}
	nodeDelete           = fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Delete}
	unscheduledPodDelete = fwk.ClusterEvent{Resource: fwk.UnscheduledPod, ActionType: fwk.Delete}
)

// addEventHandlers wires the informers to the queue and the cache, the way
// kube-scheduler does: pending pods of this profile go to the queue; assigned
// pods and nodes go to the cache and raise cluster events that may move
// waiting pods.
func (s *Scheduler) addEventHandlers() error {
	logger := klog.Background()
	pods := s.factory.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			pod := podOf(obj)
			return pod != nil && pod.Spec.NodeName == "" && pod.Spec.SchedulerName == s.profile.name
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				pod := podOf(obj)
				if pod.Status.NominatedNodeName != "" {
					s.nominator.AddNominatedPod(logger, podInfo(pod), nil)
				}
				s.queue.Add(pod)
			},
			UpdateFunc: func(oldObj, newObj any) {
				oldPod, newPod := podOf(oldObj), podOf(newObj)
				if oldPod.ResourceVersion == newPod.ResourceVersion {
					return
				}
				if assumed, _ := s.cache.IsAssumedPod(newPod); assumed {
					return
				}
				s.nominator.UpdateNominatedPod(logger, oldPod, podInfo(newPod))
				s.queue.Update(oldPod, newPod, framework.PodSchedulingPropertiesChange(newPod, oldPod, true))
			},
			DeleteFunc: func(obj any) {
				pod := podOf(obj)
				if pod == nil {
					return
				}
				s.nominator.DeleteNominatedPodIfExists(pod)
				s.queue.Delete(pod)
				// A pod held at Permit stops waiting; its binding cycle ends.
				s.profile.fw.RejectWaitingPod(pod.UID)
				s.queue.MoveAllToActiveOrBackoffQueue(unscheduledPodDelete, pod, nil)
			},
		},
	}); err != nil {
		return fmt.Errorf("watching pending pods: %w", err)
	}

	if _, err := pods.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			pod := podOf(obj)
			return pod != nil && pod.Spec.NodeName != ""
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				pod := podOf(obj)
				s.nominator.DeleteNominatedPodIfExists(pod)
				if err := s.cache.AddPod(logger, pod); err != nil {
					logger.Error(err, "Adding an assigned pod to the cache", "pod", klog.KObj(pod))
				}
				s.queue.AssignedPodAdded(pod)
			},
			UpdateFunc: func(oldObj, newObj any) {
				oldPod, newPod := podOf(oldObj), podOf(newObj)
				if err := s.cache.UpdatePod(logger, oldPod, newPod); err != nil {
					logger.Error(err, "Updating an assigned pod in the cache", "pod", klog.KObj(newPod))
				}
				s.queue.AssignedPodUpdated(oldPod, newPod, framework.PodSchedulingPropertiesChange(newPod, oldPod, false))
			},
			DeleteFunc: func(obj any) {
				pod := podOf(obj)
				if pod == nil {
					return
				}
				if err := s.cache.RemovePod(logger, pod); err != nil {
					logger.Error(err, "Removing an assigned pod from the cache", "pod", klog.KObj(pod))
				}
				s.queue.AssignedPodDeleted(pod)
			},
		},
	}); err != nil {
		return fmt.Errorf("watching assigned pods: %w", err)
	}

	if _, err := s.factory.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			node := nodeOf(obj)
			if node == nil {
				return
			}
			s.cache.AddNode(logger, node)
			s.queue.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, node)
		},
		UpdateFunc: func(oldObj, newObj any) {
			oldNode, newNode := oldObj.(*v1.Node), newObj.(*v1.Node)
			s.cache.UpdateNode(logger, oldNode, newNode)
			for _, ev := range framework.NodeSchedulingPropertiesChange(newNode, oldNode) {
				s.queue.MoveAllToActiveOrBackoffQueue(ev, oldNode, newNode)
			}
		},
		DeleteFunc: func(obj any) {
			node := nodeOf(obj)
			if node == nil {
				return
			}
			if err := s.cache.RemoveNode(logger, node); err != nil {
				logger.Error(err, "Removing a node from the cache", "node", klog.KObj(node))
			}
			s.queue.MoveAllToActiveOrBackoffQueue(nodeDelete, node, nil)
		},
	}); err != nil {
		return fmt.Errorf("watching nodes: %w", err)
	}
	return nil
}

// addObjectEventHandlers raises the cluster events of the other objects that
// plugins registered for (volumes, storage, devices), so that a pod rejected
// by, say, VolumeBinding moves when the volume it waits for appears.
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
		fwk.ResourceClaim:         f.Resource().V1().ResourceClaims().Informer,
		fwk.ResourceSlice:         f.Resource().V1().ResourceSlices().Informer,
		fwk.DeviceClass:           f.Resource().V1().DeviceClasses().Informer,
	}
	for resource, informer := range informers {
		if !wanted[resource] && !wanted[fwk.WildCard] {
			continue
		}
		raise := func(action fwk.ActionType, oldObj, newObj any) {
			s.queue.MoveAllToActiveOrBackoffQueue(fwk.ClusterEvent{Resource: resource, ActionType: action}, oldObj, newObj)
		}
		if _, err := informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { raise(fwk.Add, nil, obj) },
			UpdateFunc: func(oldObj, newObj any) { raise(fwk.Update, oldObj, newObj) },
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				raise(fwk.Delete, obj, nil)
			},
		}); err != nil {
			return fmt.Errorf("watching %s: %w", resource, err)
		}
	}
	return nil
}

// podOf unwraps a pod, also from the tombstone of a missed delete.
func podOf(obj any) *v1.Pod {
	switch t := obj.(type) {
	case *v1.Pod:
		return t
	case cache.DeletedFinalStateUnknown:
		pod, _ := t.Obj.(*v1.Pod)
		return pod
	}
	return nil
}

func nodeOf(obj any) *v1.Node {
	switch t := obj.(type) {
	case *v1.Node:
		return t
	case cache.DeletedFinalStateUnknown:
		node, _ := t.Obj.(*v1.Node)
		return node
	}
	return nil
}

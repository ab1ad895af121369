package snapshot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"minisched/snapshot"
)

// TestLoadWaitsForAdmissionToSeeItsClasses: the Priority admission plugin
// reads PriorityClasses from an informer, so a pod naming a class created
// a moment before is refused until the informer has it (seen in CI). The
// fake apiserver here refuses such a pod the first few times, with the
// plugin's own error; a load must wait for the classes it created, and
// fail at once for a class it did not.
func TestLoadWaitsForAdmissionToSeeItsClasses(t *testing.T) {
	tests := []struct {
		name      string
		classes   []string
		podClass  string
		refusals  int
		wantErr   string
		wantTries int
		wantPods  int
	}{
		{name: "a class the load created, late in admission's cache", classes: []string{"high"}, podClass: "high", refusals: 3, wantTries: 4, wantPods: 1},
		{name: "a class the load created, already in the cache", classes: []string{"high"}, podClass: "high", wantTries: 1, wantPods: 1},
		{name: "a class nobody created", podClass: "missing", refusals: 1000, wantErr: "no PriorityClass with name missing was found", wantTries: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			tries := 0
			client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
				pod := action.(k8stesting.CreateAction).GetObject().(*v1.Pod)
				tries++
				if tries <= tt.refusals {
					attrs := admission.NewAttributesRecord(pod, nil, v1.SchemeGroupVersion.WithKind("Pod"), pod.Namespace, pod.Name,
						v1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, nil, false, nil)
					return true, nil, admission.NewForbidden(attrs, fmt.Errorf("no PriorityClass with name %v was found", pod.Spec.PriorityClassName))
				}
				return false, nil, nil
			})
			doc := &snapshot.Document{APIVersion: snapshot.APIVersion, Kind: snapshot.Kind,
				Pods: []v1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
					Spec: v1.PodSpec{PriorityClassName: tt.podClass, Containers: []v1.Container{{Name: "c", Image: "pause:3.10"}}}}}}
			for _, name := range tt.classes {
				doc.PriorityClasses = append(doc.PriorityClasses, schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: 1000})
			}
			counts, err := snapshot.Load(context.Background(), client, doc, snapshot.LoadOptions{})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("loading: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("loading: error %v, want one with %q", err, tt.wantErr)
			}
			if tries != tt.wantTries {
				t.Errorf("the pod was sent %d times, want %d", tries, tt.wantTries)
			}
			if counts.Pods != tt.wantPods {
				t.Errorf("counts say %d pods created, want %d", counts.Pods, tt.wantPods)
			}
		})
	}
}

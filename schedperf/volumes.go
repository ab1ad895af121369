package schedperf

// Volumes as upstream's runner makes them: a claim and a volume for each
// pod of a createPods with PV templates, bound to each other before the
// pod is made (CreatePodWithPersistentVolume), and the CSINode objects of
// a nodeAllocatableStrategy with CSI limits.

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// volumeTemplates are a createPods op's PV and PVC templates, read once.
type volumeTemplates struct {
	pv  *v1.PersistentVolume
	pvc *v1.PersistentVolumeClaim
}

func (e *executor) volumeTemplates(o *createPodsOp) (*volumeTemplates, error) {
	if o.PersistentVolumeClaimTemplatePath == nil {
		return nil, nil
	}
	if o.PersistentVolumeTemplatePath == nil {
		return nil, fmt.Errorf("persistentVolumeClaimTemplatePath needs persistentVolumeTemplatePath")
	}
	t := &volumeTemplates{pv: &v1.PersistentVolume{}, pvc: &v1.PersistentVolumeClaim{}}
	if err := render(e.tc.File(*o.PersistentVolumeTemplatePath), map[string]any{}, t.pv); err != nil {
		return nil, err
	}
	if err := render(e.tc.File(*o.PersistentVolumeClaimTemplatePath), map[string]any{}, t.pvc); err != nil {
		return nil, err
	}
	return t, nil
}

// bind makes the i-th pod's claim and volume, bound to each other, and
// gives the pod the claim as its one volume.
func (t *volumeTemplates) bind(ctx context.Context, e *executor, ns string, i int, pod *v1.Pod) error {
	claims := e.o.Client.CoreV1().PersistentVolumeClaims(ns)
	volumes := e.o.Client.CoreV1().PersistentVolumes()
	pvc := t.pvc.DeepCopy()
	pvc.Name = fmt.Sprintf("pvc-%d", i)
	pv := t.pv.DeepCopy()
	// Volumes are cluster-wide: the namespace makes the name unique.
	pv.Name = fmt.Sprintf("%s-vol-%d", ns, i)
	switch src := pv.Spec.PersistentVolumeSource; {
	case src.CSI != nil:
		src.CSI.VolumeHandle = pv.Name
	case src.AWSElasticBlockStore != nil:
		src.AWSElasticBlockStore.VolumeID = fmt.Sprintf("vol-%d", i)
	}
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: pvc.Name}
	pv.Status.Phase = v1.VolumeBound
	pvc.Spec.VolumeName = pv.Name
	pvc.Status.Phase = v1.ClaimBound
	// The claim first, as the volume names it; each status apart, as a
	// create resets it.
	if _, err := claims.Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating claim %s/%s: %w", ns, pvc.Name, err)
	}
	if _, err := claims.UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("binding claim %s/%s: %w", ns, pvc.Name, err)
	}
	if _, err := volumes.Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating volume %s: %w", pv.Name, err)
	}
	if _, err := volumes.UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("binding volume %s: %w", pv.Name, err)
	}
	pod.Spec.Volumes = []v1.Volume{{Name: "vol", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}}}
	return nil
}

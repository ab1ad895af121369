package schedperf

import (
	"context"
	"fmt"
	"maps"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createPodGroupsOp makes Count PodGroups (GenericWorkload) in Namespace
// from a template, each with its Index and the op's templateParams, as
// upstream's runCreatePodGroupsOp; the pods that name them come in a
// createPods op after it.
type createPodGroupsOp struct {
	Opcode         string         `json:"opcode"`
	Namespace      string         `json:"namespace"`
	TemplatePath   string         `json:"templatePath"`
	TemplateParams map[string]any `json:"templateParams"`
	Count          int            `json:"count"`
	CountParam     string         `json:"countParam"`
}

// validate checks the op as upstream's isValid does.
func (o *createPodGroupsOp) validate() error {
	switch {
	case o.TemplatePath == "":
		return fmt.Errorf("createPodGroups: templatePath must be set")
	case o.Namespace == "":
		return fmt.Errorf("createPodGroups: namespace must be set")
	case o.Count < 1:
		return fmt.Errorf("createPodGroups: count must be greater than 0, got %d", o.Count)
	}
	return nil
}

// createPodGroups makes the PodGroups, with strict field validation as
// upstream's. Upstream then waits until its own informer lists them; the
// apiserver answers only once they are stored, which is what that wait is
// for: the pods that follow find their groups.
func (e *executor) createPodGroups(ctx context.Context, o *createPodGroupsOp) error {
	if err := e.ensureNamespace(ctx, o.Namespace); err != nil {
		return err
	}
	for i := range o.Count {
		env := maps.Clone(o.TemplateParams)
		if env == nil {
			env = map[string]any{}
		}
		env["Index"] = i
		pg := &schedulingv1beta1.PodGroup{}
		if err := render(e.tc.File(o.TemplatePath), env, pg); err != nil {
			return err
		}
		if _, err := e.o.Client.SchedulingV1beta1().PodGroups(o.Namespace).Create(ctx, pg, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			return fmt.Errorf("creating PodGroup %s/%s: %w", o.Namespace, pg.Name, err)
		}
	}
	return nil
}

// Package schedconfig reads and writes minisched's configuration: a
// standard KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1),
// defaulted and validated as kube-scheduler does.
package schedconfig

import (
	"bytes"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	kubeschedulerv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	configv1 "k8s.io/kubernetes/pkg/scheduler/apis/config/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"sigs.k8s.io/yaml"
)

// Error is a configuration that decodes but is not valid. The API
// answers it with 422.
type Error struct{ Err error }

func (e *Error) Error() string { return "invalid scheduler configuration: " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Default returns kube-scheduler's default configuration with the
// profile's scheduler name set to schedulerName.
func Default(schedulerName string) (*config.KubeSchedulerConfiguration, error) {
	cfg, err := latest.Default()
	if err != nil {
		return nil, fmt.Errorf("building the default configuration: %w", err)
	}
	if schedulerName != "" {
		cfg.Profiles[0].SchedulerName = schedulerName
	}
	return cfg, nil
}

// Load decodes a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1,
// YAML or JSON), defaults it through the versioned API, so that disabling
// plugins under multiPoint works as in kube-scheduler, and validates it.
// The first profile, when it names no scheduler, gets defaultSchedulerName
// (the others get upstream's default-scheduler, and validation refuses two
// of one name).
func Load(data []byte, defaultSchedulerName string) (*config.KubeSchedulerConfiguration, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{Err: errors.New("the configuration is empty")}
	}
	obj, gvk, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, &Error{Err: fmt.Errorf("decoding (want kind KubeSchedulerConfiguration, apiVersion %s): %w",
			configv1.SchemeGroupVersion, err)}
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, &Error{Err: fmt.Errorf("got %s, want KubeSchedulerConfiguration", gvk)}
	}
	cfg.TypeMeta.APIVersion = gvk.GroupVersion().String()
	if !hasSchedulerName(data) && defaultSchedulerName != "" {
		cfg.Profiles[0].SchedulerName = defaultSchedulerName
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, &Error{Err: err}
	}
	return cfg, nil
}

// hasSchedulerName reports whether the user named the profile's scheduler;
// defaulting fills in "default-scheduler" and hides that it did.
func hasSchedulerName(data []byte) bool {
	var versioned kubeschedulerv1.KubeSchedulerConfiguration
	if err := yaml.Unmarshal(data, &versioned); err != nil || len(versioned.Profiles) == 0 {
		return false
	}
	return versioned.Profiles[0].SchedulerName != nil
}

// Encode writes cfg as versioned YAML, the form a user can edit and
// PUT back.
func Encode(cfg *config.KubeSchedulerConfiguration) ([]byte, error) {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeYAML)
	if !ok {
		return nil, errors.New("no YAML serializer for the scheduler configuration")
	}
	var buf bytes.Buffer
	enc := scheme.Codecs.EncoderForVersion(info.Serializer, configv1.SchemeGroupVersion)
	if err := enc.Encode(cfg, &buf); err != nil {
		return nil, fmt.Errorf("encoding the scheduler configuration: %w", err)
	}
	return buf.Bytes(), nil
}

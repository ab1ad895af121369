package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestWaitForClass(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	// The Priority admission plugin's refusal, as the apiserver sends it.
	unseen := apierrors.NewForbidden(pods, "web", fmt.Errorf("no PriorityClass with name high was found"))
	other := apierrors.NewForbidden(pods, "web", fmt.Errorf("exceeded quota"))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name      string
		ctx       context.Context
		answers   []error // one a call; nil after the last
		wantErr   error
		wantCalls int
	}{
		{name: "created at once", ctx: context.Background(), wantCalls: 1},
		{name: "refused until the cache has the class", ctx: context.Background(), answers: []error{unseen, unseen, unseen}, wantCalls: 4},
		{name: "another refusal is final", ctx: context.Background(), answers: []error{other, nil}, wantErr: other, wantCalls: 1},
		{name: "no waiting once the context ends", ctx: cancelled, answers: []error{unseen, unseen}, wantErr: unseen, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := WaitForClass(tt.ctx, func() error {
				calls++
				if calls <= len(tt.answers) {
					return tt.answers[calls-1]
				}
				return nil
			})
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
			if calls != tt.wantCalls {
				t.Errorf("create was called %d times, want %d", calls, tt.wantCalls)
			}
		})
	}
}

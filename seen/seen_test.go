package seen

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestVersions(t *testing.T) {
	var v Versions
	handled := 0
	h := v.Track("Pod", cache.ResourceEventHandlerFuncs{AddFunc: func(any) { handled++ }, UpdateFunc: func(any, any) { handled++ }, DeleteFunc: func(any) { handled++ }})
	pod := func(rv string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a", ResourceVersion: rv}}
	}
	if v.Seen("Pod", "default", "a", "5") || !v.Seen("Pod", "default", "a", "") {
		t.Fatal("before any event: want nothing seen, and no deletion pending")
	}
	h.OnAdd(pod("5"), false)
	h.OnUpdate(pod("5"), pod("9"))
	tests := []struct {
		name, rv string
		want     bool
	}{
		{"an older version", "5", true},
		{"the version handled", "9", true},
		{"a newer version", "10", false},
		{"not yet deleted", "", false},
	}
	for _, tt := range tests {
		if got := v.Seen("Pod", "default", "a", tt.rv); got != tt.want {
			t.Errorf("%s: Seen(%q) = %v, want %v", tt.name, tt.rv, got, tt.want)
		}
	}
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "default/a", Obj: pod("9")})
	if !v.Seen("Pod", "default", "a", "") || v.Seen("Pod", "default", "a", "9") {
		t.Error("after the deletion: want it seen gone")
	}
	if handled != 3 || v.Seen("Node", "", "a", "1") {
		t.Errorf("handled %d events, want 3; kinds are apart", handled)
	}
}

package minisched

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	kubescheduler "k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedprofile "k8s.io/kubernetes/pkg/scheduler/profile"

	"minisched/minisched/plugins/random"
	"minisched/minisched/schedconfig"
)

// TestNumToFind is a differential: for each case, kube-scheduler's
// schedulePod (through Scheduler.SchedulePod) must find as many feasible
// nodes as numToFind says, and both as many as want. With no Filter plugin
// every node fits, so what upstream finds is its numFeasibleNodesToFind
// (pkg/scheduler/schedule_one.go), or one node when nothing scores.
func TestNumToFind(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.OpportunisticBatching, false)
	tests := []struct {
		name       string
		percentage int32 // percentageOfNodesToScore; 0 adapts to the cluster's size
		unscored   bool  // no Score plugin
		nodes      int
		want       int
	}{
		{name: "below 100 nodes: all of them", percentage: 0, nodes: 10, want: 10},
		{name: "99 nodes at 5%: all of them", percentage: 5, nodes: 99, want: 99},
		{name: "100 nodes at 5%: never fewer than 100", percentage: 5, nodes: 100, want: 100},
		{name: "1000 nodes at 5%: never fewer than 100", percentage: 5, nodes: 1000, want: 100},
		{name: "150 nodes at 50%: never fewer than 100", percentage: 50, nodes: 150, want: 100},
		{name: "1000 nodes at 50%", percentage: 50, nodes: 1000, want: 500},
		{name: "1000 nodes at 100%", percentage: 100, nodes: 1000, want: 1000},
		{name: "adaptive, 100 nodes: 50%, raised to 100", percentage: 0, nodes: 100, want: 100},
		{name: "adaptive, 1000 nodes: 42%", percentage: 0, nodes: 1000, want: 420},
		{name: "adaptive, 5000 nodes: 10%", percentage: 0, nodes: 5000, want: 500},
		{name: "adaptive, 6000 nodes: 2%, raised to 5%", percentage: 0, nodes: 6000, want: 300},
		{name: "no Score plugin, 1000 nodes: one", percentage: 0, unscored: true, nodes: 1000, want: 1},
		{name: "no Score plugin, 50 nodes at 50%: one", percentage: 50, unscored: true, nodes: 50, want: 1},
		{name: "no Score plugin, one node: one", percentage: 100, unscored: true, nodes: 1, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var scorers []fwk.ScorePlugin
			if !tt.unscored {
				pl, err := random.New(context.Background(), nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				scorers = append(scorers, pl.(fwk.ScorePlugin))
			}
			p := &profile{score: scorers, percentageOfNodesToScore: tt.percentage}
			if got := p.numToFind(tt.nodes); got != tt.want {
				t.Errorf("minisched: numToFind(%d) = %d, want %d", tt.nodes, got, tt.want)
			}
			if got := upstreamFeasible(t, tt.percentage, !tt.unscored, tt.nodes); got != tt.want {
				t.Errorf("kube-scheduler: %d feasible nodes, want %d", got, tt.want)
			}
		})
	}
}

// upstreamFeasible runs kube-scheduler's schedulePod once over a snapshot of
// that many nodes, with no Filter plugin and, when scored, the Random Score
// plugin, and returns how many feasible nodes it found.
func upstreamFeasible(t *testing.T, percentage int32, scored bool, nodes int) int {
	t.Helper()
	plugins := &config.Plugins{
		QueueSort: config.PluginSet{Enabled: []config.Plugin{{Name: queuesort.Name}}},
		Bind:      config.PluginSet{Enabled: []config.Plugin{{Name: defaultbinder.Name}}},
	}
	if scored {
		plugins.Score.Enabled = []config.Plugin{{Name: random.Name, Weight: 1}}
	}
	list := make([]*v1.Node, nodes)
	for i := range list {
		list[i] = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i)}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset()
	sched, err := kubescheduler.New(ctx, client, informers.NewSharedInformerFactory(client, 0), nil,
		schedprofile.NewRecorderFactory(events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})),
		kubescheduler.WithProfiles(config.KubeSchedulerProfile{
			SchedulerName: v1.DefaultSchedulerName, PercentageOfNodesToScore: &percentage, Plugins: plugins,
		}),
		kubescheduler.WithFrameworkOutOfTreeRegistry(frameworkruntime.Registry{random.Name: random.New}),
		kubescheduler.WithNodeInfoSnapshot(internalcache.NewSnapshot(nil, list)))
	if err != nil {
		t.Fatalf("building kube-scheduler: %v", err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: "uid-p"}}
	pi, err := framework.NewPodInfo(pod)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sched.SchedulePod(ctx, sched.Profiles[v1.DefaultSchedulerName], framework.NewCycleState(), &framework.QueuedPodInfo{PodInfo: pi})
	if err != nil {
		t.Fatalf("kube-scheduler's schedulePod: %v", err)
	}
	return res.FeasibleNodes
}

func TestSelectHost(t *testing.T) {
	tests := []struct {
		name       string
		totals     map[string]int64
		order      []string // the order Filter found the nodes in
		wantWinner string
		wantTies   []string
	}{
		{name: "one node", order: []string{"a"}, totals: map[string]int64{"a": 3}, wantWinner: "a"},
		{name: "the highest total wins", order: []string{"a", "b", "c"}, totals: map[string]int64{"a": 1, "b": 3, "c": 2}, wantWinner: "b"},
		{name: "all equal: the first node, the others tie", order: []string{"a", "b", "c"}, totals: map[string]int64{"a": 2, "b": 2, "c": 2},
			wantWinner: "a", wantTies: []string{"b", "c"}},
		// Upstream's heap, not the order, picks among equals: here the
		// later of the two best nodes.
		{name: "equal best: the heap's layout decides", order: []string{"a", "b", "c", "d"}, totals: map[string]int64{"a": 1, "b": 1, "c": 5, "d": 5},
			wantWinner: "d", wantTies: []string{"c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			totals := make([]fwk.NodePluginScores, len(tt.order))
			for i, n := range tt.order {
				totals[i] = fwk.NodePluginScores{Name: n, TotalScore: tt.totals[n]}
			}
			given := slices.Clone(totals)
			winner, ties, _ := selectHost(totals)
			if winner != tt.wantWinner || !slices.Equal(ties, tt.wantTies) {
				t.Errorf("selectHost = %s, ties %v; want %s, ties %v", winner, ties, tt.wantWinner, tt.wantTies)
			}
			if up := framework.NewSortedScoredNodes(slices.Clone(given)).Pop().Name; up != winner {
				t.Errorf("upstream's heap picks %s, minisched %s", up, winner)
			}
		})
	}
}

// TestBindingWait: the binding cycle's guard starts from the longest wait of
// the profile's own plugins, read from their defaulted args.
func TestBindingWait(t *testing.T) {
	const head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	tests := []struct {
		name, config string
		want         time.Duration
	}{
		{"upstream's defaults: 600s for volumes and for devices", head, 600 * time.Second},
		{"a longer volume binding", head + "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args:\n      bindTimeoutSeconds: 1200\n", 1200 * time.Second},
		{"a longer device binding", head + "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args:\n      bindingTimeout: 15m\n", 15 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := schedconfig.Load([]byte(tt.config), "")
			if err != nil {
				t.Fatal(err)
			}
			if got := bindingWait(&cfg.Profiles[0]); got != tt.want {
				t.Errorf("bindingWait = %v, want %v", got, tt.want)
			}
		})
	}
}

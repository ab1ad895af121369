package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minisched/app"
	"minisched/explain"
)

// explainBench times GET /pods/{ns}/{name}/explain for pods that fit none
// of many nodes, most of them tainted, the rest too small, a few nearly big
// enough, each with a pod on it: one pod too big, one whose anti-affinity
// every node's pod is in the way of. What a user waits for, over REST.
func explainBench(args []string) error {
	fs := flagSet("explain")
	nodes := fs.Int("nodes", 5000, "nodes")
	runs := fs.Int("runs", 5, "explanations to time")
	_ = fs.Parse(args)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := app.DefaultFlags()
	f.Addr = "127.0.0.1:0"
	// The explanation runs in the scheduler; the cluster's machinery would
	// only add 5,000 kubelets' Leases to the noise.
	f.Controllers, f.Kubelets = "", false
	inst, err := app.Start(ctx, f, quiet)
	if err != nil {
		return err
	}
	defer inst.Close()
	c := inst.Client
	// 60% tainted, 39% with 2 CPUs, 1% with 3.5: the pod asks for 4.
	if err := parallel(*nodes, func(i int) error {
		name := fmt.Sprintf("node-%04d", i)
		cpu := "2"
		if i%100 == 0 {
			cpu = "3500m"
		}
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{v1.LabelHostname: name, v1.LabelTopologyZone: fmt.Sprintf("zone-%d", i%3)}}}
		if i%5 >= 2 {
			n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "batch", Effect: v1.TaintEffectNoSchedule}}
		}
		n.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu),
			v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")}
		n.Status.Capacity = n.Status.Allocatable
		_, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("creating nodes: %w", err)
	}
	// A pod labelled app=web on every node.
	web := func(name string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{"app": "web"}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}}}}}
	}
	if err := parallel(*nodes, func(i int) error {
		p := web(fmt.Sprintf("web-%04d", i))
		p.Spec.NodeName = fmt.Sprintf("node-%04d", i)
		_, err := c.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("creating pods: %w", err)
	}
	// big asks for 4 CPUs; picky spreads over zones and keeps away from
	// app=web on its node, so every node's web pod is in its way.
	big := web("big")
	big.Labels = nil
	big.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("4")
	picky := web("picky")
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	picky.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
		WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: selector}}
	picky.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		TopologyKey: v1.LabelHostname, LabelSelector: selector}}}}
	// urgent is picky with a priority above the web pods': preemption's dry
	// run finds victims.
	class := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "bench-urgent"}, Value: 1000}
	if _, err := c.SchedulingV1().PriorityClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the priority class: %w", err)
	}
	urgent := picky.DeepCopy()
	urgent.Name, urgent.Spec.PriorityClassName = "urgent", class.Name
	for _, p := range []*v1.Pod{big, picky, urgent} {
		if p == urgent {
			// Its cycle would preempt: it waits, paused, to be explained.
			inst.Scheduler.Pause()
		}
		if _, err := c.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating pod %s: %w", p.Name, err)
		}
		if err := timeExplain(inst.URL+"api/v1/pods/default/"+p.Name+"/explain", *nodes, *runs); err != nil {
			return err
		}
	}
	return nil
}

// timeExplain asks for an explanation until the scheduler has every node,
// then times runs more.
func timeExplain(url string, nodes, runs int) error {
	get := func() (*explain.Explanation, int, error) {
		resp, err := http.Get(url)
		if err != nil {
			return nil, 0, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, 0, fmt.Errorf("%s: %s", resp.Status, body)
		}
		var e explain.Explanation
		return &e, len(body), json.Unmarshal(body, &e)
	}
	// Until the scheduler has every node in its cache.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		e, _, err := get()
		if err == nil && e.Nodes == nodes {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the scheduler did not see %d nodes: %v", nodes, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	var took []time.Duration
	var last *explain.Explanation
	size := 0
	for range runs {
		begun := time.Now()
		e, n, err := get()
		if err != nil {
			return err
		}
		took = append(took, time.Since(begun).Round(time.Millisecond))
		last, size = e, n
	}
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	fmt.Printf("explain %s: %d nodes, %d runs: %v (median %v), %d bytes, %d groups\n  %s\n",
		last.Pod, nodes, runs, took, sorted[len(sorted)/2], size, len(last.Groups), last.Sentence)
	return nil
}

package oracle

// Pinned node tie-breaks (-oracle.tie-break=node-name).
//
// kube-scheduler v1.37 takes the node with the highest total score from a heap
// (prioritizeNodes, NewSortedScoredNodes; the Randomizer is only set when extenders score). Among
// equal top scores, the one it yields follows the feasible-node list, whose order depends on the
// node tree (zones interleaved) and on the timing of parallel filtering. A generated cluster with
// identical nodes has many such ties, and one early choice in a gang decides where every later pod
// goes and which pods are preempted: the real scheduler then gives one of several answers, and
// rerunning it until it happens to give ours (the first way to count a tie) rarely works
// for a 12-pod group.
//
// This file pins the draw instead, without touching upstream code: the default profile is kept
// plugin for plugin, every weight multiplied by tieBreakScale, and two score plugins of our own are
// added that together score a node by its name's rank (the smallest name highest), in base
// MaxScore+1 digits of weight MaxScore+1 and 1. Scaling every upstream weight by the same factor
// keeps the order of every total score (node totals and placement totals alike); the tie-break adds
// less than one upstream point (rank < tieBreakScale), so it only ever decides between nodes whose
// upstream totals are equal. That is exactly kubectl-wap's deterministic rule (select_host in
// kubectl_wap/framework/scoring.py: smallest node name among the tied), so the pinned scheduler
// gives the one of its possible answers that our rule names.
//
// What it does not pin: placement ties of topology-aware scheduling (findBestPlacement's
// Randomizer; the tie-break plugins score nodes, not placements), default preemption's random
// candidate offset, and the order of equally important victims. Clusters of more than
// tieBreakScale nodes keep ties between nodes whose rank differs only past the last digit.

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

const (
	tieBreakHigh  = "WapNodeNameTieBreakHigh"
	tieBreakLow   = "WapNodeNameTieBreakLow"
	tieBreakBase  = fwk.MaxScore + 1            // one digit: scores 0..MaxScore
	tieBreakScale = tieBreakBase * tieBreakBase // distinct ranks the two digits can tell apart
)

// nodeNameRank ranks the cluster's nodes by name, once per scheduler (the oracle creates every node
// before it starts the scheduler, and nodes do not change during a case).
type nodeNameRank struct {
	handle fwk.Handle
	once   sync.Once
	rank   map[string]int64 // tieBreakScale-1 for the smallest name, one less for each next
	err    error            // listing the nodes failed: every Score then fails (no silent unpinning)
}

func (r *nodeNameRank) of(name string) (int64, error) {
	r.once.Do(func() {
		infos, err := r.handle.SnapshotSharedLister().NodeInfos().List()
		if err != nil {
			r.err = fmt.Errorf("tie-break: listing nodes: %w", err)
			return
		}
		names := make([]string, 0, len(infos))
		for _, ni := range infos {
			names = append(names, ni.Node().Name)
		}
		sort.Strings(names)
		r.rank = make(map[string]int64, len(names))
		for i, n := range names {
			v := tieBreakScale - 1 - int64(i)
			if v < 0 {
				v = 0
			}
			r.rank[n] = v
		}
	})
	return r.rank[name], r.err
}

// tieBreakDigit scores a node by one base-(MaxScore+1) digit of its name rank.
type tieBreakDigit struct {
	name  string
	high  bool
	ranks *nodeNameRank
}

var _ fwk.ScorePlugin = &tieBreakDigit{}

func (p *tieBreakDigit) Name() string { return p.name }

func (p *tieBreakDigit) Score(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	r, err := p.ranks.of(nodeInfo.Node().Name)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	if p.high {
		return r / tieBreakBase, nil
	}
	return r % tieBreakBase, nil
}

func (p *tieBreakDigit) ScoreExtensions() fwk.ScoreExtensions { return nil }

// tieBreakProfile: the default profile (as scheduler.New builds it; feature gates are already set)
// with every plugin weight scaled by tieBreakScale and the two tie-break digits added.
func tieBreakProfile() (schedulerapi.KubeSchedulerProfile, error) {
	var versioned configv1.KubeSchedulerConfiguration
	scheme.Scheme.Default(&versioned)
	cfg := schedulerapi.KubeSchedulerConfiguration{}
	if err := scheme.Scheme.Convert(&versioned, &cfg, nil); err != nil {
		return schedulerapi.KubeSchedulerProfile{}, err
	}
	if len(cfg.Profiles) != 1 {
		return schedulerapi.KubeSchedulerProfile{}, fmt.Errorf("expected one default profile, got %d", len(cfg.Profiles))
	}
	prof := cfg.Profiles[0]
	for _, set := range []*schedulerapi.PluginSet{&prof.Plugins.Score, &prof.Plugins.PlacementScore} {
		if len(set.Enabled) > 0 {
			return prof, fmt.Errorf("default profile has per-extension-point score plugins: not expected")
		}
	}
	enabled := prof.Plugins.MultiPoint.Enabled
	for i := range enabled {
		w := enabled[i].Weight
		if w == 0 { // what getValidScoreWeights makes of it
			w = 1
		}
		enabled[i].Weight = w * int32(tieBreakScale)
	}
	prof.Plugins.MultiPoint.Enabled = append(enabled,
		schedulerapi.Plugin{Name: tieBreakHigh, Weight: int32(tieBreakBase)},
		schedulerapi.Plugin{Name: tieBreakLow, Weight: 1})
	return prof, nil
}

// tieBreakOptions: the scheduler options that pin node ties to the smallest node name.
func tieBreakOptions() ([]scheduler.Option, error) {
	prof, err := tieBreakProfile()
	if err != nil {
		return nil, err
	}
	ranks := map[fwk.Handle]*nodeNameRank{}
	var mu sync.Mutex
	factory := func(name string, high bool) frameworkruntime.PluginFactory {
		return func(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			mu.Lock()
			defer mu.Unlock()
			r := ranks[h]
			if r == nil {
				r = &nodeNameRank{handle: h}
				ranks[h] = r
			}
			return &tieBreakDigit{name: name, high: high, ranks: r}, nil
		}
	}
	registry := frameworkruntime.Registry{
		tieBreakHigh: factory(tieBreakHigh, true),
		tieBreakLow:  factory(tieBreakLow, false),
	}
	return []scheduler.Option{scheduler.WithProfiles(prof), scheduler.WithFrameworkOutOfTreeRegistry(registry)}, nil
}

// TestTieBreakProfile checks the arithmetic the pin rests on (no API server needed): every
// upstream weight scaled alike, the digits' total below one scaled upstream point and decreasing
// with the node name. Run: tests/oracle/bin/oracle.test -test.run '^TestTieBreak'.
func TestTieBreakProfile(t *testing.T) {
	prof, err := tieBreakProfile()
	if err != nil {
		t.Fatal(err)
	}
	var high, low int32
	for _, p := range prof.Plugins.MultiPoint.Enabled {
		switch p.Name {
		case tieBreakHigh:
			high = p.Weight
		case tieBreakLow:
			low = p.Weight
		default:
			if p.Weight%int32(tieBreakScale) != 0 || p.Weight == 0 {
				t.Errorf("%s: weight %d is not a multiple of %d", p.Name, p.Weight, tieBreakScale)
			}
		}
	}
	if high != int32(tieBreakBase) || low != 1 {
		t.Fatalf("tie-break weights %d/%d, want %d/1", high, low, tieBreakBase)
	}
	names := []string{"node-a", "node-b", "node-c", "node10", "node9"}
	r := &nodeNameRank{}
	r.once.Do(func() {}) // rank filled by hand below, as the first Score call would
	r.rank = map[string]int64{}
	for i, n := range names { // already in sort.Strings order
		r.rank[n] = tieBreakScale - 1 - int64(i)
	}
	hi, lo := &tieBreakDigit{name: tieBreakHigh, high: true, ranks: r}, &tieBreakDigit{name: tieBreakLow, ranks: r}
	prev := int64(-1)
	for i := len(names) - 1; i >= 0; i-- {
		node := &v1.Node{}
		node.Name = names[i]
		ni := framework.NewNodeInfo()
		ni.SetNode(node)
		h, hs := hi.Score(context.Background(), nil, nil, ni)
		l, ls := lo.Score(context.Background(), nil, nil, ni)
		if !hs.IsSuccess() || !ls.IsSuccess() {
			t.Fatalf("%s: score status %v %v", names[i], hs, ls)
		}
		if h < 0 || h > fwk.MaxScore || l < 0 || l > fwk.MaxScore {
			t.Fatalf("%s: digit out of range: %d %d", names[i], h, l)
		}
		total := int64(high)*h + int64(low)*l
		if total >= tieBreakScale {
			t.Fatalf("%s: tie-break total %d reaches one scaled upstream point (%d)", names[i], total, tieBreakScale)
		}
		if total <= prev {
			t.Fatalf("%s: tie-break total %d not above the next larger name's %d", names[i], total, prev)
		}
		prev = total
	}
}

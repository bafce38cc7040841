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

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
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
}

func (r *nodeNameRank) of(name string) int64 {
	r.once.Do(func() {
		infos, err := r.handle.SnapshotSharedLister().NodeInfos().List()
		if err != nil {
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
	return r.rank[name]
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
	r := p.ranks.of(nodeInfo.Node().Name)
	if p.high {
		return r / tieBreakBase, nil
	}
	return r % tieBreakBase, nil
}

func (p *tieBreakDigit) ScoreExtensions() fwk.ScoreExtensions { return nil }

// tieBreakOptions: the scheduler options that pin node ties to the smallest node name.
func tieBreakOptions() ([]scheduler.Option, error) {
	// The default profile as scheduler.New builds it (feature gates are already set).
	var versioned configv1.KubeSchedulerConfiguration
	scheme.Scheme.Default(&versioned)
	cfg := schedulerapi.KubeSchedulerConfiguration{}
	if err := scheme.Scheme.Convert(&versioned, &cfg, nil); err != nil {
		return nil, err
	}
	if len(cfg.Profiles) != 1 {
		return nil, fmt.Errorf("expected one default profile, got %d", len(cfg.Profiles))
	}
	prof := cfg.Profiles[0]
	enabled := prof.Plugins.MultiPoint.Enabled
	for i := range enabled {
		w := enabled[i].Weight
		if w == 0 { // what getValidScoreWeights makes of it
			w = 1
		}
		enabled[i].Weight = w * int32(tieBreakScale)
	}
	for _, set := range []*schedulerapi.PluginSet{&prof.Plugins.Score, &prof.Plugins.PlacementScore} {
		if len(set.Enabled) > 0 {
			return nil, fmt.Errorf("default profile has per-extension-point score plugins: not expected")
		}
	}
	enabled = append(enabled,
		schedulerapi.Plugin{Name: tieBreakHigh, Weight: int32(tieBreakBase)},
		schedulerapi.Plugin{Name: tieBreakLow, Weight: 1})
	prof.Plugins.MultiPoint.Enabled = enabled

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

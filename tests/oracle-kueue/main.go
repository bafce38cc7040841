// Command kueue-oracle runs Kueue's real scheduler (sigs.k8s.io/kueue v0.17.0:
// pkg/cache/scheduler.Cache, pkg/cache/queue.Manager, pkg/scheduler.Scheduler)
// over one JSON case, in one process with a controller-runtime fake client, the
// way Kueue's own pkg/scheduler/scheduler_test.go TestSchedule sets them up,
// and prints which Workloads each scheduling cycle admitted (ClusterQueue,
// flavor per resource per podset) and which it preempted, as JSON.
//
// This is our glue only: every decision is made by the Kueue module itself.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	_ "unsafe" // go:linkname below

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	config "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/util/routine"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	"sigs.k8s.io/kueue/pkg/util/wait"
	"sigs.k8s.io/kueue/pkg/workload"
)

// Scheduler.schedule runs exactly one scheduling cycle; it is unexported and
// Kueue's tests call it from inside the package. Start() would loop forever,
// so we reach the same method by its symbol to count cycles.
//
//go:linkname schedule sigs.k8s.io/kueue/pkg/scheduler.(*Scheduler).schedule
func schedule(s *scheduler.Scheduler, ctx context.Context) wait.SpeedSignal

//go:linkname setAdmissionRoutineWrapper sigs.k8s.io/kueue/pkg/scheduler.(*Scheduler).setAdmissionRoutineWrapper
func setAdmissionRoutineWrapper(s *scheduler.Scheduler, w routine.Wrapper)

type kueueCase struct {
	Namespaces              []corev1.Namespace            `json:"namespaces"`
	ResourceFlavors         []kueue.ResourceFlavor        `json:"resourceFlavors"`
	Cohorts                 []kueue.Cohort                `json:"cohorts"`
	AdmissionChecks         []kueue.AdmissionCheck        `json:"admissionChecks"`
	ClusterQueues           []kueue.ClusterQueue          `json:"clusterQueues"`
	LocalQueues             []kueue.LocalQueue            `json:"localQueues"`
	WorkloadPriorityClasses []kueue.WorkloadPriorityClass `json:"workloadPriorityClasses"`
	Workloads               []kueue.Workload              `json:"workloads"`
	Cycles                  int                           `json:"cycles"`
	FairSharing             bool                          `json:"fairSharing"`
	// Configuration fairSharing.preemptionStrategies; empty: Kueue's default pair.
	FairSharingStrategies []config.PreemptionStrategy `json:"fairSharingStrategies"`
}

type admitted struct {
	Workload     string                       `json:"workload"`
	ClusterQueue string                       `json:"clusterQueue"`
	PodSets      []map[string]json.RawMessage `json:"podSets"`
	// The Admitted condition the scheduler set with the quota reservation (prepareWorkload), and
	// the admission checks that apply to the Workload (workload.AdmissionChecksForWorkload).
	AdmittedCondition bool     `json:"admittedCondition"`
	Checks            []string `json:"checks"`
}

type preempted struct {
	Workload string `json:"workload"`
	Reason   string `json:"reason"`
}

type cycleResult struct {
	Admitted  []admitted  `json:"admitted"`
	Preempted []preempted `json:"preempted"`
}

type result struct {
	Cycles []cycleResult `json:"cycles"`
	Error  string        `json:"error,omitempty"`
}

func main() {
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	// A JSON array is a batch: one answer per case, in order, from one process (a case that
	// fails to load answers {"error": ...} and the batch goes on).
	if trimmed := strings.TrimSpace(string(raw)); strings.HasPrefix(trimmed, "[") {
		var cases []kueueCase
		if err := json.Unmarshal(raw, &cases); err != nil {
			fail(fmt.Errorf("decoding cases: %w", err))
		}
		out := make([]*result, 0, len(cases))
		for _, c := range cases {
			res, err := safeRun(c)
			if err != nil {
				res = &result{Error: err.Error()}
			}
			out = append(out, res)
		}
		_ = enc.Encode(out)
		return
	}
	var c kueueCase
	if err := json.Unmarshal(raw, &c); err != nil {
		fail(fmt.Errorf("decoding case: %w", err))
	}
	res, err := run(c)
	if err != nil {
		fail(err)
	}
	_ = enc.Encode(res)
}

// safeRun is run, with a panic in Kueue's code turned into the case's error: Kueue v0.17.0's fair
// sharing preemption dereferences the nil parent of a ClusterQueue without a cohort when its own
// candidates do not make room (fairsharing.TargetClusterQueueOrdering.Iter); the batch goes on.
func safeRun(c kueueCase) (res *result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("kueue panicked: %v", r)
		}
	}()
	return run(c)
}

func fail(err error) {
	_ = json.NewEncoder(os.Stdout).Encode(result{Error: err.Error()})
	os.Exit(1)
}

func run(c kueueCase) (*result, error) {
	log := logr.Discard()
	ctx := ctrl.LoggerInto(context.Background(), log)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	objs := []client.Object{}
	seenNS := map[string]bool{}
	for i := range c.Namespaces {
		seenNS[c.Namespaces[i].Name] = true
		objs = append(objs, &c.Namespaces[i])
	}
	for _, lq := range c.LocalQueues {
		if !seenNS[lq.Namespace] {
			seenNS[lq.Namespace] = true
			objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: lq.Namespace}})
		}
	}
	for i := range c.WorkloadPriorityClasses {
		objs = append(objs, &c.WorkloadPriorityClasses[i])
	}
	cl := utiltesting.NewClientBuilder().
		WithLists(&kueue.WorkloadList{Items: c.Workloads}, &kueue.LocalQueueList{Items: c.LocalQueues}).
		WithObjects(objs...).
		WithStatusSubresource(&kueue.Workload{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: utiltesting.TreatSSAAsStrategicMerge}).
		Build()

	cqCache := schdcache.New(cl)
	qManager := qcache.NewManagerForUnitTests(cl, cqCache)
	for i := range c.LocalQueues {
		if err := qManager.AddLocalQueue(ctx, &c.LocalQueues[i]); err != nil {
			return nil, fmt.Errorf("LocalQueue %s/%s: %w", c.LocalQueues[i].Namespace, c.LocalQueues[i].Name, err)
		}
	}
	for i := range c.ResourceFlavors {
		cqCache.AddOrUpdateResourceFlavor(log, &c.ResourceFlavors[i])
	}
	for i := range c.AdmissionChecks {
		cqCache.AddOrUpdateAdmissionCheck(log, &c.AdmissionChecks[i])
	}
	for i := range c.ClusterQueues {
		cq := &c.ClusterQueues[i]
		if err := cqCache.AddClusterQueue(ctx, cq); err != nil {
			return nil, fmt.Errorf("ClusterQueue %s in cache: %w", cq.Name, err)
		}
		if err := qManager.AddClusterQueue(ctx, cq); err != nil {
			return nil, fmt.Errorf("ClusterQueue %s in queue manager: %w", cq.Name, err)
		}
		if err := cl.Create(ctx, cq.DeepCopy()); err != nil {
			return nil, fmt.Errorf("ClusterQueue %s in client: %w", cq.Name, err)
		}
	}
	for i := range c.Cohorts {
		if err := cqCache.AddOrUpdateCohort(&c.Cohorts[i]); err != nil {
			return nil, fmt.Errorf("Cohort %s: %w", c.Cohorts[i].Name, err)
		}
		qManager.AddOrUpdateCohort(ctx, &c.Cohorts[i])
	}

	var fs *config.FairSharing
	if c.FairSharing {
		fs = &config.FairSharing{PreemptionStrategies: c.FairSharingStrategies}
	}
	sched := scheduler.New(qManager, cqCache, cl, &record.FakeRecorder{},
		scheduler.WithFairSharing(fs), scheduler.WithPreemptionExpectations(preemptexpectations.New()))
	var wg sync.WaitGroup
	setAdmissionRoutineWrapper(sched, routine.NewWrapper(func() { wg.Add(1) }, func() { wg.Done() }))
	go qManager.CleanUpOnContext(ctx)

	cycles := c.Cycles
	if cycles <= 0 {
		cycles = 1
	}
	out := &result{}
	inCache, _, err := cachedWorkloads(ctx, cqCache)
	if err != nil {
		return nil, err
	}
	evicted, err := evictedWorkloads(ctx, cl)
	if err != nil {
		return nil, err
	}
	for range cycles {
		// Heads blocks while every queue is empty; the timeout ends a cycle
		// that has nothing to schedule (only termination depends on it).
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		go qManager.CleanUpOnContext(cctx)
		schedule(sched, cctx)
		ccancel()
		wg.Wait()

		cr := cycleResult{Admitted: []admitted{}, Preempted: []preempted{}}
		nowCache, snap, err := cachedWorkloads(ctx, cqCache)
		if err != nil {
			return nil, err
		}
		for key, wl := range nowCache {
			if _, before := inCache[key]; before {
				continue
			}
			cr.Admitted = append(cr.Admitted, toAdmitted(key, wl, snap))
		}
		nowEvicted, err := evictedWorkloads(ctx, cl)
		if err != nil {
			return nil, err
		}
		for key, reason := range nowEvicted {
			if _, before := evicted[key]; !before {
				cr.Preempted = append(cr.Preempted, preempted{Workload: key, Reason: reason})
			}
		}
		sort.Slice(cr.Admitted, func(i, j int) bool { return cr.Admitted[i].Workload < cr.Admitted[j].Workload })
		sort.Slice(cr.Preempted, func(i, j int) bool { return cr.Preempted[i].Workload < cr.Preempted[j].Workload })
		out.Cycles = append(out.Cycles, cr)
		inCache, evicted = nowCache, nowEvicted
	}
	return out, nil
}

func cachedWorkloads(ctx context.Context, c *schdcache.Cache) (map[string]*kueue.Workload, *schdcache.Snapshot, error) {
	snap, err := c.Snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]*kueue.Workload{}
	for _, cq := range snap.ClusterQueues() {
		for key, info := range cq.Workloads {
			out[string(key)] = info.Obj
		}
	}
	return out, snap, nil
}

func evictedWorkloads(ctx context.Context, cl client.Client) (map[string]string, error) {
	var list kueue.WorkloadList
	if err := cl.List(ctx, &list); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i := range list.Items {
		wl := &list.Items[i]
		if !workload.IsEvicted(wl) {
			continue
		}
		reason := "Evicted"
		for _, cond := range wl.Status.Conditions {
			if cond.Type == kueue.WorkloadPreempted && cond.Status == metav1.ConditionTrue {
				reason = cond.Reason
			}
		}
		out[string(workload.Key(wl))] = reason
	}
	return out, nil
}

func toAdmitted(key string, wl *kueue.Workload, snap *schdcache.Snapshot) admitted {
	a := admitted{Workload: key, PodSets: []map[string]json.RawMessage{}, Checks: []string{},
		AdmittedCondition: workload.IsAdmitted(wl)}
	if wl.Status.Admission == nil {
		return a
	}
	a.ClusterQueue = string(wl.Status.Admission.ClusterQueue)
	if cq := snap.ClusterQueue(wl.Status.Admission.ClusterQueue); cq != nil {
		checks := workload.AdmissionChecksForWorkload(logr.Discard(), wl, cq.AdmissionChecks, schdcache.AllFlavors(cq.ResourceGroups))
		for name := range checks {
			a.Checks = append(a.Checks, string(name))
		}
		sort.Strings(a.Checks)
	}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		flavors := map[string]string{}
		for res, f := range psa.Flavors {
			flavors[string(res)] = string(f)
		}
		name, _ := json.Marshal(string(psa.Name))
		fl, _ := json.Marshal(flavors)
		a.PodSets = append(a.PodSets, map[string]json.RawMessage{"name": name, "flavors": fl})
	}
	return a
}

package oracle

// The apiserver of a run (started once) and one case on it: create the cluster through the API,
// start a fresh scheduler, wait until it stops making progress, read off what it did, clean up.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	clientset "k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/profile"
	"k8s.io/kubernetes/test/integration/framework"
	"k8s.io/utils/ptr"
)

type server struct {
	t      *testing.T
	ctx    context.Context
	cancel context.CancelFunc
	cs     clientset.Interface
	cfg    *restclient.Config
	dyn    dynamic.Interface
	closeF framework.TearDownFunc
}

// startServer starts kube-apiserver the way test/integration/util InitTestAPIServer does: the
// admission plugins that would rewrite what we create are off (Priority among them: pods and pod
// groups carry their resolved spec.priority, as a snapshot does), and the scheduling API
// versions the gates need are served.
func startServer(t *testing.T) *server {
	ctx, cancel := context.WithCancel(context.Background())
	cs, cfg, closeF := framework.StartTestServer(ctx, t, framework.TestServerSetup{
		ModifyServerRunOptions: func(o *options.ServerRunOptions) {
			o.Admission.GenericAdmission.DisablePlugins = []string{"ServiceAccount", "TaintNodesByCondition", "Priority", "StorageObjectInUseProtection"}
			serveSchedulingAPIs(o)
		},
	})
	cfg.QPS = 5000
	cfg.Burst = 5000
	cs2, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_ = cs
	return &server{t: t, ctx: ctx, cancel: cancel, cs: cs2, cfg: cfg, dyn: dynamic.NewForConfigOrDie(cfg), closeF: closeF}
}

// serveSchedulingAPIs turns on the scheduling.k8s.io versions the gates need (the
// --runtime-config of a real kube-apiserver): v1beta1 (PodGroups) with GenericWorkload,
// v1alpha3 (CompositePodGroups) with CompositePodGroup, as InitTestAPIServer does.
func serveSchedulingAPIs(o *options.ServerRunOptions) {
	if o.APIEnablement.RuntimeConfig == nil {
		o.APIEnablement.RuntimeConfig = cliflag.ConfigurationMap{}
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload) {
		o.APIEnablement.RuntimeConfig[schedulingv1beta1.SchemeGroupVersion.String()] = "true"
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup) {
		o.APIEnablement.RuntimeConfig[schedulingv1alpha3.SchemeGroupVersion.String()] = "true"
	}
}

func (s *server) close() {
	s.cancel()
	s.closeF()
}

// Case is one question: a cluster (plain Kubernetes objects) and the object whose pending pods
// the scheduler is to place. Every pod without spec.nodeName in Objects is pending and is
// scheduled by the real scheduler; pods with spec.nodeName are running there.
type Case struct {
	ID      string            `json:"id"`
	Objects []json.RawMessage `json:"objects"`
	Target  Target            `json:"target"`
}

type Target struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

type PodRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

type Victim struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	// How the scheduler took it: "DisruptionTarget" condition, "deleting" (deletionTimestamp), "deleted".
	Evidence []string `json:"evidence"`
}

type Placement struct {
	Pod  PodRef `json:"pod"`
	Node string `json:"node"`
}

type Pending struct {
	Namespace     string `json:"namespace"`
	Name          string `json:"name"`
	NominatedNode string `json:"nominatedNode,omitempty"`
	Reason        string `json:"reason,omitempty"`
	Message       string `json:"message,omitempty"`
}

// Result is the report-contract shape (outcome, message, victims, nominatedNode, placements)
// plus the raw facts it was derived from.
type Result struct {
	ID            string            `json:"id"`
	Outcome       string            `json:"outcome,omitempty"`
	Message       string            `json:"message,omitempty"`
	Victims       []Victim          `json:"victims"`
	NominatedNode string            `json:"nominatedNode,omitempty"`
	Nominated     map[string]string `json:"nominated"`
	Placements    []Placement       `json:"placements"`
	Pending       []Pending         `json:"pending"`
	Events        []string          `json:"events,omitempty"`
	ElapsedMs     int64             `json:"elapsedMs"`
	PhasesMs      map[string]int64  `json:"phasesMs,omitempty"`
	Error         string            `json:"error,omitempty"`
}

// created remembers what a case created, for the clean-up.
type created struct {
	mu            sync.Mutex // runningAtStart is written by createParallel's workers
	namespaces    map[string]bool
	nodes         []string
	priorityClass []string
	hasPodGroups  bool
	// storage (cluster-scoped ones by name; PVCs go with their namespace)
	pvs, storageClasses, csiNodes []string
	// DRA (cluster-scoped ones by name; claims and templates go with their namespace)
	deviceClasses, resourceSlices []string
	hasClaims                     bool
	// create-time admission: RuntimeClasses by name, LimitRanges go with their namespace
	runtimeClasses []string
	hasLimitRanges bool
	// the API server refused a pending pod of the question (admission: LimitRanger, RuntimeClass)
	rejected       string
	podUIDs        map[string]types.UID // ns/name -> UID the apiserver gave the pod
	hasComposite   bool
	preemptorPods  []PodRef
	runningAtStart map[string]*v1.Pod // ns/name -> pod as created (bound, not terminating)
	// what the scheduler did, recorded while it runs: victims (when first seen marked) and the
	// last nominated node seen on each preemptor pod (binding may clear it later)
	victims          map[string]*Victim
	nominated        map[string]string
	nominatedAtStart bool // a pending pod of the case came with status.nominatedNodeName
}

func key(ns, name string) string { return ns + "/" + name }

func (s *server) run(c *Case) *Result {
	start := time.Now()
	res := &Result{ID: c.ID, Victims: []Victim{}, Nominated: map[string]string{}, Placements: []Placement{}, Pending: []Pending{}}
	cr := &created{namespaces: map[string]bool{}, runningAtStart: map[string]*v1.Pod{}, victims: map[string]*Victim{}, nominated: map[string]string{}}
	ctx, cancel := context.WithTimeout(s.ctx, *caseTimeout+30*time.Second)
	defer cancel()
	defer func() {
		t0 := time.Now()
		if err := s.cleanup(cr); err != nil && res.Error == "" {
			res.Error = "cleanup: " + err.Error()
		}
		if res.PhasesMs != nil {
			res.PhasesMs["cleanup"] = time.Since(t0).Milliseconds()
		}
		res.ElapsedMs = time.Since(start).Milliseconds()
	}()
	res.PhasesMs = map[string]int64{}
	phase := func(name string, t0 time.Time) { res.PhasesMs[name] = time.Since(t0).Milliseconds() }
	t0 := time.Now()
	if err := s.create(ctx, c, cr); err != nil {
		res.Error = err.Error()
		return res
	}
	phase("create", t0)
	if cr.rejected != "" {
		// The pod never exists, so no scheduler ever sees it: the answer is the refusal.
		res.Outcome, res.Message = "Invalid", cr.rejected
		return res
	}
	t0 = time.Now()
	schedCtx, stopSched := context.WithCancel(ctx)
	sched, done, err := s.startScheduler(schedCtx)
	if err != nil {
		stopSched()
		res.Error = "starting scheduler: " + err.Error()
		return res
	}
	phase("startScheduler", t0)
	t0 = time.Now()
	settleErr := s.waitSettled(ctx, sched, cr)
	phase("settle", t0)
	t0 = time.Now()
	stopSched()
	<-done
	phase("stopScheduler", t0)
	if settleErr != nil {
		res.Error = settleErr.Error()
	}
	if err := s.readOff(ctx, c, cr, res); err != nil && res.Error == "" {
		res.Error = err.Error()
	}
	return res
}

func decodeInto(raw json.RawMessage, obj any) error {
	return json.Unmarshal(raw, obj)
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

func (s *server) ensureNamespace(ctx context.Context, cr *created, ns string) error {
	if ns == "" || cr.namespaces[ns] {
		return nil
	}
	_, err := s.cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	cr.namespaces[ns] = true
	return nil
}

// create makes the cluster: cluster-scoped objects, groups, PDBs (status as given: no disruption
// controller runs), running pods (bound, status as given), then the pending pods.
func (s *server) create(ctx context.Context, c *Case, cr *created) error {
	var nodes []*v1.Node
	var pcs []*schedulingv1.PriorityClass
	var pgs []*schedulingv1beta1.PodGroup
	var cpgs []*schedulingv1alpha3.CompositePodGroup
	var pdbs []*policyv1.PodDisruptionBudget
	var running, pending []*v1.Pod
	var pvcs []*v1.PersistentVolumeClaim
	var pvs []*v1.PersistentVolume
	var scs []*storagev1.StorageClass
	var csiNodes []*storagev1.CSINode
	var dra draObjects
	var rcs []*nodev1.RuntimeClass
	var lrs []*v1.LimitRange
	for i, raw := range c.Objects {
		var tm typeMeta
		if err := json.Unmarshal(raw, &tm); err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		var err error
		switch tm.Kind {
		case "Node":
			o := &v1.Node{}
			err = decodeInto(raw, o)
			nodes = append(nodes, o)
		case "PriorityClass":
			o := &schedulingv1.PriorityClass{}
			err = decodeInto(raw, o)
			pcs = append(pcs, o)
		case "PodGroup":
			o := &schedulingv1beta1.PodGroup{}
			err = decodeInto(raw, o)
			pgs = append(pgs, o)
		case "CompositePodGroup":
			o := &schedulingv1alpha3.CompositePodGroup{}
			err = decodeInto(raw, o)
			cpgs = append(cpgs, o)
		case "PodDisruptionBudget":
			o := &policyv1.PodDisruptionBudget{}
			err = decodeInto(raw, o)
			pdbs = append(pdbs, o)
		case "Pod":
			o := &v1.Pod{}
			err = decodeInto(raw, o)
			if o.Spec.NodeName != "" {
				running = append(running, o)
			} else {
				pending = append(pending, o)
			}
		case "PersistentVolumeClaim":
			o := &v1.PersistentVolumeClaim{}
			err = decodeInto(raw, o)
			pvcs = append(pvcs, o)
		case "PersistentVolume":
			o := &v1.PersistentVolume{}
			err = decodeInto(raw, o)
			pvs = append(pvs, o)
		case "StorageClass":
			o := &storagev1.StorageClass{}
			err = decodeInto(raw, o)
			scs = append(scs, o)
		case "CSINode":
			o := &storagev1.CSINode{}
			err = decodeInto(raw, o)
			csiNodes = append(csiNodes, o)
		case "DeviceClass":
			o := &resourcev1.DeviceClass{}
			err = decodeInto(raw, o)
			dra.classes = append(dra.classes, o)
		case "ResourceSlice":
			o := &resourcev1.ResourceSlice{}
			err = decodeInto(raw, o)
			dra.slices = append(dra.slices, o)
		case "ResourceClaim":
			o := &resourcev1.ResourceClaim{}
			err = decodeInto(raw, o)
			dra.claims = append(dra.claims, o)
		case "ResourceClaimTemplate":
			o := &resourcev1.ResourceClaimTemplate{}
			err = decodeInto(raw, o)
			dra.templates = append(dra.templates, o)
		case "RuntimeClass":
			o := &nodev1.RuntimeClass{}
			err = decodeInto(raw, o)
			rcs = append(rcs, o)
		case "LimitRange":
			o := &v1.LimitRange{}
			err = decodeInto(raw, o)
			lrs = append(lrs, o)
		case "Namespace":
			o := &v1.Namespace{}
			err = decodeInto(raw, o)
			if err == nil {
				err = s.ensureNamespace(ctx, cr, o.Name)
			}
		default:
			// Other kinds are not part of the question (the Python side sends only these).
		}
		if err != nil {
			return fmt.Errorf("object %d (%s): %w", i, tm.Kind, err)
		}
	}
	for _, pc := range pcs {
		clean(&pc.ObjectMeta)
		if _, err := s.cs.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			if apierrors.IsAlreadyExists(err) && strings.HasPrefix(pc.Name, "system-") {
				continue
			}
			return fmt.Errorf("PriorityClass %s: %w", pc.Name, err)
		}
		cr.priorityClass = append(cr.priorityClass, pc.Name)
	}
	// RuntimeClasses before any pod: the RuntimeClass admission plugin refuses a pod whose class
	// does not exist, and gives the others the class's overhead and scheduling constraints.
	for _, rc := range rcs {
		clean(&rc.ObjectMeta)
		if _, err := s.cs.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("RuntimeClass %s: %w", rc.Name, err)
		}
		cr.runtimeClasses = append(cr.runtimeClasses, rc.Name)
	}
	for _, n := range nodes {
		clean(&n.ObjectMeta)
		if _, err := s.cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("Node %s: %w", n.Name, err)
		}
		cr.nodes = append(cr.nodes, n.Name)
	}
	for _, g := range cpgs {
		clean(&g.ObjectMeta)
		if err := s.ensureNamespace(ctx, cr, g.Namespace); err != nil {
			return err
		}
		st := g.Status
		o, err := s.cs.SchedulingV1alpha3().CompositePodGroups(g.Namespace).Create(ctx, g, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("CompositePodGroup %s/%s: %w", g.Namespace, g.Name, err)
		}
		cr.hasComposite = true
		if len(st.Conditions) > 0 {
			o.Status = st
			if _, err := s.cs.SchedulingV1alpha3().CompositePodGroups(g.Namespace).UpdateStatus(ctx, o, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("CompositePodGroup %s/%s status: %w", g.Namespace, g.Name, err)
			}
		}
	}
	for _, g := range pgs {
		clean(&g.ObjectMeta)
		if err := s.ensureNamespace(ctx, cr, g.Namespace); err != nil {
			return err
		}
		if _, err := s.cs.SchedulingV1beta1().PodGroups(g.Namespace).Create(ctx, g, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("PodGroup %s/%s: %w", g.Namespace, g.Name, err)
		}
		cr.hasPodGroups = true
	}
	for _, p := range pdbs {
		clean(&p.ObjectMeta)
		if err := s.ensureNamespace(ctx, cr, p.Namespace); err != nil {
			return err
		}
		st := p.Status
		o, err := s.cs.PolicyV1().PodDisruptionBudgets(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("PodDisruptionBudget %s/%s: %w", p.Namespace, p.Name, err)
		}
		o.Status = st
		o.Status.ObservedGeneration = o.Generation
		if _, err := s.cs.PolicyV1().PodDisruptionBudgets(p.Namespace).UpdateStatus(ctx, o, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("PodDisruptionBudget %s/%s status: %w", p.Namespace, p.Name, err)
		}
	}
	// Running pods in parallel: a cluster of 30,000 pods (python -m tests.oracle scale) would
	// take most of an hour one create at a time. Their order does not matter to the scheduler
	// (start times come from status); the pending pods below keep theirs.
	if err := s.createStorage(ctx, cr, scs, csiNodes, pvs, pvcs); err != nil {
		return err
	}
	if err := s.createDRA(ctx, cr, &dra); err != nil {
		return err
	}
	for _, p := range running {
		if err := s.ensureNamespace(ctx, cr, p.Namespace); err != nil {
			return err
		}
	}
	if err := s.createParallel(ctx, cr, running); err != nil {
		return err
	}
	if err := s.writeClaimStatuses(ctx, cr, &dra); err != nil {
		return err
	}
	// LimitRanges after the running pods, before the pending ones: a snapshot's pods were admitted
	// when they were created (our engine never re-admits them), while the question's new pods go
	// through the LimitRanger now, as our engine's hypothetical pods do (snapshot/decode/podadmission.py).
	for _, lr := range lrs {
		clean(&lr.ObjectMeta)
		if err := s.ensureNamespace(ctx, cr, lr.Namespace); err != nil {
			return err
		}
		if _, err := s.cs.CoreV1().LimitRanges(lr.Namespace).Create(ctx, lr, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("LimitRange %s/%s: %w", lr.Namespace, lr.Name, err)
		}
		cr.hasLimitRanges = true
	}
	for _, p := range pending {
		bystander := bystanderPod(p)
		if p.Status.NominatedNodeName != "" && !bystander {
			cr.nominatedAtStart = true
		}
		if err := s.createPod(ctx, cr, p); err != nil {
			if !bystander && apierrors.IsForbidden(errors.Unwrap(err)) {
				cr.rejected = errors.Unwrap(err).Error() // e.g. pods "x" is forbidden: pod rejected: RuntimeClass "y" not found
				return nil
			}
			return err
		}
		if !bystander {
			cr.preemptorPods = append(cr.preemptorPods, PodRef{p.Namespace, p.Name})
		}
	}
	return nil
}

// bystanderPod: a pending pod the case holds that kube-scheduler will not schedule: gated
// (schedulingGates), or another scheduler's. It is created as given (its status too: a
// nominatedNodeName stays, and the queue's nominator records a gated pod's nomination:
// scheduling_queue.go "addNominatedPod is called here unconditionally ... even if gated"), and the
// case does not wait for a verdict on it.
func bystanderPod(p *v1.Pod) bool {
	return len(p.Spec.SchedulingGates) > 0 || (p.Spec.SchedulerName != "" && p.Spec.SchedulerName != v1.DefaultSchedulerName)
}

// createStorage creates StorageClasses, CSINodes, PersistentVolumes and PersistentVolumeClaims
// with their status as given (no PV controller runs: a claim bound in the file stays bound, an
// unbound one stays pending; StorageObjectInUseProtection admission is off, so no finalizers).
func (s *server) createStorage(ctx context.Context, cr *created, scs []*storagev1.StorageClass, csiNodes []*storagev1.CSINode,
	pvs []*v1.PersistentVolume, pvcs []*v1.PersistentVolumeClaim) error {
	for _, o := range scs {
		clean(&o.ObjectMeta)
		if _, err := s.cs.StorageV1().StorageClasses().Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("StorageClass %s: %w", o.Name, err)
		}
		cr.storageClasses = append(cr.storageClasses, o.Name)
	}
	for _, o := range csiNodes {
		clean(&o.ObjectMeta)
		if _, err := s.cs.StorageV1().CSINodes().Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("CSINode %s: %w", o.Name, err)
		}
		cr.csiNodes = append(cr.csiNodes, o.Name)
	}
	for _, o := range pvs {
		clean(&o.ObjectMeta)
		st := o.Status
		c, err := s.cs.CoreV1().PersistentVolumes().Create(ctx, o, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("PersistentVolume %s: %w", o.Name, err)
		}
		cr.pvs = append(cr.pvs, o.Name)
		if st.Phase != "" {
			c.Status = st
			if _, err := s.cs.CoreV1().PersistentVolumes().UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("PersistentVolume %s status: %w", o.Name, err)
			}
		}
	}
	for _, o := range pvcs {
		clean(&o.ObjectMeta)
		if err := s.ensureNamespace(ctx, cr, o.Namespace); err != nil {
			return err
		}
		st := o.Status
		c, err := s.cs.CoreV1().PersistentVolumeClaims(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("PersistentVolumeClaim %s/%s: %w", o.Namespace, o.Name, err)
		}
		if st.Phase != "" {
			c.Status = st
			if _, err := s.cs.CoreV1().PersistentVolumeClaims(o.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("PersistentVolumeClaim %s/%s status: %w", o.Namespace, o.Name, err)
			}
		}
	}
	return nil
}

type draObjects struct {
	classes   []*resourcev1.DeviceClass
	slices    []*resourcev1.ResourceSlice
	claims    []*resourcev1.ResourceClaim
	templates []*resourcev1.ResourceClaimTemplate
	status    map[string]resourcev1.ResourceClaimStatus // ns/name -> status as given, written after the pods
}

// createDRA creates DeviceClasses, ResourceSlices, ResourceClaimTemplates and ResourceClaims
// (spec only: a claim's allocation and reservedFor are written once the pods exist, with the UIDs
// the apiserver gave them; no resourceclaim controller runs).
func (s *server) createDRA(ctx context.Context, cr *created, d *draObjects) error {
	for _, o := range d.classes {
		clean(&o.ObjectMeta)
		if _, err := s.cs.ResourceV1().DeviceClasses().Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("DeviceClass %s: %w", o.Name, err)
		}
		cr.deviceClasses = append(cr.deviceClasses, o.Name)
	}
	for _, o := range d.slices {
		clean(&o.ObjectMeta)
		if _, err := s.cs.ResourceV1().ResourceSlices().Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("ResourceSlice %s: %w", o.Name, err)
		}
		cr.resourceSlices = append(cr.resourceSlices, o.Name)
	}
	for _, o := range d.templates {
		clean(&o.ObjectMeta)
		if err := s.ensureNamespace(ctx, cr, o.Namespace); err != nil {
			return err
		}
		if _, err := s.cs.ResourceV1().ResourceClaimTemplates(o.Namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("ResourceClaimTemplate %s/%s: %w", o.Namespace, o.Name, err)
		}
		cr.hasClaims = true
	}
	d.status = map[string]resourcev1.ResourceClaimStatus{}
	for _, o := range d.claims {
		clean(&o.ObjectMeta)
		if err := s.ensureNamespace(ctx, cr, o.Namespace); err != nil {
			return err
		}
		if o.Status.Allocation != nil || len(o.Status.ReservedFor) > 0 {
			d.status[key(o.Namespace, o.Name)] = o.Status
		}
		o.Status = resourcev1.ResourceClaimStatus{}
		if _, err := s.cs.ResourceV1().ResourceClaims(o.Namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("ResourceClaim %s/%s: %w", o.Namespace, o.Name, err)
		}
		cr.hasClaims = true
	}
	return nil
}

// writeClaimStatuses writes each allocated claim's status, its reservedFor pointing at the pods
// by the UIDs they now have.
func (s *server) writeClaimStatuses(ctx context.Context, cr *created, d *draObjects) error {
	for k, st := range d.status {
		ns, name, _ := strings.Cut(k, "/")
		c, err := s.cs.ResourceV1().ResourceClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("ResourceClaim %s: %w", k, err)
		}
		for i, r := range st.ReservedFor {
			if r.Resource == "pods" {
				if uid, ok := cr.podUIDs[key(ns, r.Name)]; ok {
					st.ReservedFor[i].UID = uid
				}
			}
		}
		c.Status = st
		if _, err := s.cs.ResourceV1().ResourceClaims(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("ResourceClaim %s status: %w", k, err)
		}
	}
	return nil
}

// deleteClaims deletes a namespace's claims and templates; the scheduler puts a delete-protection
// finalizer on claims it allocates, which no controller here would remove.
func (s *server) deleteClaims(ctx context.Context, ns string) error {
	zero := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	l, err := s.cs.ResourceV1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range l.Items {
		c := &l.Items[i]
		if len(c.Finalizers) > 0 {
			c.Finalizers = nil
			if _, err := s.cs.ResourceV1().ResourceClaims(ns).Update(ctx, c, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	if err := s.cs.ResourceV1().ResourceClaims(ns).DeleteCollection(ctx, zero, metav1.ListOptions{}); err != nil {
		return err
	}
	return s.cs.ResourceV1().ResourceClaimTemplates(ns).DeleteCollection(ctx, zero, metav1.ListOptions{})
}

// createWorkers is how many pods are created at once.
const createWorkers = 16

func (s *server) createParallel(ctx context.Context, cr *created, pods []*v1.Pod) error {
	work := make(chan *v1.Pod)
	errs := make(chan error, createWorkers)
	var wg sync.WaitGroup
	for w := 0; w < createWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				if err := s.createPod(ctx, cr, p); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var first error
feed:
	for _, p := range pods {
		select {
		case work <- p:
		case first = <-errs:
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	if first == nil {
		first = <-errs // nil when the channel is empty
	}
	return first
}

// clean drops what the apiserver sets itself.
func clean(m *metav1.ObjectMeta) {
	m.ResourceVersion = ""
	m.UID = ""
	m.Generation = 0
	m.CreationTimestamp = metav1.Time{}
	m.DeletionTimestamp = nil
	m.DeletionGracePeriodSeconds = nil
	m.ManagedFields = nil
	m.OwnerReferences = nil
	m.Finalizers = nil
}

// createPod creates a pod, then writes its status (the create strategy resets it), then, for a
// pod that was terminating, deletes it gracefully: with no kubelet it stays terminating.
func (s *server) createPod(ctx context.Context, cr *created, p *v1.Pod) error {
	terminating := p.DeletionTimestamp != nil
	grace := p.DeletionGracePeriodSeconds
	clean(&p.ObjectMeta)
	if err := s.ensureNamespace(ctx, cr, p.Namespace); err != nil {
		return err
	}
	st := p.Status
	o, err := s.cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("Pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	cr.mu.Lock()
	if cr.podUIDs == nil {
		cr.podUIDs = map[string]types.UID{}
	}
	cr.podUIDs[key(p.Namespace, p.Name)] = o.UID
	cr.mu.Unlock()
	if st.Phase == "" {
		if p.Spec.NodeName != "" {
			st.Phase = v1.PodRunning
		} else {
			st.Phase = v1.PodPending
		}
	}
	if p.Spec.NodeName != "" && st.StartTime == nil {
		// A running pod without a start time would sort as the newest (MoreImportantPod); the
		// Python side always writes one, this is a fallback for hand-written clusters.
		st.StartTime = &o.CreationTimestamp
	}
	o.Status = st
	o, err = s.cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, o, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("Pod %s/%s status: %w", p.Namespace, p.Name, err)
	}
	if terminating {
		if grace == nil || *grace == 0 {
			grace = ptr.To[int64](30)
		}
		if err := s.cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: grace}); err != nil {
			return fmt.Errorf("Pod %s/%s terminating: %w", p.Namespace, p.Name, err)
		}
	} else if p.Spec.NodeName != "" && o.Status.Phase != v1.PodSucceeded && o.Status.Phase != v1.PodFailed {
		cr.mu.Lock()
		cr.runningAtStart[key(p.Namespace, p.Name)] = o
		cr.mu.Unlock()
	}
	return nil
}

// startScheduler builds a scheduler with the default profile through its public constructor
// (as test/integration/util StartSchedulerWithDone does) and runs it until ctx ends.
func (s *server) startScheduler(ctx context.Context) (*scheduler.Scheduler, <-chan struct{}, error) {
	informerFactory := scheduler.NewInformerFactory(s.cs, 0, nil)
	dyn := dynamicinformer.NewFilteredDynamicSharedInformerFactory(s.dyn, 0, v1.NamespaceAll, nil)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: s.cs.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	opts := []scheduler.Option{
		scheduler.WithKubeConfig(s.cfg),
		// As upstream's pod-group preemption integration tests: retries come quickly.
		scheduler.WithPodInitialBackoffSeconds(0),
		scheduler.WithPodMaxBackoffSeconds(1),
	}
	if *tieBreak == "node-name" { // validated by TestOracle
		pinned, err := tieBreakOptions()
		if err != nil {
			broadcaster.Shutdown()
			return nil, nil, fmt.Errorf("tie-break profile: %w", err)
		}
		opts = append(opts, pinned...)
	}
	if *percentage > 0 {
		opts = append(opts, scheduler.WithPercentageOfNodesToScore(ptr.To(int32(*percentage))))
	}
	sched, err := scheduler.New(ctx, s.cs, informerFactory, dyn, profile.NewRecorderFactory(broadcaster), opts...)
	if err != nil {
		broadcaster.Shutdown()
		return nil, nil, err
	}
	informerFactory.Start(ctx.Done())
	dyn.Start(ctx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	dyn.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		broadcaster.Shutdown()
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		sched.Run(ctx)
		informerFactory.Shutdown()
		dyn.Shutdown()
		broadcaster.Shutdown()
		close(done)
	}()
	return sched, done, nil
}

// waitSettled waits until the scheduler has stopped making progress: nothing in flight, active
// and backoff queues empty, and no pod in the case's namespaces changed for the settle time.
func (s *server) waitSettled(ctx context.Context, sched *scheduler.Scheduler, cr *created) error {
	deadline := time.Now().Add(*caseTimeout)
	var last string
	stableSince := time.Now()
	for {
		if time.Now().After(deadline) {
			_, summary := sched.SchedulingQueue.PendingPods()
			return fmt.Errorf("the scheduler did not settle in %s (%s)", *caseTimeout, summary)
		}
		time.Sleep(50 * time.Millisecond)
		inFlight := len(sched.SchedulingQueue.InFlightPods()) > 0
		queued, summary := sched.SchedulingQueue.PendingPods()
		queuesEmpty := strings.HasPrefix(summary, "activeQ:0; backoffQ:0;")
		fp, unattempted, err := s.fingerprint(ctx, cr)
		if err != nil {
			return err
		}
		if fp != last || inFlight {
			last = fp
			stableSince = time.Now()
			continue
		}
		stable := time.Since(stableSince)
		if len(unattempted) > 0 {
			// Pods with no verdict yet. Those a PreEnqueue plugin keeps out of the active queue
			// (a gang short of pods, a CompositePodGroup tree short of its quorum: GangScheduling
			// PreEnqueue) never get one: with every such pod held in the queue, the active and
			// backoff queues empty and nothing changed for 3 s, the case is read off (they are
			// reported NotAttempted).
			held := map[string]bool{}
			for _, p := range queued {
				held[key(p.Namespace, p.Name)] = true
			}
			all := true
			for _, k := range unattempted {
				all = all && held[k]
			}
			if all && queuesEmpty && stable >= 3*time.Second {
				return nil
			}
			continue
		}
		// Settled: queues empty and nothing changed for the settle time; or, for pods the
		// scheduler keeps retrying without changing anything (an unschedulable group whose status
		// updates requeue it, a group waiting on a pod that was terminating before the case
		// started), nothing changed for 1.5 times the longest backoff (1 s): every pod in the
		// backoff queue has been retried since the last change.
		if (queuesEmpty && stable >= *settle) || stable >= 1500*time.Millisecond {
			return nil
		}
	}
}

// fingerprint: the resourceVersions of every pod of the case; attempted: every preemptor pod is
// bound or carries the scheduler's verdict (a PodScheduled condition). It records victims as
// they are marked (DisruptionTarget condition, deletion timestamp) and the nominations.
//
// No kubelet runs: a victim stays terminating, so the preemptors wait on it ("ongoing
// preemption") and the case shows the scheduler's first preemption decision, which is what
// whatif predicts. (Playing victims' termination forward is a different question: a
// preemptor that then fails on its nominated node triggers a second round.)
func (s *server) fingerprint(ctx context.Context, cr *created) (string, []string, error) {
	var b strings.Builder
	pre := map[string]bool{}
	for _, r := range cr.preemptorPods {
		pre[key(r.Namespace, r.Name)] = false
	}
	for _, ns := range sortedKeys(cr.namespaces) {
		pods, err := s.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", nil, err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			b.WriteString(p.Namespace + "/" + p.Name + "@" + p.ResourceVersion + ";")
			k := key(p.Namespace, p.Name)
			if _, ok := pre[k]; ok {
				pre[k] = p.Spec.NodeName != "" || hasCondition(p, v1.PodScheduled)
				if p.Status.NominatedNodeName != "" {
					cr.nominated[k] = p.Status.NominatedNodeName
				}
			}
			if was, ok := cr.runningAtStart[k]; ok {
				var ev []string
				if cond := condition(p, v1.DisruptionTarget); cond != nil && cond.Status == v1.ConditionTrue {
					ev = append(ev, "DisruptionTarget:"+cond.Reason)
				}
				if p.DeletionTimestamp != nil {
					ev = append(ev, "deleting")
				}
				if len(ev) > 0 && cr.victims[k] == nil {
					cr.victims[k] = &Victim{Namespace: was.Namespace, Name: was.Name, Node: was.Spec.NodeName, Evidence: ev}
				}
			}
		}
	}
	var unattempted []string
	for _, k := range sortedKeys(pre) {
		if !pre[k] {
			unattempted = append(unattempted, k)
		}
	}
	return b.String(), unattempted, nil
}

// nominatedAfterFailure: a nominated node that PostFilter set, not the one the pod-group cycle
// writes while it binds pods that fit (schedule_one.go "Updating pod condition and nominated node
// name", nominatingMode 1, on a successful cycle: no preemption at all). PostFilter runs only after
// a failed cycle, which leaves a FailedScheduling event, or the pod is still pending.
func nominatedAfterFailure(cr *created, now map[string]*v1.Pod, failedOnce map[string]bool) bool {
	for k := range cr.nominated {
		if failedOnce[k] {
			return true
		}
		if p, ok := now[k]; ok && p.Spec.NodeName == "" {
			return true
		}
	}
	return false
}

func hasCondition(p *v1.Pod, t v1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}

func condition(p *v1.Pod, t v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// readOff turns the cluster after the scheduler stopped into the report contract.
func (s *server) readOff(ctx context.Context, c *Case, cr *created, res *Result) error {
	now := map[string]*v1.Pod{}
	failedOnce := map[string]bool{} // pods with a FailedScheduling event: a cycle failed for them
	for _, ns := range sortedKeys(cr.namespaces) {
		pods, err := s.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			now[key(p.Namespace, p.Name)] = p
		}
		evs, err := s.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, e := range evs.Items {
				if e.Reason == "FailedScheduling" {
					failedOnce[key(e.InvolvedObject.Namespace, e.InvolvedObject.Name)] = true
				}
				if e.Reason == "Preempted" || e.Reason == "FailedScheduling" && strings.Contains(e.Message, "preempt") {
					res.Events = append(res.Events, fmt.Sprintf("%s %s/%s: %s", e.Reason, e.InvolvedObject.Namespace, e.InvolvedObject.Name, e.Message))
				}
			}
		}
	}
	sort.Strings(res.Events)
	for _, k := range sortedKeys(cr.runningAtStart) {
		v := cr.victims[k]
		if v == nil {
			if _, still := now[k]; still {
				continue
			}
			// gone without our seeing it marked (deleted between two polls)
			was := cr.runningAtStart[k]
			v = &Victim{Namespace: was.Namespace, Name: was.Name, Node: was.Spec.NodeName, Evidence: []string{"deleted"}}
		}
		res.Victims = append(res.Victims, *v)
	}
	allBound := true
	var messages []string
	for _, r := range cr.preemptorPods {
		p, ok := now[key(r.Namespace, r.Name)]
		if !ok {
			allBound = false
			res.Pending = append(res.Pending, Pending{Namespace: r.Namespace, Name: r.Name, Reason: "Deleted"})
			continue
		}
		if nn := cr.nominated[key(r.Namespace, r.Name)]; nn != "" {
			res.Nominated[key(r.Namespace, r.Name)] = nn
		}
		if p.Spec.NodeName != "" {
			res.Placements = append(res.Placements, Placement{Pod: r, Node: p.Spec.NodeName})
			continue
		}
		allBound = false
		pd := Pending{Namespace: r.Namespace, Name: r.Name, NominatedNode: p.Status.NominatedNodeName}
		if cond := condition(p, v1.PodScheduled); cond != nil {
			pd.Reason, pd.Message = cond.Reason, cond.Message
			messages = append(messages, cond.Message)
		} else {
			pd.Reason = "NotAttempted"
			pd.Message = notAttempted + " (e.g. its pod group waits for more pods)"
			messages = append(messages, pd.Message)
		}
		res.Pending = append(res.Pending, pd)
	}
	if c.Target.Kind == "Pod" {
		res.NominatedNode = res.Nominated[key(c.Target.Namespace, c.Target.Name)]
	}
	preempted := nominatedAfterFailure(cr, now, failedOnce)
	switch {
	case len(res.Victims) > 0:
		res.Outcome = "Preempt"
	case preempted && !cr.nominatedAtStart:
		// PodGroupPostFilter / PostFilter succeeded without a victim the API shows (none needed:
		// reprieval put every candidate back, or the only ones are already terminating) and
		// nominated the pods.
		res.Outcome = "Preempt"
	case allBound && (len(res.Nominated) == 0 || !preempted):
		// every pod bound; nominations, if any, were written while binding (no failed cycle)
		res.Outcome = "NoPreemptionNeeded"
	default:
		res.Outcome = classify(messages)
	}
	if len(messages) > 0 {
		res.Message = messages[0]
	}
	return nil
}

// notAttempted: the message of a pending pod kube-scheduler never took into a cycle.
const notAttempted = "never popped from the scheduling queue"

// classify maps the scheduler's PodScheduled messages of still-pending pods with no victims to
// our outcome names. These are the texts kube-scheduler writes (schedule_one_podgroup.go
// validatePodGroup, podgrouppreemption.go / default_preemption.go eligibility).
func classify(messages []string) string {
	for _, m := range messages {
		switch {
		case strings.Contains(m, "should have the same"):
			return "Invalid"
		case strings.Contains(m, "not eligible"), strings.Contains(m, "ongoing preemption"), strings.HasPrefix(m, notAttempted):
			return "NotEligible"
		}
	}
	return "Unschedulable"
}

// deleteGroups deletes a namespace's pod groups (or composite pod groups) and drops the
// protection finalizer the apiserver puts on them, which only a controller we do not run would
// remove.
func (s *server) deleteGroups(ctx context.Context, gvr schema.GroupVersionResource, ns string) error {
	rc := s.dyn.Resource(gvr).Namespace(ns)
	if err := rc.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
		return err
	}
	l, err := rc.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, o := range l.Items {
		if len(o.GetFinalizers()) == 0 {
			continue
		}
		_, err := rc.Patch(ctx, o.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// cleanup deletes everything the case created, at once (grace period 0), and waits until the
// apiserver no longer lists it, so the next case starts from an empty cluster.
func (s *server) cleanup(cr *created) error {
	ctx, cancel := context.WithTimeout(s.ctx, 60*time.Second)
	defer cancel()
	zero := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	for ns := range cr.namespaces {
		if err := s.cs.CoreV1().Pods(ns).DeleteCollection(ctx, zero, metav1.ListOptions{}); err != nil {
			return err
		}
		if err := s.cs.PolicyV1().PodDisruptionBudgets(ns).DeleteCollection(ctx, zero, metav1.ListOptions{}); err != nil {
			return err
		}
		if cr.hasPodGroups {
			if err := s.deleteGroups(ctx, schedulingv1beta1.SchemeGroupVersion.WithResource("podgroups"), ns); err != nil {
				return err
			}
		}
		if cr.hasComposite {
			if err := s.deleteGroups(ctx, schedulingv1alpha3.SchemeGroupVersion.WithResource("compositepodgroups"), ns); err != nil {
				return err
			}
		}
		if err := s.cs.CoreV1().Events(ns).DeleteCollection(ctx, zero, metav1.ListOptions{}); err != nil {
			return err
		}
		if err := s.cs.CoreV1().PersistentVolumeClaims(ns).DeleteCollection(ctx, zero, metav1.ListOptions{}); err != nil {
			return err
		}
		if cr.hasLimitRanges {
			if err := s.cs.CoreV1().LimitRanges(ns).DeleteCollection(ctx, zero, metav1.ListOptions{}); err != nil {
				return err
			}
		}
		if cr.hasClaims {
			if err := s.deleteClaims(ctx, ns); err != nil {
				return err
			}
		}
	}
	// Cluster-scoped objects the case created, by name (already gone is fine).
	for _, kind := range []struct {
		names []string
		del   func(context.Context, string, metav1.DeleteOptions) error
	}{
		{cr.resourceSlices, s.cs.ResourceV1().ResourceSlices().Delete},
		{cr.deviceClasses, s.cs.ResourceV1().DeviceClasses().Delete},
		{cr.pvs, s.cs.CoreV1().PersistentVolumes().Delete},
		{cr.storageClasses, s.cs.StorageV1().StorageClasses().Delete},
		{cr.csiNodes, s.cs.StorageV1().CSINodes().Delete},
		{cr.nodes, s.cs.CoreV1().Nodes().Delete},
		{cr.priorityClass, s.cs.SchedulingV1().PriorityClasses().Delete},
		{cr.runtimeClasses, s.cs.NodeV1().RuntimeClasses().Delete},
	} {
		for _, n := range kind.names {
			if err := kind.del(ctx, n, zero); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	var left string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for ns := range cr.namespaces {
			pods, err := s.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil || len(pods.Items) > 0 {
				if err == nil {
					left = fmt.Sprintf("pod %s/%s (finalizers %v, deletionTimestamp %v)", ns, pods.Items[0].Name, pods.Items[0].Finalizers, pods.Items[0].DeletionTimestamp)
				}
				return false, err
			}
			if cr.hasPodGroups {
				l, err := s.cs.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
				if err != nil || len(l.Items) > 0 {
					if err == nil {
						left = fmt.Sprintf("podgroup %s/%s (finalizers %v)", ns, l.Items[0].Name, l.Items[0].Finalizers)
					}
					return false, err
				}
			}
			if cr.hasComposite {
				l, err := s.cs.SchedulingV1alpha3().CompositePodGroups(ns).List(ctx, metav1.ListOptions{})
				if err != nil || len(l.Items) > 0 {
					return false, err
				}
			}
		}
		nodes, err := s.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) > 0 {
			if err == nil {
				left = fmt.Sprintf("node %s (finalizers %v)", nodes.Items[0].Name, nodes.Items[0].Finalizers)
			}
			return false, err
		}
		return true, nil
	})
	if err != nil && left != "" {
		return fmt.Errorf("%w: still there: %s", err, left)
	}
	return err
}

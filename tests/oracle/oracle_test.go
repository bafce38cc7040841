// Package oracle runs the unmodified kube-scheduler of k8s.io/kubernetes (the version in go.mod)
// against a real kube-apiserver on embedded etcd, the way upstream's integration tests do
// (test/integration/util, test/integration/framework), on clusters given as files, and reports
// what it did. It is a test tool of kubectl-wap: our code only, upstream comes in as module
// dependencies.
//
// Build and run (tests/oracle/README.md; `python -m tests.oracle` does this for you):
//
//	go test -c -o oracle.test . && ./oracle.test -test.run TestOracle -oracle.in cases.jsonl -oracle.out results.jsonl
//
// One apiserver serves every case of a run; each case gets a fresh scheduler and the objects it
// created are deleted afterwards.
package oracle

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/klog/v2"
)

var (
	inPath       = flag.String("oracle.in", "", "cases, one JSON object per line ('-' = stdin)")
	outPath      = flag.String("oracle.out", "", "results, one JSON object per line ('-' = stdout)")
	gatesFlag    = flag.String("oracle.feature-gates", "", "feature gates for the apiserver and the scheduler, e.g. GenericWorkload=true,CompositePodGroup=true")
	settle       = flag.Duration("oracle.settle", 400*time.Millisecond, "how long the cluster must stay unchanged, with the scheduling queue idle, before a case is read off")
	caseTimeout  = flag.Duration("oracle.timeout", 30*time.Second, "longest time a case may take to settle")
	logPath      = flag.String("oracle.log", "", "write apiserver/scheduler logs here (default: discard)")
	logVerbosity = flag.Int("oracle.v", 2, "log verbosity with -oracle.log")
	tieBreak     = flag.String("oracle.tie-break", "random", "how the scheduler breaks equal top node scores: random (upstream, unchanged) or node-name (pinned to the smallest node name, kubectl-wap's rule: tiebreak_test.go)")
	percentage   = flag.Int("oracle.percentage-of-nodes-to-score", 100, "percentageOfNodesToScore (0 = upstream's adaptive default)")
)

func TestMain(m *testing.M) {
	flag.Parse()
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			fmt.Fprintf(os.Stderr, "oracle: %v\n", err)
			os.Exit(2)
		}
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("alsologtostderr", "false")
		_ = fs.Set("v", fmt.Sprint(*logVerbosity))
		klog.SetOutput(f)
	} else {
		klog.SetLogger(logr.Discard())
	}
	url, stop, err := startEtcd()
	if err != nil {
		fmt.Fprintf(os.Stderr, "oracle: starting embedded etcd: %v\n", err)
		os.Exit(1)
	}
	os.Setenv("KUBE_INTEGRATION_ETCD_URL", url)
	code := m.Run()
	stop()
	os.Exit(code)
}

func parseGates(s string) (featuregatetesting.FeatureOverrides, error) {
	out := featuregatetesting.FeatureOverrides{}
	known := utilfeature.DefaultMutableFeatureGate.GetAll()
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || (v != "true" && v != "false") {
			return nil, fmt.Errorf("bad feature gate %q: want Name=true|false", kv)
		}
		if _, exists := known[featuregate.Feature(k)]; !exists {
			return nil, fmt.Errorf("unknown feature gate %q in this kube-scheduler", k)
		}
		out[featuregate.Feature(k)] = v == "true"
	}
	return out, nil
}

func TestOracle(t *testing.T) {
	if *inPath == "" || *outPath == "" {
		t.Skip("no -oracle.in/-oracle.out given")
	}
	gates, err := parseGates(*gatesFlag)
	if err != nil {
		t.Fatal(err)
	}
	if *tieBreak != "random" && *tieBreak != "node-name" {
		t.Fatalf("-oracle.tie-break=%q: want random or node-name", *tieBreak)
	}
	// Before the apiserver starts: the served API groups follow the gates (InitTestAPIServer
	// enables scheduling.k8s.io/v1beta1 with GenericWorkload, v1alpha3 with CompositePodGroup).
	featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, gates)

	in, err := openIn(*inPath)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := openOut(*outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()

	start := time.Now()
	srv := startServer(t)
	defer srv.close()
	fmt.Fprintf(os.Stderr, "oracle: apiserver ready in %.1fs\n", time.Since(start).Seconds())

	enc := json.NewEncoder(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var c Case
		var res *Result
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			res = &Result{ID: fmt.Sprintf("line-%d", n+1), Error: "decoding case: " + err.Error()}
		} else {
			res = srv.run(&c)
		}
		if err := enc.Encode(res); err != nil {
			t.Fatal(err)
		}
		if f, ok := out.(*os.File); ok {
			_ = f.Sync()
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "oracle: %d case(s) in %.1fs\n", n, time.Since(start).Seconds())
}

func openIn(p string) (io.ReadCloser, error) {
	if p == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(p)
}

func openOut(p string) (io.WriteCloser, error) {
	if p == "-" {
		return nopWriteCloser{os.Stdout}, nil
	}
	return os.Create(p)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

package oracle

// TestServe: the same kube-apiserver v1.37.2 (and embedded etcd) as TestOracle, but no scheduler
// and no cases: it serves a cluster to outside clients (kubectl, kubectl-wap) until told to stop.
// The e2e tier (tests/e2e/real_apiserver.py) runs it as its real API server:
//
//	oracle.test -test.run '^TestServe$' -test.timeout 0 -oracle.serve DIR \
//	    [-oracle.feature-gates ...] [-oracle.token-auth-file F] [-oracle.audit-policy-file P -oracle.audit-log L]
//
// Once the server answers it writes DIR/ca.crt (the serving certificate's CA bundle),
// DIR/kubeconfig (the apiserver's own loopback credentials: a system:masters user) and, last,
// DIR/server.json ({"url", "port", "gitVersion", "startSeconds"}). It stops when its stdin reaches
// EOF (the parent died or closed the pipe) or on SIGTERM/SIGINT.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientset "k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	"k8s.io/kubernetes/test/integration/framework"
)

var (
	serveDir        = flag.String("oracle.serve", "", "TestServe: serve a kube-apiserver (no scheduler) and write ca.crt, kubeconfig, server.json here")
	serveTokens     = flag.String("oracle.token-auth-file", "", "TestServe: static token users (kube-apiserver --token-auth-file)")
	serveAuditPol   = flag.String("oracle.audit-policy-file", "", "TestServe: audit policy (kube-apiserver --audit-policy-file)")
	serveAuditLog   = flag.String("oracle.audit-log", "", "TestServe: audit log path (kube-apiserver --audit-log-path; blocking mode)")
	serveAdmissions = flag.String("oracle.disable-admission-plugins", "ServiceAccount", "TestServe: kube-apiserver --disable-admission-plugins (no controller-manager creates the default ServiceAccount)")
	serveRuntimeCfg = flag.String("oracle.runtime-config", "", "TestServe: extra kube-apiserver --runtime-config entries (GROUP/VERSION=true|false, comma-separated), applied after the gates' (e.g. scheduling.k8s.io/v1alpha3=false: a 1.38 cluster with alpha APIs off)")
)

func TestServe(t *testing.T) {
	if *serveDir == "" {
		t.Skip("no -oracle.serve given")
	}
	gates, err := parseGates(*gatesFlag)
	if err != nil {
		t.Fatal(err)
	}
	featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, gates)
	if err := os.MkdirAll(*serveDir, 0o755); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	_, cfg, closeF := framework.StartTestServer(context.Background(), t, framework.TestServerSetup{
		// The invariant check scrapes metrics at teardown: a test-suite concern, not ours.
		DisableInvariantChecks: true,
		ModifyServerRunOptions: func(o *options.ServerRunOptions) {
			// Unlike startServer, admission stays as a real cluster has it (Priority resolves
			// spec.priority of pods and groups from their PriorityClass, TaintNodesByCondition
			// taints new nodes), but for the plugins named by the flag.
			o.Admission.GenericAdmission.DisablePlugins = splitList(*serveAdmissions)
			serveSchedulingAPIs(o)
			for _, kv := range splitList(*serveRuntimeCfg) {
				k, v, _ := strings.Cut(kv, "=")
				o.APIEnablement.RuntimeConfig[k] = v
			}
			// framework.StartTestServer already authorizes with Node,RBAC; add the users.
			if *serveTokens != "" {
				o.Authentication.TokenFile.TokenFile = *serveTokens
			}
			if *serveAuditLog != "" {
				o.Audit.PolicyFile = *serveAuditPol
				o.Audit.LogOptions.Path = *serveAuditLog
				o.Audit.LogOptions.BatchOptions.Mode = "blocking" // each request is in the log when it is answered
			}
		},
	})
	defer closeF()

	ca, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	info, err := discoveryVersion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeServeFiles(*serveDir, cfg.Host, u.Port(), cfg.BearerToken, ca, info, time.Since(start)); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "oracle: kube-apiserver %s serving at %s (ready in %.1fs)\n", info, cfg.Host, time.Since(start).Seconds())

	stop := make(chan string, 2)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop <- "stdin closed"
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	go func() { stop <- (<-sig).String() }()
	why := <-stop
	signal.Stop(sig)
	fmt.Fprintf(os.Stderr, "oracle: stopping kube-apiserver (%s)\n", why)
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// discoveryVersion is the server's /version gitVersion, as clients see it.
func discoveryVersion(cfg *restclient.Config) (string, error) {
	cs, err := clientset.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

// writeServeFiles writes what a client needs; server.json last (through a rename), so a reader
// that sees it sees the others complete.
func writeServeFiles(dir, host, port, token string, ca []byte, gitVersion string, took time.Duration) error {
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o644); err != nil {
		return err
	}
	kubeconfig := map[string]any{
		"apiVersion": "v1",
		"kind":       "Config",
		"clusters": []any{map[string]any{"name": "oracle", "cluster": map[string]any{
			"server": host, "certificate-authority-data": base64.StdEncoding.EncodeToString(ca)}}},
		"users":           []any{map[string]any{"name": "loopback", "user": map[string]any{"token": token}}},
		"contexts":        []any{map[string]any{"name": "oracle", "context": map[string]any{"cluster": "oracle", "user": "loopback"}}},
		"current-context": "oracle",
	}
	if err := writeJSON(filepath.Join(dir, "kubeconfig"), kubeconfig, 0o600); err != nil {
		return err
	}
	info := map[string]any{"url": host, "port": port, "gitVersion": gitVersion, "startSeconds": took.Seconds(), "pid": os.Getpid()}
	tmp := filepath.Join(dir, ".server.json.tmp")
	if err := writeJSON(tmp, info, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "server.json"))
}

func writeJSON(path string, v any, mode os.FileMode) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), mode)
}

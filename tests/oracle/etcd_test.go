package oracle

// An etcd for the test apiserver, started in this process from the etcd server module (no etcd
// binary needed). Upstream's integration framework uses an etcd already listening at
// KUBE_INTEGRATION_ETCD_URL; we start one there.

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startEtcd starts an embedded single-member etcd on free loopback ports, data in a temp dir.
// It returns the client URL and a stop function. Several oracles may start at once: a port
// taken between our probe and etcd's bind makes a try fail, and the next try picks new ports.
func startEtcd() (string, func(), error) {
	var lastErr error
	for try := 0; try < 5; try++ {
		u, stop, err := startEtcdOnce()
		if err == nil {
			return u, stop, nil
		}
		lastErr = err
	}
	return "", nil, lastErr
}

func startEtcdOnce() (string, func(), error) {
	dir, err := os.MkdirTemp("", "wap-oracle-etcd")
	if err != nil {
		return "", nil, err
	}
	cport, err := freePort()
	if err != nil {
		return "", nil, err
	}
	pport, err := freePort()
	if err != nil {
		return "", nil, err
	}
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", cport))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", pport))
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.Name = "oracle"
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = fmt.Sprintf("oracle=%s", pu.String())
	cfg.LogLevel = "fatal" // its shutdown "errors" (closed listeners) are noise here
	// The oracle's data is throw-away: no fsync (upstream's integration etcd does the same with
	// --unsafe-no-fsync).
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("embedded etcd did not become ready in 60s")
	}
	stop := func() {
		e.Close()
		os.RemoveAll(dir)
	}
	// It must serve on the port we will hand to the apiserver.
	conn, err := net.DialTimeout("tcp", cu.Host, 5*time.Second)
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("embedded etcd is not listening on %s: %w", cu.Host, err)
	}
	conn.Close()
	return cu.String(), stop, nil
}

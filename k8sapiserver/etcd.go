package k8sapiserver

// The embedded etcd: its run directory (0700, holding the unix socket no
// other local user reaches), its start, and what happens when it stops.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// makeRunDir makes the directory for etcd's socket: DataDir/run, mode 0700,
// so that only this user can connect (a unix socket is reached through its
// directory's permissions, whatever its own mode). A data directory too deep
// for a socket path, or whose path would need escaping in a URL, gets a
// private temporary directory instead, which Close removes.
func (cp *ControlPlane) makeRunDir() error {
	dir := filepath.Join(cp.dataDir, "run")
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if !socketPathOK(filepath.Join(dir, "etcd.sock")) {
		tmp, err := os.MkdirTemp("", "minisched-run-")
		if err != nil {
			return fmt.Errorf("creating a directory for etcd's socket: %w", err)
		}
		cp.runDir, cp.removeRunDir = tmp, true
		if !socketPathOK(filepath.Join(tmp, "etcd.sock")) {
			return fmt.Errorf("no short enough directory for etcd's socket: %s is too long", tmp)
		}
		return nil
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating the directory for etcd's socket: %w", err)
	}
	// A directory left by someone else, or a symlink to one, must not hold
	// the socket: refuse it rather than trust its permissions.
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("checking the directory for etcd's socket: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory: it must hold etcd's socket", dir)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("restricting the directory for etcd's socket: %w", err)
	}
	cp.runDir = dir
	return nil
}

// socketPathOK reports whether path fits in sun_path and reads the same in
// a unix:// URL: etcd and its client take the URL's path unescaped, and the
// client reads a colon in it as a port.
func socketPathOK(path string) bool {
	if len(path) > maxSocketPath || !filepath.IsAbs(path) {
		return false
	}
	for _, r := range path {
		ok := r == '/' || r == '.' || r == '-' || r == '_' || r == '+' ||
			('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !ok {
			return false
		}
	}
	return true
}

func (cp *ControlPlane) startEtcd(ctx context.Context) error {
	ec := embed.NewConfig()
	ec.Name = "minisched"
	ec.Dir = filepath.Join(cp.dataDir, "etcd")
	// Clients (the apiserver alone) reach etcd over a unix socket in the
	// 0700 run directory: a TCP port on loopback would let every local user
	// read and write the cluster, the apiserver's authentication bypassed.
	client := url.URL{Scheme: "unix", Path: filepath.Join(cp.runDir, "etcd.sock")}
	ec.ListenClientUrls = []url.URL{client}
	ec.AdvertiseClientUrls = []url.URL{client}
	// A single member has no peers to talk to, so it gets no peer listener
	// at all. (A unix socket would not do: etcd's peer listener takes the
	// URL's host alone as the socket's path, and an absolute path does not
	// survive the URL round trip of the initial cluster.) The advertised
	// peer URL only names the member; nothing listens there.
	ec.ListenPeerUrls = nil
	ec.AdvertisePeerUrls = []url.URL{{Scheme: "unix", Path: filepath.Join(cp.runDir, "etcd-peer.sock")}}
	ec.InitialCluster = ec.InitialClusterFromName(ec.Name)
	ec.ListenMetricsUrls = nil
	ec.ListenClientHttpUrls = nil
	ec.QuotaBackendBytes = cp.cfg.QuotaBackendBytes
	ec.AutoCompactionMode = embed.CompactorModePeriodic
	ec.AutoCompactionRetention = cp.cfg.CompactionRetention.String()
	// A temporary directory is gone on exit anyway: skip fsync, which makes
	// the apiserver's hundreds of bootstrap writes slow on some disks.
	ec.UnsafeNoFsync = cp.removeDir
	// One member elects itself: a short election timeout saves most of a
	// second at every start.
	ec.TickMs, ec.ElectionMs = 10, 100
	if !cp.cfg.EtcdLogs {
		ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		quietEtcdClients()
	}
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return fmt.Errorf("starting etcd: %w", err)
	}
	cp.etcd = e
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return fmt.Errorf("etcd failed while starting: %w", err)
	case <-ctx.Done():
		return fmt.Errorf("waiting for etcd: %w", ctx.Err())
	}
	cp.etcdURL = client.String()
	go cp.watchEtcd(e)
	return nil
}

// watchEtcd reports etcd stopping, or one of its listeners failing, unless
// Close asked for it.
func (cp *ControlPlane) watchEtcd(e *embed.Etcd) {
	select {
	case <-e.Server.StopNotify():
		cp.fail(errors.New("etcd stopped"))
	case err, ok := <-e.Err():
		if !ok || err == nil {
			err = errors.New("its listeners closed")
		}
		cp.fail(fmt.Errorf("etcd failed: %w", err))
	case <-cp.stopping:
	}
}

// stopEtcd closes etcd once: embed.Etcd.Close panics the second time.
func (cp *ControlPlane) stopEtcd() {
	cp.etcdStop.Do(func() {
		if cp.etcd != nil {
			cp.etcd.Close()
		}
	})
}

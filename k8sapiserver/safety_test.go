package k8sapiserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// tcpListeners returns the ports this process listens on over TCP, read
// from /proc: the sockets among its file descriptors that are in LISTEN.
func tcpListeners(t *testing.T) []int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, "socket:[") {
			mine[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	var ports []int
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(table)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !mine[fields[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			port, err := strconv.ParseInt(hexPort, 16, 32)
			if err != nil {
				t.Fatalf("%s: %q: %v", table, fields[1], err)
			}
			ports = append(ports, int(port))
		}
		f.Close()
	}
	return ports
}

func TestEtcdListensOnAUnixSocketOnly(t *testing.T) {
	before := tcpListeners(t)
	cp := start(t, Config{DataDir: t.TempDir()})
	defer cp.Close()

	// The only new TCP listener is the apiserver's.
	apiURL, err := url.Parse(cp.URL())
	if err != nil {
		t.Fatal(err)
	}
	apiPort, _ := strconv.Atoi(apiURL.Port())
	var added []int
	for _, p := range tcpListeners(t) {
		if !containsInt(before, p) {
			added = append(added, p)
		}
	}
	if len(added) != 1 || added[0] != apiPort {
		t.Errorf("new TCP listeners %v, want only the apiserver's port %d", added, apiPort)
	}

	// etcd is configured without any TCP address.
	ec := cp.etcd.Config()
	for _, u := range append(append(append(ec.ListenClientUrls, ec.ListenClientHttpUrls...), ec.ListenPeerUrls...), ec.ListenMetricsUrls...) {
		if u.Scheme != "unix" {
			t.Errorf("etcd listens on %s", u.String())
		}
	}
	if len(cp.etcd.Peers) != 0 {
		t.Errorf("etcd has %d peer listeners, want none", len(cp.etcd.Peers))
	}
	for _, l := range cp.etcd.Clients {
		if l.Addr().Network() != "unix" {
			t.Errorf("etcd client listener on %s %s", l.Addr().Network(), l.Addr())
		}
	}

	// Its socket lives in a directory only this user may enter.
	if !strings.HasPrefix(cp.EtcdURL(), "unix:///") {
		t.Fatalf("etcd URL %q, want unix:///...", cp.EtcdURL())
	}
	sock := strings.TrimPrefix(cp.EtcdURL(), "unix://")
	fi, err := os.Lstat(sock)
	if err != nil || fi.Mode().Type() != fs.ModeSocket {
		t.Fatalf("etcd socket %s: %v, mode %v", sock, err, fi.Mode())
	}
	dir, err := os.Stat(filepath.Dir(sock))
	if err != nil {
		t.Fatal(err)
	}
	if perm := dir.Mode().Perm(); perm != 0o700 {
		t.Errorf("socket directory mode %v, want 0700", perm)
	}
	if filepath.Dir(sock) != filepath.Join(cp.DataDir(), "run") {
		t.Errorf("socket %s, want it in the data directory's run/", sock)
	}

	// The apiserver stores through that socket.
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	if _, err := client.CoreV1().Nodes().Create(context.Background(), &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a node: %v", err)
	}
	etcd := etcdClient(t, cp)
	resp, err := etcd.Get(context.Background(), "/registry/minions/n")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the node in etcd over the socket: %v, %d keys", err, len(resp.Kvs))
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestSocketDirectory(t *testing.T) {
	tests := []struct {
		name    string
		dataDir func(t *testing.T) string
		// inData says the socket must be in DataDir/run, not in a
		// temporary directory of its own.
		inData bool
	}{
		{"plain data directory", func(t *testing.T) string { return t.TempDir() }, true},
		{"run directory left open by an earlier run", func(t *testing.T) string {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "run"), 0o755); err != nil {
				t.Fatal(err)
			}
			return dir
		}, true},
		{"data directory too deep for a socket path", func(t *testing.T) string {
			return filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
		}, false},
		{"data directory with a colon", func(t *testing.T) string { return filepath.Join(t.TempDir(), "a:b") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp := &ControlPlane{dataDir: tt.dataDir(t)}
			if err := os.MkdirAll(cp.dataDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := cp.makeRunDir(); err != nil {
				t.Fatalf("makeRunDir: %v", err)
			}
			if cp.removeRunDir {
				defer os.RemoveAll(cp.runDir)
			}
			if got := cp.runDir == filepath.Join(cp.dataDir, "run"); got != tt.inData {
				t.Errorf("run directory %s, in the data directory: %v, want %v", cp.runDir, got, tt.inData)
			}
			if cp.removeRunDir == tt.inData {
				t.Errorf("removeRunDir %v for %s", cp.removeRunDir, cp.runDir)
			}
			fi, err := os.Lstat(cp.runDir)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("run directory mode %v, want a 0700 directory", fi.Mode())
			}
			if !socketPathOK(filepath.Join(cp.runDir, "etcd.sock")) {
				t.Errorf("socket path %s unusable", filepath.Join(cp.runDir, "etcd.sock"))
			}
		})
	}

	t.Run("run is a symlink", func(t *testing.T) {
		dir, elsewhere := t.TempDir(), t.TempDir()
		if err := os.Symlink(elsewhere, filepath.Join(dir, "run")); err != nil {
			t.Fatal(err)
		}
		cp := &ControlPlane{dataDir: dir}
		if err := cp.makeRunDir(); err == nil {
			t.Errorf("makeRunDir accepted a symlink to %s", elsewhere)
		}
	})
}

// etcdClient connects to the control plane's etcd the way the apiserver
// does, over its socket.
func etcdClient(t *testing.T, cp *ControlPlane) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{cp.EtcdURL()}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestBoundsReachEtcdAndTheAPIServer(t *testing.T) {
	tests := []struct {
		name          string
		cfg           Config
		wantQuota     int64
		wantRetention time.Duration
		wantEventTTL  time.Duration
	}{
		{"defaults", Config{}, 2 << 30, 5 * time.Minute, 10 * time.Minute},
		{"set", Config{QuotaBackendBytes: 512 << 20, CompactionRetention: 3 * time.Minute, EventTTL: 7 * time.Minute}, 512 << 20, 3 * time.Minute, 7 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp := start(t, tt.cfg)
			defer cp.Close()
			if got := cp.Config(); got.QuotaBackendBytes != tt.wantQuota || got.CompactionRetention != tt.wantRetention || got.EventTTL != tt.wantEventTTL {
				t.Errorf("Config() = quota %d, retention %v, event TTL %v; want %d, %v, %v",
					got.QuotaBackendBytes, got.CompactionRetention, got.EventTTL, tt.wantQuota, tt.wantRetention, tt.wantEventTTL)
			}

			// etcd runs with them.
			sc := cp.etcd.Server.Cfg
			if sc.QuotaBackendBytes != tt.wantQuota {
				t.Errorf("etcd quota %d, want %d", sc.QuotaBackendBytes, tt.wantQuota)
			}
			if sc.AutoCompactionMode != "periodic" || sc.AutoCompactionRetention != tt.wantRetention {
				t.Errorf("etcd auto-compaction %s %v, want periodic %v", sc.AutoCompactionMode, sc.AutoCompactionRetention, tt.wantRetention)
			}
			etcd := etcdClient(t, cp)
			ctx := context.Background()
			status, err := etcd.Status(ctx, cp.EtcdURL())
			if err != nil {
				t.Fatalf("etcd status: %v", err)
			}
			if status.DbSizeQuota != tt.wantQuota {
				t.Errorf("etcd reports a quota of %d bytes, want %d", status.DbSizeQuota, tt.wantQuota)
			}

			// The apiserver stores an Event under a lease of the TTL (plus
			// the at most 5% by which it reuses leases).
			client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
			ev := &v1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: "ttl-probe", Namespace: "default"},
				InvolvedObject: v1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"},
				Reason:         "Probe", Message: "event TTL", Type: v1.EventTypeNormal,
			}
			if _, err := client.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
				t.Fatalf("creating an event: %v", err)
			}
			resp, err := etcd.Get(ctx, "/registry/events/default/ttl-probe")
			if err != nil || len(resp.Kvs) != 1 {
				t.Fatalf("the event in etcd: %v, %d keys", err, len(resp.Kvs))
			}
			if resp.Kvs[0].Lease == 0 {
				t.Fatal("the event has no lease")
			}
			ttl, err := etcd.TimeToLive(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
			if err != nil {
				t.Fatal(err)
			}
			granted := time.Duration(ttl.GrantedTTL) * time.Second
			if granted < tt.wantEventTTL || granted > tt.wantEventTTL+tt.wantEventTTL/20 {
				t.Errorf("event lease of %v, want %v (+5%%)", granted, tt.wantEventTTL)
			}
		})
	}
}

func TestErrReportsADyingComponent(t *testing.T) {
	tests := []struct {
		name string
		kill func(cp *ControlPlane)
		want string
	}{
		{"etcd closed underneath", (*ControlPlane).stopEtcd, "etcd"},
		{"apiserver stopped", func(cp *ControlPlane) { cp.cancel() }, "kube-apiserver stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp := start(t, Config{})
			defer cp.Close()
			if err := cp.Healthy(); err != nil {
				t.Fatalf("Healthy after Start: %v", err)
			}
			select {
			case err := <-cp.Err():
				t.Fatalf("Err fired before anything died: %v", err)
			default:
			}

			tt.kill(cp)
			var err error
			select {
			case err = <-cp.Err():
			case <-time.After(30 * time.Second): // a guard, not a wait: Err fires at once
				t.Fatal("Err did not report the dead component")
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Err gave %v, want it to say %q", err, tt.want)
			}
			if h := cp.Healthy(); h == nil || h.Error() != err.Error() {
				t.Errorf("Healthy() = %v, want %v", h, err)
			}
			// Every later receiver wakes too.
			if _, ok := <-cp.Err(); ok {
				t.Error("Err still open after reporting")
			}
			select {
			case <-cp.Ready():
			default:
				t.Error("Ready reopened")
			}
		})
	}
}

func TestCloseIsNotAFailure(t *testing.T) {
	cp := start(t, Config{})
	if err := cp.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err, ok := <-cp.Err():
		t.Errorf("Err after Close: %v, %v", err, ok)
	default:
	}
	if err := cp.Healthy(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Healthy after Close: %v, want closed", err)
	}
}

func TestHealthyReportsAnEtcdAlarm(t *testing.T) {
	cp := start(t, Config{})
	defer cp.Close()
	alarm := func(action pb.AlarmRequest_AlarmAction) {
		t.Helper()
		_, err := cp.etcd.Server.Alarm(context.Background(), &pb.AlarmRequest{
			Action: action, MemberID: uint64(cp.etcd.Server.MemberID()), Alarm: pb.AlarmType_NOSPACE,
		})
		if err != nil {
			t.Fatalf("alarm %v: %v", action, err)
		}
	}
	alarm(pb.AlarmRequest_ACTIVATE)
	if err := cp.Healthy(); err == nil || !strings.Contains(err.Error(), "NOSPACE") || !strings.Contains(err.Error(), fmt.Sprint(int64(DefaultQuotaBackendBytes))) {
		t.Errorf("Healthy with NOSPACE raised: %v", err)
	}
	alarm(pb.AlarmRequest_DEACTIVATE)
	if err := cp.Healthy(); err != nil {
		t.Errorf("Healthy once the alarm is gone: %v", err)
	}
}

package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"minisched/recording"
	"minisched/server"
	"minisched/web"
)

// maxReplay bounds a recording replay serves, unpacked: the browser holds
// all of it.
const maxReplay = 1 << 30

// replay is `minisched replay FILE`: the dashboard and one recording, with
// no control plane, so it is up at once.
func replay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := newFlagSet("minisched replay", stderr)
	// A replay changes nothing and holds no token: it listens where told,
	// loopback by default, as the recording holds a cluster's names.
	addr := fset.String("addr", "127.0.0.1:8080", "where the dashboard listens (loopback unless told otherwise)")
	origins := fset.String("allowed-origins", "", "comma-separated origins besides the server's own that may use it")
	webDir := fset.String("web-dir", "", "serve the dashboard from this directory instead of the embedded files")
	fset.Usage = func() {
		fmt.Fprintf(stderr, "Usage: minisched replay [flags] FILE\n\nServes the dashboard replaying FILE, a recording (GET /api/v1/recording,\nor scenario run --record), with no cluster behind it.\n\nFlags:\n")
		fset.PrintDefaults()
	}
	if err := parse(fset, args, stderr); err != nil {
		return err
	}
	if fset.NArg() != 1 {
		fset.Usage()
		return &ExitError{Code: 2}
	}
	path := fset.Arg(0)
	if info, err := os.Stat(path); err == nil && info.Size() > maxReplay {
		return fmt.Errorf("%s: %d bytes; a recording replays up to %d", path, info.Size(), int64(maxReplay))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the recording: %w", err)
	}
	rec, err := recording.Read(ctx, bytes.NewReader(data), maxReplay)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	webFS := web.FS()
	if *webDir != "" {
		webFS = os.DirFS(*webDir)
	}
	if _, err := fs.Stat(webFS, "index.html"); err != nil {
		return fmt.Errorf("the dashboard's files: %w", err)
	}
	srv := server.NewReplay(server.ReplayOptions{Web: webFS, Recording: data, Header: rec.Header, Name: filepath.Base(path),
		Addr: *addr, AllowedOrigins: splitList(*origins)})
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", *addr, err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	fmt.Fprintf(stdout, "minisched replay of %s (%d events): http://%s/\n", filepath.Base(path), len(rec.Events), l.Addr())
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

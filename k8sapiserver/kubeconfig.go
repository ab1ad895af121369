package k8sapiserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteKubeconfig writes a kubeconfig that lets kubectl (or a second minisched
// in attach mode) reach the apiserver with cfg's credentials.
//
// The credential is system:masters, so the file is written as kubeadm writes
// its admin.conf: to a new 0600 file in the same directory, renamed into
// place. A file already at path never keeps its mode or owner (another user
// could have made it world-readable beforehand), a symlink there is refused
// rather than followed, and so is a file that belongs to another user.
func WriteKubeconfig(path string, cfg *rest.Config) error {
	const name = "minisched"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
		TLSServerName:            cfg.ServerName,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		Token:                 cfg.BearerToken,
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	content, err := clientcmd.Write(*kc)
	if err != nil {
		return fmt.Errorf("encoding kubeconfig: %w", err)
	}
	if err := checkReplaceable(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating kubeconfig directory: %w", err)
	}
	return writeFileAtomic(path, content)
}

// checkReplaceable refuses a path that is a symlink, not a regular file, or
// owned by another user. A path that does not exist yet is fine.
func checkReplaceable(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("kubeconfig %s is a symlink: refusing to follow it with an admin credential; remove it or choose another --kubeconfig-out", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("kubeconfig %s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("kubeconfig %s belongs to another user (uid %d): refusing to write an admin credential there", path, st.Uid)
	}
	return nil
}

// writeFileAtomic writes content to a new 0600 file beside path, then renames
// it over path, so that no reader ever sees a partial file or a wider mode.
func writeFileAtomic(path string, content []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	// CreateTemp makes the file 0600 already; Chmod says so against any umask.
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	if _, err := tmp.Write(content); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}

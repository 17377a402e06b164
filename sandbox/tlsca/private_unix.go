//go:build unix

package tlsca

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkPrivate refuses a directory other users could write in.
func checkPrivate(dir string, fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("TLS directory %s is owned by uid %d, not by this user (uid %d): its owner could replace the CA clients trust; use a directory of your own",
			dir, st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("TLS directory %s is writable by group or others (mode %04o): they could replace the CA clients trust; run chmod go-w on it or use another directory",
			dir, perm)
	}
	return nil
}

// checkKeyFile refuses a CA key other users could read: whoever has it can
// impersonate any host to a machine that trusts the CA.
func checkKeyFile(path string, fi fs.FileInfo) error {
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("CA key %s is readable or writable by group or others (mode %04o): run chmod 600 on it, or remove it and %s to make a new CA", path, perm, CAFile)
	}
	return nil
}

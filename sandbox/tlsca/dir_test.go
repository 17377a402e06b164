package tlsca_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/tlsca"
)

func newAuthority(t *testing.T) *tlsca.Authority {
	t.Helper()
	ca, err := tlsca.New(nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// TestPrivateDir: every call gives a new directory that only this user can
// enter, and the CA can be written there.
func TestPrivateDir(t *testing.T) {
	var dirs []string
	for range 2 {
		dir, err := tlsca.PrivateDir()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		fi, err := os.Lstat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("private directory %s: mode %v, want a directory with 0700", dir, fi.Mode())
		}
		if _, err := newAuthority(t).WriteCA(dir); err != nil {
			t.Errorf("write the CA into the private directory: %v", err)
		}
		dirs = append(dirs, dir)
	}
	if dirs[0] == dirs[1] {
		t.Errorf("two calls gave the same directory %s", dirs[0])
	}
}

// TestWriteCARefusesDirectoriesOthersControl: a symbolic link, a directory
// group or others can write in, one owned by another user and a file are
// refused with a message naming the directory and the reason, and nothing
// is written through them.
func TestWriteCARefusesDirectoriesOthersControl(t *testing.T) {
	base := t.TempDir()
	target := filepath.Join(base, "target")
	mkdir(t, target, 0o700)
	link := filepath.Join(base, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	groupWritable := filepath.Join(base, "group")
	mkdir(t, groupWritable, 0o770)
	worldWritable := filepath.Join(base, "world")
	mkdir(t, worldWritable, 0o1777)
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, dir, want string }{
		{"symbolic link", link, "is a symbolic link"},
		{"group-writable", groupWritable, "writable by group or others (mode 0770)"},
		{"world-writable", worldWritable, "writable by group or others (mode 0777)"},
		{"a file", file, "not a directory"},
	}
	if other := otherUsersDir(t, base); other != "" {
		tests = append(tests, struct{ name, dir, want string }{"another user's", other, "is owned by uid"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, err := newAuthority(t).WriteCA(tc.dir)
			if err == nil {
				t.Fatalf("wrote %s", path)
			}
			if !strings.Contains(err.Error(), tc.dir) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want one naming %s and saying %q", err, tc.dir, tc.want)
			}
		})
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("the symbolic link was followed: %s holds %v", target, entries)
	}
}

// otherUsersDir returns a directory owned by another user: one made and
// given away when running as root, else the file system root (owned by
// root). "" when neither applies.
func otherUsersDir(t *testing.T, base string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if fi, err := os.Stat("/"); err == nil && fi.Mode().Perm()&0o022 == 0 {
			return "/"
		}
		return ""
	}
	dir := filepath.Join(base, "nobody")
	mkdir(t, dir, 0o700)
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestWriteCAReplacesAPlantedSymlink: a ca.pem that is a symbolic link to
// another file is replaced by the certificate, and the file it pointed at
// is left as it was.
func TestWriteCAReplacesAPlantedSymlink(t *testing.T) {
	dir, victim := t.TempDir(), filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("untouched"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, tlsca.CAFile)); err != nil {
		t.Fatal(err)
	}
	ca := newAuthority(t)
	path, err := ca.WriteCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("ca.pem after writing: %v %v, want a regular file", fi, err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, ca.CertPEM) {
		t.Errorf("ca.pem holds %q, not the CA certificate", got)
	}
	if got, _ := os.ReadFile(victim); string(got) != "untouched" {
		t.Errorf("the symlink's target was written: %q", got)
	}
}

// mkdir makes dir with exactly perm, whatever the umask.
func mkdir(t *testing.T, dir string, perm os.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, perm); err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeRootfs regenerates image/rootfs.tar from rootfsEntries:
//
//	go test ./cmd/referrals-sandbox -run TestRootfsTar -write-rootfs
var writeRootfs = flag.Bool("write-rootfs", false, "rewrite image/rootfs.tar from rootfsEntries")

// runtimeUID is the image's numeric USER (distroless's "nonroot").
const runtimeUID = 65532

// rootfsEntries is what the scratch image needs besides the binary: a /tmp
// every user may write to (sticky, like any /tmp) and a /data the runtime
// user owns.
var rootfsEntries = []tar.Header{
	{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777, Uid: 0, Gid: 0},
	{Name: "data/", Typeflag: tar.TypeDir, Mode: 0o755, Uid: runtimeUID, Gid: runtimeUID},
}

// buildRootfs is rootfsEntries as a reproducible tar (fixed times, no
// user names).
func buildRootfs(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range rootfsEntries {
		h.ModTime = time.Unix(0, 0)
		h.Format = tar.FormatUSTAR
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestRootfsTar checks the committed image/rootfs.tar, which the
// Dockerfile ADDs, against rootfsEntries, and the Dockerfile's USER against
// the owner of /data.
func TestRootfsTar(t *testing.T) {
	path := filepath.Join("..", "..", "image", "rootfs.tar")
	if *writeRootfs {
		if err := os.WriteFile(path, buildRootfs(t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr := tar.NewReader(bytes.NewReader(repoFile(t, "image/rootfs.tar")))
	var got []tar.Header
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("image/rootfs.tar: %v", err)
		}
		got = append(got, *h)
	}
	if len(got) != len(rootfsEntries) {
		t.Fatalf("image/rootfs.tar has %d entries, want %d (run with -write-rootfs)", len(got), len(rootfsEntries))
	}
	for i, want := range rootfsEntries {
		g := got[i]
		if g.Name != want.Name || g.Typeflag != want.Typeflag || g.Mode != want.Mode || g.Uid != want.Uid || g.Gid != want.Gid {
			t.Errorf("entry %d: %s type %c mode %o owner %d:%d, want %s type %c mode %o owner %d:%d",
				i, g.Name, g.Typeflag, g.Mode, g.Uid, g.Gid, want.Name, want.Typeflag, want.Mode, want.Uid, want.Gid)
		}
	}
	d := parseDockerfile(t, repoFile(t, "Dockerfile"))
	if user := d.final(t, "USER"); user != fmt.Sprintf("%d:%d", runtimeUID, runtimeUID) {
		t.Errorf("USER %q, want %d:%d, the owner of /data", user, runtimeUID, runtimeUID)
	}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// peerPackage and peerVersion are the peer whose token endpoint bench/run
// compares the sandbox's with: oauth2-mock-server on Node, signing RS256
// with OpenSSL.
const (
	peerPackage = "oauth2-mock-server"
	peerVersion = "9.3.0"
)

// errNoPeer marks a peer figure left out because --peer names no usable
// install; the run goes on without it.
var errNoPeer = errors.New("no peer")

// peerEntry finds the peer's entry point under dir, where `npm install
// oauth2-mock-server@9.3.0` was run, and checks node is installed. It
// never installs anything: CI runs without the network.
func peerEntry(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%w: --peer not given", errNoPeer)
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "", fmt.Errorf("%w: node is not installed", errNoPeer)
	}
	pkg := filepath.Join(dir, "node_modules", peerPackage)
	b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		return "", fmt.Errorf("%w: %s is not installed in %s (npm install %s@%s): %v", errNoPeer, peerPackage, dir, peerPackage, peerVersion, err)
	}
	var meta struct{ Version, Main string }
	if err := json.Unmarshal(b, &meta); err != nil {
		return "", fmt.Errorf("%s/package.json: %w", pkg, err)
	}
	if meta.Version != peerVersion {
		return "", fmt.Errorf("%w: %s %s is installed in %s; the figure is of %s", errNoPeer, peerPackage, meta.Version, dir, peerVersion)
	}
	return filepath.Join(pkg, meta.Main), nil
}

// peerLoad starts the peer and returns its token endpoint as a load of the
// same rounds as the sandbox's, with the same form-encoded request.
func (r *runner) peerLoad(ctx context.Context) (load, error) {
	entry, err := peerEntry(r.cfg.peer)
	if err != nil {
		return load{}, err
	}
	script, err := r.embedded(peerScripts, "peer/oauth2-mock-server.mjs")
	if err != nil {
		return load{}, err
	}
	lua, err := r.script("token.lua")
	if err != nil {
		return load{}, err
	}
	p, url, err := r.ps.startPrinting(ctx, exec.CommandContext(ctx, "node", script, entry), "the peer")
	if err != nil {
		return load{}, err
	}
	return load{key: keyTokenPeer, pid: p.cmd.Process.Pid, job: fixedJob(wrkJob{url: url + "/token", script: lua})}, nil
}

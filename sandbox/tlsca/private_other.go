//go:build !unix

package tlsca

import "io/fs"

// checkPrivate accepts any directory where files have no Unix owner and
// mode bits to check (Windows keeps access rights in ACLs).
func checkPrivate(string, fs.FileInfo) error { return nil }

// checkKeyFile accepts any key file where files have no Unix mode bits.
func checkKeyFile(string, fs.FileInfo) error { return nil }

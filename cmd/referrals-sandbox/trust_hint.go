package main

import (
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// printTrust tells, on stdout beside the credentials, where HTTPS answers,
// which CA file signs its certificate, and how each language's libraries
// are told to trust it: MSAL refuses http:// authorities, and each
// runtime reads trust from its own place.
func printTrust(w io.Writer, in *sandbox.Instance, addr *net.TCPAddr, publicURL string) {
	base := strings.TrimRight(publicURL, "/")
	if base == "" {
		base = "https://" + advertisedHost(addr)
	}
	if !strings.HasPrefix(base, "https://") {
		base = "https://" + strings.TrimPrefix(base, "http://")
	}
	fmt.Fprintf(w, "\nHTTPS (what MSAL needs): authority %s\n", in.Provider.AuthURL(base))
	if !in.HTTPSOnly {
		fmt.Fprintln(w, "  plain HTTP answers on the same port too.")
	}
	fmt.Fprintf(w, "  Its certificate is signed by the local CA %s\n", in.CAPath)
	fmt.Fprint(w, trustIntro(in)+trustSettings(in.CAPath))
}

// trustIntro says how to trust the CA of in: once per machine when it is
// kept across starts, per process when --tls makes a new one each start.
func trustIntro(in *sandbox.Instance) string {
	switch {
	case in.HTTPSOnly:
		return "  A new CA every start (--tls); trust it per process:\n"
	case in.CACreated:
		return "  This start made it: trust it once per machine with\n    referrals-sandbox trust        (system and NSS stores, Java's with JAVA_HOME set; asks for sudo)\n  or per process:\n"
	}
	return "  It is kept across starts; if this machine does not trust it yet:\n    referrals-sandbox trust        (system and NSS stores, Java's with JAVA_HOME set; asks for sudo)\n  or per process:\n"
}

// trustSettings lists, per language, how a process trusts caFile.
func trustSettings(caFile string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "    Python (MSAL, requests):  REQUESTS_CA_BUNDLE=%s\n", caFile)
	fmt.Fprintf(&b, "    Node (msal-node):         NODE_EXTRA_CA_CERTS=%s\n", caFile)
	fmt.Fprintf(&b, "    Go, curl, OpenSSL:        SSL_CERT_FILE=%s\n", caFile)
	fmt.Fprintf(&b, "    .NET:                     SSL_CERT_FILE=%s on Linux; Windows: Import-Certificate -FilePath %s -CertStoreLocation Cert:\\CurrentUser\\Root\n", caFile, caFile)
	fmt.Fprintf(&b, "    Java:                     keytool -importcert -cacerts -storepass changeit -noprompt -alias referrals-sandbox -file %s\n", caFile)
	return b.String()
}

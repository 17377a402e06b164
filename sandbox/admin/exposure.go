package admin

import (
	"fmt"
	"net"
)

// ExposureWarning returns the warning serve logs at start when the
// admin API is open to more than this machine: listening on addr, a
// non-loopback (or wildcard) address, without an admin token. It returns ""
// when only local processes can reach the admin API, or a token guards it.
func ExposureWarning(addr net.Addr, adminToken string) string {
	if adminToken != "" {
		return ""
	}
	where := "on " + addr.String() + ", a non-loopback address"
	if tcp, ok := addr.(*net.TCPAddr); ok {
		switch {
		case tcp.IP.IsLoopback():
			return ""
		case tcp.IP == nil || tcp.IP.IsUnspecified():
			// Go shows 0.0.0.0 as [::]; say what it means instead.
			where = fmt.Sprintf("on every network interface (port %d)", tcp.Port)
		}
	}
	return "the admin API is open: listening " + where + " without --admin-token, " +
		"so anyone who can reach this port (other machines, other containers, whoever a published port lets in) " +
		"can reset the sandbox, switch failure scenarios, move the clock and read every partner's records; " +
		"set --admin-token (SANDBOX_ADMIN_TOKEN) or listen on 127.0.0.1"
}

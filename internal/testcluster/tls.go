package testcluster

import "crypto/tls"

// insecureTLS is used only to probe the health endpoints of the local
// controller-manager and scheduler, whose certificates are self-signed.
func insecureTLS() *tls.Config {
	return &tls.Config{InsecureSkipVerify: true} //nolint:gosec // loopback health probe of a component we started
}

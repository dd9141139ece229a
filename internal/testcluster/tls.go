package testcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
)

// waitOwnCert waits until p has written its self-signed serving
// certificate to certFile (it does before it listens) and returns a TLS
// configuration that trusts only that certificate: a health probe must not
// be answered by another cluster's component that holds the same port.
func waitOwnCert(ctx context.Context, p *process, certFile string) (*tls.Config, error) {
	pool := x509.NewCertPool()
	err := poll(ctx, p, func() (bool, error) {
		pem, err := os.ReadFile(certFile)
		// A file still being written parses as no certificate yet.
		return err == nil && pool.AppendCertsFromPEM(pem), nil
	}, certFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

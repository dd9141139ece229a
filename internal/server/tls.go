package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// certificate loads the configured certificate or generates a self-signed
// one, as argocd-server does when it has no argocd-server-tls Secret.
func (s *Server) certificate() (tls.Certificate, error) {
	if s.Options.TLSCertFile != "" || s.Options.TLSKeyFile != "" {
		cert, err := tls.LoadX509KeyPair(s.Options.TLSCertFile, s.Options.TLSKeyFile)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("loading the TLS certificate: %w", err)
		}
		return cert, nil
	}
	return selfSignedCertificate(s.now())
}

// selfSignedCertificate makes an ECDSA P-256 certificate valid for a year
// for localhost, the loopback addresses, the host name and argocd-server.
func selfSignedCertificate(now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	names := []string{"localhost", "argocd-server", "skiff-server"}
	if host, err := os.Hostname(); err == nil && host != "" {
		names = append(names, host)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"Skiff"}, CommonName: "skiff-server"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              names,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

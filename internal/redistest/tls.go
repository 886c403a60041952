package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"time"
)

// WithTLS makes the server speak TLS only (tls-port, no plain port) with a
// fresh self-signed certificate for 127.0.0.1; [Server.URL] then says
// rediss:// and [Server.RootCAs] trusts the certificate.
func WithTLS() Option {
	return func(s *Server) { s.tls = &tls.Config{ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12} }
}

// RootCAs returns a pool trusting the server's certificate (with [WithTLS]).
func (s *Server) RootCAs() *x509.CertPool { return s.tls.RootCAs }

// makeCert writes a self-signed certificate and key for 127.0.0.1 into the
// server's directory.
func (s *Server) makeCert() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "redistest"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	s.tls.RootCAs = x509.NewCertPool()
	s.tls.RootCAs.AppendCertsFromPEM(certPEM)
	return errors.Join(os.WriteFile(s.file("cert.pem"), certPEM, 0o600),
		os.WriteFile(s.file("key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
}

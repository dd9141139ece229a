package server

import (
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// A client that opened a connection and never finished its request must
// not turn a stop of the server into an error: after the grace period the
// server closes what is left.
func TestStopIsNotHeldByAnUnfinishedRequest(t *testing.T) {
	read := make(chan struct{})
	h := startServerWith(t, Options{Insecure: true}, func(s *Server) {
		s.Options.Listener = &readListener{Listener: s.Options.Listener, read: read}
	})
	u, err := url.Parse(h.url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /api/version HTTP/1.1\r\nHost: x\r\n")); err != nil { // no blank line: headers never end
		t.Fatal(err)
	}
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not read the partial request within 10 s")
	}
	h.stop() // reports the server's error, if any
}

// readListener closes read when the server first reads bytes from a
// connection it accepted.
type readListener struct {
	net.Listener
	read chan struct{}
	once sync.Once
}

func (l *readListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &readConn{Conn: conn, read: func() { l.once.Do(func() { close(l.read) }) }}, nil
}

type readConn struct {
	net.Conn
	read func()
}

func (c *readConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.read()
	}
	return n, err
}

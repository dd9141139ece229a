package server

import (
	"net"
	"net/url"
	"testing"
	"time"
)

// A client that opened a connection and never finished its request must
// not turn a stop of the server into an error: after the grace period the
// server closes what is left.
func TestStopIsNotHeldByAnUnfinishedRequest(t *testing.T) {
	h := startServerWith(t, Options{Insecure: true})
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
	time.Sleep(100 * time.Millisecond) // the server has read the partial request
	h.stop()                           // reports the server's error, if any
}

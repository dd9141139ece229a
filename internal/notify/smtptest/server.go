// Package smtptest is a minimal SMTP server on 127.0.0.1 for tests: it
// accepts every message (no TLS, AUTH PLAIN accepted) and records it.
package smtptest

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
)

// Message is one received mail.
type Message struct {
	From string
	To   []string
	Data string
}

// Server records the messages it receives.
type Server struct {
	Addr     string
	mu       sync.Mutex
	messages []Message
	ln       net.Listener
	wg       sync.WaitGroup
}

// Start listens on 127.0.0.1 until the test ends.
func Start(t *testing.T) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: ln.Addr().String(), ln: ln}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

// Messages returns a copy of what was received so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer conn.Close()
			s.session(conn)
		}()
	}
}

func (s *Server) session(conn net.Conn) {
	r := bufio.NewReader(conn)
	reply := func(line string) { _, _ = conn.Write([]byte(line + "\r\n")) }
	reply("220 smtptest")
	var msg Message
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			reply("250-smtptest")
			reply("250 AUTH PLAIN")
		case strings.HasPrefix(cmd, "AUTH"):
			reply("235 ok")
		case strings.HasPrefix(cmd, "MAIL FROM:"):
			msg = Message{From: strings.Trim(strings.TrimSpace(line)[10:], "<>")}
			reply("250 ok")
		case strings.HasPrefix(cmd, "RCPT TO:"):
			msg.To = append(msg.To, strings.Trim(strings.TrimSpace(line)[8:], "<>"))
			reply("250 ok")
		case cmd == "DATA":
			reply("354 go ahead")
			var data strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" || l == ".\n" {
					break
				}
				data.WriteString(strings.TrimPrefix(l, "."))
			}
			msg.Data = data.String()
			s.mu.Lock()
			s.messages = append(s.messages, msg)
			s.mu.Unlock()
			reply("250 queued")
		case cmd == "QUIT":
			reply("221 bye")
			return
		default:
			reply("250 ok")
		}
	}
}

package service

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/smtp"
	"strconv"
	"strings"
	"time"

	"github.com/skiffcd/skiff/internal/notify"
)

type emailSettings struct {
	Host     string `json:"host"`
	Port     port   `json:"port,omitempty"`
	From     string `json:"from"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// TLS connects with implicit TLS (port 465); otherwise STARTTLS is used
	// whenever the server offers it.
	TLS                bool `json:"tls,omitempty"`
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
	HTML               bool `json:"html,omitempty"`
}

type email struct {
	settings emailSettings
}

func newEmail(cfg notify.ServiceConfig) (*email, error) {
	var s emailSettings
	if err := decode(cfg.Settings, &s); err != nil {
		return nil, err
	}
	if s.Host == "" || s.From == "" {
		return nil, fmt.Errorf("host and from are required")
	}
	if s.Port == 0 {
		s.Port = 587
	}
	if s.Port == 465 {
		s.TLS = true
	}
	return &email{settings: s}, nil
}

func (e *email) Send(ctx context.Context, n notify.Notification, to string) error {
	s := e.settings
	addr := net.JoinHostPort(s.Host, strconv.Itoa(int(s.Port)))
	tlsConfig := &tls.Config{ServerName: s.Host, InsecureSkipVerify: s.InsecureSkipVerify} //nolint:gosec // opted into by the user's service setting
	var conn net.Conn
	var err error
	dialer := &net.Dialer{}
	if s.TLS {
		conn, err = (&tls.Dialer{NetDialer: dialer, Config: tlsConfig}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = dialer.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", addr, err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	c, err := smtp.NewClient(conn, s.Host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("smtp greeting: %w", err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok && !s.TLS {
		if err := c.StartTLS(tlsConfig); err != nil {
			return fmt.Errorf("starttls: %w", err)
		}
	}
	if s.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.Username, s.Password, s.Host)); err != nil {
			return fmt.Errorf("smtp auth: %w", err)
		}
	}
	if err := c.Mail(s.From); err != nil {
		return fmt.Errorf("smtp MAIL: %w", err)
	}
	for _, rcpt := range strings.Split(to, ",") {
		if err := c.Rcpt(strings.TrimSpace(rcpt)); err != nil {
			return fmt.Errorf("smtp RCPT: %w", err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("smtp DATA: %w", err)
	}
	if _, err := w.Write(e.message(n, to)); err != nil {
		return fmt.Errorf("smtp DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtp DATA: %w", err)
	}
	return c.Quit()
}

func (e *email) message(n notify.Notification, to string) []byte {
	subject := n.Title
	if n.Email != nil && n.Email.Subject != "" {
		subject = n.Email.Subject
	}
	contentType := "text/plain"
	if e.settings.HTML {
		contentType = "text/html"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMIME-Version: 1.0\r\nContent-Type: %s; charset=UTF-8\r\n\r\n",
		e.settings.From, to, oneLine(subject), time.Now().Format(time.RFC1123Z), contentType)
	b.WriteString(strings.ReplaceAll(n.Message, "\n", "\r\n"))
	return []byte(b.String())
}

// oneLine keeps a header value from injecting further headers.
func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

// port accepts a number or a string: a value from a $key reference is a string.
type port int

func (p *port) UnmarshalJSON(data []byte) error {
	n, err := strconv.Atoi(strings.Trim(string(data), `"`))
	if err != nil {
		return fmt.Errorf("port %s is not a number", data)
	}
	*p = port(n)
	return nil
}

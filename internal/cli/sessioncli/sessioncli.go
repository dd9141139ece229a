// Package sessioncli is the client side of `skiff login`, `skiff logout`
// and `skiff account update-password`: it talks to the API server's session
// and account endpoints and keeps the session in a small config file, as
// the argocd CLI keeps its own.
package sessioncli

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Config is what `skiff login` remembers: one server and its session.
type Config struct {
	Server string `json:"server"`
	Token  string `json:"token,omitempty"`
	// Insecure skips the TLS certificate check (a self-signed server).
	Insecure bool `json:"insecure,omitempty"`
	// PlainText talks HTTP, to a server run with --insecure.
	PlainText bool `json:"plainText,omitempty"`
}

// DefaultConfigPath is $XDG_CONFIG_HOME/skiff/config (~/.config/skiff/config).
func DefaultConfigPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the config directory: %w", err)
	}
	return filepath.Join(dir, "skiff", "config"), nil
}

// LoadConfig reads the config file; a missing file is an empty Config.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	cfg := &Config{}
	if err := yaml.UnmarshalStrict(data, cfg); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return cfg, nil
}

// Save writes the config file, readable by its owner only: it holds a
// session token.
func (c *Config) Save(path string) error {
	data, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// BaseURL is the server's URL: the scheme from PlainText unless the
// server was given with one.
func (c *Config) BaseURL() string {
	s := strings.TrimRight(c.Server, "/")
	if strings.Contains(s, "://") {
		return s
	}
	if c.PlainText {
		return "http://" + s
	}
	return "https://" + s
}

// Client calls the API server of a Config.
type Client struct {
	Config *Config
	HTTP   *http.Client
}

// NewClient returns a Client with a 30 s timeout, skipping the certificate
// check only when the Config says so.
func NewClient(cfg *Config) *Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.Insecure {
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with --insecure-skip-tls-verify
	}
	return &Client{Config: cfg, HTTP: &http.Client{Timeout: 30 * time.Second, Transport: transport}}
}

// APIError is an answer of the server other than 2xx: its status and
// the message of its JSON error body ({"error", "code"}), when it had one.
type APIError struct {
	Server       string
	Method, Path string
	StatusCode   int
	Status       string
	// Message is the server's "error"; empty when the body had none.
	Message string
}

func (e *APIError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("%s: %s (%d)", e.Server, e.Message, e.StatusCode)
	}
	return fmt.Sprintf("%s: %s %s: %s", e.Server, e.Method, e.Path, e.Status)
}

// maxAnswer bounds an answer: an application list or its diffs can be large.
const maxAnswer = 64 << 20

// Call sends body (nil for none) as JSON with the session's token and
// decodes the answer into into (nil ignores it); an answer other than 2xx
// is an *APIError.
func (c *Client) Call(ctx context.Context, method, path string, body, into any) error {
	resp, err := c.send(ctx, c.HTTP, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if into != nil {
		if err := json.Unmarshal(data, into); err != nil {
			return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
		}
	}
	return nil
}

// Stream GETs path and returns the open answer, for a stream of events:
// unlike Call, no time limit applies but ctx's. The caller closes the body.
func (c *Client) Stream(ctx context.Context, path string) (*http.Response, error) {
	streaming := *c.HTTP
	streaming.Timeout = 0
	return c.send(ctx, &streaming, http.MethodGet, path, nil)
}

// send sends body (nil for none) as JSON with the session's token; an
// answer other than 2xx is an *APIError.
func (c *Client) send(ctx context.Context, hc *http.Client, method, path string, body any) (*http.Response, error) {
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Config.BaseURL()+path, reader)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Config.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Config.Token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	apiErr := &APIError{Server: c.Config.Server, Method: method, Path: path, StatusCode: resp.StatusCode, Status: resp.Status}
	var e struct {
		Error string `json:"error"`
	}
	if data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20)); err == nil && json.Unmarshal(data, &e) == nil {
		apiErr.Message = e.Error
	}
	return nil, apiErr
}

// Login opens a session and keeps its token in the Config.
func (c *Client) Login(ctx context.Context, username, password string) error {
	c.Config.Token = ""
	var out struct {
		Token string `json:"token"`
	}
	if err := c.Call(ctx, http.MethodPost, "/api/v1/session", map[string]string{"username": username, "password": password}, &out); err != nil {
		return err
	}
	if out.Token == "" {
		return fmt.Errorf("%s: the login answer has no token", c.Config.Server)
	}
	c.Config.Token = out.Token
	return nil
}

// Logout ends the session on the server and forgets its token.
func (c *Client) Logout(ctx context.Context) error {
	if c.Config.Token == "" {
		return nil
	}
	err := c.Call(ctx, http.MethodDelete, "/api/v1/session", nil, nil)
	c.Config.Token = ""
	return err
}

// UserInfo returns the name of the session's user.
func (c *Client) UserInfo(ctx context.Context) (string, error) {
	var out struct {
		LoggedIn bool   `json:"loggedIn"`
		Username string `json:"username"`
	}
	if err := c.Call(ctx, http.MethodGet, "/api/v1/session/userinfo", nil, &out); err != nil {
		return "", err
	}
	return out.Username, nil
}

// UpdatePassword changes the session user's password and logs in again
// with the new one: the server ends every session issued before the change.
func (c *Client) UpdatePassword(ctx context.Context, current, next string) error {
	user, err := c.UserInfo(ctx)
	if err != nil {
		return err
	}
	body := map[string]string{"currentPassword": current, "newPassword": next}
	if err := c.Call(ctx, http.MethodPut, "/api/v1/account/password", body, nil); err != nil {
		return err
	}
	return c.Login(ctx, user, next)
}

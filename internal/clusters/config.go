package clusters

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Config is Argo CD's ClusterConfig, the `config` key of a cluster Secret.
// Byte fields are base64 in JSON, as Argo CD writes them.
type Config struct {
	Username        string          `json:"username,omitempty"`
	Password        string          `json:"password,omitempty"`
	BearerToken     string          `json:"bearerToken,omitempty"`
	TLSClientConfig TLSClientConfig `json:"tlsClientConfig"`
	// AWSAuthConfig is kept so a write gives it back, but not acted on:
	// RESTConfig refuses it (use execProviderConfig with the same command).
	AWSAuthConfig      map[string]any      `json:"awsAuthConfig,omitempty"`
	ExecProviderConfig *ExecProviderConfig `json:"execProviderConfig,omitempty"`
	DisableCompression bool                `json:"disableCompression,omitempty"`
	ProxyURL           string              `json:"proxyUrl,omitempty"`
}

// TLSClientConfig is Argo CD's TLS settings of a cluster.
type TLSClientConfig struct {
	Insecure   bool   `json:"insecure"`
	ServerName string `json:"serverName,omitempty"`
	CertData   []byte `json:"certData,omitempty"`
	KeyData    []byte `json:"keyData,omitempty"`
	CAData     []byte `json:"caData,omitempty"`
}

// ExecProviderConfig runs a command that prints the credentials, as
// kubectl's exec plugins do.
type ExecProviderConfig struct {
	Command     string            `json:"command,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	APIVersion  string            `json:"apiVersion,omitempty"`
	InstallHint string            `json:"installHint,omitempty"`
}

// masked replaces a credential in Public copies.
const masked = "++++++++"

// Public is the config with every credential replaced by a mask (empty
// ones stay empty, so an answer still says which kind of credential a
// cluster uses).
func (c Config) Public() Config {
	mask := func(s string) string {
		if s == "" {
			return ""
		}
		return masked
	}
	maskBytes := func(b []byte) []byte {
		if len(b) == 0 {
			return nil
		}
		return []byte(masked)
	}
	c.Password = mask(c.Password)
	c.BearerToken = mask(c.BearerToken)
	c.TLSClientConfig.KeyData = maskBytes(c.TLSClientConfig.KeyData)
	c.TLSClientConfig.CertData = maskBytes(c.TLSClientConfig.CertData)
	if c.AWSAuthConfig != nil {
		c.AWSAuthConfig = map[string]any{"masked": true}
	}
	if e := c.ExecProviderConfig; e != nil {
		copied := *e
		copied.Env = nil
		if len(e.Env) > 0 {
			copied.Env = make(map[string]string, len(e.Env))
			for k, v := range e.Env {
				copied.Env[k] = mask(v)
			}
		}
		c.ExecProviderConfig = &copied
	}
	return c
}

// String and LogValue keep credentials out of formatted output and logs.
func (c Config) String() string { return fmt.Sprintf("%+v", configNoStringer(c.Public())) }

// LogValue implements slog.LogValuer.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// configNoStringer formats a Config without recursing into String.
type configNoStringer Config

func (c Config) hasCredentials() bool {
	t := c.TLSClientConfig
	return c.BearerToken != "" || c.Username != "" || c.Password != "" ||
		len(t.CertData) > 0 || len(t.KeyData) > 0 || c.ExecProviderConfig != nil || c.AWSAuthConfig != nil
}

// validate checks what a rest.Config would only refuse on first use. Its
// errors name the field, never its value.
func (c Config) validate() error {
	t := c.TLSClientConfig
	var errs []error
	if (len(t.CertData) == 0) != (len(t.KeyData) == 0) {
		errs = append(errs, errors.New("tlsClientConfig: certData and keyData go together"))
	} else if len(t.CertData) > 0 {
		if _, err := tls.X509KeyPair(t.CertData, t.KeyData); err != nil {
			errs = append(errs, errors.New("tlsClientConfig: certData and keyData are not a PEM certificate and its key"))
		}
	}
	if t.Insecure && len(t.CAData) > 0 {
		errs = append(errs, errors.New("tlsClientConfig: insecure and caData exclude each other"))
	}
	if c.BearerToken != "" && (c.Username != "" || c.Password != "") {
		errs = append(errs, errors.New("bearerToken and username/password exclude each other"))
	}
	if e := c.ExecProviderConfig; e != nil {
		if e.Command == "" {
			errs = append(errs, errors.New("execProviderConfig: command is required"))
		}
		if e.APIVersion == "" {
			errs = append(errs, errors.New("execProviderConfig: apiVersion is required (e.g. client.authentication.k8s.io/v1beta1)"))
		}
	}
	if c.ProxyURL != "" {
		u, err := url.Parse(c.ProxyURL)
		if err != nil || !slices.Contains([]string{"http", "https", "socks5"}, u.Scheme) || u.Host == "" {
			errs = append(errs, errors.New("proxyUrl: not an http, https or socks5 URL"))
		}
	}
	return errors.Join(errs...)
}

// restConfig is the client configuration of server with these settings.
func (c Config) restConfig(server string) (*rest.Config, error) {
	if c.AWSAuthConfig != nil {
		return nil, errors.New("awsAuthConfig is not supported: give execProviderConfig with the same command instead")
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	t := c.TLSClientConfig
	cfg := &rest.Config{
		Host:        server,
		Username:    c.Username,
		Password:    c.Password,
		BearerToken: c.BearerToken,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure:   t.Insecure,
			ServerName: t.ServerName,
			CertData:   t.CertData,
			KeyData:    t.KeyData,
			CAData:     t.CAData,
		},
		DisableCompression: c.DisableCompression,
	}
	if e := c.ExecProviderConfig; e != nil {
		exec := &clientcmdapi.ExecConfig{
			Command:         e.Command,
			Args:            e.Args,
			APIVersion:      e.APIVersion,
			InstallHint:     e.InstallHint,
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}
		for _, name := range slices.Sorted(maps.Keys(e.Env)) {
			exec.Env = append(exec.Env, clientcmdapi.ExecEnvVar{Name: name, Value: e.Env[name]})
		}
		cfg.ExecProvider = exec
	}
	if c.ProxyURL != "" {
		u, err := url.Parse(c.ProxyURL)
		if err != nil {
			return nil, errors.New("proxyUrl: not a URL")
		}
		cfg.Proxy = func(*http.Request) (*url.URL, error) { return u, nil }
	}
	return cfg, nil
}

package sessioncli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBaseURL(t *testing.T) {
	tests := map[string]struct {
		cfg  Config
		want string
	}{
		"a host and port is HTTPS":         {cfg: Config{Server: "localhost:8080"}, want: "https://localhost:8080"},
		"plainText is HTTP":                {cfg: Config{Server: "localhost:8080", PlainText: true}, want: "http://localhost:8080"},
		"a URL keeps its scheme":           {cfg: Config{Server: "http://skiff.example.com/"}, want: "http://skiff.example.com"},
		"a trailing slash is dropped":      {cfg: Config{Server: "skiff.example.com/"}, want: "https://skiff.example.com"},
		"an explicit https stays as it is": {cfg: Config{Server: "https://10.0.0.1:443"}, want: "https://10.0.0.1:443"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.cfg.BaseURL(); got != tc.want {
				t.Errorf("BaseURL = %q, want %q", got, tc.want)
			}
		})
	}
}

// The config file round-trips and is readable by its owner only; a missing
// one is empty.
func TestConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "skiff", "config")
	empty, err := LoadConfig(path)
	if err != nil || *empty != (Config{}) {
		t.Fatalf("missing file: %+v %v, want an empty config", empty, err)
	}
	cfg := &Config{Server: "localhost:8080", Token: "t0k3n", Insecure: true}
	if err := cfg.Save(path); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("config file mode %v (%v), want 0600", info.Mode().Perm(), err)
	}
	got, err := LoadConfig(path)
	if err != nil || *got != *cfg {
		t.Errorf("loaded %+v (%v), want %+v", got, err, cfg)
	}
	if err := os.WriteFile(path, []byte("server: x\nunknown: y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path); err == nil {
		t.Error("a config with an unknown field loaded without error")
	}
}

package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestServerRefusesABadSCMAllowList checks that a value of
// --appset-allowed-scm-providers that is no URL stops the server before
// it reaches any cluster, naming the flag.
func TestServerRefusesABadSCMAllowList(t *testing.T) {
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"server", "--kubeconfig", t.TempDir() + "/none", "--appset-allowed-scm-providers", "https://git.example.com,git.example.com"})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), `--appset-allowed-scm-providers: api "git.example.com" is not an http(s) URL`) {
		t.Errorf("error %v, want one naming the flag and the value", err)
	}
}

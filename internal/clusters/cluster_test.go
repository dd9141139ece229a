package clusters

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/opserr"
)

// clientPair is a PEM client certificate and its key.
func clientPair(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "admin"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func clusterSecret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd",
			Labels:      map[string]string{SecretTypeLabel: SecretTypeCluster, "env": "prod"},
			Annotations: map[string]string{"owner": "team-a"}},
		Data: map[string][]byte{},
	}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func TestFromSecret(t *testing.T) {
	certPEM, _ := clientPair(t)
	certB64, _ := json.Marshal(certPEM)
	two := 2
	tests := map[string]struct {
		data map[string]string
		want Cluster
		// wantErr are fragments of the error; secrets must not appear in it.
		wantErr []string
	}{
		"a bearer token cluster keeps every key, its labels and annotations": {
			data: map[string]string{"name": "prod", "server": "https://prod.example.com:6443/",
				"namespaces": "web, api,,", "clusterResources": "true", "project": "team-a", "shard": "2",
				"config": `{"bearerToken":"s3cret","tlsClientConfig":{"insecure":false,"caData":"Y2E=","serverName":"prod"},"proxyUrl":"http://proxy:3128"}`},
			want: Cluster{Name: "prod", Server: "https://prod.example.com:6443", Namespaces: []string{"web", "api"},
				ClusterResources: true, Project: "team-a", Shard: &two, SecretName: "c",
				Labels: map[string]string{SecretTypeLabel: SecretTypeCluster, "env": "prod"}, Annotations: map[string]string{"owner": "team-a"},
				Config: Config{BearerToken: "s3cret", TLSClientConfig: TLSClientConfig{CAData: []byte("ca"), ServerName: "prod"}, ProxyURL: "http://proxy:3128"}},
		},
		"a Secret without a name is named by its server": {
			data: map[string]string{"server": "https://10.0.0.1", "config": `{}`},
			want: Cluster{Name: "https://10.0.0.1", Server: "https://10.0.0.1", SecretName: "c",
				Labels: map[string]string{SecretTypeLabel: SecretTypeCluster, "env": "prod"}, Annotations: map[string]string{"owner": "team-a"}},
		},
		"an exec provider keeps its command, arguments and environment": {
			data: map[string]string{"name": "eks", "server": "https://eks.example.com",
				"config": `{"execProviderConfig":{"command":"aws","args":["eks","get-token"],"env":{"AWS_PROFILE":"p"},"apiVersion":"client.authentication.k8s.io/v1beta1","installHint":"install aws"}}`},
			want: Cluster{Name: "eks", Server: "https://eks.example.com", SecretName: "c",
				Labels: map[string]string{SecretTypeLabel: SecretTypeCluster, "env": "prod"}, Annotations: map[string]string{"owner": "team-a"},
				Config: Config{ExecProviderConfig: &ExecProviderConfig{Command: "aws", Args: []string{"eks", "get-token"},
					Env: map[string]string{"AWS_PROFILE": "p"}, APIVersion: "client.authentication.k8s.io/v1beta1", InstallHint: "install aws"}}},
		},
		"a missing server is refused naming the key": {
			data:    map[string]string{"name": "x", "config": `{}`},
			wantErr: []string{`argocd/c`, `key "server": required`},
		},
		"a server that is not a URL is refused": {
			data:    map[string]string{"server": "prod.example.com"},
			wantErr: []string{`key "server": not an http or https URL`},
		},
		"config that is not JSON is refused without quoting it": {
			data:    map[string]string{"server": "https://a", "config": `{"bearerToken": s3cret}`},
			wantErr: []string{`key "config": not valid JSON`},
		},
		"a config field of the wrong type is named": {
			data:    map[string]string{"server": "https://a", "config": `{"bearerToken": 12345}`},
			wantErr: []string{`field bearerToken: not a string`},
		},
		"clusterResources that is not a boolean is refused": {
			data:    map[string]string{"server": "https://a", "clusterResources": "yes"},
			wantErr: []string{`key "clusterResources"`},
		},
		"a negative shard is refused": {
			data:    map[string]string{"server": "https://a", "shard": "-1"},
			wantErr: []string{`key "shard": not a number from 0`},
		},
		"a certificate without its key is refused": {
			data:    map[string]string{"server": "https://a", "config": `{"tlsClientConfig":{"certData":` + string(certB64) + `}}`},
			wantErr: []string{"certData and keyData go together"},
		},
		"a certificate with a key that is not its pair is refused without either": {
			data:    map[string]string{"server": "https://a", "config": `{"tlsClientConfig":{"certData":` + string(certB64) + `,"keyData":"bm90IGEga2V5"}}`},
			wantErr: []string{"not a PEM certificate and its key"},
		},
		"an exec provider without an apiVersion is refused": {
			data:    map[string]string{"server": "https://a", "config": `{"execProviderConfig":{"command":"aws","env":{"TOKEN":"s3cret"}}}`},
			wantErr: []string{"execProviderConfig: apiVersion is required"},
		},
		"a proxy that is not a URL is refused": {
			data:    map[string]string{"server": "https://a", "config": `{"proxyUrl":"proxy:3128"}`},
			wantErr: []string{"proxyUrl"},
		},
		"a bearer token beside a password is refused": {
			data:    map[string]string{"server": "https://a", "config": `{"bearerToken":"s3cret","username":"u","password":"s3cret"}`},
			wantErr: []string{"bearerToken and username/password exclude each other"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := FromSecret(clusterSecret("c", tc.data))
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("FromSecret = %v, want an error", got)
				}
				if !errors.Is(err, opserr.ErrInvalid) {
					t.Errorf("error %v is not ErrInvalid", err)
				}
				for _, frag := range tc.wantErr {
					if !strings.Contains(err.Error(), frag) {
						t.Errorf("error %q lacks %q", err, frag)
					}
				}
				for _, secret := range []string{"s3cret", "bm90IGEga2V5", "CERTIFICATE"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error %q shows a credential", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FromSecret =\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
}

func TestToSecretRoundTrips(t *testing.T) {
	certPEM, keyPEM := clientPair(t)
	three := 3
	tests := map[string]struct{ cluster Cluster }{
		"a namespaced cluster with every key comes back the same": {Cluster{Name: "prod", Server: "https://prod:6443",
			Namespaces: []string{"a", "b"}, ClusterResources: true, Project: "p", Shard: &three,
			Labels: map[string]string{"env": "prod"}, Annotations: map[string]string{"note": "x"},
			Config: Config{TLSClientConfig: TLSClientConfig{CertData: certPEM, KeyData: keyPEM, CAData: []byte("ca")}}}},
		"a cluster with a token only comes back the same": {Cluster{Name: "t", Server: "https://t", Config: Config{BearerToken: "tok", TLSClientConfig: TLSClientConfig{Insecure: true}}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := tc.cluster.ToSecret("argocd")
			if err != nil {
				t.Fatal(err)
			}
			wantName, _ := SecretName(tc.cluster.Server)
			if s.Name != wantName || s.Namespace != "argocd" || s.Labels[SecretTypeLabel] != SecretTypeCluster {
				t.Errorf("Secret %s/%s labels %v, want %s/argocd with the cluster label", s.Namespace, s.Name, s.Labels, wantName)
			}
			got, err := FromSecret(s)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.cluster
			want.SecretName = wantName
			want.Labels = map[string]string{SecretTypeLabel: SecretTypeCluster}
			for k, v := range tc.cluster.Labels {
				want.Labels[k] = v
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip =\n%#v\nwant\n%#v", got, want)
			}
		})
	}
}

func TestSecretName(t *testing.T) {
	tests := map[string]struct{ server, want string }{
		"the in-cluster server gets the name Argo CD gives it": {"https://kubernetes.default.svc", "cluster-kubernetes.default.svc-3396314289"},
		"the port is left out of the host part":                {"https://Prod.Example.com:6443", "cluster-prod.example.com-"},
		"an IPv6 host has dashes for colons":                   {"https://[fd00::1]:6443", "cluster-fd00--1-"},
		"two servers of one host differ by their hash":         {"https://prod.example.com:6444", "cluster-prod.example.com-"},
	}
	seen := map[string]bool{}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := SecretName(tc.server)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got, tc.want) || (strings.HasSuffix(tc.want, "-") && len(got) == len(tc.want)) {
				t.Errorf("SecretName(%q) = %q, want %q…", tc.server, got, tc.want)
			}
			if seen[got] {
				t.Errorf("SecretName(%q) = %q, given to another server too", tc.server, got)
			}
			seen[got] = true
		})
	}
	if _, err := SecretName("not a url"); !errors.Is(err, opserr.ErrInvalid) {
		t.Errorf("SecretName of a non-URL: %v, want ErrInvalid", err)
	}
}

func TestPublicHidesEveryCredential(t *testing.T) {
	certPEM, keyPEM := clientPair(t)
	c := Cluster{Name: "prod", Server: "https://prod", Config: Config{
		Username: "admin", Password: "pw-s3cret", BearerToken: "tok-s3cret",
		TLSClientConfig:    TLSClientConfig{CertData: certPEM, KeyData: keyPEM, CAData: []byte("public-ca")},
		AWSAuthConfig:      map[string]any{"roleARN": "arn-s3cret"},
		ExecProviderConfig: &ExecProviderConfig{Command: "get-token", APIVersion: "v1", Env: map[string]string{"KEY": "env-s3cret"}},
	}}
	shown := map[string]string{}
	pub, err := json.Marshal(c.Public())
	if err != nil {
		t.Fatal(err)
	}
	shown["JSON of Public"] = string(pub)
	shown["%v"] = fmt.Sprintf("%v", c)
	shown["%+v of the config"] = fmt.Sprintf("%+v", c.Config)
	shown["log value"] = c.Config.LogValue().String()
	for how, text := range shown {
		for _, secret := range []string{"s3cret", string(certPEM[30:60]), string(keyPEM[30:60])} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows a credential: %s", how, text)
			}
		}
	}
	if !strings.Contains(shown["JSON of Public"], "get-token") || !strings.Contains(shown["JSON of Public"], "admin") {
		t.Errorf("Public hides more than credentials: %s", pub)
	}
	if c.Config.Password != "pw-s3cret" || c.Config.ExecProviderConfig.Env["KEY"] != "env-s3cret" {
		t.Error("Public changed the cluster it was asked about")
	}
}

func TestRESTConfig(t *testing.T) {
	base := &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "pod-token"}
	tests := map[string]struct {
		cluster Cluster
		check   func(t *testing.T, cfg *rest.Config)
		wantErr string
	}{
		"the in-cluster cluster uses Skiff's own configuration": {cluster: InCluster(), check: func(t *testing.T, cfg *rest.Config) {
			if cfg.Host != base.Host || cfg.BearerToken != "pod-token" || cfg == base {
				t.Errorf("got %s, want a copy of the base", cfg.Host)
			}
		}},
		"a cluster's own token and TLS settings reach its server": {cluster: Cluster{Server: "https://prod:6443",
			Config: Config{BearerToken: "tok", TLSClientConfig: TLSClientConfig{ServerName: "prod.internal", CAData: []byte("ca")}}},
			check: func(t *testing.T, cfg *rest.Config) {
				if cfg.Host != "https://prod:6443" || cfg.BearerToken != "tok" || cfg.ServerName != "prod.internal" || string(cfg.CAData) != "ca" {
					t.Errorf("got %+v", cfg)
				}
			}},
		"a Secret for the in-cluster server with a token of its own uses that token": {cluster: Cluster{Server: InClusterServer, Config: Config{BearerToken: "own"}},
			check: func(t *testing.T, cfg *rest.Config) {
				if cfg.Host != InClusterServer || cfg.BearerToken != "own" {
					t.Errorf("got %s %q", cfg.Host, cfg.BearerToken)
				}
			}},
		"an exec provider never prompts and gets its environment sorted": {cluster: Cluster{Server: "https://e",
			Config: Config{ExecProviderConfig: &ExecProviderConfig{Command: "c", APIVersion: "v", Env: map[string]string{"B": "2", "A": "1"}}}},
			check: func(t *testing.T, cfg *rest.Config) {
				e := cfg.ExecProvider
				if e == nil || e.InteractiveMode != "Never" || len(e.Env) != 2 || e.Env[0].Name != "A" {
					t.Errorf("got %+v", e)
				}
			}},
		"a proxy URL becomes the transport's proxy": {cluster: Cluster{Server: "https://p", Config: Config{ProxyURL: "http://proxy:3128"}},
			check: func(t *testing.T, cfg *rest.Config) {
				u, err := cfg.Proxy(nil)
				if err != nil || u.String() != "http://proxy:3128" {
					t.Errorf("proxy %v %v", u, err)
				}
			}},
		"AWS authentication is refused with what to do instead": {cluster: Cluster{Server: "https://a", Config: Config{AWSAuthConfig: map[string]any{"clusterName": "x"}}},
			wantErr: "execProviderConfig"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := tc.cluster.RESTConfig(base)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, cfg)
		})
	}
}

func TestNewSnapshotAndResolve(t *testing.T) {
	prod := clusterSecret("cluster-prod", map[string]string{"name": "prod", "server": "https://prod"})
	staging := clusterSecret("cluster-staging", map[string]string{"name": "staging", "server": "https://staging"})
	stagingTwin := clusterSecret("cluster-staging-2", map[string]string{"name": "staging", "server": "https://staging-2"})
	broken := clusterSecret("cluster-broken", map[string]string{"name": "broken"})
	dupServer := clusterSecret("cluster-prod-again", map[string]string{"name": "prod2", "server": "https://prod/"})
	local := clusterSecret("cluster-local", map[string]string{"name": "local", "server": InClusterServer, "namespaces": "apps"})
	repo := clusterSecret("repo", map[string]string{"url": "https://git"})
	repo.Labels[SecretTypeLabel] = "repository"
	type resolution struct {
		dest       v1alpha1.ApplicationDestination
		wantServer string
		wantErr    error
	}
	tests := map[string]struct {
		secrets     []*corev1.Secret
		cm          map[string]string
		wantNames   []string
		wantInvalid []string
		resolve     []resolution
	}{
		"the in-cluster cluster is implicit beside the Secrets": {
			secrets:   []*corev1.Secret{prod, repo},
			wantNames: []string{"in-cluster", "prod"},
			resolve: []resolution{
				{dest: v1alpha1.ApplicationDestination{Server: "https://prod/"}, wantServer: "https://prod"},
				{dest: v1alpha1.ApplicationDestination{Name: "in-cluster"}, wantServer: InClusterServer},
				{dest: v1alpha1.ApplicationDestination{Server: "https://elsewhere"}, wantErr: ErrNotFound},
				{dest: v1alpha1.ApplicationDestination{Name: "nowhere"}, wantErr: ErrNotFound},
				{dest: v1alpha1.ApplicationDestination{Server: "https://prod", Name: "in-cluster"}, wantErr: opserr.ErrInvalid},
				{dest: v1alpha1.ApplicationDestination{Namespace: "x"}, wantErr: opserr.ErrInvalid},
			},
		},
		"inClusterEnabled false removes the implicit cluster": {
			secrets:   []*corev1.Secret{prod},
			cm:        map[string]string{"cluster.inClusterEnabled": "false"},
			wantNames: []string{"prod"},
			resolve:   []resolution{{dest: v1alpha1.ApplicationDestination{Server: InClusterServer}, wantErr: ErrNotFound}},
		},
		"inClusterEnabled false refuses a Secret for the in-cluster server": {
			secrets:     []*corev1.Secret{local},
			cm:          map[string]string{"cluster.inClusterEnabled": "false"},
			wantInvalid: []string{"cluster-local: the in-cluster destination is disabled"},
		},
		"a Secret for the in-cluster server replaces the implicit one": {
			secrets:   []*corev1.Secret{local},
			wantNames: []string{"local"},
			resolve:   []resolution{{dest: v1alpha1.ApplicationDestination{Name: "local"}, wantServer: InClusterServer}},
		},
		"an invalid Secret is reported and the others stand": {
			secrets:     []*corev1.Secret{broken, prod},
			wantNames:   []string{"in-cluster", "prod"},
			wantInvalid: []string{`cluster-broken: key "server": required`},
		},
		"a second Secret for one server is reported, the first by name stands": {
			secrets:     []*corev1.Secret{dupServer, prod},
			wantNames:   []string{"in-cluster", "prod"},
			wantInvalid: []string{"cluster-prod-again: server https://prod is already given by Secret cluster-prod"},
		},
		"a name two clusters share resolves only by server": {
			secrets:   []*corev1.Secret{staging, stagingTwin},
			wantNames: []string{"in-cluster", "staging", "staging"},
			resolve: []resolution{
				{dest: v1alpha1.ApplicationDestination{Name: "staging"}, wantErr: opserr.ErrInvalid},
				{dest: v1alpha1.ApplicationDestination{Server: "https://staging-2", Name: "staging"}, wantServer: "https://staging-2"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var secrets []corev1.Secret
			for _, s := range tc.secrets {
				secrets = append(secrets, *s)
			}
			snap := NewSnapshot(secrets, tc.cm)
			var names []string
			for _, c := range snap.Clusters {
				names = append(names, c.Name)
			}
			if !reflect.DeepEqual(names, tc.wantNames) {
				t.Errorf("clusters %v, want %v", names, tc.wantNames)
			}
			if len(snap.Invalid) != len(tc.wantInvalid) {
				t.Fatalf("invalid %v, want %v", snap.Invalid, tc.wantInvalid)
			}
			for i, frag := range tc.wantInvalid {
				if !strings.Contains(snap.Invalid[i].Error(), frag) {
					t.Errorf("invalid[%d] = %v, want %q", i, snap.Invalid[i], frag)
				}
			}
			for _, r := range tc.resolve {
				got, err := snap.Resolve(r.dest)
				if r.wantErr != nil {
					if !errors.Is(err, r.wantErr) {
						t.Errorf("Resolve(%+v) = %v, %v; want %v", r.dest, got, err, r.wantErr)
					}
					continue
				}
				if err != nil || got.Server != r.wantServer {
					t.Errorf("Resolve(%+v) = %v, %v; want server %s", r.dest, got, err, r.wantServer)
				}
			}
		})
	}
}

package clusters

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiffcd/skiff/internal/opserr"
)

// The keys of a cluster Secret.
const (
	keyName             = "name"
	keyServer           = "server"
	keyNamespaces       = "namespaces"
	keyClusterResources = "clusterResources"
	keyProject          = "project"
	keyShard            = "shard"
	keyConfig           = "config"
)

// fromSecret parses s. A Secret without a name is named by its server, so
// a destination can still name it.
func fromSecret(s *corev1.Secret) (Cluster, error) {
	data := func(key string) string { return strings.TrimSpace(string(s.Data[key])) }
	c := Cluster{
		Name:        data(keyName),
		Server:      strings.TrimRight(data(keyServer), "/"),
		Project:     data(keyProject),
		Namespaces:  splitNamespaces(data(keyNamespaces)),
		Labels:      maps.Clone(s.Labels),
		Annotations: maps.Clone(s.Annotations),
		SecretName:  s.Name,
	}
	var errs []error
	bad := func(key string, err error) { errs = append(errs, fmt.Errorf("key %q: %w", key, err)) }
	if c.Server == "" {
		bad(keyServer, errors.New("required"))
	} else if err := checkServer(c.Server); err != nil {
		bad(keyServer, err)
	}
	if c.Name == "" {
		c.Name = c.Server
	}
	if v := data(keyClusterResources); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(keyClusterResources, errors.New(`not "true" or "false"`))
		}
		c.ClusterResources = b
	}
	if v := data(keyShard); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			bad(keyShard, errors.New("not a number from 0"))
		} else {
			c.Shard = &n
		}
	}
	if raw := s.Data[keyConfig]; len(strings.TrimSpace(string(raw))) > 0 {
		if err := json.Unmarshal(raw, &c.Config); err != nil {
			bad(keyConfig, jsonError(err))
		} else if err := c.Config.validate(); err != nil {
			bad(keyConfig, err)
		}
	}
	if len(errs) > 0 {
		return Cluster{}, opserr.New(opserr.ErrInvalid, fmt.Errorf("cluster Secret %s/%s: %w", s.Namespace, s.Name, errors.Join(errs...)))
	}
	return c, nil
}

// jsonError describes a decoding error of config by where it is, since
// encoding/json may quote the input.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("not valid JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Errorf("field %s: not a %s", typ.Field, typ.Type)
	}
	return errors.New("not valid JSON (or a byte field not in base64)")
}

func checkServer(server string) error {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return errors.New("not an http or https URL")
	}
	return nil
}

// splitNamespaces reads the comma-separated namespaces key.
func splitNamespaces(v string) []string {
	var out []string
	for ns := range strings.SplitSeq(v, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// ToSecret is the cluster Secret of c in namespace, named SecretName(c.Server)
// unless c came from a Secret.
func (c Cluster) ToSecret(namespace string) (*corev1.Secret, error) {
	name := c.SecretName
	if name == "" {
		var err error
		if name, err = SecretName(c.Server); err != nil {
			return nil, err
		}
	}
	config, err := json.Marshal(c.Config)
	if err != nil {
		return nil, fmt.Errorf("encoding the config of cluster %s: %w", c.Server, err)
	}
	labels := maps.Clone(c.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[SecretTypeLabel] = SecretTypeCluster
	data := map[string][]byte{
		keyName:   []byte(c.Name),
		keyServer: []byte(c.Server),
		keyConfig: config,
	}
	if len(c.Namespaces) > 0 {
		data[keyNamespaces] = []byte(strings.Join(c.Namespaces, ","))
		data[keyClusterResources] = []byte(strconv.FormatBool(c.ClusterResources))
	}
	if c.Project != "" {
		data[keyProject] = []byte(c.Project)
	}
	if c.Shard != nil {
		data[keyShard] = []byte(strconv.Itoa(*c.Shard))
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels, Annotations: maps.Clone(c.Annotations)},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}, nil
}

// SecretName is the name Argo CD gives the Secret of a cluster:
// cluster-<host>-<FNV-32a of the server URL>, the host without its port
// (an IPv6 address with dashes for colons).
func SecretName(server string) (string, error) {
	u, err := url.ParseRequestURI(server)
	if err != nil {
		return "", opserr.Invalid("server %q: not a URL", server)
	}
	host := u.Host
	if strings.HasPrefix(host, "[") {
		if end := strings.Index(host, "]"); end >= 0 {
			addr, err := netip.ParseAddr(host[1:end])
			if err != nil {
				return "", opserr.Invalid("server %q: not an IP address in brackets", server)
			}
			host = strings.ReplaceAll(addr.String(), ":", "-")
		}
	} else if colon := strings.Index(host, ":"); colon >= 0 {
		host = host[:colon]
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(server))
	return fmt.Sprintf("cluster-%s-%d", strings.ToLower(host), h.Sum32()), nil
}

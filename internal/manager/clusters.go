package manager

// localCacheNamespaces limit the local cluster cache: to Skiff's own
// namespace when namespaced (it then watches no cluster-scoped kind), to
// none otherwise.
func localCacheNamespaces(opts Options) []string {
	if ns := managedNamespace(opts); ns != "" {
		return []string{ns}
	}
	return nil
}
